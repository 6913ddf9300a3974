package sqlite

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/model"
)

// edgeWorkers is how many connections read the edge table at once: the
// edge scan is most of a read, and SQLite runs a statement on one core.
const edgeWorkers = 2

// parallelEdges is the table size from which the scan is split: below it
// a second connection costs more than it saves.
const parallelEdges = 1 << 16

// edges reads the edge table in seq order and builds the CSR columns. A
// heapx file numbers its edges 0..m-1 (seq), so each row goes to position
// seq and the table is read in edgeWorkers ranges at once; other files are
// read in one pass ORDER BY seq. Edges are grouped by source in node order
// in a heapx file, which is checked; any other order is regrouped with a
// stable counting sort, which keeps each node's edges in seq order (1.8).
func (r *reader) edges() error {
	if r.fromPacked {
		return nil
	}
	g := r.g
	r.section = "edge"
	sel, err := r.columns("edge", "edge", []string{"seq", "source", "edgetypeid", "label", "dest"}, []string{"smi"})
	if err != nil {
		return err
	}
	m := r.nEdges
	if m > math.MaxUint32 {
		return r.fail("%d edges; heapx holds at most 2^32-1", m)
	}
	es := &g.Edges
	es.Type = model.Alloc[uint8](int(m))
	es.Name = model.Alloc[uint32](int(m))
	es.To = model.Alloc[model.NodeIndex](int(m))
	src := model.Alloc[int32](int(m))

	var lo, hi int64
	if err := query(r.conn, "SELECT (SELECT min(seq) FROM edge), (SELECT max(seq) FROM edge)", func(st *sqlite.Stmt) error {
		lo, hi = st.ColumnInt64(0), st.ColumnInt64(1)
		return nil
	}); err != nil {
		return err
	}
	q := "SELECT " + sel + " FROM edge"
	var smi int
	if m > 0 && lo == 0 && hi == m-1 && m >= parallelEdges {
		// seq is 0..m-1: split it.
		var wg sync.WaitGroup
		errs := make([]error, edgeWorkers)
		smis := make([]int, edgeWorkers)
		var stop atomic.Bool
		for w := 0; w < edgeWorkers; w++ {
			from, to := m*int64(w)/int64(edgeWorkers), m*int64(w+1)/int64(edgeWorkers)
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn := r.conn
				if w > 0 {
					c, err := OpenReadOnly(r.file)
					if err != nil {
						errs[w] = err
						stop.Store(true)
						return
					}
					defer c.Close()
					conn = c
				}
				sc := r.newEdgeScan(src, true, &stop)
				errs[w] = sc.run(conn, fmt.Sprintf("%s WHERE seq >= %d AND seq < %d", q, from, to))
				smis[w] = sc.smi
				if errs[w] != nil {
					stop.Store(true)
				}
			}()
		}
		wg.Wait()
		for w := range errs {
			if errs[w] != nil && errs[w] != errStopped {
				return errs[w]
			}
			smi += smis[w]
		}
		if smi > 0 {
			// Rows to small integers left holes: close them up.
			k := 0
			for e := range es.To {
				if es.To[e] >= 0 {
					es.Type[k], es.Name[k], es.To[k], src[k] = es.Type[e], es.Name[e], es.To[e], src[e]
					k++
				}
			}
			es.Type, es.Name, es.To, src = es.Type[:k], es.Name[:k], es.To[:k], src[:k]
		}
	} else {
		sc := r.newEdgeScan(src, false, new(atomic.Bool))
		if err := sc.run(r.conn, q+" ORDER BY seq"); err != nil {
			return err
		}
		smi = sc.smi
		es.Type, es.Name, es.To, src = es.Type[:sc.k], es.Name[:sc.k], es.To[:sc.k], src[:sc.k]
	}
	r.smi = smi

	counts := g.Nodes.FirstEdge // counts per node first, offsets after
	grouped := true
	for e, s := range src {
		counts[s+1]++
		if e > 0 && s < src[e-1] {
			grouped = false
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	if !grouped {
		r.regroup(src)
	}
	return nil
}

// errStopped ends a worker whose sibling failed.
var errStopped = errors.New("stopped")

// edgeScan is one reader of edge rows. Targets are looked up in batches:
// a tight loop of independent hash lookups lets the CPU overlap their
// cache misses, which lookups interleaved with SQLite's work cannot.
type edgeScan struct {
	r       *reader
	src     []int32
	atSeq   bool // rows go to position seq (else one after the other)
	stop    *atomic.Bool
	k       int64 // rows placed (one after the other)
	cur     int32 // the current source node, for the fast path
	smi     int
	pending []pendingDest
}

// pendingDest is a row whose target (or dominator) is still to be looked
// up: its identifier, where the index goes, and the row's key for
// messages.
type pendingDest struct {
	dest uint64
	pos  int64
	seq  int64
}

const destBatch = 4096

func (r *reader) newEdgeScan(src []int32, atSeq bool, stop *atomic.Bool) *edgeScan {
	return &edgeScan{r: r, src: src, atSeq: atSeq, stop: stop, pending: make([]pendingDest, 0, destBatch)}
}

// edgeColumns name the edge query's columns, for messages.
var edgeColumns = []string{"seq", "source", "edgetypeid", "label", "dest", "smi"}

func (sc *edgeScan) run(conn *sqlite.Conn, q string) error {
	r := sc.r
	g := r.g
	es := &g.Edges
	ids := g.Nodes.ID
	m := int64(len(es.To))
	n := 0
	err := query(conn, q, func(st *sqlite.Stmt) error {
		for c := 0; c < 4; c++ {
			if t := st.ColumnType(c); t != sqlite.TypeInteger {
				return r.fail("row %s: %s is %s, want an integer", rowOf(st, "seq"), edgeColumns[c], typeName(t))
			}
		}
		seq := st.ColumnInt64(0)
		pos := sc.k
		if sc.atSeq {
			pos = seq
		}
		if st.ColumnType(4) != sqlite.TypeInteger {
			if st.ColumnType(4) == sqlite.TypeNull && st.ColumnType(5) == sqlite.TypeInteger {
				// An edge to a small integer: the model has no place
				// for it (2.6). A hole at its seq marks it.
				sc.smi++
				if sc.atSeq {
					es.To[pos] = -1
				}
				return nil
			}
			return r.fail("row seq=%d: dest is %s, want a node identifier (or NULL with smi set)", seq, typeName(st.ColumnType(4)))
		}
		if pos >= m {
			return r.fail("more rows than count(*) said (%d): the table changed while read", m)
		}
		// Edges come grouped by source in node order: the source is the
		// previous edge's or the next node, and is looked up only when
		// neither (once per table part, or in a file in another order).
		source := uint64(st.ColumnInt64(1))
		if int(sc.cur)+1 < ids.Len() && ids.At(int(sc.cur)) != source && ids.At(int(sc.cur)+1) == source {
			sc.cur++
		} else if ids.Len() == 0 || ids.At(int(sc.cur)) != source {
			s := r.ids.Get(source)
			if s < 0 {
				return r.fail("row seq=%d: source %d is not a node identifier", seq, int64(source))
			}
			sc.cur = s
		}
		t := r.edgeT.find(st.ColumnInt64(2))
		if t < 0 {
			return r.fail("row seq=%d: edgetypeid %d is not in edge_types", seq, st.ColumnInt64(2))
		}
		label := st.ColumnInt64(3)
		var name uint32
		if g.EdgeTypes[t].Indexed {
			if label < 0 || label > math.MaxUint32 {
				return r.fail("row seq=%d: label %d is not an index (0 to 2^32-1)", seq, label)
			}
			name = uint32(label)
		} else {
			s := r.strs.find(label)
			if s < 0 {
				return r.fail("row seq=%d: label %d is not a stringid in strings", seq, label)
			}
			name = uint32(s)
		}
		es.Type[pos], es.Name[pos], sc.src[pos] = uint8(t), name, sc.cur
		sc.pending = append(sc.pending, pendingDest{uint64(st.ColumnInt64(4)), pos, seq})
		if len(sc.pending) == destBatch {
			if err := sc.resolve(); err != nil {
				return err
			}
		}
		sc.k++
		if n++; n == destBatch {
			n = 0
			if sc.stop.Load() {
				return errStopped
			}
			r.tickN(destBatch)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return sc.resolve()
}

// resolve looks up the pending targets.
func (sc *edgeScan) resolve() error {
	to := sc.r.g.Edges.To
	ids := sc.r.ids
	for _, p := range sc.pending {
		n := ids.Get(p.dest)
		if n < 0 {
			return sc.r.fail("row seq=%d: dest %d is not a node identifier", p.seq, int64(p.dest))
		}
		to[p.pos] = n
	}
	sc.pending = sc.pending[:0]
	return nil
}

// regroup reorders the edge columns by source node with a stable counting
// sort over FirstEdge, already holding the offsets.
func (r *reader) regroup(src []int32) {
	g := r.g
	es := &g.Edges
	m := len(src)
	next := make([]uint32, g.NumNodes())
	copy(next, g.Nodes.FirstEdge[:len(next)])
	t, nm, to := make([]uint8, m), make([]uint32, m), make([]model.NodeIndex, m)
	for e := 0; e < m; e++ {
		p := next[src[e]]
		next[src[e]]++
		t[p], nm[p], to[p] = es.Type[e], es.Name[e], es.To[e]
	}
	es.Type, es.Name, es.To = t, nm, to
}
