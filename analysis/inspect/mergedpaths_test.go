package inspect_test

import (
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/analysistest"
)

// The merged paths of a list's items are one node per hop kind: the head,
// then every .next hop merged into one node that says how many hops it
// stands for. Retained sizes are counted once: every item but the head
// is dominated by the one before it.
func TestMergedPathsLinkedList(t *testing.T) {
	const n = 100000
	a := analysistest.AnalyzeList(t, n)
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

// merged-paths on the real list: the head, then one node for the 20,099
// .next hops (the issue: a 30k list ran out of memory past 4.5 GB).
func TestMergedPathsNodeLinkedList(t *testing.T) {
	as, l := analysistest.NodeListSeries(t)
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
	head := analysistest.NodeByID(t, a, l.HeadID)
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

// BenchmarkMergedPathsLinkedList merges the paths of a million items of
// one list.
func BenchmarkMergedPathsLinkedList(b *testing.B) {
	const n = 1000000
	a := analysistest.AnalyzeList(b, n)
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
