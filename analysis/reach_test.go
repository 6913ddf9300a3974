package analysis_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/formats/hprof"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestReachableFromDistances checks the reachability Analysis.Unreachable
// derives from the distances search against Reachable's own search: on a
// graph whose only paths to some nodes go through edges the distances
// filter refuses, and on every V8 fixture.
func TestReachableFromDistances(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{
		{Type: "synthetic", Name: "", Size: 0},                    // 0 root
		analysistest.Obj("global", 10),                            // 1 user root
		{Type: "array", Name: "(map descriptors)", Size: 8},       // 2
		analysistest.Obj("behindDescriptor", 4),                   // 3 element 4 of the descriptors: refused
		analysistest.Obj("behindIt", 2),                           // 4 only through 3
		{Type: "hidden", Name: "system / NativeContext", Size: 8}, // 5
		{Type: "object", Name: "sloppy", Size: 4},                 // 6 only through sloppy_function_map: refused
		analysistest.Obj("weaklyHeld", 6),                         // 7 only through a weak edge: unreachable
		analysistest.Obj("garbage", 6),                            // 8 no edge at all
		{Type: "array", Name: "(map descriptors)", Size: 8},       // 9 reached only from 8: unreachable
		{Type: "synthetic", Name: "(GC roots)", Size: 0},          // 10 a synthetic root child, not a user root
		analysistest.Obj("fromGCRoots", 3),                        // 11
	}, []analysistest.Edge{
		analysistest.Prop(0, 1, "global"),
		{From: 0, To: 10, Type: analysistest.ElementEdge, Index: 1},
		analysistest.Prop(1, 2, "descriptors"),
		{From: 2, To: 3, Type: analysistest.ElementEdge, Index: 4},
		analysistest.Prop(3, 4, "x"),
		analysistest.Prop(1, 5, "context"),
		{From: 5, To: 6, Type: analysistest.InternalEdge, Name: "sloppy_function_map"},
		{From: 1, To: 7, Type: analysistest.WeakEdge, Name: "w"},
		{From: 8, To: 9, Type: analysistest.PropertyEdge, Name: "d"},
		analysistest.Prop(10, 11, "r"),
	})
	dist := analysis.Distances(g, analysis.FindRoots(g), nil)
	if dist[3] != analysis.NoDistance || dist[4] != analysis.NoDistance || dist[6] != analysis.NoDistance {
		t.Fatalf("the filter let the search through: distances %v", dist)
	}
	want := analysis.Reachable(g)
	got := analysis.ReachableFromDistances(g)
	if !slices.Equal(got, want) || !got.Has(4) || !got.Has(6) || got.Has(7) || got.Has(9) || !got.Has(11) {
		t.Errorf("reachable from distances %b, searched %b", got, want)
	}

	// A user root held by a weak root edge only: the search from it
	// reaches what the root does not, so the derivation is refused.
	weak := analysistest.Build([]analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("global", 1), analysistest.Obj("x", 1)},
		[]analysistest.Edge{{From: 0, To: 1, Type: analysistest.WeakEdge, Name: "w"}, analysistest.Prop(1, 2, "x")})
	if r := analysis.ReachableFromDistances(weak); r != nil {
		t.Errorf("derived %b with a weakly held user root", r)
	}

	for _, path := range testfixtures.V8Dumps(t) {
		g, err := v8.ReadFile(path, v8.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want, got := analysis.Reachable(g), analysis.ReachableFromDistances(g)
		if got == nil || !slices.Equal(got, want) {
			t.Errorf("%s: %d reachable from distances, %d searched", path, got.Count(), want.Count())
		}
	}
	// Java dumps have unreachable objects (361 here) and a synthetic root
	// over the GC roots.
	path := filepath.Join(testfixtures.Dir(), "hprof", "java-ticketleak-3.hprof.gz")
	jg, err := hprof.ReadFile(path, hprof.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, got = analysis.Reachable(jg), analysis.ReachableFromDistances(jg)
	if n := jg.NumNodes() - want.Count(); n != 361 || got == nil || !slices.Equal(got, want) {
		t.Errorf("%s: %d unreachable; %d reachable from distances, %d searched", path, n, got.Count(), want.Count())
	}
}
