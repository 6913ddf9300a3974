package sqlite

import (
	"errors"
	"math"
	"strconv"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// errNotDense stops the fast node scan when seq is not 0..n-1.
var errNotDense = errors.New("seq is not 0..n-1")

// nodes reads the node table into node order (seq, 1.8). heapx numbers
// seq 0..n-1, so the table is scanned in its own order (by identifier, the
// rowid) and each row put at its seq: walking the seq index instead would
// cost a B-tree lookup per row. Only a file whose seq values are not
// 0..n-1 is read a second time, ORDER BY seq.
func (r *reader) nodes() error {
	if r.fromPacked {
		return nil
	}
	r.section = "node"
	sel, err := r.columns("node", "node", []string{"identifier", "seq", "nodetypeid", "name", "self_size"},
		[]string{"v8_trace_node_id", "v8_detachedness"})
	if err != nil {
		return err
	}
	n := r.nNodes
	if n > math.MaxInt32-1 {
		return r.fail("%d nodes; heapx holds at most 2^31-1", n)
	}
	ns := &r.g.Nodes
	ns.Type = model.Alloc[uint8](int(n))
	ns.Name = model.Alloc[model.StringID](int(n))
	ns.ID = model.MakeUint64s(int(n))
	ns.Size = model.MakeUint64s(int(n))
	ns.FirstEdge = model.Alloc[uint32](int(n) + 1)
	var rootID uint64
	root, hasRoot := r.meta[exchange.KeyRoot]
	if hasRoot {
		v, err := strconv.ParseUint(root, 10, 64)
		if err != nil {
			r.section = "metadata"
			return r.fail("heapx:root is %q, not a node identifier", root)
		}
		rootID = v
	}
	err = r.nodeRows(sel, false, hasRoot, rootID)
	if err == errNotDense {
		err = r.nodeRows(sel, true, hasRoot, rootID)
	}
	if err != nil {
		return err
	}
	if hasRoot && !r.rootSeen && n > 0 {
		r.section = "metadata"
		return r.fail("heapx:root %d is not a node", rootID)
	}
	return nil
}

// nodeColumns name the node query's columns, for messages.
var nodeColumns = []string{"identifier", "seq", "nodetypeid", "name", "self_size", "v8_trace_node_id", "v8_detachedness"}

// nodeRows is one pass over the node table: in table order, placing rows
// at their seq (ordered false; errNotDense if seq is not 0..n-1), or
// ORDER BY seq, placing rows one after the other.
func (r *reader) nodeRows(sel string, ordered, hasRoot bool, rootID uint64) error {
	g := r.g
	ns := &g.Nodes
	n := r.nNodes
	// The optional columns exist in every heapx file and are NULL when
	// the dump has no such data; a model column is made on the first
	// value seen, so an all-NULL column costs nothing.
	g.TraceNodeID, g.Detachedness, g.Root, r.rootSeen = nil, nil, 0, false
	r.ids = model.NewIDMap(int(n))
	var placed []uint64 // bitset of the seq values seen (fast pass)
	q := "SELECT " + sel + " FROM node"
	if ordered {
		q += " ORDER BY seq"
	} else {
		placed = make([]uint64, (n+63)/64)
	}
	k := int64(0)
	var prevSeq int64
	err := query(r.conn, q, func(st *sqlite.Stmt) error {
		if k >= n {
			return r.fail("more rows than count(*) said (%d): the table changed while read", n)
		}
		for c := 0; c < 7; c++ {
			if t := st.ColumnType(c); t != sqlite.TypeInteger && (c < 5 || t != sqlite.TypeNull) {
				return r.fail("row %s: %s is %s, want an integer", rowOf(st, "identifier"), nodeColumns[c], typeName(t))
			}
		}
		id := st.ColumnInt64(0)
		seq := st.ColumnInt64(1)
		i := k
		if ordered {
			if k > 0 && seq == prevSeq {
				return r.fail("row identifier=%d: seq %d repeats", id, seq)
			}
			prevSeq = seq
		} else {
			if seq < 0 || seq >= n || placed[seq/64]&(1<<(seq%64)) != 0 {
				return errNotDense
			}
			placed[seq/64] |= 1 << (seq % 64)
			i = seq
		}
		t := r.nodeT.find(st.ColumnInt64(2))
		if t < 0 {
			return r.fail("row identifier=%d: nodetypeid %d is not in node_types", id, st.ColumnInt64(2))
		}
		name := r.strs.find(st.ColumnInt64(3))
		if name < 0 {
			return r.fail("row identifier=%d: name %d is not a stringid in strings", id, st.ColumnInt64(3))
		}
		size := st.ColumnInt64(4)
		if size < 0 {
			return r.fail("row identifier=%d: self_size %d is negative", id, size)
		}
		ns.ID.Set(int(i), uint64(id))
		ns.Size.Set(int(i), uint64(size))
		ns.Type[i], ns.Name[i] = uint8(t), model.StringID(name)
		if st.ColumnType(5) == sqlite.TypeInteger {
			v := st.ColumnInt64(5)
			if v < 0 || v > math.MaxUint32 {
				return r.fail("row identifier=%d: v8_trace_node_id %d out of range", id, v)
			}
			if g.TraceNodeID == nil {
				g.TraceNodeID = model.Alloc[uint32](int(n))
			}
			g.TraceNodeID[i] = uint32(v)
		}
		if st.ColumnType(6) == sqlite.TypeInteger {
			v := st.ColumnInt64(6)
			if v < 0 || v > 255 {
				return r.fail("row identifier=%d: v8_detachedness %d out of range", id, v)
			}
			if g.Detachedness == nil {
				g.Detachedness = model.Alloc[uint8](int(n))
			}
			g.Detachedness[i] = uint8(v)
		}
		if hasRoot && uint64(id) == rootID {
			g.Root = int32(i)
			r.rootSeen = true
		}
		k++
		r.tick(1)
		return nil
	})
	if err != nil {
		return err
	}
	if k != n {
		return r.fail("%d rows read, count(*) said %d", k, n)
	}
	// The identifier index is filled in a loop of its own: independent
	// inserts let the CPU overlap their cache misses, which inserts
	// interleaved with SQLite's work cannot.
	for i := range ns.ID.Len() {
		if id := ns.ID.At(i); !r.ids.Insert(id, int32(i)) {
			return r.fail("row identifier=%d: the identifier repeats", int64(id))
		}
	}
	return nil
}

// idMap makes sure r.ids is built: by the node scan, or here, from the
// identifiers heapx_packed held, for the first row that names a node.
func (r *reader) idMap() error {
	if r.ids != nil {
		return nil
	}
	ids := r.g.Nodes.ID
	r.ids = model.NewIDMap(ids.Len())
	for i := range ids.Len() {
		if id := ids.At(i); !r.ids.Insert(id, int32(i)) {
			return r.fail("node identifier %d repeats", int64(id))
		}
	}
	return nil
}
