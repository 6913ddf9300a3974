package analysis_test

import (
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// linkedList builds the heap of a program whose global `list` is a
// linked list of items Item -.next-> Item, each with a `.data` object,
// items items long: the root, its shortcut to global, (GC roots), the
// List, then item i at node 4+2i and its data at 5+2i. Graphs of one list
// at several lengths share their ids, as snapshots of one process do.
func linkedList(items int) *model.Graph {
	nodes := []tnode{{"synthetic", "", 0}, {"synthetic", "(GC roots)", 0}, obj("global", 100), obj("List", 32)}
	edges := []tedge{{from: 0, to: 1, typ: eElement, index: 1}, {from: 0, to: 2, typ: eShortcut, name: "2"},
		prop(2, 3, "list")}
	for i := 0; i < items; i++ {
		it, data := int32(4+2*i), int32(5+2*i)
		nodes = append(nodes, obj("Item", 48), obj("Object", 32))
		from, name := it-2, "next"
		if i == 0 {
			from, name = 3, "head"
		}
		edges = append(edges, prop(from, it, name), prop(it, data, "data"))
	}
	return build(nodes, edges)
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
	r := analysis.Leaks(base, target, final, analysis.LeakOptions{Examples: 2})
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
	tree := a.MergedPaths(items)
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

// BenchmarkLeaksLinkedList runs Leaks on a leaked list of a million items
// (2M new nodes between the target and final snapshots' 1M): seconds, not
// the hours a path per item took.
func BenchmarkLeaksLinkedList(b *testing.B) {
	base, target, final := analyzeList(b, 1000), analyzeList(b, 1000000), analyzeList(b, 1500000)
	b.ResetTimer()
	for range b.N {
		if r := analysis.Leaks(base, target, final, analysis.LeakOptions{}); len(r.Clusters) != 1 {
			b.Fatalf("%d clusters", len(r.Clusters))
		}
	}
	b.ReportMetric(peakRSS(), "peak-RSS-MB")
}
