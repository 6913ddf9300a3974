package parquet

import (
	"errors"
	"io"

	pq "github.com/parquet-go/parquet-go"

	"github.com/heapx/heapx/model"
)

// readAll reads every row of a small table (the extension tables, a few
// thousand rows at most) as structs. The rows are read a batch at a time
// and appended, so a footer that claims more rows than the file holds
// costs no more memory than the rows that are there.
func readAll[T any](t *table) ([]T, error) {
	want := t.pf.NumRows()
	r := pq.NewGenericReader[T](t.pf)
	defer r.Close()
	var rows []T
	batch := make([]T, 1024)
	for int64(len(rows)) < want {
		k, err := r.Read(batch[:min(int64(len(batch)), want-int64(len(rows)))])
		rows = append(rows, batch[:k]...)
		if err == io.EOF {
			break
		}
		if err == nil && k == 0 {
			err = errors.New("no rows where the file says there are some")
		}
		if err != nil {
			return nil, t.fail(int64(len(rows)), "%v", err)
		}
	}
	if int64(len(rows)) != want {
		return nil, t.fail(int64(len(rows)), "%d rows read of the %d the file says it has", len(rows), want)
	}
	return rows, nil
}

// readTable reads the optional table name of r's partition: no rows when
// it is missing.
func readTable[T any](r *reader, name string) ([]T, *table, error) {
	t, err := openTable(r.part, name, false)
	if t == nil || err != nil {
		return nil, nil, err
	}
	defer t.close()
	rows, err := readAll[T](t)
	return rows, t, err
}

// ReadTable reads every row of table name of the partition directory
// part, for tables a program reads whole (dumps, classes, suspects: a
// few thousand rows): a missing file is no rows unless required. A
// damaged file is an error naming it, also where the Parquet library
// panics on one.
func ReadTable[T any](part, name string, required bool) (rows []T, err error) {
	t, err := openTable(part, name, required)
	if t == nil || err != nil {
		return nil, err
	}
	defer t.close()
	defer func() {
		if r := recover(); r != nil {
			rows, err = nil, t.fail(-1, "damaged Parquet file (%v)", r)
		}
	}()
	return readAll[T](t)
}

// node resolves a node id of an extension table's row.
func (r *reader) node(t *table, row int, what string, id int64) (model.NodeIndex, error) {
	v := r.ids.Get(uint64(id))
	if v < 0 {
		return 0, t.fail(int64(row), "%s %d is not a node of objects", what, uint64(id))
	}
	return v, nil
}

func (r *reader) extensions() error {
	g := r.g
	locs, t, err := readTable[LocationRow](r, TableLocations)
	if err != nil {
		return err
	}
	if len(locs) > 0 {
		g.Locations = make([]model.Location, len(locs))
		for i, l := range locs {
			v, err := r.node(t, i, "node_id", l.NodeID)
			if err != nil {
				return err
			}
			if l.ScriptID < 0 || l.ScriptID > 1<<32-1 || l.Line < 0 || l.Line > 1<<32-1 || l.Column < 0 || l.Column > 1<<32-1 {
				return t.fail(int64(i), "script_id, line or column out of range (0 to 2^32-1)")
			}
			g.Locations[i] = model.Location{Node: v, ScriptID: uint32(l.ScriptID), Line: uint32(l.Line), Column: uint32(l.Column)}
		}
	}
	if r.row.HasLocationScript {
		g.LocationScripts = make([]model.NodeIndex, len(locs))
		for i, l := range locs {
			if l.Script == nil {
				return t.fail(int64(i), "script is NULL (dumps.has_location_script is set)")
			}
			v, err := r.node(t, i, "script", *l.Script)
			if err != nil {
				return err
			}
			g.LocationScripts[i] = v
		}
	}
	fns, _, err := readTable[TraceFunctionRow](r, TableTraceFunctions)
	if err != nil {
		return err
	}
	tree, tt, err := readTable[TraceNodeRow](r, TableTraceNodes)
	if err != nil {
		return err
	}
	samples, _, err := readTable[SampleRow](r, TableSamples)
	if err != nil {
		return err
	}
	if len(fns)+len(tree)+len(samples) > 0 {
		tr := &model.AllocationTrace{}
		ns := int64(g.Strings.Len())
		for i, f := range fns {
			if f.NameID < 0 || f.NameID >= ns || f.ScriptNameID < 0 || f.ScriptNameID >= ns {
				return r.failTable(TableTraceFunctions, i, "name_id %d or script_name_id %d is not one of the %d strings", f.NameID, f.ScriptNameID, ns)
			}
			tr.Functions = append(tr.Functions, model.TraceFunction{ID: uint64(f.FunctionID), Name: model.StringID(f.NameID),
				ScriptName: model.StringID(f.ScriptNameID), ScriptID: uint32(f.ScriptID), Line: f.Line, Column: f.Column})
		}
		for i, n := range tree {
			if n.Parent < -1 || n.Parent >= int64(i) {
				return tt.fail(int64(i), "parent %d is not an earlier trace node", n.Parent)
			}
			tr.Tree = append(tr.Tree, model.TraceNode{ID: uint32(n.ID), Function: uint32(n.FunctionIndex),
				Count: uint64(n.Count), Size: uint64(n.Size), Parent: int32(n.Parent)})
		}
		for _, s := range samples {
			tr.Samples = append(tr.Samples, model.TraceSample{TimestampMicros: uint64(s.TimestampMicros), LastAssignedID: uint64(s.LastAssignedID)})
		}
		g.Trace = tr
	}
	secs, _, err := readTable[SectionRow](r, TableSections)
	if err != nil {
		return err
	}
	for _, s := range secs {
		g.Sections = append(g.Sections, model.Section{Name: s.Name, Fields: s.Fields, Values: s.Values})
	}
	roots, rt, err := readTable[GCRootRow](r, TableGCRoots)
	if err != nil {
		return err
	}
	for i, gr := range roots {
		v, err := r.node(rt, i, "node_id", gr.NodeID)
		if err != nil {
			return err
		}
		if gr.KindIndex < 0 || int(gr.KindIndex) >= len(g.RootKinds) {
			return rt.fail(int64(i), "kind_index %d is not one of the %d root kinds", gr.KindIndex, len(g.RootKinds))
		}
		g.GCRoots = append(g.GCRoots, model.GCRoot{Node: v, Kind: uint16(gr.KindIndex)})
	}
	return r.stacks()
}

// stacks reads the stacks, frames and frame_values tables: stacks
// numbered in order, each frame after its stack's earlier frames, each
// value of a frame already read. Node identifiers are kept as they are.
func (r *reader) stacks() error {
	g := r.g
	stacks, st, err := readTable[StackRow](r, TableStacks)
	if err != nil {
		return err
	}
	for i, s := range stacks {
		if int(s.Stack) != i {
			return st.fail(int64(i), "stack %d, want %d (stacks are numbered 0, 1, 2, ... in order)", s.Stack, i)
		}
		g.Stacks = append(g.Stacks, model.Stack{Thread: uint64(s.Thread), Name: s.Name, Stop: s.Stop, Object: idOrZero(s.ObjectID), State: s.State})
	}
	frames, ft, err := readTable[FrameRow](r, TableFrames)
	if err != nil {
		return err
	}
	for i, f := range frames {
		if f.Stack < 0 || int(f.Stack) >= len(g.Stacks) || int(f.Frame) != len(g.Stacks[f.Stack].Frames) {
			return ft.fail(int64(i), "frame %d of stack %d out of order (a stack's frames are numbered 0, 1, 2, ... after it)", f.Frame, f.Stack)
		}
		kind, err := model.ParseFrameKind(f.Kind)
		if err != nil {
			return ft.fail(int64(i), "%v", err)
		}
		if f.Line < 0 || f.Line > 1<<32-1 || f.Column < 0 || f.Column > 1<<32-1 {
			return ft.fail(int64(i), "line %d, column %d out of range", f.Line, f.Column)
		}
		s := &g.Stacks[f.Stack]
		s.Frames = append(s.Frames, model.Frame{Kind: kind, Type: f.Type, Function: f.Function, Script: f.Script,
			Line: uint32(f.Line), Column: uint32(f.Column), PC: uint64(f.PC), FP: uint64(f.FP), FunctionNode: idOrZero(f.FunctionNodeID)})
	}
	values, vt, err := readTable[FrameValueRow](r, TableFrameValues)
	if err != nil {
		return err
	}
	for i, v := range values {
		if v.Stack < 0 || int(v.Stack) >= len(g.Stacks) || v.Frame < 0 || int(v.Frame) >= len(g.Stacks[v.Stack].Frames) {
			return vt.fail(int64(i), "stack %d has no frame %d (a value follows its frame)", v.Stack, v.Frame)
		}
		role, err := model.ParseValueRole(v.Role)
		if err != nil {
			return vt.fail(int64(i), "%v", err)
		}
		fv := model.FrameValue{Role: role, Name: v.Name, Node: idOrZero(v.NodeID), Text: v.Text}
		if v.Smi != nil {
			fv.Smi, fv.IsSmi = *v.Smi, true
		}
		f := &g.Stacks[v.Stack].Frames[v.Frame]
		f.Values = append(f.Values, fv)
	}
	return nil
}

// idOrZero is an optional identifier column's value, 0 for NULL.
func idOrZero(v *int64) uint64 {
	if v == nil {
		return 0
	}
	return uint64(*v)
}

func (r *reader) failTable(name string, row int, format string, args ...any) error {
	t := &table{path: TableFile(r.part, name)}
	return t.fail(int64(row), format, args...)
}
