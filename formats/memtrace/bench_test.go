package memtrace

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// BenchmarkNext decodes a trace of a million mixed program events (the
// mix of a traced parser: enters and exits, declares, stores, creations),
// or the trace in HEAPX_BENCH_TRACE (a file heapx trace wrote).
func BenchmarkNext(b *testing.B) {
	raw := benchTrace(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewReader(bytes.NewReader(raw), "bench")
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchTrace(b *testing.B) []byte {
	if f := os.Getenv("HEAPX_BENCH_TRACE"); f != "" {
		raw, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	var buf bytes.Buffer
	w, _ := NewWriter(&buf)
	pos := make([]Pos, 1000)
	for i := range pos {
		pos[i] = Pos{Line: 1 + i/10, Column: 1 + i%80}
	}
	_, base, _ := w.Script("/app/parser.js", CommonJS, pos)
	for i := uint64(0); i < 1_000_000/8; i++ {
		at := base + 1 + i%1000
		ctx := 2 + i
		for _, ev := range []Event{
			{Kind: FunctionEnter, At: at, Ctx: ctx, Parent: 2},
			{Kind: Declare, At: at, Ctx: ctx, Name: "node", Value: 10 + i},
			{Kind: CreateObj, At: at, Obj: 1_000_000 + i, ObjectKind: ObjectLiteral},
			{Kind: PutField, At: at, Obj: 1_000_000 + i, Key: Key{Name: "range"}, Value: 10 + i},
			{Kind: PutField, At: at, Obj: 10 + i, Key: Key{Kind: KeyIndex, N: i % 7}, Value: 0},
			{Kind: Write, At: at, Ctx: 2, Name: "current", Value: 1_000_000 + i},
			{Kind: Return, At: at, Ctx: ctx, Value: 1_000_000 + i},
			{Kind: FunctionExit, At: at, Ctx: ctx},
		} {
			w.Write(&ev)
		}
	}
	w.Write(&Event{Kind: End})
	w.Flush()
	return buf.Bytes()
}
