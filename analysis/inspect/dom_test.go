package inspect_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/analysistest"
)

// Firefox writes no detachedness, but its DOM nodes have child edges: the
// small page's 10 detached <div class="detached-root-K"> of 50 <span>
// (510 elements, with 50 text nodes each, 14,640 bytes retained) are the
// DOM nodes no document reaches. The medium page adds the 20 detached
// <section> of 100 <p>…<b> (201 elements, 401 nodes) and three
// one-element trees the libraries keep on purpose: jQuery's originAnchor
// and support table, React's fakeNode.
func TestDetachedDOMFirefox(t *testing.T) {
	a := analysistest.AnalyzeDump(t, "spidermonkey/ff-small-page.fxsnapshot")
	res := inspect.DetachedDOM(a, inspect.DetachedOptions{})
	if res.Source != inspect.DOMChildEdges || res.Total != 10 || len(res.Trees) != 10 {
		t.Fatalf("small page: source %d, %d trees", res.Source, res.Total)
	}
	for k, tr := range res.Trees {
		steps := tr.Path.Steps
		if tr.Name != "DIV" || tr.Elements != 51 || tr.Nodes != 101 || tr.Retained != 14640 || len(steps) != 4 ||
			analysis.EdgeString(a.Graph, steps[1].Edge) != ".detachedTrees" ||
			analysis.EdgeString(a.Graph, steps[2].Edge) != fmt.Sprintf(".objectElements[%d]", k) {
			t.Errorf("small page tree %d: %+v", k, tr)
		}
	}
	a = analysistest.AnalyzeDump(t, "spidermonkey/ff-medium-page.fxsnapshot")
	res = inspect.DetachedDOM(a, inspect.DetachedOptions{})
	var got []string
	for _, tr := range res.Trees {
		got = append(got, fmt.Sprintf("%s %d/%d %d", tr.Name, tr.Elements, tr.Nodes, tr.Retained))
	}
	want := strings.Repeat("SECTION 201/401 62640, ", 20) + "A 1/1 400, TABLE 1/1 160, REACT 1/1 144"
	if res.Total != 23 || strings.Join(got, ", ") != want {
		t.Errorf("medium page: %d trees\n got %s\nwant %s", res.Total, strings.Join(got, ", "), want)
	}
}

// Chromium 156 keeps an element's class-list storage detached after the
// element is gone ("Detached blink::SpaceSplitString::Data" under a
// "Detached blink::UniqueElementData"): a tree of no element, left out
// unless asked for. The page's four closed panels (41 elements each) are
// the trees.
func TestDetachedDOMBlinkInternals(t *testing.T) {
	a := analysistest.AnalyzeDump(t, "leaks/page-detached-chromium156-3.heapsnapshot.gz")
	res := inspect.DetachedDOM(a, inspect.DetachedOptions{})
	var got []string
	for _, tr := range res.Trees {
		got = append(got, fmt.Sprintf("%s %d", tr.Name, tr.Elements))
	}
	if res.Total != 4 || res.BlinkInternal != 2 || res.Internal != 0 || !strings.HasPrefix(strings.Join(got, ", "), "Detached <section class=\"panel\"> 41, ") {
		t.Errorf("%d trees (%s), %d of Blink's own, %d of the embedder's; want the 4 panels, 2 of Blink's", res.Total, strings.Join(got, ", "), res.BlinkInternal, res.Internal)
	}
	all := inspect.DetachedDOM(a, inspect.DetachedOptions{Internals: true})
	if all.Total != 6 || all.BlinkInternal != 0 || all.Trees[5].Elements != 0 || !strings.Contains(all.Trees[5].Name, "blink::SpaceSplitString::Data") {
		t.Errorf("with Internals: %d trees, last %+v", all.Total, all.Trees[len(all.Trees)-1])
	}
}

// Node.js has no DOM; V8 marks 8 of its binding objects detached (19
// nodes with what propagation reaches), which DevTools lists as "Detached
// Node / BindingData". They are left out unless asked for. A JVM heap has
// no DOM either.
func TestDetachedDOMWithoutDOM(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	res := inspect.DetachedDOM(a, inspect.DetachedOptions{})
	if res.Source != inspect.NoDOM || res.Total != 0 || len(res.Trees) != 0 || res.Internal != 19 {
		t.Errorf("node-leak-3: source %d, %d trees, %d internal; want no DOM, 0, 19", res.Source, res.Total, res.Internal)
	}
	res = inspect.DetachedDOM(a, inspect.DetachedOptions{Internals: true})
	nodes := 0
	for _, tr := range res.Trees {
		nodes += tr.Nodes
		if !strings.HasPrefix(tr.Name, "Detached Node / ") {
			t.Errorf("--internals tree %q", tr.Name)
		}
	}
	if res.Total != 8 || nodes != 19 || res.Internal != 0 {
		t.Errorf("node-leak-3 with internals: %d trees of %d nodes, %d internal", res.Total, nodes, res.Internal)
	}
	a = analysistest.AnalyzeDump(t, "hprof/java-leakdemo-small.hprof.gz")
	if res := inspect.DetachedDOM(a, inspect.DetachedOptions{Internals: true}); res.Source != inspect.NoDOM || len(res.Trees) != 0 {
		t.Errorf("Java: source %d, %d trees", res.Source, len(res.Trees))
	}
}

// The 10 detached div trees of each page are held by one array's elements
// [0] to [9] (Chrome) or its ".objectElements[0]" to [9] (Firefox): one
// path shape. Node's binding objects, held by different objects, are not
// grouped with each other.
func TestGroupPathsDetachedTrees(t *testing.T) {
	for _, c := range []struct {
		a         *analysis.Analysis
		low, high string
	}{
		{analysistest.AnalyzeFixture(t, "chromium-small-page"), "[0]", "[9]"},
		{analysistest.AnalyzeDump(t, "spidermonkey/ff-small-page.fxsnapshot"), ".objectElements[0]", ".objectElements[9]"},
	} {
		trees := inspect.DetachedDOM(c.a, inspect.DetachedOptions{}).Trees
		paths := make([]analysis.Path, len(trees))
		for i, tr := range trees {
			paths[i] = tr.Path
		}
		groups := inspect.GroupPaths(c.a, paths)
		if len(groups) != 1 || len(groups[0].Members) != 10 || groups[0].Members[9] != 9 {
			t.Fatalf("%d groups: %+v", len(groups), groups)
		}
		gr := groups[0]
		var differ []string
		for i := range gr.Low {
			if gr.Low[i] != gr.High[i] {
				differ = append(differ, analysis.EdgeString(c.a.Graph, gr.Low[i])+" "+analysis.EdgeString(c.a.Graph, gr.High[i]))
			}
		}
		if len(differ) != 1 || differ[0] != c.low+" "+c.high {
			t.Errorf("differing steps %q, want %s to %s", differ, c.low, c.high)
		}
	}
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	trees := inspect.DetachedDOM(a, inspect.DetachedOptions{Internals: true}).Trees
	paths := make([]analysis.Path, len(trees))
	for i, tr := range trees {
		paths[i] = tr.Path
	}
	members := 0
	groups := inspect.GroupPaths(a, paths)
	for _, gr := range groups {
		members += len(gr.Members)
	}
	if members != 8 || len(groups) < 2 {
		t.Errorf("node-leak-3's 8 binding objects in %d groups of %d", len(groups), members)
	}
}

// Firefox's dumps name every string "JSString": no contents, so no
// duplicates can be found, where V8 and HPROF dumps have them.
func TestHasStringContents(t *testing.T) {
	for _, c := range []struct {
		a    *analysis.Analysis
		want bool
	}{
		{analysistest.AnalyzeDump(t, "spidermonkey/ff-small-page.fxsnapshot"), false},
		{analysistest.AnalyzeDump(t, "hprof/java-leakdemo-small.hprof.gz"), true},
		{analysistest.AnalyzeFixture(t, "node-leak-3"), true},
	} {
		if got := inspect.HasStringContents(c.a); got != c.want {
			t.Errorf("%s: HasStringContents %v", c.a.Graph.NodeTypes[0].Namespace, got)
		}
	}
}
