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

// idLookup is the reader's side of the resolver: node ids sent for
// insertion and edge endpoints for lookup, in batches. Done one per line,
// between parsing, each would wait for a cache miss; done in a tight loop
// over a batch, the CPU overlaps many (measured 3x faster on 4M nodes /
// 12M edges).
type idLookup struct {
	rs        *resolver
	inserted  int     // nodes [0, inserted) were sent to rs
	nodeLines []int64 // lines of the nodes not sent yet
	toJob     *resJob // edge targets being batched
	fromJob   *resJob // edge sources the scan did not find
	lastFrom  uint64
	lastIdx   int32 // index of lastFrom, -1 before the first edge
	noScan    bool  // edges are not grouped by source in node order
}

// batch is the size of the batches of id-map inserts and lookups.
const batch = 1 << 14

// resolver returns the id-map goroutine, starting it sized by the file's
// node count when it promised one.
func (rd *reader) resolver() *resolver {
	if rd.rs == nil {
		n := 1 << 16
		if rd.counts[0] > 0 {
			n = int(min(rd.counts[0], 1<<24))
		}
		rd.rs = newResolver(n)
	}
	return rd.rs
}

// flushNodes sends the nodes read since the last flush to the id map.
func (rd *reader) flushNodes() {
	ids := rd.g.Nodes.ID
	if rd.inserted == ids.Len() {
		return
	}
	if rd.pipe != nil {
		rd.pipe.thaw()
	}
	r := rd.resolver()
	j := r.job(jobInsert, rd.inserted)
	for i := rd.inserted; i < ids.Len(); i++ {
		j.vals = append(j.vals, ids.At(i))
	}
	j.lines = append(j.lines, rd.nodeLines...)
	r.jobs <- j
	rd.inserted = ids.Len()
	rd.nodeLines = rd.nodeLines[:0]
}

// flushEdges sends the batched edge endpoints for lookup (after the nodes
// read before them) and collects the lookups done meanwhile.
func (rd *reader) flushEdges() {
	rd.flushNodes()
	r := rd.resolver()
	if rd.toJob != nil && len(rd.toJob.vals) > 0 {
		r.jobs <- rd.toJob
		rd.toJob = nil
	}
	if rd.fromJob != nil && len(rd.fromJob.vals) > 0 {
		r.jobs <- rd.fromJob
		rd.fromJob = nil
	}
	rd.collect()
}

// collect stores finished lookups in the edge columns; endpoints whose
// node has not been read yet are deferred to the end.
func (rd *reader) collect() {
	if rd.rs == nil {
		return
	}
	for _, j := range rd.rs.finished() {
		for k, i := range j.out {
			at, kind := j.first+k, uint8(refEdgeTo)
			if j.kind == jobFrom {
				at, kind = int(j.at[k]), refEdgeFrom
			}
			switch {
			case i < 0:
				rd.pend = append(rd.pend, pending{line: j.lines[k], id: j.vals[k], at: uint32(at), kind: kind})
			case kind == refEdgeTo:
				rd.g.Edges.To[at] = i
			default:
				rd.from[at] = i
			}
		}
		rd.rs.recycle(j)
	}
}

// sync waits for the id map to hold every node read so far, reporting a
// duplicate id. The reader may then use rd.rs.ids until its next job.
func (rd *reader) sync() error {
	rd.flushNodes()
	r := rd.resolver()
	r.barrier()
	if r.dup {
		return rd.errAt(r.dupLine, "node id %d appears twice", r.dupID)
	}
	return nil
}

// nodeRef resolves a node identifier now if its node was read, and defers
// it otherwise. It waits for the id map: for rare references only.
func (rd *reader) nodeRef(id uint64, kind uint8, at int) (int32, error) {
	if err := rd.sync(); err != nil {
		return 0, err
	}
	if i := rd.rs.ids.Get(id); i >= 0 {
		return i, nil
	}
	rd.pend = append(rd.pend, pending{line: rd.line, id: id, at: uint32(at), kind: kind})
	return -1, nil
}
