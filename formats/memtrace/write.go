package memtrace

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Writer encodes a trace. heapx's own trace is written by the JavaScript
// shim; Writer is for tests and tools that make traces (the lifetime
// analysis's tests build their traces with it). Strings are interned: the
// STRING records are written before the first record that needs them.
type Writer struct {
	w       *bufio.Writer
	strings map[string]uint64
	nextIID uint64 // the next script's base
	scripts uint64
	buf     []byte
}

// NewWriter writes the header and returns a Writer; call Flush at the end.
func NewWriter(w io.Writer) (*Writer, error) {
	t := &Writer{w: bufio.NewWriter(w), strings: map[string]uint64{"": 0}}
	if _, err := t.w.WriteString(Magic + string(rune(Version))); err != nil {
		return nil, err
	}
	return t, nil
}

// Flush writes what is buffered.
func (t *Writer) Flush() error { return t.w.Flush() }

func (t *Writer) u(x uint64) { t.buf = binary.AppendUvarint(t.buf, x) }
func (t *Writer) z(x int64)  { t.buf = binary.AppendVarint(t.buf, x) }
func (t *Writer) str(s string) {
	t.u(uint64(len(s)))
	t.buf = append(t.buf, s...)
}

// sid interns s, writing its STRING record now if it is new (before the
// record being built in t.buf, which is written after).
func (t *Writer) sid(s string) uint64 {
	if id, ok := t.strings[s]; ok {
		return id
	}
	id := uint64(len(t.strings))
	t.strings[s] = id
	var b []byte
	b = append(b, byte(StringDef))
	b = binary.AppendUvarint(b, id)
	b = binary.AppendUvarint(b, uint64(len(s)))
	b = append(b, s...)
	t.w.Write(b) // errors surface at the record's Write
	return id
}

// Script writes a SCRIPT record for a script whose instructions are at the
// given places, in order, and returns its number and iid base: the i-th
// position (from 0) is iid base+1+i.
func (t *Writer) Script(file string, kind ScriptKind, positions []Pos) (id, base uint64, err error) {
	t.scripts++
	id, base = t.scripts, t.nextIID
	t.nextIID += uint64(len(positions))
	f := t.sid(file)
	t.buf = append(t.buf[:0], byte(ScriptDef))
	t.u(id)
	t.u(f)
	t.u(uint64(kind))
	t.u(base)
	t.u(uint64(len(positions)))
	line := 1
	for _, p := range positions {
		t.z(int64(p.Line - line))
		line = p.Line
		t.u(uint64(p.Column))
	}
	_, err = t.w.Write(t.buf)
	return id, base, err
}

// Write encodes ev by its Kind from the fields docs/trace.md gives that
// kind (Time, Offset and Pos are ignored; SCRIPT records are written by
// Script, STRING records by the Writer itself).
func (t *Writer) Write(ev *Event) error {
	// Intern first: STRING records must precede the record using them.
	var name, key uint64
	names := make([]uint64, 0, len(ev.Names))
	switch ev.Kind {
	case Declare, Write:
		name = t.sid(ev.Name)
	case PutField, CollSet, CollDelete:
		if ev.Key.Kind == KeyName {
			key = t.sid(ev.Key.Name)
		}
	case FreeVars:
		for _, n := range ev.Names {
			names = append(names, t.sid(n))
		}
	case StringDef, ScriptDef:
		return fmt.Errorf("memtrace: %s records are written by Writer.Script and the string table, not Write", ev.Kind)
	}
	t.buf = append(t.buf[:0], byte(ev.Kind))
	switch ev.Kind {
	case FreeVars:
		t.u(ev.At)
		if ev.AnyVars {
			t.u(0)
		} else {
			t.u(uint64(len(names)) + 1)
			for _, n := range names {
				t.u(n)
			}
		}
	case LastUse:
		t.u(ev.Obj)
		t.u(ev.UseTime)
		t.u(ev.At)
	case EndLastUse:
		t.u(ev.UseTime)
	case Unseen:
		t.u(ev.At)
		t.u(ev.How)
		t.str(ev.Text)
	case Exit:
		t.z(ev.Code)
		t.u(ev.How)
		t.str(ev.Text)
	case Idle:
		t.u(ev.Millis)
	case Signal:
		t.str(ev.Text)
	case End:
		t.buf = AppendEnd(t.buf[:0], ev.Code, ev.Signal, ev.Flags)
	case Declare, Write:
		t.u(ev.At)
		t.u(ev.Ctx)
		t.u(name)
		t.u(ev.Value)
	case CreateObj:
		t.u(ev.At)
		t.u(ev.Obj)
		t.u(uint64(ev.ObjectKind))
	case CreateFun:
		t.u(ev.At)
		t.u(ev.Obj)
		t.u(ev.Ctx)
		t.u(ev.Proto)
	case PutField:
		t.u(ev.At)
		t.u(ev.Obj)
		t.key(ev.Key, key, false)
		t.u(ev.Value)
	case FunctionEnter:
		t.u(ev.At)
		t.u(ev.Ctx)
		t.u(ev.Parent)
		t.u(ev.Obj)
	case FunctionExit, ScriptExit:
		t.u(ev.At)
		t.u(ev.Ctx)
		t.u(ev.How)
	case Return:
		t.u(ev.At)
		t.u(ev.Ctx)
		t.u(ev.Value)
	case Call:
		t.u(ev.At)
		t.u(ev.Obj)
	case Suspend, Resume:
		t.u(ev.At)
		t.u(ev.Ctx)
	case TopLevelFlush:
		t.u(ev.At)
	case UpdateIID:
		t.u(ev.Obj)
		t.u(ev.At)
	case ScriptEnter:
		t.u(ev.At)
		t.u(ev.Script)
		t.u(ev.Ctx)
	case CollSet:
		t.u(ev.At)
		t.u(ev.Obj)
		t.key(ev.Key, key, true)
		t.u(ev.Value)
	case CollDelete:
		t.u(ev.At)
		t.u(ev.Obj)
		t.key(ev.Key, key, true)
	case CollClear:
		t.u(ev.At)
		t.u(ev.Obj)
	default:
		return fmt.Errorf("memtrace: cannot write a record of kind %s", ev.Kind)
	}
	_, err := t.w.Write(t.buf)
	return err
}

// key encodes a property key (p) or collection key (k) whose name, if
// any, is string id id.
func (t *Writer) key(k Key, id uint64, collection bool) {
	switch {
	case k.Kind == KeyIndex && !collection:
		t.u(k.N<<1 | 1)
	case k.Kind == KeyObject && collection:
		t.u(k.N << 1)
	case collection:
		t.u(id<<1 | 1)
	default:
		t.u(id << 1)
	}
}

// AppendEnd appends an END record to b: heapx writes it after the shim's
// records, once it knows how the process ended (docs/trace.md).
func AppendEnd(b []byte, code int64, signal, flags uint64) []byte {
	b = append(b, byte(End))
	b = binary.AppendVarint(b, code)
	b = binary.AppendUvarint(b, signal)
	return binary.AppendUvarint(b, flags)
}
