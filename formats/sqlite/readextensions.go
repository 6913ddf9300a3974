package sqlite

import (
	"encoding/json"
	"fmt"
	"math"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/model"
)

// extensions reads the extension tables the model holds (6.2), one
// extensionReader method per table; missing tables are empty.
func (r *reader) extensions() error {
	x := &extensionReader{reader: r, last: -1}
	steps := []func() error{x.locations, x.traceFunctions, x.traceNodes, x.samples, x.traceLinks, x.sections, x.gcRoots, x.stacks}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// extensionReader reads the extension tables into the reader's graph.
type extensionReader struct {
	*reader
	// last is the node the last row named (see node), -1 before any.
	last model.NodeIndex
}

// node resolves a node identifier. Rows name nodes mostly in node order
// (locations come in node order), so the node after the last one found
// is tried before the hash table.
func (x *extensionReader) node(v int64, row fmt.Stringer) (model.NodeIndex, error) {
	ids := x.g.Nodes.ID
	if next := int(x.last) + 1; next < ids.Len() && ids.At(next) == uint64(v) {
		x.last++
		return x.last, nil
	}
	if err := x.idMap(); err != nil {
		return 0, err
	}
	n := x.ids.Get(uint64(v))
	if n < 0 {
		return 0, x.fail("row %s: %d is not a node identifier", row, v)
	}
	x.last = n
	return n, nil
}

// u32 checks that column what of row fits in 32 bits unsigned.
func (x *extensionReader) u32(v int64, what string, row fmt.Stringer) (uint32, error) {
	if v < 0 || v > math.MaxUint32 {
		return 0, x.fail("row %s: %s %d out of range", row, what, v)
	}
	return uint32(v), nil
}

// str resolves a stringid.
func (x *extensionReader) str(v int64, what string, row fmt.Stringer) (model.StringID, error) {
	s := x.strs.find(v)
	if s < 0 {
		return 0, x.fail("row %s: %s %d is not a stringid in strings", row, what, v)
	}
	return model.StringID(s), nil
}

// ints reads an all-integer table in key order, if the file has it, and
// calls fn with each row's values, cols then optional; optional columns
// may be NULL (has[i] says, for optional column i).
func (x *extensionReader) ints(table, record, key string, cols, optional []string, fn func(v []int64, has []bool, row fmt.Stringer) error) error {
	if _, ok := x.tables[table]; !ok {
		return nil
	}
	x.section = table
	sel, err := x.columns(table, record, cols, optional)
	if err != nil {
		return err
	}
	v := make([]int64, len(cols)+len(optional))
	has := make([]bool, len(optional))
	return query(x.conn, "SELECT "+sel+" FROM "+quoteIdent(table)+" ORDER BY "+quoteIdent(key), func(st *sqlite.Stmt) error {
		row := rowKey{key, st.ColumnInt64(0)}
		for i := range v {
			t := st.ColumnType(i)
			if i >= len(cols) {
				if has[i-len(cols)] = t != sqlite.TypeNull; !has[i-len(cols)] {
					continue
				}
			}
			if t != sqlite.TypeInteger {
				return x.fail("row %s: %s is %s, want an integer", row, append(cols, optional...)[i], typeName(t))
			}
			v[i] = st.ColumnInt64(i)
		}
		return fn(v, has, row)
	})
}

// locations reads v8_location, unless the locations came with the nodes
// (heapx_packed). A location's script node is all or nothing (2.7): kept
// only when every location has one, else dropped and reported.
func (x *extensionReader) locations() error {
	if x.fromPacked {
		return nil
	}
	g := x.g
	var scripts []model.NodeIndex
	withScript := 0
	err := x.ints("v8_location", "v8:location", "seq", []string{"seq", "node_identifier", "script_id", "line", "column"}, []string{"script_node_identifier"}, func(v []int64, has []bool, row fmt.Stringer) error {
		n, err := x.node(v[1], row)
		if err != nil {
			return err
		}
		var l [3]uint32
		for i, what := range []string{"script_id", "line", "column"} {
			if l[i], err = x.u32(v[2+i], what, row); err != nil {
				return err
			}
		}
		g.Locations = append(g.Locations, model.Location{Node: n, ScriptID: l[0], Line: l[1], Column: l[2]})
		script := model.NoNode
		if has[0] {
			if script = x.ids.Get(uint64(v[5])); script < 0 {
				return x.fail("row %s: script_node_identifier %d is not a node identifier", row, v[5])
			}
			withScript++
		}
		scripts = append(scripts, script)
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case withScript > 0 && withScript == len(g.Locations):
		g.LocationScripts = scripts
	case withScript > 0:
		x.skippedFields = append(x.skippedFields, fmt.Sprintf("v8:location.script=%d", withScript))
	}
	return nil
}

// trace returns the graph's allocation trace, made on the first row of a
// trace table.
func (x *extensionReader) trace() *model.AllocationTrace {
	if x.g.Trace == nil {
		x.g.Trace = &model.AllocationTrace{}
	}
	return x.g.Trace
}

// traceFunctions reads v8_trace_function.
func (x *extensionReader) traceFunctions() error {
	return x.ints("v8_trace_function", "v8:trace_function", "idx", []string{"idx", "function_id", "name", "script_name", "script_id", "line", "column"}, nil, func(v []int64, _ []bool, row fmt.Stringer) error {
		t := x.trace()
		if v[0] != int64(len(t.Functions)) {
			return x.fail("row %s: idx must count from 0 without gaps", row)
		}
		name, err := x.str(v[2], "name", row)
		if err != nil {
			return err
		}
		script, err := x.str(v[3], "script_name", row)
		if err != nil {
			return err
		}
		sid, err := x.u32(v[4], "script_id", row)
		if err != nil {
			return err
		}
		if v[5] < math.MinInt32 || v[5] > math.MaxInt32 || v[6] < math.MinInt32 || v[6] > math.MaxInt32 {
			return x.fail("row %s: line or column out of range", row)
		}
		t.Functions = append(t.Functions, model.TraceFunction{ID: uint64(v[1]), Name: name, ScriptName: script,
			ScriptID: sid, Line: int32(v[5]), Column: int32(v[6])})
		return nil
	})
}

// traceNodes reads v8_trace_node, the allocation tree; traceLinks checks
// its functions once every trace table is read.
func (x *extensionReader) traceNodes() error {
	return x.ints("v8_trace_node", "v8:trace_node", "idx", []string{"idx", "parent", "id", "function_index", "count", "size"}, nil, func(v []int64, _ []bool, row fmt.Stringer) error {
		t := x.trace()
		if v[0] != int64(len(t.Tree)) {
			return x.fail("row %s: idx must count from 0 without gaps", row)
		}
		if v[1] < -1 || v[1] >= v[0] {
			return x.fail("row %s: parent %d must be -1 or an earlier idx", row, v[1])
		}
		id, err := x.u32(v[2], "id", row)
		if err != nil {
			return err
		}
		fn, err := x.u32(v[3], "function_index", row)
		if err != nil {
			return err
		}
		t.Tree = append(t.Tree, model.TraceNode{ID: id, Function: fn, Count: uint64(v[4]), Size: uint64(v[5]), Parent: int32(v[1])})
		return nil
	})
}

// samples reads v8_sample.
func (x *extensionReader) samples() error {
	return x.ints("v8_sample", "v8:sample", "seq", []string{"seq", "timestamp_us", "last_assigned_id"}, nil, func(v []int64, _ []bool, row fmt.Stringer) error {
		t := x.trace()
		t.Samples = append(t.Samples, model.TraceSample{TimestampMicros: uint64(v[1]), LastAssignedID: uint64(v[2])})
		return nil
	})
}

// traceLinks checks that every allocation-tree node names a function of
// v8_trace_function.
func (x *extensionReader) traceLinks() error {
	if t := x.g.Trace; t != nil {
		for i, n := range t.Tree {
			if int(n.Function) >= len(t.Functions) {
				x.section = "v8_trace_node"
				return x.fail("row idx=%d: function_index %d is not a v8_trace_function idx", i, n.Function)
			}
		}
	}
	return nil
}

// sections reads v8_section, the snapshot sections heapx does not model,
// kept as JSON arrays to write back.
func (x *extensionReader) sections() error {
	if _, ok := x.tables["v8_section"]; !ok {
		return nil
	}
	x.section = "v8_section"
	sel, err := x.columns("v8_section", "v8:section", []string{"seq", "name", "fields", "values"}, nil)
	if err != nil {
		return err
	}
	return query(x.conn, "SELECT "+sel+" FROM v8_section ORDER BY seq", func(st *sqlite.Stmt) error {
		row := rowKey{"seq", st.ColumnInt64(0)}
		name, err := x.textAt(st, 1, "name", row)
		if err != nil {
			return err
		}
		fj, err := x.textAt(st, 2, "fields", row)
		if err != nil {
			return err
		}
		vj, err := x.textAt(st, 3, "values", row)
		if err != nil {
			return err
		}
		s := model.Section{Name: name}
		if err := json.Unmarshal([]byte(fj), &s.Fields); err != nil {
			return x.fail("row %s: fields is not a JSON array of strings", row)
		}
		if err := json.Unmarshal([]byte(vj), &s.Values); err != nil {
			return x.fail("row %s: values is not a JSON array of integers", row)
		}
		x.g.Sections = append(x.g.Sections, s)
		return nil
	})
}

// gcRoots reads heapx_gc_root, numbering the root kinds in the order
// they first appear.
func (x *extensionReader) gcRoots() error {
	if _, ok := x.tables["heapx_gc_root"]; !ok {
		return nil
	}
	g := x.g
	x.section = "heapx_gc_root"
	sel, err := x.columns("heapx_gc_root", "heapx:gc_root", []string{"seq", "node_identifier", "kind"}, nil)
	if err != nil {
		return err
	}
	return query(x.conn, "SELECT "+sel+" FROM heapx_gc_root ORDER BY seq", func(st *sqlite.Stmt) error {
		row := rowKey{"seq", st.ColumnInt64(0)}
		v, err := x.intAt(st, 1, "node_identifier", row)
		if err != nil {
			return err
		}
		n, err := x.node(v, row)
		if err != nil {
			return err
		}
		kind, err := x.textAt(st, 2, "kind", row)
		if err != nil {
			return err
		}
		k := -1
		for i, name := range g.RootKinds {
			if name == kind {
				k = i
			}
		}
		if k < 0 {
			if len(g.RootKinds) > math.MaxUint16 {
				return x.fail("more than 65536 kinds of GC root")
			}
			g.RootKinds = append(g.RootKinds, kind)
			k = len(g.RootKinds) - 1
		}
		g.GCRoots = append(g.GCRoots, model.GCRoot{Node: n, Kind: uint16(k)})
		return nil
	})
}
