package alloc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/formats/heapprofile"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
)

// allocationTop is one row of DevTools' Allocation view as
// testdata/gen/devtools-allocation.mjs tops wrote it.
type allocationTop struct {
	Name       string `json:"name"`
	ScriptName string `json:"script_name"`
	Line       int32  `json:"line"`
	Column     int32  `json:"column"`
	LiveCount  int    `json:"live_count"`
	LiveSize   uint64 `json:"live_size"`
}

// TestAllocationSitesMatchDevTools compares every site of the dumps with
// allocation stacks with DevTools' Allocation view of the same file: the
// same functions at the same script:line:column, with the same live count
// and size.
func TestAllocationSitesMatchDevTools(t *testing.T) {
	for _, tc := range []struct{ name, file string }{
		{"node-sites", "node-sites.heapsnapshot.gz"},
		{"node-trace", "node-trace.heapsnapshot.gz"},
		{"node-timeline", "node-timeline.heaptimeline.gz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), tc.file), v8.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			sites, err := alloc.AllocationSites(a)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "golden", tc.name+".devtools-allocation.json"))
			if err != nil {
				t.Fatal(err)
			}
			var gold []allocationTop
			if err := json.Unmarshal(b, &gold); err != nil {
				t.Fatal(err)
			}
			key := func(name, script string, line, col int32) string {
				return fmt.Sprintf("%s|%s|%d|%d", name, script, line, col)
			}
			want := map[string]allocationTop{}
			for _, g := range gold {
				k := key(g.Name, g.ScriptName, g.Line, g.Column)
				w := want[k] // distinct functions can share a name and position
				w.LiveCount += g.LiveCount
				w.LiveSize += g.LiveSize
				want[k] = w
			}
			got := map[string]allocationTop{}
			for _, s := range sites {
				k := key(s.Function, s.URL, s.Line, s.Column)
				w := got[k]
				w.LiveCount += s.Count
				w.LiveSize += s.Shallow
				got[k] = w
			}
			if len(got) != len(want) {
				t.Errorf("%d distinct sites, DevTools has %d", len(got), len(want))
			}
			for k, w := range want {
				if g := got[k]; g != w {
					t.Errorf("site %s: count %d size %d, DevTools %d %d", k, g.LiveCount, g.LiveSize, w.LiveCount, w.LiveSize)
				}
			}
		})
	}
}

// TestAllocationSitesKnownLines checks testdata/gen/sites.js's sites in
// the snapshot it wrote under --track-heap-objects: each function at its
// line, with its callers, and retained sizes that add up.
func TestAllocationSitesKnownLines(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), "node-sites.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sites, err := alloc.AllocationSites(a)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]alloc.AllocationSite{}
	for _, s := range sites {
		by[s.Function] = s
	}
	const script = "/tmp/heapx-sites-app/sites.js"
	// makeRecord: 4,000 records, each an object, a string, an array and
	// its elements; Widget: 3,000 widgets and their parts arrays.
	for _, w := range []struct {
		fn         string
		line, col  int32
		count      int
		callerLine int32
	}{
		{"makeRecord", 4, 20, 16028, 1},
		{"Widget", 10, 27, 6009, 1},
	} {
		s := by[w.fn]
		if s.URL != script || s.Line != w.line || s.Column != w.col || s.Count != w.count {
			t.Errorf("%s: %s:%d:%d, %d objects; want %s:%d:%d, %d", w.fn, s.URL, s.Line, s.Column, s.Count, script, w.line, w.col, w.count)
		}
		if len(s.Stack) == 0 || s.Stack[0].URL != script || s.Stack[0].Line != w.callerLine {
			t.Errorf("%s: called from %+v, want the script's top level", w.fn, s.Stack)
		}
		if s.Retained < s.Shallow {
			t.Errorf("%s: retained %d < shallow %d", w.fn, s.Retained, s.Shallow)
		}
	}
	// The typed arrays are allocated by the native Float64Array, called
	// from makeBuffer at line 7.
	if s := by["Float64Array"]; len(s.Stack) == 0 || s.Stack[0].Function != "makeBuffer" || s.Stack[0].Line != 7 || s.Count != 800 {
		t.Errorf("Float64Array: %d objects, called from %+v; want 800 from makeBuffer at line 7", s.Count, s.Stack)
	}
	// Sorted by retained size, which never exceeds the heap's.
	for i := 1; i < len(sites); i++ {
		if sites[i].Retained > sites[i-1].Retained {
			t.Fatalf("site %d retains more than site %d", i, i-1)
		}
	}
	if sites[0].Retained > a.TotalSize() {
		t.Errorf("top site retains %d of a %d heap", sites[0].Retained, a.TotalSize())
	}
}

func TestAllocationSitesWithoutStacks(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alloc.AllocationSites(a); !errors.Is(err, alloc.ErrNoAllocationStacks) {
		t.Errorf("node-basic (no --track-heap-objects): %v, want ErrNoAllocationStacks", err)
	}
}

// TestProfileSites checks the views of testdata/node-sites.heapprofile
// (node --heap-prof of testdata/gen/sites.js) against sums taken straight
// from the file's call tree.
func TestProfileSites(t *testing.T) {
	p, err := heapprofile.ReadFile(filepath.Join(testfixtures.Dir(), "node-sites.heapprofile"))
	if err != nil {
		t.Fatal(err)
	}
	tot := alloc.SumProfile(p)
	sites := alloc.ProfileSites(p, tot)
	const script = "/tmp/heapx-sites-app/sites.js"
	// Values of the file's nodes 48 (makeRecord), 52 (Widget) and 47 (the
	// script's top level, with push, makeRecord, makeBuffer > Float64Array
	// and Widget below it).
	top := sites[0]
	if top.Function != "makeRecord" || top.URL != script || top.Line != 4 || top.Column != 20 || top.Self != 1015920 || top.Total != 1015920 || top.Samples != 244 {
		t.Errorf("top site %+v", top)
	}
	if w := sites[1]; w.Function != "Widget" || w.Line != 10 || w.Column != 27 || w.Self != 231120 {
		t.Errorf("second site %+v", w)
	}
	var script1 alloc.ProfileSite
	for _, s := range sites {
		if s.URL == script && s.Line == 1 {
			script1 = s
		}
	}
	if script1.Self != 135840 || script1.Total != 135840+80160+1015920+74528+231120 {
		t.Errorf("top level of sites.js: %+v", script1)
	}
	var self uint64
	for _, s := range sites {
		self += s.Self
	}
	if self+p.Nodes[0].SelfSize != tot.Total[0] {
		t.Errorf("self sizes add up to %d, the tree to %d", self, tot.Total[0])
	}
	// Bottom-up: makeRecord first, called from the script's top level.
	bu := alloc.ProfileBottomUp(p, tot, 0)
	if bu[0].Function != "makeRecord" || bu[0].Self != top.Self || len(bu[0].Children) != 1 || bu[0].Children[0].Line != 1 || bu[0].Children[0].Self != top.Self {
		t.Errorf("bottom-up: %+v", bu[0])
	}
}

// TestProfileBottomUpChain inverts a call tree whose stacks together hold
// the square of its depth in frames (hostile.HeapProfileChain): every row
// is there with -n 0, and with a limit the inversion allocates for the
// rows kept, not for every stack.
func TestProfileBottomUpChain(t *testing.T) {
	chain := func(levels, leaves int) (*heapprofile.Profile, alloc.ProfileTotals) {
		var b bytes.Buffer
		if err := hostile.HeapProfileChain(&b, levels, leaves); err != nil {
			t.Fatal(err)
		}
		p, err := heapprofile.Read(&b, "chain.heapprofile")
		if err != nil {
			t.Fatal(err)
		}
		return p, alloc.SumProfile(p)
	}
	var rows func(ns []*alloc.BottomUpNode) int
	rows = func(ns []*alloc.BottomUpNode) int {
		n := len(ns)
		for _, c := range ns {
			n += rows(c.Children)
		}
		return n
	}
	// f2..f101 at depths 1..100, each above its callers; ten leaves at
	// depth 101, each above the hundred chain frames.
	p, tot := chain(100, 10)
	bu := alloc.ProfileBottomUp(p, tot, 0)
	if n := rows(bu); len(bu) != 110 || n != 5050+10*101 {
		t.Errorf("%d top rows, %d rows; want 110 and %d", len(bu), n, 5050+10*101)
	}
	leaf := bu[100] // f102, the first leaf: all self sizes tie, so file order
	for d, at := 0, leaf; d < 100; d++ {
		if len(at.Children) != 1 || at.Children[0].Function != fmt.Sprintf("f%d", 101-d) || at.Children[0].Self != 8 {
			t.Fatalf("leaf %s, caller %d: %+v", leaf.Function, d, at.Children)
		}
		at = at.Children[0]
	}
	p, tot = chain(1000, 50_000)
	var top []*alloc.BottomUpNode
	alloc := hostile.Allocated(func() { top = alloc.ProfileBottomUp(p, tot, 20) })
	if len(top) != 20 || rows(top) != 20+19*20/2 || alloc > 32<<20 {
		t.Errorf("limit 20: %d top rows, %d rows, %d MB allocated", len(top), rows(top), alloc>>20)
	}
}

// TestProfileRecursion reads a function recursing 1,000 levels deep with
// 50,000 calls of a leaf function at its bottom (hostile.HeapProfileRecursion,
// a cycle of the call graph): the recursing function's total is every
// byte under it once, and the bottom-up tree is the leaf above 1,000
// levels of the recursion (all its stacks merged into one row a level)
// and the recursion above its own 999 callers, with the bytes allocated
// through each.
func TestProfileRecursion(t *testing.T) {
	var b bytes.Buffer
	if err := hostile.HeapProfileRecursion(&b, 1000, 50_000); err != nil {
		t.Fatal(err)
	}
	p, err := heapprofile.Read(&b, "recursion.heapprofile")
	if err != nil {
		t.Fatal(err)
	}
	tot := alloc.SumProfile(p)
	sites := alloc.ProfileSites(p, tot)
	if len(sites) != 2 || sites[0].Function != "leaf" || sites[0].Self != 400_000 || sites[0].Samples != 50_000 ||
		sites[1].Function != "recurse" || sites[1].Self != 8_000 || sites[1].Total != 408_000 {
		t.Fatalf("sites: %+v", sites)
	}
	var bu []*alloc.BottomUpNode
	alloc := hostile.Allocated(func() { bu = alloc.ProfileBottomUp(p, tot, 0) })
	if len(bu) != 2 || bu[0].Function != "leaf" || bu[1].Function != "recurse" || alloc > 16<<20 {
		t.Fatalf("bottom-up: %d top rows, %d MB allocated", len(bu), alloc>>20)
	}
	for i, want := range []struct {
		self    uint64
		samples int
		depth   int
	}{{400_000, 50_000, 1000}, {8_000, 1000, 999}} {
		at, d := bu[i], 0
		for ; len(at.Children) == 1; d++ {
			at = at.Children[0]
			wantSelf := want.self
			if i == 1 {
				wantSelf = want.self - 8*uint64(d+1) // the nodes under d+1 levels of recursion
			}
			if at.Function != "recurse" || at.Self != wantSelf {
				t.Fatalf("%s, caller %d: %s with %d bytes, want recurse with %d", bu[i].Function, d, at.Function, at.Self, wantSelf)
			}
		}
		if d != want.depth || len(at.Children) != 0 || bu[i].Self != want.self || bu[i].Samples != want.samples {
			t.Errorf("%s: %d callers deep, %d bytes in %d samples; want %d deep, %d bytes in %d", bu[i].Function, d, bu[i].Self, bu[i].Samples, want.depth, want.self, want.samples)
		}
	}
}

// BenchmarkAllocationSites groups node-sites' 45,733 traced objects of
// its 65,386 by site, retained sizes included.
func BenchmarkAllocationSites(b *testing.B) {
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), "node-sites.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := alloc.AllocationSites(a); err != nil {
			b.Fatal(err)
		}
	}
}
