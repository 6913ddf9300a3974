package analysis_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/spidermonkey"
	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// analyzeDump analyses a dump of any runtime under testdata (path relative
// to it), cached like analyzeFixture.
func analyzeDump(t *testing.T, rel string) *analysis.Analysis {
	t.Helper()
	if a, ok := analyzed.Load(rel); ok {
		return a.(*analysis.Analysis)
	}
	path := filepath.Join("..", "testdata", rel)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	var g *model.Graph
	var err error
	switch {
	case strings.Contains(rel, ".hprof"):
		g, err = hprof.ReadFile(path, hprof.Options{})
	case strings.HasSuffix(rel, ".fxsnapshot"):
		g, err = spidermonkey.ReadFile(path, spidermonkey.Options{})
	default:
		g, err = v8.ReadFile(path, v8.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	analyzed.Store(rel, a)
	return a
}

// suspectDumps are the real dumps of every runtime the suspect rules are
// checked on.
var suspectDumps = []string{
	"node-basic.heapsnapshot.gz", "node-internals.heapsnapshot.gz", "node-leak-3.heapsnapshot.gz",
	"chromium-small-page.heapsnapshot.gz", "suspects/chromium-libs-page.heapsnapshot.gz",
	"suspects/node-eslint.heapsnapshot.gz", "spidermonkey/ff-small-page.fxsnapshot",
	"spidermonkey/ff-medium-page.fxsnapshot", "hprof/java-leakdemo-small.hprof.gz",
	"hprof/java-jshell-agent.hprof.gz", "suspects/java-tickets.hprof.gz",
}

// fieldText spells a suspect's field for the tests: "^" for a global
// object or Java class Base, the Access edges and the field's edge, each
// as EdgeString writes it, then the count.
func fieldText(g *model.Graph, f analysis.SuspectField) string {
	s := ""
	if f.Base != model.NoNode {
		s = "^"
		for _, e := range f.Access {
			s += analysis.EdgeString(g, e)
		}
	} else {
		s = g.NodeName(f.Owner) + " "
	}
	return s + analysis.EdgeString(g, f.Edge) + " x" + strconv.Itoa(f.Count)
}

// fieldsText joins fieldText of every field of s.
func fieldsText(g *model.Graph, s analysis.Suspect) string {
	var parts []string
	for _, f := range s.Fields {
		parts = append(parts, fieldText(g, f))
	}
	return strings.Join(parts, ", ")
}

// TestLeakSuspectsNodeLeak checks the suspects of the third snapshot of the
// leak fixture (testdata/gen/make-fixtures.js, childLeak): 1,500 LeakedItem
// pushed into the array `retained` captured by onWork, a listener of the
// EventEmitter globalThis.bus. The global itself is not a suspect, and the
// 1,837 module functions it holds (29% of the heap) are not a class
// suspect either (see LeakSuspects). The array is held by the closure
// variable `retained`.
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
	if a.Classes.Names[s.Class] != "LeakedItem" || s.Count != 1500 || s.ClassRetained != 431280 || s.Via != analysis.NoClass || s.Shape != nil || s.Detached {
		t.Errorf("class %s x%d retaining %d, want LeakedItem x1500 retaining 431280: %+v", a.Classes.Names[s.Class], s.Count, s.ClassRetained, s)
	}
	if f := fieldsText(g, s); f != "system / Context ->retained x1500" {
		t.Errorf("fields %q, want the closure variable retained", f)
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
// Customer (2.85 MB in window.customers, a Map) are its suspect at 10%,
// its 10 detached div trees (1.9%, held by window.detachedTrees) are one
// from a tenth of that, and node-basic, whose biggest user structure is
// far below 10%, has none.
func TestLeakSuspectsThreshold(t *testing.T) {
	a := analyzeFixture(t, "chromium-small-page")
	g := a.Graph
	got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) != 2 {
		t.Fatalf("chromium-small-page: %d suspects, want 2: %+v", len(got), got)
	}
	s := got[0]
	if s.Count != 2000 || a.Classes.Names[s.Class] != "Customer" || s.ClassRetained != 2852000 ||
		s.Holder != s.Point || g.NodeName(s.Point) != "Map" || fieldsText(g, s) != "^.customers x2000" {
		t.Errorf("suspect 1 %+v (fields %s), want 2000 Customer retaining 2852000 in the Map globalThis.customers", s, fieldsText(g, s))
	}
	s = got[1]
	if !s.Detached || s.Count != 10 || a.Classes.Names[s.Class] != "Detached <div>" || s.DetachedNodes != 1030 ||
		g.NodeName(s.Point) != "Array" || fieldsText(g, s) != "^.detachedTrees x10" {
		t.Errorf("suspect 2 %+v (fields %s), want the 10 detached div trees of globalThis.detachedTrees", s, fieldsText(g, s))
	}
	if got := analysis.LeakSuspects(analyzeFixture(t, "node-basic"), analysis.SuspectOptions{}); len(got) != 0 {
		t.Errorf("node-basic: %d suspects at 10%%, want none: %+v", len(got), got)
	}
	// Halving the threshold must not lose the suspects found above it.
	if half := analysis.LeakSuspects(a, analysis.SuspectOptions{Threshold: 0.05}); len(half) < 2 || half[0].Point != got[0].Point {
		t.Errorf("5%%: %+v", half)
	}
}

// TestLeakSuspectsActionable checks, on the dumps of every runtime and at
// 1% so that many candidates are tried, that every suspect is something a
// user can act on: a holder of the program (not the root, a synthetic
// root group, a global object, compiled code or another of the runtime's
// structures) and an accumulation of at least two objects of a program
// class. On ESLint's heap, which has no leak, "2,560 Function held by
// (synthetic)" used to be the one suspect at 10%; now there is none. On the
// Chromium libs page (compiled code held by (GC roots), the Window
// accumulating into itself, React's script source) only its 20 detached
// <section> trees remain.
func TestLeakSuspectsActionable(t *testing.T) {
	for _, rel := range suspectDumps {
		a := analyzeDump(t, rel)
		g := a.Graph
		for _, s := range analysis.LeakSuspects(a, analysis.SuspectOptions{Threshold: 0.01}) {
			h, hc := g.NodeName(s.Holder), a.Classes.Name(s.Holder)
			switch cat := g.NodeType(s.Holder).Category; {
			case s.Holder == g.Root, cat == model.CatSynthetic, cat == model.CatCode, cat == model.CatInternal,
				cat == model.CatFunctionInfo, cat == model.CatShape && !strings.Contains(rel, "hprof"),
				strings.HasPrefix(h, "system / "), strings.Contains(h, "::"), strings.HasPrefix(hc, "("),
				strings.HasPrefix(h, "Window"), h == "global", strings.HasPrefix(h, "Node / "):
				t.Errorf("%s: holder %s (%s) is not the program's: %+v", rel, h, g.NodeType(s.Holder).Name, s)
			}
			// V8's internal classes are in parentheses, but for its
			// strings, which are the program's data.
			class := a.Classes.Names[s.Class]
			internalClass := strings.HasPrefix(class, "(") && !strings.HasSuffix(class, "string)")
			if s.Count < 2 || s.ClassRetained == 0 || internalClass || strings.HasPrefix(class, "system / ") || strings.Contains(class, "::") {
				t.Errorf("%s: accumulation %d %s retaining %d is no accumulation of the program's objects", rel, s.Count, class, s.ClassRetained)
			}
			// A JavaScript object is always reached through a field
			// (a JVM's JNI global roots hold Object[]s directly).
			if len(s.Fields) == 0 && !strings.Contains(rel, "hprof") {
				t.Errorf("%s: suspect %s has no field: %+v", rel, h, s)
			}
		}
	}
	if got := analysis.LeakSuspects(analyzeDump(t, "suspects/node-eslint.heapsnapshot.gz"), analysis.SuspectOptions{}); len(got) != 0 {
		t.Errorf("ESLint: %d suspects at 10%%, want none: %+v", len(got), got)
	}
	a := analyzeDump(t, "suspects/chromium-libs-page.heapsnapshot.gz")
	if got := analysis.LeakSuspects(a, analysis.SuspectOptions{}); len(got) != 1 || !got[0].Detached {
		t.Errorf("Chromium libs page: %+v, want the detached sections only", got)
	}
}

// TestLeakSuspectsDetachedDOM checks that the Chromium libs page's 20
// detached <section> trees (100 <p> of innerHTML each, 674 kB, 6.8% of
// the heap) held in window.detached are its first suspect: below MAT's
// 10%, but detached DOM is a leak whatever its share.
func TestLeakSuspectsDetachedDOM(t *testing.T) {
	a := analyzeDump(t, "suspects/chromium-libs-page.heapsnapshot.gz")
	g := a.Graph
	got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) == 0 {
		t.Fatal("no suspect")
	}
	s := got[0]
	if !s.Detached || s.Count != 20 || a.Classes.Names[s.Class] != "Detached <section>" || s.DetachedNodes != 8020 ||
		s.ClassRetained != 674080 || s.Holder != s.Point || g.NodeName(s.Point) != "Array" || fieldsText(g, s) != "^.detached x20" {
		t.Errorf("suspect %+v (fields %s), want 20 Detached <section> trees of 8,020 nodes retaining 674080 in globalThis.detached", s, fieldsText(g, s))
	}
	// At 1% they rank with the 1,000 LeakyEvent of window.eventLog
	// (157 kB), by retained size.
	low := analysis.LeakSuspects(a, analysis.SuspectOptions{Threshold: 0.01})
	if len(low) != 2 || low[0].Point != s.Point || a.Classes.Names[low[1].Class] != "LeakyEvent" || low[1].Count != 1000 {
		t.Errorf("at 1%%: %+v", low)
	}
}

// TestLeakSuspectsJavaFields checks that LeakDemo's suspect names the
// static fields that hold its 400 sessions
// (/work/shared/corpus/gen/java/LeakDemo.java): the ConcurrentHashMap
// SESSIONS reaches 352 of them first, the AuditListener list LISTENERS 48
// (through the records they capture), so both are named, not just
// "class LeakDemo".
func TestLeakSuspectsJavaFields(t *testing.T) {
	a := analyzeDump(t, "hprof/java-leakdemo-small.hprof.gz")
	g := a.Graph
	got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) != 1 {
		t.Fatalf("%d suspects: %+v", len(got), got)
	}
	s := got[0]
	if g.NodeName(s.Holder) != "class LeakDemo" || s.Point != s.Holder || a.Classes.Names[s.Class] != "LeakDemo$Session" || s.Count != 400 {
		t.Errorf("suspect %+v, want class LeakDemo holding 400 LeakDemo$Session", s)
	}
	if f := fieldsText(g, s); f != "^.SESSIONS x352, ^.LISTENERS x48" {
		t.Errorf("fields %q, want SESSIONS x352, LISTENERS x48", f)
	}
	for _, f := range s.Fields {
		if f.Base != s.Point || f.Owner != s.Point {
			t.Errorf("field %+v is not LeakDemo's own", f)
		}
	}
}

// TestLeakSuspectsJavaCollections checks that suspects look through the
// collections' plumbing to what the program put in them: TicketStore
// (testdata/gen/suspects/TicketStore.java) keeps 12,000 Ticket in the
// static HashMap TICKETS, whose table holds 7,404 HashMap$Node buckets
// (the other entries are chained to them by .next); jshell's snippet
// keeps 5,000 words in a TreeMap, whose entries dominate one another as a
// tree.
func TestLeakSuspectsJavaCollections(t *testing.T) {
	a := analyzeDump(t, "suspects/java-tickets.hprof.gz")
	g := a.Graph
	got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) != 1 {
		t.Fatalf("%d suspects: %+v", len(got), got)
	}
	s := got[0]
	if g.NodeName(s.Holder) != "class TicketStore" || g.NodeName(s.Point) != "java.util.HashMap" ||
		a.Classes.Names[s.Class] != "TicketStore$Ticket" || s.Count != 12000 || a.Classes.Names[s.Via] != "java.util.HashMap$Node" {
		t.Errorf("suspect %+v, want 12,000 TicketStore$Ticket through HashMap$Node in a HashMap held by class TicketStore", s)
	}
	if f := fieldsText(g, s); f != "^.TICKETS x12000" || g.NodeName(s.Fields[0].Base) != "class TicketStore" {
		t.Errorf("fields %q, want TicketStore.TICKETS", f)
	}

	a = analyzeDump(t, "hprof/java-jshell-agent.hprof.gz")
	g = a.Graph
	got = analysis.LeakSuspects(a, analysis.SuspectOptions{})
	if len(got) != 1 {
		t.Fatalf("jshell: %d suspects: %+v", len(got), got)
	}
	s = got[0]
	if g.NodeName(s.Point) != "java.util.TreeMap" || a.Classes.Names[s.Via] != "java.util.TreeMap$Entry" ||
		a.Classes.Names[s.Class] != "java.lang.String" || s.Count != 5000 || fieldsText(g, s) != "^.words x5000" {
		t.Errorf("jshell suspect %+v (fields %s), want 5,000 String through TreeMap$Entry in the TreeMap words", s, fieldsText(g, s))
	}
}

// TestLeakSuspectsFirefoxShape checks that SpiderMonkey's generic "Object"
// is described by its shape: the medium page's window.eventLog holds
// 150,000 LeakyEvent {seq, msg, cb} (seq is a number, no edge; "shape" is
// the engine's edge to the object's shape, which the shapes inspection
// counts as well), the small page's window.customers Map 5,000 Customer.
// The Window itself is never the holder.
func TestLeakSuspectsFirefoxShape(t *testing.T) {
	for _, c := range []struct {
		dump, point, shape, fields string
		count                      int
	}{
		{"spidermonkey/ff-medium-page.fxsnapshot", "Array", "cb msg shape", "^.eventLog x150000", 150000},
		{"spidermonkey/ff-small-page.fxsnapshot", "Map", "name orders shape tags", "^.customers x5000", 5000},
	} {
		a := analyzeDump(t, c.dump)
		g := a.Graph
		got := analysis.LeakSuspects(a, analysis.SuspectOptions{})
		if len(got) != 1 {
			t.Fatalf("%s: %d suspects: %+v", c.dump, len(got), got)
		}
		s := got[0]
		if s.Holder != s.Point || g.NodeName(s.Point) != c.point || a.Classes.Names[s.Class] != "Object" || s.Count != c.count ||
			strings.Join(s.Shape, " ") != c.shape || s.ShapeCount != c.count || fieldsText(g, s) != c.fields {
			t.Errorf("%s: suspect %+v (fields %s), want %d Object {%s} in the %s %s", c.dump, s, fieldsText(g, s), c.count, c.shape, c.point, c.fields)
		}
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
