package sqlite

import (
	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/model"
)

// The stack records (docs/format.md 2.9, 6.2) as three tables, created
// only in a file whose graph has stacks (a core dump's), so that a
// snapshot's database is what it was before stacks existed. Identifiers,
// addresses and thread ids of 2^63 and up are stored as their
// two's-complement signed value, as everywhere in the form.
const stackSchema = `
CREATE TABLE heapx_stack       (seq INTEGER PRIMARY KEY, thread INTEGER NOT NULL, name TEXT NOT NULL, stop TEXT NOT NULL,
                                object_identifier INTEGER, state TEXT NOT NULL);
CREATE TABLE heapx_frame       (stack INTEGER NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL,
                                function TEXT NOT NULL, script TEXT NOT NULL, line INTEGER NOT NULL, "column" INTEGER NOT NULL,
                                pc INTEGER NOT NULL, fp INTEGER NOT NULL, function_node_identifier INTEGER,
                                PRIMARY KEY (stack, seq));
CREATE TABLE heapx_frame_value (stack INTEGER NOT NULL, frame INTEGER NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL,
                                name TEXT NOT NULL, node_identifier INTEGER, smi INTEGER, text TEXT NOT NULL,
                                PRIMARY KEY (stack, frame, seq));
`

var (
	stackColumns = []string{"seq", "thread", "name", "stop", "object_identifier", "state"}
	// stackRequired are the columns of heapx_stack every version has;
	// object_identifier and state came with stack version 2.
	stackRequired     = stackColumns[:4]
	frameColumns      = []string{"stack", "seq", "kind", "type", "function", "script", "line", "column", "pc", "fp", "function_node_identifier"}
	frameValueColumns = []string{"stack", "frame", "seq", "role", "name", "node_identifier", "smi", "text"}
)

// stacks writes the graph's stacks, if it has any.
func (w *writer) stacks() error {
	g := w.g
	if len(g.Stacks) == 0 {
		return nil
	}
	if err := script(w.conn, stackSchema); err != nil {
		return err
	}
	err := insertAll(w.conn, "heapx_stack", len(g.Stacks), stackColumns, func(in *inserter, i int) {
		s := &g.Stacks[i]
		in.Seq(int64(i))
		in.Int(int64(s.Thread))
		in.Text(s.Name)
		in.Text(s.Stop)
		nodeOrNull(in, s.Object)
		in.Text(s.State)
	})
	if err != nil {
		return err
	}
	type at struct{ stack, frame, value int }
	var frames, values []at
	for si, s := range g.Stacks {
		for fi, f := range s.Frames {
			frames = append(frames, at{si, fi, 0})
			for vi := range f.Values {
				values = append(values, at{si, fi, vi})
			}
		}
	}
	err = insertAll(w.conn, "heapx_frame", len(frames), frameColumns, func(in *inserter, i int) {
		a := frames[i]
		f := &g.Stacks[a.stack].Frames[a.frame]
		in.Int(int64(a.stack))
		in.Int(int64(a.frame))
		in.Text(f.Kind.String())
		in.Text(f.Type)
		in.Text(f.Function)
		in.Text(f.Script)
		in.Int(int64(f.Line))
		in.Int(int64(f.Column))
		in.Int(int64(f.PC))
		in.Int(int64(f.FP))
		nodeOrNull(in, f.FunctionNode)
	})
	if err != nil {
		return err
	}
	return insertAll(w.conn, "heapx_frame_value", len(values), frameValueColumns, func(in *inserter, i int) {
		a := values[i]
		v := &g.Stacks[a.stack].Frames[a.frame].Values[a.value]
		in.Int(int64(a.stack))
		in.Int(int64(a.frame))
		in.Int(int64(a.value))
		in.Text(v.Role.String())
		in.Text(v.Name)
		nodeOrNull(in, v.Node)
		if v.IsSmi {
			in.Int(v.Smi)
		} else {
			in.Null()
		}
		in.Text(v.Text)
	})
}

// nodeOrNull inserts a node identifier, NULL for 0 (none).
func nodeOrNull(in *inserter, id uint64) {
	if id == 0 {
		in.Null()
	} else {
		in.Int(int64(id))
	}
}

// stackKey names a frame or value row by its key columns in messages.
type stackKey struct{ stack, frame, seq int64 }

func (k stackKey) String() string {
	if k.frame < 0 {
		return rowKey{"stack", k.stack}.String() + " " + rowKey{"seq", k.seq}.String()
	}
	return rowKey{"stack", k.stack}.String() + " " + rowKey{"frame", k.frame}.String() + " " + rowKey{"seq", k.seq}.String()
}

// stacks reads heapx_stack, heapx_frame and heapx_frame_value, when the
// file has them. Their node identifiers are kept as they are, not
// resolved (a frame can hold an object its dump has no node for).
func (x *extensionReader) stacks() error {
	if _, ok := x.tables["heapx_stack"]; !ok {
		return nil
	}
	g := x.g
	x.section = "heapx_stack"
	sel, err := x.columns("heapx_stack", "heapx:stack", stackRequired, stackColumns[len(stackRequired):])
	if err != nil {
		return err
	}
	err = query(x.conn, "SELECT "+sel+" FROM heapx_stack ORDER BY seq", func(st *sqlite.Stmt) error {
		row := rowKey{"seq", st.ColumnInt64(0)}
		if row.val != int64(len(g.Stacks)) {
			return x.fail("row %s: stacks are numbered 0, 1, 2, ...; want seq=%d", row, len(g.Stacks))
		}
		thread, err := x.intAt(st, 1, "thread", row)
		if err != nil {
			return err
		}
		name, err := x.textAt(st, 2, "name", row)
		if err != nil {
			return err
		}
		stop, err := x.textAt(st, 3, "stop", row)
		if err != nil {
			return err
		}
		s := model.Stack{Thread: uint64(thread), Name: name, Stop: stop}
		if obj, ok, err := x.nullableInt(st, 4, "object_identifier", row); err != nil {
			return err
		} else if ok {
			s.Object = uint64(obj)
		}
		if st.ColumnType(5) != sqlite.TypeNull {
			if s.State, err = x.textAt(st, 5, "state", row); err != nil {
				return err
			}
		}
		g.Stacks = append(g.Stacks, s)
		return nil
	})
	if err != nil {
		return err
	}
	if err := x.frames(); err != nil {
		return err
	}
	return x.frameValues()
}

// stackRow is the stack a frame or value row names.
func (x *extensionReader) stackRow(row stackKey) (*model.Stack, error) {
	if row.stack < 0 || row.stack >= int64(len(x.g.Stacks)) {
		return nil, x.fail("row %s: stack %d is not a seq of heapx_stack", row, row.stack)
	}
	return &x.g.Stacks[row.stack], nil
}

// nullableInt is column i as an integer, ok false when it is NULL.
func (x *extensionReader) nullableInt(st *sqlite.Stmt, i int, what string, row any) (v int64, ok bool, err error) {
	if st.ColumnType(i) == sqlite.TypeNull {
		return 0, false, nil
	}
	v, err = x.intAt(st, i, what, row)
	return v, err == nil, err
}

func (x *extensionReader) frames() error {
	if _, ok := x.tables["heapx_frame"]; !ok {
		return nil
	}
	x.section = "heapx_frame"
	sel, err := x.columns("heapx_frame", "heapx:frame", frameColumns, nil)
	if err != nil {
		return err
	}
	return query(x.conn, "SELECT "+sel+" FROM heapx_frame ORDER BY stack, seq", func(st *sqlite.Stmt) error {
		row := stackKey{st.ColumnInt64(0), -1, st.ColumnInt64(1)}
		s, err := x.stackRow(row)
		if err != nil {
			return err
		}
		if row.seq != int64(len(s.Frames)) {
			return x.fail("row %s: a stack's frames are numbered 0, 1, 2, ...; want seq=%d", row, len(s.Frames))
		}
		var f model.Frame
		var texts [4]string
		for i, what := range []string{"kind", "type", "function", "script"} {
			if texts[i], err = x.textAt(st, 2+i, what, row); err != nil {
				return err
			}
		}
		if f.Kind, err = model.ParseFrameKind(texts[0]); err != nil {
			return x.fail("row %s: %v", row, err)
		}
		f.Type, f.Function, f.Script = texts[1], texts[2], texts[3]
		var nums [4]int64
		for i, what := range []string{"line", "column", "pc", "fp"} {
			if nums[i], err = x.intAt(st, 6+i, what, row); err != nil {
				return err
			}
		}
		if f.Line, err = x.u32(nums[0], "line", row); err != nil {
			return err
		}
		if f.Column, err = x.u32(nums[1], "column", row); err != nil {
			return err
		}
		f.PC, f.FP = uint64(nums[2]), uint64(nums[3])
		fn, _, err := x.nullableInt(st, 10, "function_node_identifier", row)
		if err != nil {
			return err
		}
		f.FunctionNode = uint64(fn)
		s.Frames = append(s.Frames, f)
		return nil
	})
}

func (x *extensionReader) frameValues() error {
	if _, ok := x.tables["heapx_frame_value"]; !ok {
		return nil
	}
	x.section = "heapx_frame_value"
	sel, err := x.columns("heapx_frame_value", "heapx:frame_value", frameValueColumns, nil)
	if err != nil {
		return err
	}
	return query(x.conn, "SELECT "+sel+" FROM heapx_frame_value ORDER BY stack, frame, seq", func(st *sqlite.Stmt) error {
		row := stackKey{st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnInt64(2)}
		s, err := x.stackRow(row)
		if err != nil {
			return err
		}
		if row.frame < 0 || row.frame >= int64(len(s.Frames)) {
			return x.fail("row %s: stack %d has no frame %d", row, row.stack, row.frame)
		}
		f := &s.Frames[row.frame]
		if row.seq != int64(len(f.Values)) {
			return x.fail("row %s: a frame's values are numbered 0, 1, 2, ...; want seq=%d", row, len(f.Values))
		}
		role, err := x.textAt(st, 3, "role", row)
		if err != nil {
			return err
		}
		var v model.FrameValue
		if v.Role, err = model.ParseValueRole(role); err != nil {
			return x.fail("row %s: %v", row, err)
		}
		if v.Name, err = x.textAt(st, 4, "name", row); err != nil {
			return err
		}
		node, _, err := x.nullableInt(st, 5, "node_identifier", row)
		if err != nil {
			return err
		}
		v.Node = uint64(node)
		if v.Smi, v.IsSmi, err = x.nullableInt(st, 6, "smi", row); err != nil {
			return err
		}
		if v.Text, err = x.textAt(st, 7, "text", row); err != nil {
			return err
		}
		f.Values = append(f.Values, v)
		return nil
	})
}
