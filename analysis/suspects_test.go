package analysis_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/model"

	"github.com/heapx/heapx/analysis"
)

// TestLeakSuspectsNodeLeak checks the suspects of the third snapshot of the
// leak fixture (testdata/gen/make-fixtures.js, childLeak): 1,500 LeakedItem
// pushed into the array `retained` captured by onWork, a listener of the
// EventEmitter globalThis.bus. The global itself is not a suspect, and the
// 1,837 module functions it holds (29% of the heap) are not a class
// suspect either (see LeakSuspects).
func TestLeakSuspectsNodeLeak(t *testing.T) {
	a := analyzeFixture(t, "node-leak-3")
	got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) != 1 {
		t.Fatalf("%d suspects, want 1: %+v", len(got), got)
	}
	s, g := got[0], a.Graph
	if g.Nodes.ID[s.Holder] != 51427 || a.Classes.Name(s.Holder) != "EventEmitter" || s.Retained != 467896 {
		t.Errorf("holder @%d %s retaining %d, want EventEmitter @51427 retaining 467896",
			g.Nodes.ID[s.Holder], a.Classes.Name(s.Holder), s.Retained)
	}
	if g.Nodes.ID[s.Point] != 80593 || a.Classes.Name(s.Point) != "Array" {
		t.Errorf("accumulation point @%d %s, want the Array @80593", g.Nodes.ID[s.Point], a.Classes.Name(s.Point))
	}
	if a.Classes.Names[s.Class] != "LeakedItem" || s.Count != 1500 || s.ClassRetained != 431280 {
		t.Errorf("class %s x%d retaining %d, want LeakedItem x1500 retaining 431280", a.Classes.Names[s.Class], s.Count, s.ClassRetained)
	}
	// The way there: global.bus -> ... -> onWork -> its context's `retained`.
	p := a.Paths(s.Point, analysis.PathOptions{})
	if len(p) != 1 {
		t.Fatalf("%d paths to the point", len(p))
	}
	var steps []string
	for _, st := range p[0].Steps {
		steps = append(steps, analysis.EdgeString(g, st.Edge)+" "+g.NodeName(st.To))
	}
	if path := strings.Join(steps, " "); path != ".2 global .bus EventEmitter ._events Object .work onWork {context} system / Context ->retained Array" {
		t.Errorf("path to the point %q does not go global.bus -> onWork -> its context's retained", path)
	}
}

// TestLeakSuspectsThreshold checks the threshold: the Chromium page's 2000
// Customer (2.85 MB in one array under window) are its one suspect at 10%,
// and node-basic, whose biggest user structure is far below 10%, has none.
func TestLeakSuspectsThreshold(t *testing.T) {
	a := analyzeFixture(t, "chromium-small-page")
	got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) != 1 || got[0].Count != 2000 || a.Classes.Names[got[0].Class] != "Customer" || got[0].ClassRetained != 2852000 {
		t.Errorf("chromium-small-page suspects %+v, want one of 2000 Customer retaining 2852000", got)
	}
	if got := analysis.LeakSuspects(analyzeFixture(t, "node-basic"), analysis.SuspectOptions{}); len(got) != 0 {
		t.Errorf("node-basic: %d suspects at 10%%, want none: %+v", len(got), got)
	}
	// Halving the threshold must not lose the suspects found above it.
	if got := analysis.LeakSuspects(a, analysis.SuspectOptions{Threshold: 0.05}); len(got) < 1 {
		t.Errorf("5%%: %d suspects", len(got))
	}
}

// TestShortestPathsMatchFind checks ShortestPaths against PathFinder.Find
// on every fixture: for a sample of nodes the costs and System flags are
// equal, each path is a chain of real edges from the root, and
// unreachable nodes have none.
func TestShortestPathsMatchFind(t *testing.T) {
	for _, name := range []string{"node-leak-3", "chromium-small-page", "node-internals"} {
		a := analyzeFixture(t, name)
		g := a.Graph
		var targets []model.NodeIndex
		for v := 0; v < g.NumNodes(); v += 97 {
			targets = append(targets, model.NodeIndex(v))
		}
		got := a.ShortestPaths(targets)
		pf := analysis.NewPathFinder(g, a.Retainers(), a.Roots, analysis.PathOptions{K: 1})
		for i, v := range targets {
			want := pf.Find(v)
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
