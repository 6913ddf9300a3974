package lifetime

import (
	"bytes"
	"os"
	"testing"

	mt "github.com/heapx/heapx/formats/memtrace"
)

// FuzzAnalyze feeds the analysis traces that decode but make no sense (an
// exit of a context never entered, a field of object 0, a resume of
// nothing): it must say so or carry on, never panic. Seeds: the handler
// trace and Figure 5's.
func FuzzAnalyze(f *testing.F) {
	seed, err := os.ReadFile(handlerFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	var b bytes.Buffer
	w, _ := mt.NewWriter(&b)
	for _, ev := range []mt.Event{
		{Kind: mt.PutField, Obj: 0, Key: mt.Key{Name: "f"}, Value: 3},
		{Kind: mt.CollSet, Obj: 0, Key: mt.Key{Kind: mt.KeyObject, N: 0}},
		{Kind: mt.CollClear, Obj: 0},
		{Kind: mt.FunctionExit, Ctx: 7},
		{Kind: mt.Resume, Ctx: 1},
		{Kind: mt.Suspend, Ctx: 1},
		{Kind: mt.End},
	} {
		if err := w.Write(&ev); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := mt.NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		res, err := Analyze(r, "fuzz", Options{CycleQueueLimit: 2})
		if err != nil {
			return
		}
		res.Timeline(5, []int32{0})
		for i := range res.Sites {
			res.CallTree(res.Sites[i].IID)
		}
		if r, err := mt.NewReader(bytes.NewReader(data), "fuzz"); err == nil {
			if res, err := Analyze(r, "fuzz", Options{StopAt: 3}); err == nil && res.Heap != nil {
				res.Heap.AccessPaths(1, res.Positions)
			}
		}
	})
}
