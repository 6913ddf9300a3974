package leak_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// linkedList builds the heap of a program whose global `list` is a
// linked list of items Item -.next-> Item, each with a `.data` object,
// items items long: the root, its shortcut to global, (GC roots), the
// List, then item i at node 4+2i and its data at 5+2i. Graphs of one list
// at several lengths share their ids, as snapshots of one process do.
func linkedList(items int) *model.Graph {
	nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, {Type: "synthetic", Name: "(GC roots)", Size: 0}, analysistest.Obj("global", 100), analysistest.Obj("List", 32)}
	edges := []analysistest.Edge{{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1}, {From: 0, To: 2, Type: analysistest.ShortcutEdge, Name: "2"},
		analysistest.Prop(2, 3, "list")}
	for i := 0; i < items; i++ {
		it, data := int32(4+2*i), int32(5+2*i)
		nodes = append(nodes, analysistest.Obj("Item", 48), analysistest.Obj("Object", 32))
		from, name := it-2, "next"
		if i == 0 {
			from, name = 3, "head"
		}
		edges = append(edges, analysistest.Prop(from, it, name), analysistest.Prop(it, data, "data"))
	}
	return analysistest.Build(nodes, edges)
}

func analyzeList(t testing.TB, items int) *analysis.Analysis {
	a, err := analysis.Analyze(linkedList(items), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A leaked linked list is one leak whatever its length: its first new
// item dominates the rest, so it is the one traced. Tracing every item
// cost K^2/2 steps and, with 20k items, 4 GB.
func TestLeaksLinkedList(t *testing.T) {
	base, target, final := analyzeList(t, 1000), analyzeList(t, 100000), analyzeList(t, 150000)
	r := leaksOf(base, target, final, leak.LeakOptions{Examples: 2})
	if r.Leaked != 2*99000 || r.NoPath != 0 || len(r.Clusters) != 1 {
		t.Fatalf("leaked %d, no path %d, %d clusters", r.Leaked, r.NoPath, len(r.Clusters))
	}
	c := r.Clusters[0]
	g := final.Graph
	first := int32(4 + 2*1000) // item 1000, the first allocated after the baseline
	if c.Count != 1 || c.Objects != 2*99000 || c.Representative != first || len(c.Examples) != 1 {
		t.Errorf("cluster: count %d, objects %d, representative %d, examples %v", c.Count, c.Objects, c.Representative, c.Examples)
	}
	// It retains itself and the 149,000 items after it with their data,
	// the 49,000 allocated after the target among them.
	if want := uint64(149000 * 80); c.Retained != want {
		t.Errorf("retained %d, want %d", c.Retained, want)
	}
	if len(c.Classes) != 2 || c.Classes[0].Name != "Item" || c.Classes[0].Count != 99000 || c.Classes[0].Reported != 1 {
		t.Errorf("classes %+v", c.Classes)
	}
	if len(c.Path.Steps) != 3+1000 || c.Path.Steps[len(c.Path.Steps)-1].To != first || g.EdgeName(c.Path.Steps[2].Edge) != "head" {
		t.Errorf("path of %d steps", len(c.Path.Steps))
	}
}

// The merged paths of a list's items are one node per hop kind: the head,
// then every .next hop merged into one node that says how many hops it
// stands for. Retained sizes are counted once: every item but the head
// is dominated by the one before it.
func TestMergedPathsLinkedList(t *testing.T) {
	const n = 100000
	a := analyzeList(t, n)
	var items []int32
	for i := 0; i < n; i++ {
		items = append(items, int32(4+2*i))
	}
	tree := inspect.MergedPaths(a, items)
	want := []struct {
		edge, class     string
		objects, ends   int
		hops            int
		retained, depth int
	}{
		{"", "(synthetic)", n, 0, 1, n * 80, 0},
		{".2", "global", n, 0, 1, n * 80, 1},
		{".list", "List", n, 0, 1, n * 80, 2},
		{".head", "Item", n, 1, 1, n * 80, 3},
		{".next", "Item", n - 1, n - 1, n - 1, 0, 4},
	}
	if len(tree) != len(want) {
		t.Fatalf("%d tree nodes: %+v", len(tree), tree)
	}
	for i, w := range want {
		m := tree[i]
		if m.Edge != w.edge || m.Class != w.class || m.Objects != w.objects || m.Ends != w.ends || m.Hops != w.hops ||
			m.Retained != uint64(w.retained) || m.Depth != w.depth || m.Parent != int32(i-1) {
			t.Errorf("node %d: %+v, want %+v", i, m, w)
		}
	}
}

// A list whose items alternate two classes merges into a few nodes,
// however long: the head, the first B (the hops before it, .head then
// .next, differ), then one node for the A and one for the B of every
// later pair, each hop that repeats the two before it going back to
// their nodes. Without that the tree was as deep as the list, and
// printing it with -n 0 --json overflowed the stack.
func TestMergedPathsAlternatingList(t *testing.T) {
	const n = 100000 // items: A, B, A, B, ...
	nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, {Type: "synthetic", Name: "(GC roots)", Size: 0}, analysistest.Obj("global", 100), analysistest.Obj("List", 32)}
	edges := []analysistest.Edge{{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1}, {From: 0, To: 2, Type: analysistest.ShortcutEdge, Name: "2"},
		analysistest.Prop(2, 3, "list"), analysistest.Prop(3, 4, "head")}
	var items []int32
	for i := 0; i < n; i++ {
		class := "A"
		if i%2 == 1 {
			class = "B"
		}
		nodes = append(nodes, analysistest.Obj(class, 48))
		items = append(items, int32(4+i))
		if i > 0 {
			edges = append(edges, analysistest.Prop(int32(3+i), int32(4+i), "next"))
		}
	}
	a, err := analysis.Analyze(analysistest.Build(nodes, edges), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tree := inspect.MergedPaths(a, items)
	want := []struct {
		edge, class   string
		objects, ends int
		hops          int
		retained      int
	}{
		{"", "(synthetic)", n, 0, 1, n * 48},
		{".2", "global", n, 0, 1, n * 48},
		{".list", "List", n, 0, 1, n * 48},
		{".head", "A", n, 1, 1, n * 48},
		{".next", "B", n - 1, 1, 1, 0},
		{".next", "A", n - 2, n/2 - 1, n/2 - 1, 0},
		{".next", "B", n - 3, n/2 - 1, n/2 - 1, 0}, // the paths of the later A pass it too
	}
	if len(tree) != len(want) {
		t.Fatalf("%d tree nodes: %+v", len(tree), tree)
	}
	for i, w := range want {
		m := tree[i]
		if m.Edge != w.edge || m.Class != w.class || m.Objects != w.objects || m.Ends != w.ends || m.Hops != w.hops ||
			m.Retained != uint64(w.retained) || m.Depth != i || m.Parent != int32(i-1) {
			t.Errorf("node %d: %+v, want %+v", i, m, w)
		}
	}
}

// The retainer paths of a list's last item: the one path through every
// item, found in time linear in its length.
func TestPathsLongChain(t *testing.T) {
	const n = 100000
	a := analyzeList(t, n)
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
	a := analyzeList(t, n)
	last := int32(4 + 2*(n-1))
	ps := a.Paths(last, analysis.PathOptions{K: 3, MaxExpansions: 1000})
	if len(ps) != 1 || len(ps[0].Steps) != n+2 || ps[0].Steps[n+1].To != last {
		t.Fatalf("%d paths", len(ps))
	}
}

// BenchmarkLeaksLinkedList runs Leaks on a leaked list of a million items
// (2M new nodes between the target and final snapshots' 1M): seconds, not
// the hours a path per item took.
func BenchmarkLeaksLinkedList(b *testing.B) {
	base, target, final := analyzeList(b, 1000), analyzeList(b, 1000000), analyzeList(b, 1500000)
	b.ResetTimer()
	for range b.N {
		if r := leaksOf(base, target, final, leak.LeakOptions{}); len(r.Clusters) != 1 {
			b.Fatalf("%d clusters", len(r.Clusters))
		}
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}

// nodeList is testdata/node-list-20k.json, the ids bench/gen-linkedlist.js
// read from the process that wrote the node-list-20k snapshots.
type nodeList struct {
	Items         int    `json:"items"`
	WarmItems     int    `json:"warm_items"`
	HeadID        uint64 `json:"head_id"`
	FirstLeakedID uint64 `json:"first_leaked_id"`
	TailID        uint64 `json:"tail_id"`
}

// nodeListSeries analyses the node-list-20k snapshots (a real Node 20
// heap: a list held by its head alone, `class Item { value; next }`, 100
// items before the baseline, 20,000 appended before the target, still
// there in the final snapshot) and returns them with their ids.
func nodeListSeries(t *testing.T) ([]*analysis.Analysis, nodeList) {
	t.Helper()
	var as []*analysis.Analysis
	for _, step := range []string{"1-baseline", "2-target", "3-final"} {
		a, err := analysis.Analyze(analysistest.LoadFixture(t, "node-list-20k-"+step), analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "node-list-20k.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l nodeList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return as, l
}

// nodeByID returns the node with id id in a, failing the test without one.
func nodeByID(t *testing.T, a *analysis.Analysis, id uint64) int32 {
	t.Helper()
	n, ok := a.NodeByID(id)
	if !ok {
		t.Fatalf("no node @%d", id)
	}
	return n
}

// A real leaked list of 20,000 items is one leak of 20,000 objects traced
// once, at its first leaked item, 100 hops down the list. The issue's
// measurement on such files: 3.98 GB and 13.8 s, and nine clusters.
func TestLeaksNodeLinkedList(t *testing.T) {
	as, l := nodeListSeries(t)
	r := leaksOf(as[0], as[1], as[2], leak.LeakOptions{Examples: 3})
	if r.Matching != leak.MatchByID || len(r.Clusters) != 1 || r.NoPath != 0 {
		t.Fatalf("matching %v, %d clusters, %d without a path", r.Matching, len(r.Clusters), r.NoPath)
	}
	final := as[2]
	g := final.Graph
	first := nodeByID(t, final, l.FirstLeakedID)
	c := r.Clusters[0]
	// Each Item is 40 bytes (a map, properties, elements, value, next:
	// Node has no pointer compression), and the first leaked one retains
	// all the leaked ones.
	if c.Count != 1 || c.Objects != l.Items || c.Representative != first || c.Retained != uint64(40*l.Items) {
		t.Errorf("cluster: count %d, objects %d, representative %d (want %d), retained %d", c.Count, c.Objects, c.Representative, first, c.Retained)
	}
	if len(c.Classes) != 1 || c.Classes[0].Name != "Item" || c.Classes[0].Count != l.Items || c.Classes[0].Reported != 1 {
		t.Errorf("classes %+v", c.Classes)
	}
	// global.list.head, then .next to every item before it.
	steps := c.Path.Steps
	if len(steps) != 3+l.WarmItems || steps[len(steps)-1].To != first || g.NodeID(steps[2].To) != l.HeadID {
		t.Fatalf("path of %d steps", len(steps))
	}
	for i, want := range []string{".2", ".list", ".head"} {
		if got := analysis.EdgeString(g, steps[i].Edge); got != want {
			t.Errorf("step %d: %s, want %s", i, got, want)
		}
	}
	for _, s := range steps[3:] {
		if analysis.EdgeString(g, s.Edge) != ".next" || final.Classes.Name(s.To) != "Item" {
			t.Fatalf("step %s %s", analysis.EdgeString(g, s.Edge), final.Classes.Name(s.To))
		}
	}
}

// merged-paths on the real list: the head, then one node for the 20,099
// .next hops (the issue: a 30k list ran out of memory past 4.5 GB).
func TestMergedPathsNodeLinkedList(t *testing.T) {
	as, l := nodeListSeries(t)
	a := as[2]
	var items []int32
	for v := range a.Graph.NumNodes() {
		if a.Classes.Name(int32(v)) == "Item" {
			items = append(items, int32(v))
		}
	}
	n := l.Items + l.WarmItems
	if len(items) != n {
		t.Fatalf("%d items", len(items))
	}
	tree := inspect.MergedPaths(a, items)
	head := nodeByID(t, a, l.HeadID)
	// The head retains the list and the items' map (328 bytes), which
	// only they hold: 804,328 bytes, as DevTools' worker finds for the
	// head and the Item class (shared/peers/devtools-driver.mjs on
	// the unzipped final snapshot).
	all := uint64(40*n + 328)
	want := []struct {
		edge, class   string
		objects, ends int
		hops          int
		retained      uint64
	}{
		{"", "(synthetic)", n, 0, 1, all},
		{".2", "global", n, 0, 1, all},
		{".list", "List", n, 0, 1, all},
		{".head", "Item", n, 1, 1, all},
		{".next", "Item", n - 1, n - 1, n - 1, 0},
	}
	if len(tree) != len(want) {
		t.Fatalf("%d tree nodes: %+v", len(tree), tree)
	}
	for i, w := range want {
		m := tree[i]
		if m.Edge != w.edge || m.Class != w.class || m.Objects != w.objects || m.Ends != w.ends || m.Hops != w.hops ||
			m.Retained != w.retained || m.Depth != i || m.Parent != int32(i-1) {
			t.Errorf("node %d: %+v, want %+v", i, m, w)
		}
	}
	if tree[3].Example != head || a.Dominators.Retained[head] != all {
		t.Errorf("head example %d (want %d), retains %d", tree[3].Example, head, a.Dominators.Retained[head])
	}
}

// The paths to the real list's last item, through every item: from
// global.list, through global's property cell for `list`, from the native
// context on the stack (the issue: `paths --id <tail>` ran past 200 s).
func TestPathsNodeLinkedList(t *testing.T) {
	as, l := nodeListSeries(t)
	a := as[2]
	g := a.Graph
	tail := nodeByID(t, a, l.TailID)
	ps := a.Paths(tail, analysis.PathOptions{K: 3})
	hops := l.Items + l.WarmItems - 1 // .next hops from the head
	if len(ps) != 3 {
		t.Fatalf("%d paths", len(ps))
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
	a := analyzeList(b, n)
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

// BenchmarkMergedPathsLinkedList merges the paths of a million items of
// one list.
func BenchmarkMergedPathsLinkedList(b *testing.B) {
	const n = 1000000
	a := analyzeList(b, n)
	items := make([]int32, n)
	for i := range items {
		items[i] = int32(4 + 2*i)
	}
	b.ResetTimer()
	for range b.N {
		if tree := inspect.MergedPaths(a, items); len(tree) != 5 {
			b.Fatalf("%d tree nodes", len(tree))
		}
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}
