package sqlite

import (
	"fmt"
	"math"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// results reads heapx_result into opt.Results when asked to. Results are
// all or nothing (4): a table with rows for some nodes only is skipped,
// and reported as skipped fields (7.2), whether asked for or not. The
// policy in heapx:analysis goes with them; a consumer that applies
// another policy must not use them.
func (r *reader) results() error {
	if r.fromPacked {
		return nil // read with the nodes, if asked for
	}
	res := r.opt.Results
	if res != nil {
		*res = model.Results{}
	}
	if _, has := r.tables["heapx_result"]; !has {
		return nil
	}
	r.section = "heapx_result"
	var rows int64
	if err := query(r.conn, "SELECT count(*) FROM heapx_result", func(st *sqlite.Stmt) error { rows = st.ColumnInt64(0); return nil }); err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	if rows != int64(r.g.NumNodes()) {
		for _, f := range []string{"heapx:shallow_size", "heapx:retained_size", "heapx:dominator", "heapx:distance"} {
			r.skippedFields = append(r.skippedFields, fmt.Sprintf("node.%s=%d", f, rows))
		}
		return nil
	}
	if res == nil {
		return nil
	}
	policy := r.meta[exchange.KeyAnalysis]
	sel, err := r.columns("heapx_result", "heapx_result", []string{"node_identifier", "shallow_size", "retained_size", "dominator", "distance"}, nil)
	if err != nil {
		return err
	}
	n := r.g.NumNodes()
	out := model.Results{Policy: policy, Shallow: model.Alloc[uint64](n), Retained: model.Alloc[uint64](n),
		Dominator: model.Alloc[model.NodeIndex](n), Distance: model.Alloc[int32](n)}
	seen := make([]uint64, (n+63)/64)
	got := 0
	// Rows come in identifier order, which is nearly node order: the node
	// after the last one is tried before the hash table. Dominators are
	// looked up in batches, as edge targets are (edgeScan).
	ids, last := r.g.Nodes.ID, -1
	pending := make([]pendingDest, 0, destBatch)
	resolve := func() error {
		for _, p := range pending {
			d := r.ids.Get(p.dest)
			if d < 0 {
				return r.fail("row node_identifier=%d: dominator %d is not a node identifier", p.seq, int64(p.dest))
			}
			out.Dominator[p.pos] = d
		}
		pending = pending[:0]
		return nil
	}
	err = query(r.conn, "SELECT "+sel+" FROM heapx_result", func(st *sqlite.Stmt) error {
		row := rowKey{"node_identifier", st.ColumnInt64(0)}
		for _, c := range []int{0, 1, 2, 4} {
			if st.ColumnType(c) != sqlite.TypeInteger {
				return r.fail("row %s: %s is %s, want an integer", row, resultColumns[c], typeName(st.ColumnType(c)))
			}
		}
		id := uint64(st.ColumnInt64(0))
		var i int32
		if last+1 < ids.Len() && ids.At(last+1) == id {
			i = int32(last + 1)
		} else if i = r.ids.Get(id); i < 0 {
			return r.fail("row %s: not a node identifier", row)
		}
		last = int(i)
		if seen[i/64]&(1<<(i%64)) != 0 {
			return r.fail("row %s: a second result for the node", row)
		}
		seen[i/64] |= 1 << (i % 64)
		out.Shallow[i], out.Retained[i] = uint64(st.ColumnInt64(1)), uint64(st.ColumnInt64(2))
		out.Dominator[i] = model.NoNode
		switch st.ColumnType(3) {
		case sqlite.TypeNull:
		case sqlite.TypeInteger:
			pending = append(pending, pendingDest{dest: uint64(st.ColumnInt64(3)), pos: int64(i), seq: int64(id)})
			if len(pending) == destBatch {
				if err := resolve(); err != nil {
					return err
				}
			}
		default:
			return r.fail("row %s: dominator is %s, want a node identifier or NULL", row, typeName(st.ColumnType(3)))
		}
		dist := st.ColumnInt64(4)
		if dist < math.MinInt32 || dist > math.MaxInt32 {
			return r.fail("row %s: distance %d out of range", row, dist)
		}
		out.Distance[i] = int32(dist)
		got++
		return nil
	})
	if err == nil {
		err = resolve()
	}
	if err != nil {
		return err
	}
	if got != n {
		return r.fail("%d results for the %d nodes: the table changed while read", got, n)
	}
	if err := out.Check(r.g); err != nil {
		return r.fail("%v", err)
	}
	*res = out
	return nil
}

// resultColumns name the heapx_result query's columns, for messages.
var resultColumns = []string{"node_identifier", "shallow_size", "retained_size", "dominator", "distance"}
