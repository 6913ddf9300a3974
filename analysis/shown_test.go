package analysis_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

// pathText writes a path as its edges and objects, contexts by their
// names: "[7] Node / TCPServerWrap, ... ->requestLog Map".
func pathText(a *analysis.Analysis, p analysis.Path) string {
	g := a.Graph
	var parts []string
	for _, s := range p.Steps {
		name := g.NodeName(s.To)
		if d := a.ContextName(s.To); d != "" {
			name = d
		}
		parts = append(parts, analysis.EdgeString(g, s.Edge)+" "+name)
	}
	return strings.Join(parts, ", ")
}

// internalHops counts a path's runtime-internal hops.
func internalHops(a *analysis.Analysis, p analysis.Path) int {
	n := 0
	for _, s := range p.Steps {
		if a.IsRuntimeInternalEdge(s.From, s.Edge) {
			n++
		}
	}
	return n
}

// TestShownPathsServers: on real HTTP servers that answered real requests
// under Node 20, 22 and 24, captured from outside, the path shown for a
// leaked object goes through the program's code: the server's request
// listener, the module's scope, the module-scope Map (or the emitter the
// requests subscribe to), where DevTools' shortest path runs through
// Node's timer list (global.clearTimeout's scope, timerListMap,
// TimersList, Timeout) and memlab's through the listening socket. It is
// the only path shown (the others differ only in how Node keeps the
// Server), within PathSlack hops of the shortest, with fewer
// runtime-internal hops (Node 20, 22), or as many and shorter (Node 24,
// where the socket's handle hangs from Node's environment).
func TestShownPathsServers(t *testing.T) {
	for _, tc := range []struct {
		dump, class string
		want        []string // what the path passes through, in order
	}{
		{"paths/http-map-node20-3.heapsnapshot.gz", "RequestContext", []string{"Server", "._events", ".request handle", "{context} module scope of http-map.js", "->requestLog Map", "{table}"}},
		{"paths/http-map-node22-3.heapsnapshot.gz", "RequestContext", []string{"Server", ".request handle", "{context} module scope of http-map.js", "->requestLog Map"}},
		{"paths/http-map-node24-3.heapsnapshot.gz", "RequestContext", []string{"Server", ".request handle", "{context} module scope of http-map.js", "->requestLog Map"}},
		{"paths/emitter-listeners-node22-3.heapsnapshot.gz", "Subscription", []string{".request handle", "{context} module scope of emitter-listeners.js", "->settings EventEmitter", "._events", ".change Array", "onChange", "{context} context of handle (emitter-listeners.js:20)", "->sub Subscription"}},
	} {
		a := analysistest.AnalyzeDump(t, tc.dump)
		g := a.Graph
		var targets []model.NodeIndex
		for v := range g.NumNodes() {
			if a.Classes.Name(int32(v)) == tc.class {
				targets = append(targets, int32(v))
			}
		}
		if len(targets) < 600 {
			t.Fatalf("%s: %d %s", tc.dump, len(targets), tc.class)
		}
		pf := a.PathFinder(analysis.PathOptions{K: 3})
		for _, v := range targets[:5] {
			shown, shortest := pf.Find(v), pf.Shortest(v)
			if len(shown) != 1 || len(shortest) == 0 {
				t.Fatalf("%s: %s @%d: %d paths shown, %d shortest", tc.dump, tc.class, g.NodeID(v), len(shown), len(shortest))
			}
			p, s := shown[0], shortest[0]
			text := pathText(a, p)
			at := 0
			for _, w := range tc.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("%s: the path to %s @%d, %s, does not go through %q after byte %d", tc.dump, tc.class, g.NodeID(v), text, w, at)
				}
				at += i + len(w)
			}
			pi, si := internalHops(a, p), internalHops(a, s)
			if len(p.Steps) > len(s.Steps)+analysis.PathSlack || pi > si || pi == si && len(p.Steps) >= len(s.Steps) || p.Steps[len(p.Steps)-1].To != v {
				t.Errorf("%s: shown %d hops, %d internal; shortest %d hops, %d internal (%s)", tc.dump, len(p.Steps), internalHops(a, p),
					len(s.Steps), internalHops(a, s), pathText(a, s))
			}
			if !strings.Contains(pathText(a, s), "timerListMap") {
				t.Errorf("%s: DevTools' shortest path no longer goes through the timer list: %s", tc.dump, pathText(a, s))
			}
		}
	}
}

// TestShownPathsRootRanks: an object the program holds (global.holder.x),
// that V8's global handles and the running code's stack also hold,
// within the same few hops: the program's path is shown first, then the
// handles', the stack's last (a snapshot a program writes of itself
// from a callback has its scope on the stack), each a path of its own.
func TestShownPathsRootRanks(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{
		{Type: "synthetic", Name: ""}, {Type: "synthetic", Name: "(GC roots)"}, {Type: "synthetic", Name: "(Stack roots)"},
		analysistest.Obj("global", 8), analysistest.Obj("Holder", 8), analysistest.Obj("X", 8), {Type: "synthetic", Name: "(Global handles)"},
	}, []analysistest.Edge{
		{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1},
		{From: 0, To: 3, Type: analysistest.ShortcutEdge, Name: "global"},
		{From: 1, To: 2, Type: analysistest.ElementEdge, Index: 1},
		{From: 1, To: 6, Type: analysistest.ElementEdge, Index: 2},
		{From: 2, To: 5, Type: analysistest.ElementEdge, Index: 1},
		{From: 6, To: 5, Type: analysistest.ElementEdge, Index: 1},
		analysistest.Prop(3, 4, "holder"),
		analysistest.Prop(4, 5, "x"),
	})
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range a.Paths(5, analysis.PathOptions{K: 3}) {
		got = append(got, pathText(a, p))
	}
	want := []string{".global global, .holder Holder, .x X", "[1] (GC roots), [2] (Global handles), [1] X", "[1] (GC roots), [1] (Stack roots), [1] X"}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("paths\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestContextNamesChromium names a page's scopes: Chromium's V8 names a
// SharedFunctionInfo "system / SharedFunctionInfo / Dialog", and the
// context of the Dialog's constructor is still "context of Dialog", at its
// line in the page (testdata/leaks, the listeners page of heapx scenario's
// tests, where that context holds the leaked Dialog as this).
func TestContextNamesChromium(t *testing.T) {
	a := analysistest.AnalyzeDump(t, "leaks/page-listeners-chromium148-3.heapsnapshot.gz")
	g := a.Graph
	for v := range g.NumNodes() {
		if g.NodeID(int32(v)) == 58259 {
			if got := a.ContextName(int32(v)); got != "context of Dialog (listeners.html:10)" {
				t.Errorf("@58259 is %q, want the context of Dialog (listeners.html:10)", got)
			}
			return
		}
	}
	t.Fatal("no node @58259")
}
