package analysis_test

import (
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

// The retainer paths of a list's last item: the one path through every
// item, found in time linear in its length.
func TestPathsLongChain(t *testing.T) {
	const n = 100000
	a := analysistest.AnalyzeList(t, n)
	last := int32(4 + 2*(n-1))
	ps := a.Paths(last, analysis.PathOptions{K: 3})
	if len(ps) != 1 || len(ps[0].Steps) != n+2 || ps[0].Steps[n+1].To != last || ps[0].Cost != n+2 {
		t.Fatalf("%d paths, first of %d steps", len(ps), len(ps[0].Steps))
	}
}

// The search's bound is on the paths after the first: the first path is
// found however long it is. With the bound on every label, the last item
// of a real 1M-item list had "no retainer path" (it takes 1M labels).
func TestPathsLongerThanTheBound(t *testing.T) {
	const n = 100000
	a := analysistest.AnalyzeList(t, n)
	last := int32(4 + 2*(n-1))
	ps := a.Paths(last, analysis.PathOptions{K: 3, MaxExpansions: 1000})
	if len(ps) != 1 || len(ps[0].Steps) != n+2 || ps[0].Steps[n+1].To != last {
		t.Fatalf("%d paths", len(ps))
	}
}

// The paths to the real list's last item, through every item, in
// DevTools' order (Shortest): from global.list, through global's property
// cell for `list`, from the native context on the stack (the issue:
// `paths --id <tail>` ran past 200 s). The paths shown (Find) are the
// first alone: the other two differ from it only in how the runtime
// holds the list's head.
func TestPathsNodeLinkedList(t *testing.T) {
	as, l := analysistest.NodeListSeries(t)
	a := as[2]
	g := a.Graph
	tail := analysistest.NodeByID(t, a, l.TailID)
	pf := a.PathFinder(analysis.PathOptions{K: 3})
	ps := pf.Shortest(tail)
	hops := l.Items + l.WarmItems - 1 // .next hops from the head
	if len(ps) != 3 {
		t.Fatalf("%d paths", len(ps))
	}
	if shown := pf.Find(tail); len(shown) != 1 || len(shown[0].Steps) != len(ps[0].Steps) || shown[0].Cost != ps[0].Cost ||
		analysis.EdgeString(g, shown[0].Steps[1].Edge) != ".list" {
		t.Errorf("shown: %d paths, the first %+v", len(shown), shown)
	}
	for i, w := range []struct {
		prefix []string
		system bool
	}{
		{[]string{".2", ".list", ".head"}, false},
		{[]string{".2", "{properties}", "", "{value}", ".head"}, false},     // "": a property cell, any index
		{[]string{"[1]", "[7]", "", "{extension}", ".list", ".head"}, true}, // "": the native context, any index
	} {
		p := ps[i]
		if len(p.Steps) != len(w.prefix)+hops || p.System != w.system || p.Steps[len(p.Steps)-1].To != tail {
			t.Errorf("path %d: %d steps, system %v", i, len(p.Steps), p.System)
			continue
		}
		for j, e := range w.prefix {
			if got := analysis.EdgeString(g, p.Steps[j].Edge); got != e && e != "" {
				t.Errorf("path %d step %d: %s, want %s", i, j, got, e)
			}
		}
		for _, s := range p.Steps[len(w.prefix):] {
			if analysis.EdgeString(g, s.Edge) != ".next" {
				t.Fatalf("path %d: %s", i, analysis.EdgeString(g, s.Edge))
			}
		}
	}
}

// BenchmarkPathsLinkedList finds the paths to the last item of a list of a
// million items: one path of a million hops, past the search's bound.
func BenchmarkPathsLinkedList(b *testing.B) {
	const n = 1000000
	a := analysistest.AnalyzeList(b, n)
	last := int32(4 + 2*(n-1))
	a.Retainers()
	b.ResetTimer()
	for range b.N {
		if ps := a.Paths(last, analysis.PathOptions{K: 3}); len(ps) != 1 {
			b.Fatalf("%d paths", len(ps))
		}
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}

// TestShortestPathsMatchFind checks ShortestPaths against PathFinder.Shortest
// on every fixture: for a sample of nodes the costs and System flags are
// equal, each path is a chain of real edges from the root, and
// unreachable nodes have none.
func TestShortestPathsMatchFind(t *testing.T) {
	for _, name := range []string{"node-leak-3", "chromium-small-page", "node-internals"} {
		a := analysistest.AnalyzeFixture(t, name)
		g := a.Graph
		targets := everyNth(g, 97)
		got := a.ShortestPaths(targets)
		pf := analysis.NewPathFinder(g, a.Retainers(), a.Roots, analysis.PathOptions{K: 1})
		for i, v := range targets {
			want := pf.Shortest(v)
			p := got[i]
			if len(want) == 0 {
				if p.Cost != -1 && v != g.Root {
					t.Errorf("%s: node %d has a path of cost %d, Find none", name, v, p.Cost)
				}
				continue
			}
			if p.Cost != want[0].Cost || p.System != want[0].System || len(p.Steps) != len(want[0].Steps) {
				t.Errorf("%s: node %d: cost %d system %v %d steps, Find %d %v %d", name, v, p.Cost, p.System, len(p.Steps),
					want[0].Cost, want[0].System, len(want[0].Steps))
				continue
			}
			from := g.Root
			for _, st := range p.Steps {
				s, end := g.EdgeRange(st.From)
				if st.From != from || st.Edge < s || st.Edge >= end || g.Edges.To[st.Edge] != st.To {
					t.Fatalf("%s: node %d: broken step %+v", name, v, st)
				}
				from = st.To
			}
			if len(p.Steps) > 0 && from != v {
				t.Errorf("%s: node %d: path ends at %d", name, v, from)
			}
		}
	}
}

// TestNoWeakFinder: paths --no-weak on real dumps. A WeakMap's value
// (node-basic's CustomerNote) has a plain path through the WeakMap's
// table and --no-weak paths through its key, the Customer, none through
// the runtime's objects. Map.prototype has a plain path through an object
// shape ({map} then {prototype}) and --no-weak paths without it. A
// LeakedItem (node-leak-3) is held only through the runtime's objects
// (the program's listener on an EventEmitter): it gets the plain path,
// said. On a Java heap no path takes Reference.referent: a SoftReference's
// referent has none.
func TestNoWeakFinder(t *testing.T) {
	type hop struct{ internal, ephemeron, weak int }
	count := func(a *analysis.Analysis, p analysis.Path) (h hop) {
		for _, s := range p.Steps {
			if a.IsRuntimeInternalEdge(s.From, s.Edge) {
				h.internal++
			}
			switch a.Graph.EdgeType(s.Edge).Strength {
			case model.Ephemeron:
				h.ephemeron++
			case model.Weak:
				h.weak++
			}
		}
		return h
	}
	noWeak := func(a *analysis.Analysis, v model.NodeIndex, k int) ([]analysis.Path, bool) {
		return a.NoWeakFinder().With(analysis.PathOptions{K: k}).Find(v)
	}

	basic := analysistest.AnalyzeFixture(t, "node-basic")
	note := nodeWithID(t, basic.Graph, 93921)
	plain := basic.Paths(note, analysis.PathOptions{K: 3})
	if len(plain) != 3 || count(basic, plain[1]) != (hop{ephemeron: 1}) {
		t.Fatalf("the CustomerNote's second plain path is not through its WeakMap's table: %d paths", len(plain))
	}
	paths, through := noWeak(basic, note, 3)
	if len(paths) != 2 || through {
		t.Fatalf("the CustomerNote: %d --no-weak paths, through the runtime %v", len(paths), through)
	}
	for _, p := range paths {
		if h := count(basic, p); h != (hop{}) || basic.Classes.Name(p.Steps[len(p.Steps)-1].From) != "Customer" {
			t.Errorf("a --no-weak path to the CustomerNote: %+v, from a %s", h, basic.Classes.Name(p.Steps[len(p.Steps)-1].From))
		}
	}

	leak3 := analysistest.AnalyzeFixture(t, "node-leak-3")
	proto := nodeWithID(t, leak3.Graph, 6089)
	plain = leak3.Paths(proto, analysis.PathOptions{K: 3})
	if len(plain) != 3 || count(leak3, plain[2]).internal == 0 {
		t.Fatalf("Map.prototype's third plain path is not through an object shape: %d paths", len(plain))
	}
	if paths, through = noWeak(leak3, proto, 3); len(paths) != 2 || through || count(leak3, paths[0]) != (hop{}) || count(leak3, paths[1]) != (hop{}) {
		t.Errorf("Map.prototype: %d --no-weak paths, through the runtime %v", len(paths), through)
	}
	item := nodeWithID(t, leak3.Graph, 92189)
	paths, through = noWeak(leak3, item, 1)
	shown := leak3.Paths(item, analysis.PathOptions{K: 1})
	if len(paths) != 1 || !through || count(leak3, paths[0]).internal == 0 || count(leak3, paths[0]).ephemeron != 0 ||
		len(paths[0].Steps) != len(shown[0].Steps) || paths[0].Steps[6].From != shown[0].Steps[6].From {
		t.Errorf("a LeakedItem: %d --no-weak paths, through the runtime %v", len(paths), through)
	}

	java := analysistest.AnalyzeDump(t, "hprof/java-leakdemo-small.hprof.gz")
	soft := nodeWithID(t, java.Graph, 0xf05ca370) // a Class$ReflectionData a SoftReference refers to
	if paths, through = noWeak(java, soft, 1); len(paths) != 0 || through {
		t.Errorf("a SoftReference's referent has %d --no-weak paths", len(paths))
	}
	interned := nodeWithID(t, java.Graph, 0xf05c9d20) // a MethodType a WeakEntry refers to, and a method handle
	if paths, through = noWeak(java, interned, 3); len(paths) == 0 || through {
		t.Fatalf("the interned MethodType: %d --no-weak paths, through the runtime %v", len(paths), through)
	}
	for _, p := range paths {
		if h := count(java, p); h != (hop{}) {
			t.Errorf("a --no-weak path to the MethodType takes %+v", h)
		}
	}
}

// nodeWithID returns the node of g with id.
func nodeWithID(t *testing.T, g *model.Graph, id uint64) model.NodeIndex {
	t.Helper()
	for v := range g.NumNodes() {
		if g.Nodes.ID.At(v) == id {
			return int32(v)
		}
	}
	t.Fatalf("no node @%d", id)
	return model.NoNode
}

// everyNth returns every nth node of g, from the first: a sample of
// targets for comparing two path searches.
func everyNth(g *model.Graph, n int) []model.NodeIndex {
	var nodes []model.NodeIndex
	for v := 0; v < g.NumNodes(); v += n {
		nodes = append(nodes, model.NodeIndex(v))
	}
	return nodes
}
