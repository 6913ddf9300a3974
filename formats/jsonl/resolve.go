package jsonl

import (
	"sync"

	"github.com/heapx/heapx/model"
)

// resolver owns the id map on a goroutine of its own: the reader sends it
// batches of node identifiers to insert and batches of edge endpoints to
// look up, and goes on parsing while it works. Hashing is a third of the
// reader's work (a cache miss per insert and per lookup), so on two cores
// this takes it off the parsing path. Jobs run in the order they were
// sent, so a lookup sees every node sent before it.
type resolver struct {
	ids  *model.IDMap
	jobs chan *resJob
	free chan *resJob

	mu   sync.Mutex
	done []*resJob // finished lookups, for the reader to collect

	// dupLine and dupID describe the first duplicate node id; they are
	// written by the resolver and read by the reader after a barrier.
	dupLine int64
	dupID   uint64
	dup     bool
}

// Job kinds.
const (
	jobInsert  = iota // vals are the ids of nodes first, first+1, ...
	jobTo             // vals are the targets of edges first, first+1, ...
	jobFrom           // vals are the sources of edges at[0], at[1], ...
	jobBarrier        // closes ack once every earlier job is done
)

type resJob struct {
	kind  uint8
	first int
	vals  []uint64
	at    []uint32
	lines []int64
	out   []int32
	ack   chan struct{}
}

func newResolver(n int) *resolver {
	r := &resolver{ids: model.NewIDMap(n), jobs: make(chan *resJob, 4), free: make(chan *resJob, 8)}
	go r.run()
	return r
}

func (r *resolver) run() {
	for j := range r.jobs {
		switch j.kind {
		case jobBarrier:
			close(j.ack)
		case jobInsert:
			for i, id := range j.vals {
				if !r.ids.Insert(id, int32(j.first+i)) && !r.dup {
					r.dup, r.dupID, r.dupLine = true, id, j.lines[i]
				}
			}
			r.recycle(j)
		default:
			j.out = j.out[:0]
			for _, v := range j.vals {
				j.out = append(j.out, r.ids.Get(v))
			}
			r.mu.Lock()
			r.done = append(r.done, j)
			r.mu.Unlock()
		}
	}
}

// job returns an empty job, reusing a finished one's buffers.
func (r *resolver) job(kind uint8, first int) *resJob {
	var j *resJob
	select {
	case j = <-r.free:
	default:
		j = &resJob{}
	}
	j.kind, j.first = kind, first
	j.vals, j.at, j.lines, j.out = j.vals[:0], j.at[:0], j.lines[:0], j.out[:0]
	return j
}

func (r *resolver) recycle(j *resJob) {
	select {
	case r.free <- j:
	default:
	}
}

// finished takes the lookups done so far.
func (r *resolver) finished() []*resJob {
	r.mu.Lock()
	d := r.done
	r.done = nil
	r.mu.Unlock()
	return d
}

// barrier waits until every job sent so far is done; after it the reader
// may use ids directly until it sends the next job.
func (r *resolver) barrier() {
	ack := make(chan struct{})
	r.jobs <- &resJob{kind: jobBarrier, ack: ack}
	<-ack
}

func (r *resolver) close() { close(r.jobs) }
