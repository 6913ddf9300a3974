package analysis_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestReachableFromDistances checks the reachability Analysis.Unreachable
// derives from the distances search against Reachable's own search: on a
// graph whose only paths to some nodes go through edges the distances
// filter refuses, and on every V8 fixture.
func TestReachableFromDistances(t *testing.T) {
	g := build([]tnode{
		{"synthetic", "", 0},                    // 0 root
		obj("global", 10),                       // 1 user root
		{"array", "(map descriptors)", 8},       // 2
		obj("behindDescriptor", 4),              // 3 element 4 of the descriptors: refused
		obj("behindIt", 2),                      // 4 only through 3
		{"hidden", "system / NativeContext", 8}, // 5
		{"object", "sloppy", 4},                 // 6 only through sloppy_function_map: refused
		obj("weaklyHeld", 6),                    // 7 only through a weak edge: unreachable
		obj("garbage", 6),                       // 8 no edge at all
		{"array", "(map descriptors)", 8},       // 9 reached only from 8: unreachable
		{"synthetic", "(GC roots)", 0},          // 10 a synthetic root child, not a user root
		obj("fromGCRoots", 3),                   // 11
	}, []tedge{
		prop(0, 1, "global"),
		{from: 0, to: 10, typ: eElement, index: 1},
		prop(1, 2, "descriptors"),
		{from: 2, to: 3, typ: eElement, index: 4},
		prop(3, 4, "x"),
		prop(1, 5, "context"),
		{from: 5, to: 6, typ: eInternal, name: "sloppy_function_map"},
		{from: 1, to: 7, typ: eWeak, name: "w"},
		{from: 8, to: 9, typ: eProperty, name: "d"},
		prop(10, 11, "r"),
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
	weak := build([]tnode{{"synthetic", "", 0}, obj("global", 1), obj("x", 1)},
		[]tedge{{from: 0, to: 1, typ: eWeak, name: "w"}, prop(1, 2, "x")})
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
