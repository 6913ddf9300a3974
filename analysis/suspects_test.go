package analysis_test

import (
	"strings"
	"testing"

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
