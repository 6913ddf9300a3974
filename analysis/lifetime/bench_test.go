package lifetime

import (
	"bytes"
	"testing"

	mt "github.com/heapx/heapx/formats/memtrace"
)

// churnTrace is a trace of n calls from a script's top level, each
// allocating a node, its range and a two-object cycle that it drops, one
// node kept in a global ring of 16: 12 events per call, a live heap of a
// few dozen objects. The calls are 1,000 to a statement.
func churnTrace(tb testing.TB, n int) []byte {
	tb.Helper()
	var b bytes.Buffer
	w, err := mt.NewWriter(&b)
	if err != nil {
		tb.Fatal(err)
	}
	_, base, err := w.Script("/app/churn.js", mt.CommonJS, []mt.Pos{{Line: 1, Column: 1}, {Line: 2, Column: 1}, {Line: 3, Column: 9}, {Line: 4, Column: 9}, {Line: 5, Column: 9}})
	if err != nil {
		tb.Fatal(err)
	}
	write := func(ev mt.Event) {
		if err := w.Write(&ev); err != nil {
			tb.Fatal(err)
		}
	}
	write(mt.Event{Kind: mt.FreeVars, At: base + 2})
	write(mt.Event{Kind: mt.FreeVars, At: base + 1, Names: []string{"ring"}})
	write(mt.Event{Kind: mt.ScriptEnter, At: base + 1, Script: 1, Ctx: 2})
	write(mt.Event{Kind: mt.CreateObj, At: base + 3, Obj: 2})
	write(mt.Event{Kind: mt.Declare, At: base + 3, Ctx: 2, Name: "ring", Value: 2})
	obj := uint64(10)
	for i := range n {
		ctx := uint64(10 + i)
		node, rng, a, c := obj, obj+1, obj+2, obj+3
		obj += 4
		for _, ev := range []mt.Event{
			{Kind: mt.FunctionEnter, At: base + 2, Ctx: ctx, Parent: 2},
			{Kind: mt.CreateObj, At: base + 3, Obj: node},
			{Kind: mt.CreateObj, At: base + 4, Obj: rng},
			{Kind: mt.PutField, At: base + 4, Obj: node, Key: mt.Key{Name: "range"}, Value: rng},
			{Kind: mt.CreateObj, At: base + 5, Obj: a},
			{Kind: mt.CreateObj, At: base + 5, Obj: c},
			{Kind: mt.PutField, At: base + 5, Obj: a, Key: mt.Key{Name: "next"}, Value: c},
			{Kind: mt.PutField, At: base + 5, Obj: c, Key: mt.Key{Name: "next"}, Value: a},
			{Kind: mt.Declare, At: base + 5, Ctx: ctx, Name: "cycle", Value: a},
			{Kind: mt.Declare, At: base + 3, Ctx: ctx, Name: "node", Value: node},
			{Kind: mt.PutField, At: base + 3, Obj: 2, Key: mt.Key{Kind: mt.KeyIndex, N: uint64(i % 16)}, Value: node},
			{Kind: mt.FunctionExit, At: base + 2, Ctx: ctx},
		} {
			write(ev)
		}
		if i%1000 == 999 {
			for u := obj - 4000; u < obj; u++ {
				write(mt.Event{Kind: mt.LastUse, Obj: u, UseTime: 1})
			}
			write(mt.Event{Kind: mt.EndLastUse, UseTime: uint64(5 + 12*(i+1))})
			// The work is split in statements (or event-loop tasks):
			// the dead cycles are swept at their ends.
			write(mt.Event{Kind: mt.TopLevelFlush, At: base + 1})
		}
	}
	write(mt.Event{Kind: mt.End})
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// The simulated heap stays the size of the live heap plus one statement's
// garbage however long the trace: slots and edges are reused.
func TestMemoryFollowsLiveHeap(t *testing.T) {
	var slots [2]int
	for k, n := range []int{1000, 100000} {
		data := churnTrace(t, n)
		r, err := mt.NewReader(bytes.NewReader(data), "churn")
		if err != nil {
			t.Fatal(err)
		}
		var count int
		s := NewSimulator(func(*Lifetime) { count++ })
		// Dead cycles wait in the queue until it is longer than this
		// (50,000 by default) at a flush point.
		s.CycleQueueLimit = 1000
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if err := s.Apply(&ev); err != nil {
				t.Fatal(err)
			}
		}
		if count != 4*n+1 {
			t.Errorf("%d calls: %d lifetimes, want %d", n, count, 4*n+1)
		}
		// A statement's garbage: 1,000 calls' cycles (2,000 objects,
		// found at the statement's end), and the nodes and ranges the
		// ring let go (2,000, made by earlier calls).
		slots[k] = len(s.nodes) + len(s.edges)
		if len(s.nodes) > 4100 || len(s.edges) > 3100 {
			t.Errorf("%d calls: %d node slots, %d edge slots", n, len(s.nodes), len(s.edges))
		}
	}
	if slots[1] > slots[0]+100 {
		t.Errorf("slots grow with the trace: %d for 1,000 calls, %d for 100,000", slots[0], slots[1])
	}
}

func BenchmarkAnalyze(b *testing.B) {
	const calls = 50000
	data := churnTrace(b, calls)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := mt.NewReader(bytes.NewReader(data), "churn")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Analyze(r, "churn", Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(calls*12), "ns/event")
}

// BenchmarkSimulate is the simulation alone, events decoded beforehand.
func BenchmarkSimulate(b *testing.B) {
	data := churnTrace(b, 50000)
	r, err := mt.NewReader(bytes.NewReader(data), "churn")
	if err != nil {
		b.Fatal(err)
	}
	var evs []mt.Event
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		evs = append(evs, ev)
	}
	b.ReportAllocs()
	for b.Loop() {
		s := NewSimulator(func(*Lifetime) {})
		for i := range evs {
			if err := s.Apply(&evs[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
}
