package inspect_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/analysistest"
)

// The page builds 30000 OrderLine with sku "SKU-" + (i+j+k)%50: short
// concatenations V8 flattens, so 50 texts of 600 flat 20-byte copies each.
func TestInspectDuplicateStringsChromium(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "chromium-small-page")
	rows := inspect.DuplicateStrings(a, 0)
	sku := 0
	for i, r := range rows {
		if !strings.HasPrefix(r.Text, "SKU-") {
			continue
		}
		sku++
		if r.Count != 600 || r.Size != 20 || r.Total != 12000 || r.Wasted != 11980 {
			t.Errorf("%q: %+v", r.Text, r)
		}
		if i >= 50 {
			t.Errorf("%q ranks %d, want among the first 50", r.Text, i)
		}
		if got := a.Graph.NodeName(r.Example); got != r.Text {
			t.Errorf("example of %q is named %q", r.Text, got)
		}
	}
	if sku != 50 {
		t.Errorf("%d SKU groups, want 50", sku)
	}
	if got := inspect.DuplicateStrings(a, 3); len(got) != 3 || got[0] != rows[0] {
		t.Errorf("limit 3: %+v", got)
	}
}

// A synthetic graph: two equal strings, one of another size, a V8 cons
// string named like them (skipped), and a unique string.
func TestInspectDuplicateStringsSynthetic(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{
		{Type: "synthetic", Name: "", Size: 0},
		{Type: "string", Name: "abc", Size: 16}, {Type: "string", Name: "abc", Size: 16}, {Type: "string", Name: "abc", Size: 24},
		{Type: "concatenated string", Name: "abc", Size: 16}, {Type: "string", Name: "xyz", Size: 16}, {Type: "string", Name: "abc", Size: 16},
	}, []analysistest.Edge{
		{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1}, {From: 0, To: 2, Type: analysistest.ElementEdge, Index: 2},
		{From: 0, To: 3, Type: analysistest.ElementEdge, Index: 3}, {From: 0, To: 4, Type: analysistest.ElementEdge, Index: 4},
		{From: 0, To: 5, Type: analysistest.ElementEdge, Index: 5}, {From: 0, To: 6, Type: analysistest.ElementEdge, Index: 6},
	})
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := inspect.DuplicateStrings(a, 0)
	want := inspect.DuplicateString{Text: "abc", Count: 3, Size: 16, Total: 48, Wasted: 32, Example: 1}
	if len(rows) != 1 || rows[0] != want {
		t.Errorf("got %+v, want [%+v]", rows, want)
	}
}

// The page keeps 10 detached <div class="detached-root-K"> of 50 <span>
// each in window.detachedTrees: Blink marks the 51 elements of each tree
// detached, propagation adds the 50 Text nodes, the div's attribute data
// and class-list string data (103 nodes), and each div retains 9480 bytes.
func TestInspectDetachedDOMChromium(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "chromium-small-page")
	res := inspect.DetachedDOM(a, inspect.DetachedOptions{})
	rows := res.Trees
	if res.Source != inspect.DOMDetachedness || res.Total != 10 || res.Internal != 0 {
		t.Errorf("source %d, %d trees, %d internal; want detachedness, 10, 0", res.Source, res.Total, res.Internal)
	}
	if len(rows) != 10 {
		t.Fatalf("%d trees, want 10", len(rows))
	}
	elements := 0
	for k, r := range rows {
		elements += r.Elements
		want := `Detached <div class="detached-root-` + string(rune('0'+k)) + `">`
		if r.Name != want || r.Elements != 51 || r.Nodes != 103 || r.Retained != 9480 {
			t.Errorf("tree %d: %+v, want %s with 51 elements, 103 nodes, 9480 bytes", k, r, want)
		}
		steps := r.Path.Steps
		if len(steps) < 2 || analysis.EdgeString(a.Graph, steps[len(steps)-2].Edge) != ".detachedTrees" ||
			analysis.EdgeString(a.Graph, steps[len(steps)-1].Edge) != "["+string(rune('0'+k))+"]" {
			t.Errorf("tree %d: path does not end in .detachedTrees[%d]: %+v", k, k, steps)
		}
	}
	if elements != 510 {
		t.Errorf("%d detached elements, want 510", elements)
	}
	if got := inspect.DetachedDOM(a, inspect.DetachedOptions{Limit: 2}); len(got.Trees) != 2 || got.Trees[1].Root != rows[1].Root || got.Total != 10 {
		t.Errorf("limit 2: %+v", got)
	}
}

// node-leak-3: the one onWork listener's context holds `retained`, the
// Array of 1500 LeakedItem (447536 bytes retained; the context 454808).
// chromium-small-page: 100 onThing closures, each with its own 140-byte
// context capturing `captured`, a {index, payload} of 120 bytes retained.
func TestInspectClosures(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	rows := inspect.Closures(a, 1)
	if len(rows) != 1 {
		t.Fatalf("%d rows", len(rows))
	}
	r := rows[0]
	if r.Name != "onWork" || r.Count != 1 || r.Contexts != 1 || r.ContextRetained != 454808 ||
		len(r.Variables) != 1 || r.Variables[0] != "retained" || r.LargestVar != "retained" ||
		r.LargestRetained != 447536 || a.Graph.NodeName(r.Largest) != "Array" {
		t.Errorf("node-leak-3 top closure group %+v", r)
	}
	a = analysistest.AnalyzeFixture(t, "chromium-small-page")
	r = inspect.Closures(a, 1)[0]
	if r.Name != "onThing" || r.Count != 100 || r.Contexts != 100 || r.ContextRetained != 14000 ||
		len(r.Variables) != 1 || r.Variables[0] != "captured" || r.LargestRetained != 120 ||
		a.Classes.Name(r.Largest) != "{index, payload}" {
		t.Errorf("chromium top closure group %+v", r)
	}
}

// node-leak-3: the root's dominator children are led by the `global`
// object (3079371 bytes retained); the leaking Array dominates its 1500
// LeakedItem (56 bytes each, 84000 shallow, 431280 retained).
func TestInspectDominatorTree(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	g := a.Graph
	top := inspect.DominatedBy(a, g.Root, 2)
	if len(top) != 2 || top[0].Name != "global" || top[0].Retained != 3079371 || top[1].Retained > top[0].Retained {
		t.Errorf("root's children %+v", top)
	}
	byClass := inspect.DominatedByClass(a, g.Root, 1)
	if len(byClass) != 1 || byClass[0].Class != "global" || byClass[0].Count != 1 || byClass[0].Retained != 3079371 {
		t.Errorf("root's children by class %+v", byClass)
	}
	arr, ok := a.NodeByID(80593) // the onWork context's `retained`
	if !ok {
		t.Fatal("no @80593")
	}
	items := inspect.DominatedByClass(a, arr, 0)
	if items[0] != (inspect.ClassGroup{Class: "LeakedItem", Count: 1500, Shallow: 84000, Retained: 431280, Example: items[0].Example}) {
		t.Errorf("array's children by class %+v", items[0])
	}
	kids := inspect.DominatedBy(a, arr, 0)
	var sum uint64
	for _, k := range kids {
		sum += k.Retained
	}
	if sum+a.Self.At(int(arr)) != a.Dominators.Retained[arr] {
		t.Errorf("children retain %d + self %d, want the array's %d", sum, a.Self.At(int(arr)), a.Dominators.Retained[arr])
	}
}

// The flame graph of node-leak-3 from the leaking Array: its box is the
// Array alone; under it, LeakedItem's box holds the 1,500 items with the
// dominator tree's numbers, and under that, all of what they dominate:
// each item's own Array and string (1,500 of each), with what is under
// those cut at two levels. A path that leads nowhere is an error.
func TestInspectFlameTree(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	first, kids := analysis.DominatorChildren(a.Dominators)
	arr, ok := a.NodeByID(80593)
	if !ok {
		t.Fatal("no @80593")
	}
	box, err := inspect.FlameTree(a, first, kids, arr, nil, 2, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	if box.Class != -1 || box.Count != 1 || box.Retained != 447536 || len(box.Children) == 0 {
		t.Fatalf("the Array's box %+v", box)
	}
	leak := box.Children[0]
	if a.Classes.Names[leak.Class] != "LeakedItem" || leak.Count != 1500 || leak.Retained != 431280 || a.Graph.NodeName(leak.Largest) != "LeakedItem" ||
		len(leak.Path) != 1 || leak.Path[0] != leak.Class || len(leak.Children) != 2 || leak.Cut {
		t.Errorf("LeakedItem's box %+v", leak)
	}
	for _, c := range leak.Children {
		if c.Count != 1500 || len(c.Children) != 0 || !c.Cut {
			t.Errorf("under LeakedItem, %s × %d (%d children, cut %v), want 1,500 of each, what is under them cut at 2 levels",
				a.Classes.Names[c.Class], c.Count, len(c.Children), c.Cut)
		}
	}
	objs, err := inspect.FlameObjects(a, first, kids, arr, leak.Path)
	if err != nil || len(objs) != 1500 || a.Dominators.Retained[objs[0]] < a.Dominators.Retained[objs[1499]] {
		t.Errorf("LeakedItem's objects: %d, %v", len(objs), err)
	}
	if _, err := inspect.FlameTree(a, first, kids, arr, []int32{leak.Class, leak.Class}, 1, 0.01); err == nil {
		t.Error("a path of LeakedItem under LeakedItem was taken")
	}
}

// node-leak-3's only user global is `bus` (the EventEmitter whose onWork
// listener leaks, 467896 bytes); the page's are the five it assigns to
// window plus window.__ready (true, 0 bytes), largest first.
func TestInspectGlobalVariables(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	rows := inspect.GlobalVariables(a, 0)
	if len(rows) != 1 || rows[0].Name != "bus" || rows[0].Class != "EventEmitter" || rows[0].Retained != 467896 {
		t.Errorf("node-leak-3 globals %+v", rows)
	}
	a = analysistest.AnalyzeFixture(t, "chromium-small-page")
	rows = inspect.GlobalVariables(a, 0)
	want := []struct {
		name, class string
		retained    uint64
	}{
		{"customers", "Map", 2881812}, {"leakyCache", "Object", 231056}, {"buffers", "Array", 229688},
		{"detachedTrees", "Array", 94892}, {"handlers", "Array", 18084}, {"__ready", "true", 0},
	}
	if len(rows) != len(want) {
		t.Fatalf("chromium globals %+v", rows)
	}
	for i, w := range want {
		if r := rows[i]; r.Name != w.name || r.Class != w.class || r.Retained != w.retained || a.Graph.Edges.To[r.Edge] != r.Node {
			t.Errorf("global %d: %+v, want %v", i, r, w)
		}
	}
}

// node-leak-3: every LeakedItem's shortest path is root -> global .bus ->
// ._events -> .work (onWork) -> {context} -> ->retained (Array) -> [i]; the
// merged tree is that one chain, 1500 objects retaining 431280 bytes.
func TestInspectMergedPaths(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "node-leak-3")
	var items []int32
	for i := range a.Graph.Nodes.ID.Len() {
		if a.Classes.Name(int32(i)) == "LeakedItem" {
			items = append(items, int32(i))
		}
	}
	tree := inspect.MergedPaths(a, items)
	want := []struct{ edge, class string }{
		{"", "(synthetic)"}, {".2", "global"}, {".bus", "EventEmitter"}, {"._events", "Object"},
		{".work", "Function"}, {"{context}", "system / Context"}, {"->retained", "Array"}, {"[]", "LeakedItem"},
	}
	if len(tree) != len(want) {
		t.Fatalf("merged tree %+v", tree)
	}
	for i, w := range want {
		n := tree[i]
		if n.Edge != w.edge || n.Class != w.class || n.Parent != int32(i-1) || n.Depth != i ||
			n.Objects != 1500 || n.Retained != 431280 {
			t.Errorf("tree node %d: %+v, want %v", i, n, w)
		}
	}
	if tree[7].Ends != 1500 || a.Graph.NodeName(tree[4].Example) != "onWork" {
		t.Errorf("leaf %+v, closure %q", tree[7], a.Graph.NodeName(tree[4].Example))
	}
	// The path read off the distances is as short as PathFinder.Find's.
	if p := a.Paths(items[0], analysis.PathOptions{}); len(p) != 1 || len(p[0].Steps) != 7 {
		t.Errorf("Find: %+v", p)
	}
}

// chromium-small-page: window.customers is a Map of 2000 Customer keyed by
// number (its OrderedHashMap table shows the 2000 values) and ranks first;
// window.handlers holds 100 closures. node-leak-3: the leaking Array holds
// 1500 LeakedItem, second after a 2048-element internal Array of Node's.
func TestInspectCollections(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "chromium-small-page")
	rows := inspect.Collections(a, 0)
	if r := rows[0]; r.Class != "Map" || r.Elements != 2000 || r.Retained != 2881812 || r.Backing < 0 {
		t.Errorf("chromium first collection %+v", r)
	}
	found := false
	for _, r := range rows {
		if r.Class == "Array" && r.Elements == 100 && r.Retained == 18084 {
			found = true
		}
		if r.Node == rows[0].Backing {
			t.Errorf("backing store %d listed on its own", r.Node)
		}
	}
	if !found {
		t.Error("window.handlers (Array of 100, 18084 bytes) not listed")
	}
	a = analysistest.AnalyzeFixture(t, "node-leak-3")
	rows = inspect.Collections(a, 2)
	if len(rows) != 2 || rows[1].Class != "Array" || rows[1].Elements != 1500 || rows[1].Retained != 447536 || rows[0].Elements != 2048 {
		t.Errorf("node-leak-3 collections %+v", rows)
	}
}

// chromium-small-page: the page's classes each have one shape (Customer
// {id, name, orders, tags} 2000 × 28 bytes, Order 10000, OrderLine 30000)
// and the onThing closures' captured objects are 100 plain {index,
// payload}.
//
// The 12003 plain Arrays (16 bytes each) nest: each Customer's orders
// Array (1292 bytes retained) dominates its Orders' lines Arrays (212
// each). Only the outermost count, as in the Summary: the 2000 orders
// Arrays plus window.buffers (229688), window.detachedTrees (94892) and
// window.handlers (18084) make 2926664 bytes. Adding the 10000 nested
// lines Arrays too gave 5046664, more than the whole heap (5006009).
func TestInspectObjectShapes(t *testing.T) {
	a := analysistest.AnalyzeFixture(t, "chromium-small-page")
	total := a.TotalSize()
	want := map[string]inspect.ObjectShape{
		"Array":     {Name: "Array", Properties: nil, Count: 12003, Shallow: 192048, Retained: 2926664},
		"Customer":  {Name: "Customer", Properties: []string{"id", "name", "orders", "tags"}, Count: 2000, Shallow: 56000, Retained: 2852000},
		"Order":     {Name: "Order", Properties: []string{"amount", "customer", "id", "lines"}, Count: 10000, Shallow: 280000, Retained: 2400000},
		"OrderLine": {Name: "OrderLine", Properties: []string{"qty", "sku"}, Count: 30000, Shallow: 600000, Retained: 1200000},
		"Object":    {Name: "Object", Properties: []string{"index", "payload"}, Count: 100, Shallow: 2000, Retained: 12000},
	}
	for _, r := range inspect.ObjectShapes(a, 0) {
		if r.Retained > total {
			t.Errorf("%s %v retains %d, more than the heap's %d", r.Name, r.Properties, r.Retained, total)
		}
		w, ok := want[r.Name]
		if !ok || strings.Join(r.Properties, ",") != strings.Join(w.Properties, ",") {
			continue
		}
		delete(want, r.Name)
		if r.Count != w.Count || r.Shallow != w.Shallow || r.Retained != w.Retained || a.Graph.NodeName(r.Example) != w.Name {
			t.Errorf("%s %v: %+v, want %+v", r.Name, r.Properties, r, w)
		}
	}
	for _, w := range want {
		t.Errorf("shape %s %v not found", w.Name, w.Properties)
	}
}
