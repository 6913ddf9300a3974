package analysis_test

import (
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

// distanceGraph has a user root (global), a system root, a weak edge, a
// descriptor array, a NativeContext's sloppy_function_map and a WeakMap
// entry whose table is nearer than its key.
func distanceGraph() *model.Graph {
	nodes := []analysistest.Node{
		{Type: "synthetic", Name: "", Size: 0},                         // 0 root
		{Type: "synthetic", Name: "(GC roots)", Size: 0},               // 1
		analysistest.Obj("global", 1),                                  // 2 user root
		analysistest.Obj("A", 1),                                       // 3
		analysistest.Obj("B", 1),                                       // 4 only weakly held from A, strongly from Sys
		analysistest.Obj("Sys", 1),                                     // 5
		{Type: "array", Name: "(map descriptors)", Size: 1},            // 6
		analysistest.Obj("D2", 1),                                      // 7 descriptor index 2 (kept)
		analysistest.Obj("D4", 1),                                      // 8 descriptor index 4 (skipped: 4 % 3 == 1)
		{Type: "hidden", Name: "system / NativeContext", Size: 1},      // 9
		analysistest.Obj("SloppyMap", 1),                               // 10 only via sloppy_function_map
		{Type: "hidden", Name: "system / EphemeronHashTable", Size: 1}, // 11 table (id 23), distance 2
		analysistest.Obj("Key", 1),                                     // 12 key (id 25), distance 3
		analysistest.Obj("Value", 1),                                   // 13 value (id 27)
		analysistest.Obj("Far", 1),                                     // 14 a step on the key's path
	}
	wm := "0 / part of key (Key @25) -> value (Value @27) pair in WeakMap (table @23)"
	return analysistest.Build(nodes, []analysistest.Edge{
		{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1},
		{From: 0, To: 2, Type: analysistest.ShortcutEdge, Name: "global"},
		analysistest.Prop(2, 3, "a"),
		{From: 3, To: 4, Type: analysistest.WeakEdge, Name: "w"},
		{From: 1, To: 5, Type: analysistest.ElementEdge, Index: 1},
		analysistest.Prop(5, 4, "b"),
		analysistest.Prop(3, 6, "descriptors"),
		{From: 6, To: 7, Type: analysistest.ElementEdge, Index: 2},
		{From: 6, To: 8, Type: analysistest.ElementEdge, Index: 4},
		analysistest.Prop(5, 8, "d4"),
		analysistest.Prop(2, 9, "context"),
		{From: 9, To: 10, Type: analysistest.InternalEdge, Name: "sloppy_function_map"},
		analysistest.Prop(5, 10, "sloppy"),
		analysistest.Prop(2, 11, "table"),
		analysistest.Prop(3, 14, "far"),
		analysistest.Prop(14, 12, "key"),
		{From: 11, To: 13, Type: analysistest.EphemeronEdge, Name: wm},
		{From: 12, To: 13, Type: analysistest.InternalEdge, Name: wm},
	})
}

func TestDistancesDevToolsRules(t *testing.T) {
	g := distanceGraph()
	roots := analysis.FindRoots(g)
	if !reflect.DeepEqual(roots.User, []int32{2}) {
		t.Fatalf("user roots %v", roots.User)
	}
	got := analysis.Distances(g, roots, nil)
	const sys = analysis.BaseSystemDistance
	want := []int32{sys, sys + 1, 1, 2, sys + 3, sys + 2, 3, 4, sys + 3, 2, sys + 3, 2, 4, 5, 3}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("distances\n got %v\nwant %v", got, want)
	}
	// Ignoring A (DevTools' "Ignore this retainer") makes its subtree
	// reachable only through the system root, or not at all.
	ign := analysis.NewBits(g.NumNodes())
	ign.Set(3)
	got = analysis.Distances(g, roots, ign)
	want = []int32{sys, sys + 1, 1, analysis.NoDistance, sys + 3, sys + 2, analysis.NoDistance, analysis.NoDistance, sys + 3, 2, sys + 3, 2,
		analysis.NoDistance, analysis.NoDistance, analysis.NoDistance}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("distances ignoring A\n got %v\nwant %v", got, want)
	}
}

func TestDistancesWithoutUserRoots(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, {Type: "synthetic", Name: "(GC roots)", Size: 0}, analysistest.Obj("A", 1), analysistest.Obj("U", 1)},
		[]analysistest.Edge{{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1}, {From: 1, To: 2, Type: analysistest.ElementEdge, Index: 1}})
	got := analysis.Distances(g, analysis.FindRoots(g), nil)
	if want := []int32{0, 1, 2, analysis.NoDistance}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestClassNames(t *testing.T) {
	nodes := []analysistest.Node{
		{Type: "synthetic", Name: "", Size: 0},                     // 0
		{Type: "hidden", Name: "system / Foo", Size: 8},            // 1 (system)
		{Type: "code", Name: "system / Code", Size: 8},             // 2 (compiled code)
		{Type: "closure", Name: "f", Size: 8},                      // 3 Function
		{Type: "regexp", Name: "a+b", Size: 8},                     // 4 RegExp
		{Type: "string", Name: "hello", Size: 8},                   // 5 (string)
		{Type: "native", Name: `<div id="x">`, Size: 8},            // 6 <div>
		{Type: "native", Name: "<span class=a>", Size: 8},          // 7 detached -> Detached <span>
		{Type: "native", Name: "Text", Size: 8},                    // 8 reached from 7 -> Detached Text
		{Type: "object", Name: "Customer", Size: 8},                // 9 Customer with a location
		{Type: "object", Name: "Customer", Size: 8},                // 10 Customer, another location
		{Type: "object", Name: "Object", Size: 8},                  // 11 {a, b}
		{Type: "object", Name: "Object", Size: 8},                  // 12 {a, b} (and __proto__)
		{Type: "object", Name: "Object", Size: 8},                  // 13 {c, a, b}: has a and b -> {a, b}
		{Type: "object", Name: "Object", Size: 8},                  // 14 {z}: no interface -> Object
		{Type: "concatenated string", Name: "", Size: 8},           // 15 (concatenated string)
		{Type: "native", Name: "system / ExternalString", Size: 8}, // 16
		{Type: "object", Name: "Detached <b x>", Size: 8},          // 17 cut like Detached <b>
		{Type: "object", Name: "Object", Size: 8},                  // 18 {b, a}
		{Type: "object", Name: "Object", Size: 8},                  // 19 {b, a}
	}
	edges := []analysistest.Edge{
		{From: 7, To: 8, Type: analysistest.InternalEdge, Name: "child"},
		analysistest.Prop(11, 5, "a"), analysistest.Prop(11, 5, "b"),
		analysistest.Prop(12, 5, "a"), analysistest.Prop(12, 5, "__proto__"), analysistest.Prop(12, 5, "b"),
		analysistest.Prop(18, 5, "b"), analysistest.Prop(18, 5, "a"), analysistest.Prop(19, 5, "b"), analysistest.Prop(19, 5, "a"),
		analysistest.Prop(13, 5, "c"), analysistest.Prop(13, 5, "a"), analysistest.Prop(13, 5, "b"),
		analysistest.Prop(14, 5, "z"),
	}
	g := analysistest.Build(nodes, edges)
	g.Detachedness = make([]uint8, len(nodes))
	g.Detachedness[7] = analysis.DOMDetached
	g.Locations = []model.Location{{Node: 9, ScriptID: 4, Line: 9, Column: 13}, {Node: 10, ScriptID: 4, Line: 20, Column: 1}, {Node: 3, ScriptID: 4, Line: 1, Column: 1}}
	ds := analysis.PropagateDOMState(g)
	c := analysis.ClassifyNodes(g, ds)
	want := []string{"(synthetic)", "(system)", "(compiled code)", "Function", "RegExp", "(string)", "<div>", "Detached <span>",
		"Detached Text", "Customer", "Customer", "{a, b}", "{a, b}", "{a, b}", "Object", "(concatenated string)",
		"system / ExternalString", "Detached <b>", "{a, b}", "{a, b}"}
	for i, w := range want {
		if got := c.Name(int32(i)); got != w {
			t.Errorf("node %d: class %q, want %q", i, got, w)
		}
	}
	if c.Of[9] == c.Of[10] || c.Key(c.Of[9]) != "4,9,13,Customer" || c.Key(c.Of[3]) != ",Function" {
		t.Errorf("location split: keys %q %q %q", c.Key(c.Of[9]), c.Key(c.Of[10]), c.Key(c.Of[3]))
	}
	// {a, b} and {b, a} each start two objects; {a, b} comes first (seen
	// first), and as both have the same property set, objects of both
	// shapes get the first one's name, as in DevTools.
	if len(c.Interfaces) != 2 || c.Interfaces[0].Name != "{a, b}" || c.Interfaces[1].Name != "{b, a}" {
		t.Errorf("interfaces %+v", c.Interfaces)
	}
	nm := analysis.NewNamer(g, ds)
	if got := nm.Name(7); got != "Detached <span class=a>" {
		t.Errorf("display name %q", got)
	}
}

func TestNamer(t *testing.T) {
	nodes := []analysistest.Node{
		{Type: "synthetic", Name: "", Size: 0},
		{Type: "concatenated string", Name: "", Size: 0}, // 1 = 2 + 3
		{Type: "string", Name: "Hello, ", Size: 0},       // 2
		{Type: "concatenated string", Name: "", Size: 0}, // 3 = 4 + 5
		{Type: "string", Name: "wor", Size: 0},           // 4
		{Type: "string", Name: "ld", Size: 0},            // 5
		{Type: "object", Name: "Object", Size: 0},        // 6
	}
	edges := []analysistest.Edge{
		{From: 1, To: 2, Type: analysistest.InternalEdge, Name: "first"}, {From: 1, To: 3, Type: analysistest.InternalEdge, Name: "second"},
		{From: 3, To: 4, Type: analysistest.InternalEdge, Name: "first"}, {From: 3, To: 5, Type: analysistest.InternalEdge, Name: "second"},
	}
	for i := 0; i < 40; i++ {
		edges = append(edges, analysistest.Prop(6, 2, "property"+string(rune('A'+i%26))+strings.Repeat("x", i%3)))
	}
	edges = append(edges, analysistest.Prop(6, 2, "a,b"))
	g := analysistest.Build(nodes, edges)
	nm := analysis.NewNamer(g, nil)
	if got := nm.Name(1); got != "Hello, world" {
		t.Errorf("cons string name %q", got)
	}
	got := nm.Name(6)
	if !strings.HasPrefix(got, "{propertyA, ") || !strings.Contains(got, ", …, ") || !strings.HasSuffix(got, `, "a,b"}`) {
		t.Errorf("plain object name %q", got)
	}
}

// Nested instances of a class count once in maxRet; zero-size instances
// are not counted.
func TestSummaryMaxRet(t *testing.T) {
	nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("Node", 10), analysistest.Obj("Node", 10), analysistest.Obj("Leaf", 1), analysistest.Obj("Node", 10), analysistest.Obj("Node", 0)}
	g := analysistest.Build(nodes, []analysistest.Edge{analysistest.Prop(0, 1, "a"), analysistest.Prop(1, 2, "b"), analysistest.Prop(2, 3, "c"), analysistest.Prop(0, 4, "d"), analysistest.Prop(0, 5, "e"), analysistest.Prop(5, 2, "f")})
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 is reached from 1 and 5: dominated by the root.
	sum := a.Summary()
	byName := map[string]analysis.ClassSummary{}
	for _, s := range sum {
		byName[s.Name] = s
	}
	node := byName["Node"]
	// Counted: 1 (10), 2 (11: itself and Leaf, under the root since 5
	// also retains it), 4 (10); 5 has size 0.
	if node.Count != 3 || node.Shallow != 30 || node.Retained != 31 {
		t.Errorf("Node row %+v", node)
	}
	if leaf := byName["Leaf"]; leaf.Count != 1 || leaf.Retained != 1 {
		t.Errorf("Leaf row %+v", leaf)
	}
	if sum[0].Name != "Node" {
		t.Errorf("first row %q", sum[0].Name)
	}
	top := a.Top(2)
	if len(top) != 2 || top[0].Node != 2 || top[0].Retained != 11 || top[1].Node != 1 {
		t.Errorf("top %+v", top)
	}
}

func TestRetainerPaths(t *testing.T) {
	g := distanceGraph()
	roots := analysis.FindRoots(g)
	ret := model.BuildRetainers(g)
	// B: from global only through a weak edge, so its paths come from the
	// system root.
	paths := analysis.RetainerPaths(g, ret, roots, 4, analysis.PathOptions{K: 3})
	if len(paths) != 1 || !paths[0].System || len(paths[0].Steps) != 3 {
		t.Fatalf("paths to B: %+v", paths)
	}
	// Value: through the key (global -> A -> Far -> Key) and through the
	// table (global -> table). The table path is shorter, but its last
	// hop is the engine's (out of the hidden table): the path shown is
	// the key's, two hops longer, and DevTools' order has the table's
	// first.
	paths = analysis.RetainerPaths(g, ret, roots, 13, analysis.PathOptions{K: 3})
	if len(paths) != 2 {
		t.Fatalf("%d paths to Value", len(paths))
	}
	labels := func(p analysis.Path) string {
		var l []string
		for _, s := range p.Steps {
			l = append(l, analysis.EdgeString(g, s.Edge))
		}
		return strings.Join(l, " ")
	}
	if got := labels(paths[0]); got != ".global .a .far .key {0 / part of key (Key @25) -> value (Value @27) pair in WeakMap (table @23)}" {
		t.Errorf("first path %q", got)
	}
	if paths[0].Cost != 5 || paths[1].Cost != 3 || paths[0].System || paths[1].System {
		t.Errorf("costs %d %d", paths[0].Cost, paths[1].Cost)
	}
	shortest := analysis.NewPathFinder(g, ret, roots, analysis.PathOptions{K: 3}).Shortest(13)
	if len(shortest) != 2 || labels(shortest[0]) != ".global .table {0 / part of key (Key @25) -> value (Value @27) pair in WeakMap (table @23)}" {
		t.Errorf("DevTools' order: %+v", shortest)
	}
	// Ignoring the table leaves the key path.
	paths = analysis.RetainerPaths(g, ret, roots, 13, analysis.PathOptions{K: 3, IgnoreNodes: []int32{11}})
	if len(paths) != 1 || paths[0].Steps[len(paths[0].Steps)-2].To != 12 {
		t.Errorf("paths ignoring the table: %+v", paths)
	}
	if analysis.EdgeLabel(g, paths[0].Steps[0].Edge) != "global" || analysis.EdgeLabel(g, 0) != "[1]" {
		t.Errorf("labels %q %q", analysis.EdgeLabel(g, paths[0].Steps[0].Edge), analysis.EdgeLabel(g, 0))
	}
}

func TestCensusAndUnreachable(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("A", 10), analysistest.Obj("A", 5), {Type: "string", Name: "s", Size: 3}, analysistest.Obj("B", 7)},
		[]analysistest.Edge{analysistest.Prop(0, 1, "a"), {From: 1, To: 2, Type: analysistest.WeakEdge, Name: "w"}, analysistest.Prop(1, 3, "s")})
	c := analysis.Census(g)
	if c.Nodes != 5 || c.TotalSize != 25 || c.ByType[0].Type.Name != "object" || c.ByType[0].Count != 3 || c.ByType[0].Size != 22 {
		t.Errorf("census %+v", c)
	}
	if c.ByCategory[0].Category != model.CatObject || c.ByCategory[0].Size != 22 {
		t.Errorf("categories %+v", c.ByCategory)
	}
	reach := analysis.Reachable(g)
	cls := analysis.ClassifyNodes(g, nil)
	u := analysis.Unreachable(g, reach, cls, g.Nodes.Size)
	if u.Count != 2 || u.Size != 12 || len(u.ByClass) != 2 || u.ByClass[0].Name != "B" || u.ByClass[1].Size != 5 {
		t.Errorf("unreachable %+v", u)
	}
}

func TestPropagateDOMState(t *testing.T) {
	nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, {Type: "native", Name: "Doc", Size: 0}, {Type: "native", Name: "<div>", Size: 0}, {Type: "native", Name: "<p>", Size: 0},
		{Type: "object", Name: "JSWrapper", Size: 0}, {Type: "native", Name: "<b>", Size: 0}, {Type: "native", Name: "<i>", Size: 0}}
	g := analysistest.Build(nodes, []analysistest.Edge{
		analysistest.Prop(1, 2, "child"), // attached doc -> div: attached
		analysistest.Prop(3, 2, "x"),     // detached p -> div: stays attached (attached first)
		analysistest.Prop(3, 4, "w"),     // detached p -> JS object: not propagated
		analysistest.Prop(4, 5, "b"),     // JS -> b: not reached through JS
		{From: 3, To: 6, Type: analysistest.WeakEdge, Name: "weak"},
	})
	g.Detachedness = []uint8{0, analysis.DOMAttached, 0, analysis.DOMDetached, 0, 0, 0}
	ds := analysis.PropagateDOMState(g)
	var states []uint8
	for i := range nodes {
		states = append(states, ds.State(int32(i)))
	}
	if want := []uint8{0, 1, 1, 2, 0, 0, 0}; !reflect.DeepEqual(states, want) {
		t.Errorf("states %v, want %v", states, want)
	}
	if ds.Renamed.Count() != 1 || !ds.Renamed.Has(3) {
		t.Errorf("renamed %v", ds.Renamed)
	}
}

// Graphs of other runtimes get the runtime-neutral rules: no DevTools
// naming, no size redistribution, weak references skipped.
func TestOtherRuntime(t *testing.T) {
	g := &model.Graph{
		NodeTypes: []model.NodeType{
			{Namespace: "hprof", Name: "root", Category: model.CatSynthetic},
			{Namespace: "hprof", Name: "instance", Category: model.CatObject},
			{Namespace: "hprof", Name: "array", Category: model.CatArray},
		},
		EdgeTypes: []model.EdgeType{
			{Namespace: "hprof", Name: "field", Category: model.EdgeProperty},
			{Namespace: "hprof", Name: "referent", Category: model.EdgeInternal, Strength: model.Weak},
		},
	}
	name := func(s string) uint32 { return g.Strings.AddString(s) }
	g.Nodes = model.Nodes{
		Type:      []uint8{0, 1, 2, 1},
		Name:      []uint32{name("roots"), name("java.util.HashMap"), name("java.util.HashMap$Node[]"), name("java.lang.ref.WeakReference")},
		ID:        model.NewUint64s(1, 2, 3, 4),
		Size:      model.NewUint64s(0, 48, 1024, 32),
		FirstEdge: []uint32{0, 2, 3, 3, 4},
	}
	g.Edges = model.Edges{Type: []uint8{0, 0, 0, 1}, Name: []uint32{name("a"), name("b"), name("table"), name("referent")}, To: []int32{1, 3, 2, 1}}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Policy.Name != "default" || a.Self.At(2) != 1024 || a.Dominators.Retained[1] != 1072 || a.Dominators.IDom[1] != 0 {
		t.Errorf("policy %s self %v retained %v idom %v", a.Policy.Name, a.Self, a.Dominators.Retained, a.Dominators.IDom)
	}
	if a.Classes.Name(2) != "java.util.HashMap$Node[]" || a.Classes.Name(0) != "roots" {
		t.Errorf("classes %q %q", a.Classes.Name(2), a.Classes.Name(0))
	}
}

// TestPathFinderWith: the PathFinder an Analysis keeps (its distances
// are ShortestPaths' tree) finds exactly RetainerPaths' paths, and one
// derived from it With other ignore lists (what heapx serve's "ignore
// this retainer" asks for on every click) paths of the same costs as a
// PathFinder made with them, on dumps of each runtime: for objects spread
// over each dump, ignoring the middle object of their first path, then
// two.
func TestPathFinderWith(t *testing.T) {
	for _, rel := range []string{"node-leak-3.heapsnapshot.gz", "spidermonkey/ff-small-page.fxsnapshot", "hprof/java-ticketleak-3.hprof.gz"} {
		a := analysistest.AnalyzeDump(t, rel)
		g := a.Graph
		kept := a.PathFinder(analysis.PathOptions{})
		checked := 0
		for n := 0; n < g.NumNodes(); n += g.NumNodes() / 97 {
			first := kept.With(analysis.PathOptions{K: 3}).Find(int32(n))
			if want := analysis.RetainerPaths(g, a.Retainers(), a.Roots, int32(n), analysis.PathOptions{K: 3}); !reflect.DeepEqual(first, want) {
				t.Fatalf("%s: paths to node %d:\n got %+v\nwant %+v", rel, n, first, want)
			}
			if len(first) == 0 || len(first[0].Steps) < 3 {
				continue
			}
			steps := first[0].Steps
			ign := []int32{steps[len(steps)/2].From}
			for round := 0; round < 2; round++ {
				want := analysis.RetainerPaths(g, a.Retainers(), a.Roots, int32(n), analysis.PathOptions{K: 3, IgnoreNodes: ign})
				got := kept.With(analysis.PathOptions{K: 3, IgnoreNodes: ign}).Find(int32(n))
				if len(got) != len(want) {
					t.Fatalf("%s: %d paths to node %d ignoring %v, want %d", rel, len(got), n, ign, len(want))
				}
				for i := range got {
					// Of paths of one cost, either search may find
					// another first.
					if got[i].Cost != want[i].Cost || got[i].System != want[i].System {
						t.Fatalf("%s: path %d to node %d ignoring %v costs %d (system %v), want %d (%v)", rel, i, n, ign,
							got[i].Cost, got[i].System, want[i].Cost, want[i].System)
					}
					checkPath(t, g, got[i], int32(n), ign)
				}
				checked++
				if len(want) == 0 || len(want[0].Steps) < 3 {
					break
				}
				ign = append(ign, want[0].Steps[len(want[0].Steps)/2].From)
			}
		}
		if checked < 50 {
			t.Errorf("%s: only %d cases", rel, checked)
		}
	}
}

// checkPath fails t unless p is a path of g from the root to target over
// edges that exist and are not weak, through no node of ignore and no
// node twice.
func checkPath(t *testing.T, g *model.Graph, p analysis.Path, target int32, ignore []int32) {
	t.Helper()
	seen := map[int32]bool{}
	from := g.Root
	for _, st := range p.Steps {
		s, e := g.EdgeRange(st.From)
		if st.From != from || st.Edge < s || st.Edge >= e || g.Edges.To[st.Edge] != st.To || g.EdgeType(st.Edge).Strength == model.Weak {
			t.Fatalf("step %+v is not an edge from node %d", st, from)
		}
		if seen[st.To] || slices.Contains(ignore, st.To) {
			t.Fatalf("path %+v goes through node %d twice or ignored", p, st.To)
		}
		seen[st.To] = true
		from = st.To
	}
	if from != target {
		t.Fatalf("path %+v ends at %d, not %d", p, from, target)
	}
}

// TestSpareBuffers: the buffers Spare hands out are the caller's (two
// never share memory, though the first two come from one array of the
// dominator pass), and the passes that run after them, or after
// DropSpare, answer as before: the Summary and the suspects' paths of the
// leak fixture, with their int32s in the buffers overwritten.
func TestSpareBuffers(t *testing.T) {
	g := analysistest.LoadFixture(t, "node-leak-3")
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := g.NumNodes()
	summary := a.Summary()
	var bufs [][]int32
	for i := range 4 {
		b := a.Spare(n - i)
		if len(b) != n-i || cap(b) != n-i {
			t.Fatalf("Spare(%d): length %d, capacity %d", n-i, len(b), cap(b))
		}
		for j := range b {
			b[j] = int32(-1 - i)
		}
		bufs = append(bufs, b)
	}
	for i, b := range bufs {
		for j, v := range b {
			if v != int32(-1-i) {
				t.Fatalf("Spare buffer %d, entry %d: %d, overwritten by another buffer", i, j, v)
			}
		}
	}
	if got := a.Summary(); !reflect.DeepEqual(got, summary) {
		t.Errorf("the Summary after Spare differs")
	}
	a.DropSpare()
	runtime.GC()
	if got := a.Summary(); !reflect.DeepEqual(got, summary) {
		t.Errorf("the Summary after DropSpare differs")
	}
	for i, b := range bufs {
		for j, v := range b {
			if v != int32(-1-i) {
				t.Fatalf("Spare buffer %d, entry %d: %d after the passes, which used it", i, j, v)
			}
		}
	}
}

// TestAnalyzeReusesPredecessors checks that Analyze leaves the dominator
// pass's predecessor array (at least 2N entries, for the Summary's
// dominator-tree children) for later passes, and nothing else.
func TestAnalyzeReusesPredecessors(t *testing.T) {
	g := analysistest.LoadFixture(t, fixtures[0])
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if kept := analysis.KeptBuffers(a); len(kept) != 1 || kept[0] < 2*g.NumNodes() {
		t.Errorf("buffers kept %v for %d nodes, want the predecessor array alone", kept, g.NumNodes())
	}
}
