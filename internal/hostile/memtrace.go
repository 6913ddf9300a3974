package hostile

import (
	"encoding/binary"
	"io"

	mt "github.com/heapx/heapx/formats/memtrace"
)

// Memory traces (formats/memtrace) made to cost the reader or the lifetime
// analysis what the bytes do not: each is a valid trace (or cut short
// where the lie is a length), built with memtrace.Writer.

// traceWriter is a memtrace.Writer that keeps the first error.
type traceWriter struct {
	w   *mt.Writer
	err error
}

func newTrace(w io.Writer) *traceWriter {
	tw, err := mt.NewWriter(w)
	return &traceWriter{w: tw, err: err}
}

func (t *traceWriter) ev(e mt.Event) {
	if t.err == nil {
		t.err = t.w.Write(&e)
	}
}

// script writes a SCRIPT record of n instructions, one a line, and enters
// the script (context 2) at its first instruction.
func (t *traceWriter) script(n int) {
	pos := make([]mt.Pos, n)
	for i := range pos {
		pos[i] = mt.Pos{File: "crafted.js", Line: i + 1, Column: 1}
	}
	if t.err == nil {
		_, _, t.err = t.w.Script("crafted.js", mt.CommonJS, pos)
	}
	t.ev(mt.Event{Kind: mt.ScriptEnter, At: 1, Script: 1, Ctx: 2})
}

func (t *traceWriter) end() error {
	t.ev(mt.Event{Kind: mt.End})
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}

// TraceIdleSites writes a program that, after its script's top level,
// runs n callbacks, each allocating one object at an instruction of its
// own and keeping it in a global array, never to use it again: n
// allocation sites, each stale at the n idle points after it (the
// callbacks' ends). A table of every site's stale count at every idle
// point is n² counts: 80 GB for n = 100,000, from 3 MB of trace.
func TraceIdleSites(w io.Writer, n int) error {
	t := newTrace(w)
	t.script(n + 2)
	t.ev(mt.Event{Kind: mt.CreateObj, At: 2, Obj: 10, ObjectKind: mt.ArrayLiteral})
	t.ev(mt.Event{Kind: mt.PutField, At: 2, Obj: mt.GlobalObject, Key: mt.Key{Name: "kept"}, Value: 10})
	t.ev(mt.Event{Kind: mt.ScriptExit, At: 2, Ctx: 2})
	for i := range n {
		ctx, obj := uint64(3+i), uint64(100+i)
		t.ev(mt.Event{Kind: mt.FunctionEnter, At: 2, Ctx: ctx, Parent: 2})
		t.ev(mt.Event{Kind: mt.CreateObj, At: uint64(3 + i), Obj: obj})
		t.ev(mt.Event{Kind: mt.PutField, At: uint64(3 + i), Obj: 10, Key: mt.Key{Kind: mt.KeyIndex, N: uint64(i)}, Value: obj})
		t.ev(mt.Event{Kind: mt.FunctionExit, At: uint64(3 + i), Ctx: ctx})
	}
	return t.end()
}

// TraceList writes a program that builds a linked list of n objects
// (each new one's next is the one before), keeps its head in a global,
// then drops it: n objects unreachable at once, each only through the
// one before (a walk that recurses per object overflows its stack).
func TraceList(w io.Writer, n int) error { return traceList(w, n, false) }

// TraceRing is TraceList with the list closed into a ring (the first
// object's next is the last) before it is dropped: a cycle of n objects.
func TraceRing(w io.Writer, n int) error { return traceList(w, n, true) }

func traceList(w io.Writer, n int, ring bool) error {
	t := newTrace(w)
	t.script(4)
	t.ev(mt.Event{Kind: mt.Declare, At: 2, Ctx: 2, Name: "head"})
	for i := range n {
		obj := uint64(100 + i)
		t.ev(mt.Event{Kind: mt.CreateObj, At: 3, Obj: obj})
		if i > 0 {
			t.ev(mt.Event{Kind: mt.PutField, At: 3, Obj: obj, Key: mt.Key{Name: "next"}, Value: obj - 1})
		}
		t.ev(mt.Event{Kind: mt.Write, At: 3, Ctx: 2, Name: "head", Value: obj})
	}
	if ring {
		t.ev(mt.Event{Kind: mt.PutField, At: 3, Obj: 100, Key: mt.Key{Name: "next"}, Value: uint64(100 + n - 1)})
	}
	t.ev(mt.Event{Kind: mt.Write, At: 4, Ctx: 2, Name: "head"})
	t.ev(mt.Event{Kind: mt.ScriptExit, At: 4, Ctx: 2})
	return t.end()
}

// TraceDeepCalls writes n nested calls that never return, each allocating
// an object its context holds, and the end of the trace (a program killed
// in a runaway recursion).
func TraceDeepCalls(w io.Writer, n int) error {
	t := newTrace(w)
	t.script(4)
	for i := range n {
		ctx, obj := uint64(3+i), uint64(100+i)
		t.ev(mt.Event{Kind: mt.FunctionEnter, At: 3, Ctx: ctx, Parent: ctx - 1})
		t.ev(mt.Event{Kind: mt.CreateObj, At: 3, Obj: obj})
		t.ev(mt.Event{Kind: mt.Declare, At: 3, Ctx: ctx, Name: "x", Value: obj})
	}
	return t.end()
}

// TraceLongString writes a trace whose first record is a STRING declared
// 64 MiB long (the reader's bound) followed by a few bytes: a reader that
// allocates the declared length first spends 64 MB on it.
func TraceLongString(w io.Writer) error {
	b := []byte(mt.Magic + string(rune(mt.Version)))
	b = append(b, byte(mt.StringDef), 1)
	b = binary.AppendUvarint(b, 1<<26)
	b = append(b, "only these bytes"...)
	_, err := w.Write(b)
	return err
}

// TraceFreeVars writes a FREE_VARS record declaring 2^60 names, then the
// end of the file after one.
func TraceFreeVars(w io.Writer) error {
	b := []byte(mt.Magic + string(rune(mt.Version)))
	b = append(b, byte(mt.FreeVars), 0)
	b = binary.AppendUvarint(b, 1<<60)
	b = append(b, 0)
	_, err := w.Write(b)
	return err
}
