package alloc_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// nodeWithID returns the node of g with id, failing t when there is none.
func nodeWithID(t *testing.T, g *model.Graph, id uint64) model.NodeIndex {
	t.Helper()
	for i := range g.Nodes.ID.Len() {
		x := g.Nodes.ID.At(i)
		if x == id {
			return model.NodeIndex(i)
		}
	}
	t.Fatalf("no node with id %d", id)
	return model.NoNode
}

// TestAllocationStackMatchesDevTools compares AllocationStack with
// DevTools' Allocation stack pane of the same objects.
func TestAllocationStackMatchesDevTools(t *testing.T) {
	for name, file := range map[string]string{"node-sites": "node-sites.heapsnapshot.gz", "node-trace": "node-trace.heapsnapshot.gz",
		"node-timeline": "node-timeline.heaptimeline.gz"} {
		g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), file), v8.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range testfixtures.DevToolsAllocationStacks(t, name) {
			var got []testfixtures.StackFrame
			for _, f := range alloc.AllocationStack(a, nodeWithID(t, a.Graph, want.ID)) {
				fn := f.Function
				if fn == "" {
					fn = "(anonymous)"
				}
				got = append(got, testfixtures.StackFrame{Function: fn, Script: f.URL, Line: f.Line, Column: f.Column})
			}
			if !reflect.DeepEqual(got, want.Stack) {
				t.Errorf("%s @%d: %+v\nDevTools: %+v", name, want.ID, got, want.Stack)
			}
		}
	}
}

// TestClassSites: every node counts in its class, the sites of
// testdata/gen/sites.js's classes are its functions, and a group's
// dominant site is the same on a second call (the finder's counts start
// from zero each time).
func TestClassSites(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-sites")
	sites := alloc.ClassSites(a)
	if len(sites) != len(a.Classes.Names) {
		t.Fatalf("%d class sites for %d classes", len(sites), len(a.Classes.Names))
	}
	all := 0
	byName := map[string]alloc.SiteShare{}
	for c, s := range sites {
		all += s.Of
		if s.Count > s.Of {
			t.Errorf("class %s: %d of %d objects allocated at its site", a.Classes.Names[c], s.Count, s.Of)
		}
		byName[a.Classes.Names[c]] = s
	}
	if all != a.Graph.NumNodes() {
		t.Errorf("the classes count %d objects, the dump has %d", all, a.Graph.NumNodes())
	}
	const script = "/tmp/heapx-sites-app/sites.js"
	for class, want := range map[string]alloc.SiteShare{
		"{label, payload}": {Frame: alloc.Frame{Function: "makeRecord", URL: script, Line: 4, Column: 20}, Count: 4001, Of: 4001},
		"Widget":           {Frame: alloc.Frame{URL: script, Line: 1, Column: 1}, Count: 3000, Of: 3000},
	} {
		if got := byName[class]; got != want {
			t.Errorf("%s: %+v, want %+v", class, got, want)
		}
	}
	// The Widget objects as a group: the same site, twice.
	var widgets []model.NodeIndex
	for v, c := range a.Classes.Of {
		if a.Classes.Names[c] == "Widget" && a.Graph.NodeType(int32(v)).Name == "object" {
			widgets = append(widgets, int32(v))
		}
	}
	f := alloc.NewSiteFinder(a)
	for range 2 {
		if s, ok := f.Dominant(widgets); !ok || s != byName["Widget"] {
			t.Errorf("Dominant(Widget objects) = %+v, %v; want %+v", s, ok, byName["Widget"])
		}
	}
	if _, ok := f.Dominant(nil); ok {
		t.Errorf("Dominant of no objects found a site")
	}
}

// TestNoAllocationStacks: a dump without allocation stacks has no site
// nor stack anywhere, and costs no work: no finder, no class sites.
func TestNoAllocationStacks(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-basic")
	if alloc.HasAllocationStacks(a) || alloc.ClassSites(a) != nil || alloc.NewSiteFinder(a) != nil {
		t.Fatalf("node-basic has allocation stacks")
	}
	for v := range a.Graph.NumNodes() {
		if s := alloc.AllocationStack(a, int32(v)); s != nil {
			t.Fatalf("node %d has a stack %v", v, s)
		}
	}
	var f *alloc.SiteFinder
	if _, ok := f.Dominant([]model.NodeIndex{1, 2, 3}); ok {
		t.Errorf("a nil finder found a site")
	}
}

// BenchmarkClassSites times the Summary's allocation sites on the
// HEAPX_BENCH_SNAPSHOT (with allocation stacks for it to measure
// anything: node --track-heap-objects), next to the Summary itself.
func BenchmarkClassSites(b *testing.B) {
	g := analysistest.LoadBench(b)
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Summary", func(b *testing.B) {
		for b.Loop() {
			a.Summary()
		}
	})
	b.Run("ClassSites", func(b *testing.B) {
		for b.Loop() {
			alloc.ClassSites(a)
		}
	})
	b.Run("Closures", func(b *testing.B) {
		for b.Loop() {
			inspect.Closures(a, 20)
		}
	})
}
