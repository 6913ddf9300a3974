package analysis_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

func analyze(t testing.TB, g *model.Graph, p analysis.Policy) *analysis.Dominators {
	t.Helper()
	roots := analysis.FindRoots(g)
	return analysis.ComputeDominators(g, roots, p, analysis.PropagateDOMState(g))
}

func checkTree(t *testing.T, g *model.Graph, d *analysis.Dominators, idom []int32, retained []uint64) {
	t.Helper()
	for i := range idom {
		if d.IDom[i] != idom[i] {
			t.Errorf("idom[%d] = %d, want %d", i, d.IDom[i], idom[i])
		}
		if d.Retained[i] != retained[i] {
			t.Errorf("retained[%d] = %d, want %d", i, d.Retained[i], retained[i])
		}
	}
}

// A diamond with a cycle and a self loop: 0 -> 1 -> {2, 3} -> 4 -> 5 -> 4,
// 5 -> 5.
func TestDominatorsDiamondCycleSelfLoop(t *testing.T) {
	g := analysistest.Build(
		[]analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("A", 1), analysistest.Obj("B", 2), analysistest.Obj("C", 4), analysistest.Obj("D", 8), analysistest.Obj("E", 16)},
		[]analysistest.Edge{analysistest.Prop(0, 1, "a"), analysistest.Prop(1, 2, "b"), analysistest.Prop(1, 3, "c"), analysistest.Prop(2, 4, "d"), analysistest.Prop(3, 4, "d"),
			analysistest.Prop(4, 5, "e"), analysistest.Prop(5, 4, "back"), analysistest.Prop(5, 5, "self")})
	d := analyze(t, g, analysis.RawPolicy)
	checkTree(t, g, d, []int32{-1, 0, 1, 1, 1, 4}, []uint64{31, 31, 2, 4, 24, 16})
	if d.Reached != 6 || d.WeakOnly != 0 || d.Leftover != 0 {
		t.Errorf("counts %+v", d)
	}
}

// Nodes held only by weak edges become children of the root (with what
// they reach); cycles held only by each other are attached under the root.
func TestDominatorsUnreachable(t *testing.T) {
	g := analysistest.Build(
		[]analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("A", 1), analysistest.Obj("W", 2), analysistest.Obj("X", 4), analysistest.Obj("C1", 8), analysistest.Obj("C2", 16), analysistest.Obj("Y", 32)},
		[]analysistest.Edge{
			analysistest.Prop(0, 1, "a"),
			{From: 1, To: 2, Type: analysistest.WeakEdge, Name: "w"},   // W only weakly held
			analysistest.Prop(2, 3, "x"),                               // X reached from W
			analysistest.Prop(4, 5, "c"), analysistest.Prop(5, 4, "c"), // clique C1 <-> C2
			analysistest.Prop(5, 6, "y"), // Y reached from the clique only
		})
	d := analyze(t, g, analysis.RawPolicy)
	checkTree(t, g, d, []int32{-1, 0, 0, 2, 0, 0, 0}, []uint64{63, 1, 6, 4, 8, 16, 32})
	if d.Reached != 2 || d.WeakOnly != 1 || d.WeakOnlyReached != 2 || d.Leftover != 3 {
		t.Errorf("counts reached %d weakOnly %d/%d leftover %d", d.Reached, d.WeakOnly, d.WeakOnlyReached, d.Leftover)
	}
	// The same with DevTools' oracle.
	odom, oret, _ := devtoolsOracle(g)
	for i := range odom {
		want := odom[i]
		if int32(i) == g.Root {
			want = -1
		}
		if d.IDom[i] != want || float64(d.Retained[i]) != oret[i] {
			t.Errorf("node %d: %d/%d, oracle %d/%v", i, d.IDom[i], d.Retained[i], want, oret[i])
		}
	}
}

// DevTools' rules: the WeakMap value is dominated by its key, not by the
// table; inner shortcuts do not retain; page-owned objects are not
// retained through edges from system objects.
func TestDominatorsDevToolsRules(t *testing.T) {
	g := devToolsRulesGraph(100, 10)
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := a.Dominators
	if d.IDom[6] != 5 {
		t.Errorf("WeakMap value dominated by %d, want its key 5", d.IDom[6])
	}
	if d.IDom[7] != 2 {
		t.Errorf("page-owned Other dominated by %d, want global 2 (Sys -> Other is not essential)", d.IDom[7])
	}
	// The table (hidden) is folded into its owner WeakMap's shallow size.
	if a.Self.At(4) != 0 || a.Self.At(3) != 110 {
		t.Errorf("shallow sizes table %d WeakMap %d, want 0 and 110", a.Self.At(4), a.Self.At(3))
	}
	odom, oret, oself := devtoolsOracle(g)
	for i := range odom {
		want := odom[i]
		if int32(i) == g.Root {
			want = -1
		}
		if d.IDom[i] != want || float64(d.Retained[i]) != oret[i] || float64(a.Self.At(int(i))) != oself[i] {
			t.Errorf("node %d: %d/%d/%d, oracle %d/%v/%v", i, d.IDom[i], d.Retained[i], a.Self.At(int(i)), want, oret[i], oself[i])
		}
	}
}

// devToolsRulesGraph is TestDominatorsDevToolsRules' graph, with the
// WeakMap's table (folded into the WeakMap's shallow size) and the Key of
// the given sizes.
func devToolsRulesGraph(tableSize, keySize uint64) *model.Graph {
	nodes := []analysistest.Node{
		{Type: "synthetic", Name: "", Size: 0},                                 // 0 root
		{Type: "synthetic", Name: "(GC roots)", Size: 0},                       // 1
		analysistest.Obj("global", 10),                                         // 2 user root
		analysistest.Obj("WeakMap", 10),                                        // 3
		{Type: "hidden", Name: "system / EphemeronHashTable", Size: tableSize}, // 4 table (id 9)
		analysistest.Obj("Key", keySize),                                       // 5 (id 11)
		analysistest.Obj("Value", 10),                                          // 6 (id 13)
		analysistest.Obj("Other", 10),                                          // 7 held by (GC roots) and global
		analysistest.Obj("Sys", 10),                                            // 8 system object, also points at Other
	}
	name := "1 / part of key (Key @11) -> value (Value @13) pair in WeakMap (table @9)"
	edges := []analysistest.Edge{
		{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1},
		{From: 0, To: 2, Type: analysistest.ShortcutEdge, Name: "global"},
		analysistest.Prop(2, 3, "wm"), analysistest.Prop(2, 5, "key"),
		{From: 3, To: 4, Type: analysistest.InternalEdge, Name: "table"},
		{From: 4, To: 6, Type: analysistest.EphemeronEdge, Name: name},
		{From: 5, To: 6, Type: analysistest.InternalEdge, Name: name},
		analysistest.Prop(2, 7, "other"),
		{From: 1, To: 8, Type: analysistest.ElementEdge, Index: 1},
		analysistest.Prop(8, 7, "other"),
		{From: 2, To: 5, Type: analysistest.ShortcutEdge, Name: "short"},
	}
	return analysistest.Build(nodes, edges)
}

// Shallow sizes past 2^32, redistributed (the WeakMap's) and raw (the
// Key's), keep their high words through the pass, the Summary and the
// results a dump file stores.
func TestWideShallowSizes(t *testing.T) {
	const table, key = 1<<33 + 100, 1<<32 + 7
	g := devToolsRulesGraph(table, key)
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Self.At(3) != 10+table || a.Self.At(4) != 0 || a.Self.At(5) != key {
		t.Fatalf("shallow sizes WeakMap %d table %d Key %d, want %d, 0, %d", a.Self.At(3), a.Self.At(4), a.Self.At(5), 10+table, uint64(key))
	}
	if lo, narrow := a.Self.Low(); narrow || len(lo) != g.NumNodes() {
		t.Errorf("Self narrow %v with %d values, want wide with %d", narrow, len(lo), g.NumNodes())
	}
	if got, want := a.Dominators.Retained[g.Root], uint64(5*10+table+key); got != want {
		t.Errorf("root retains %d, want %d", got, want)
	}
	for _, c := range a.Summary() {
		if c.Name == "WeakMap" && (c.Shallow != 10+table || c.Retained != 10+table) {
			t.Errorf("WeakMap row shallow %d retained %d, want %d both", c.Shallow, c.Retained, 10+table)
		}
	}
	r := a.Results()
	if err := r.Check(g); err != nil || r.Shallow[3] != 10+table || r.Shallow[5] != key {
		t.Fatalf("results: %v, shallow %d and %d", err, r.Shallow[3], r.Shallow[5])
	}
	b, err := analysis.FromResults(g, r, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Self.At(3) != 10+table || b.Self.At(5) != key || !reflect.DeepEqual(b.Summary(), a.Summary()) {
		t.Errorf("from results: WeakMap %d, Key %d; the Summary differs: %v", b.Self.At(3), b.Self.At(5), !reflect.DeepEqual(b.Summary(), a.Summary()))
	}
}

// A chain of a million nodes: no recursion, exact sums.
func TestDominatorsLongChain(t *testing.T) {
	const n = 1000000
	nodes := make([]analysistest.Node, n)
	edges := make([]analysistest.Edge, 0, n)
	nodes[0] = analysistest.Node{Type: "synthetic", Name: "", Size: 0}
	for i := 1; i < n; i++ {
		nodes[i] = analysistest.Obj("Link", 1)
		edges = append(edges, analysistest.Prop(int32(i-1), int32(i), "next"))
	}
	// Back pointers to the head make every node a cross/back-edge target.
	for i := 2; i < n; i += 3 {
		edges = append(edges, analysistest.Prop(int32(i), 1, "head"))
	}
	g := analysistest.Build(nodes, edges)
	d := analyze(t, g, analysis.RawPolicy)
	for i := 1; i < n; i++ {
		if d.IDom[i] != int32(i-1) {
			t.Fatalf("idom[%d] = %d", i, d.IDom[i])
		}
		if d.Retained[i] != uint64(n-i) {
			t.Fatalf("retained[%d] = %d, want %d", i, d.Retained[i], n-i)
		}
	}
	dist := analysis.Distances(g, analysis.FindRoots(g), nil)
	if dist[n-1] != int32(n-1) {
		t.Errorf("distance of the last link %d, want %d", dist[n-1], n-1)
	}
}

// A node with a huge number of retainers is dominated by their common
// dominator.
func TestDominatorsFanIn(t *testing.T) {
	const fan = 200000
	nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("Hub", 7), analysistest.Obj("Holder", 1)}
	edges := []analysistest.Edge{analysistest.Prop(0, 2, "h")}
	for i := 0; i < fan; i++ {
		nodes = append(nodes, analysistest.Obj("Leaf", 1))
		v := int32(len(nodes) - 1)
		edges = append(edges, analysistest.Prop(2, v, "leaf"), analysistest.Prop(v, 1, "hub"))
	}
	g := analysistest.Build(nodes, edges)
	d := analyze(t, g, analysis.RawPolicy)
	if d.IDom[1] != 2 {
		t.Errorf("hub dominated by %d, want 2", d.IDom[1])
	}
	if d.Retained[2] != 1+7+fan {
		t.Errorf("holder retains %d, want %d", d.Retained[2], 1+7+fan)
	}
}

// randomGraph makes a V8-like graph with user roots, system roots, hidden
// and array nodes, weak and shortcut edges, WeakMap entries, nodes held
// only weakly and cliques no root reaches.
func randomGraph(rng *rand.Rand, n int, userRoots bool) *model.Graph {
	types := []string{"object", "object", "object", "hidden", "array", "closure", "string", "native", "synthetic"}
	nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, {Type: "synthetic", Name: "(GC roots)", Size: 0}}
	for len(nodes) < n {
		t := types[rng.Intn(len(types))]
		name := fmt.Sprintf("C%d", rng.Intn(5))
		if t == "native" && rng.Intn(4) == 0 {
			name = "system / ExternalStringData"
		}
		nodes = append(nodes, analysistest.Node{Type: t, Name: name, Size: uint64(rng.Intn(100))})
	}
	edges := []analysistest.Edge{{From: 0, To: 1, Type: analysistest.ElementEdge, Index: 1}}
	if userRoots {
		if rng.Intn(3) == 0 {
			// Blink's document trees: a synthetic user root and page-owned
			// seed reached by an element edge.
			edges = append(edges, analysistest.Edge{From: 0, To: 2, Type: analysistest.ElementEdge, Index: 2})
			nodes[2] = analysistest.Node{Type: "synthetic", Name: "(Document DOM trees)", Size: 0}
		} else {
			edges = append(edges, analysistest.Edge{From: 0, To: 2, Type: analysistest.ShortcutEdge, Name: "global"})
			nodes[2] = analysistest.Obj("global", 5)
		}
	}
	for k := 0; k < 4; k++ {
		edges = append(edges, analysistest.Edge{From: 1, To: int32(2 + rng.Intn(n-2)), Type: analysistest.ElementEdge, Index: uint32(k)})
		if n < 20 {
			break
		}
	}
	// The last nodes form an island no root reaches: cycles among
	// themselves (DevTools' leftovers), some held only weakly, with edges
	// out into the rest of the graph.
	island := 0
	if n > 12 && rng.Intn(2) == 0 {
		island = 3 + rng.Intn(n/4)
	}
	main := n - island
	for i := 0; i < island*2; i++ {
		from := int32(main + rng.Intn(island))
		to := int32(main + rng.Intn(island))
		typ := analysistest.PropertyEdge
		if rng.Intn(5) == 0 {
			typ = analysistest.WeakEdge
		}
		edges = append(edges, analysistest.Edge{From: from, To: to, Type: typ, Name: "i"})
		if rng.Intn(3) == 0 {
			edges = append(edges, analysistest.Prop(from, int32(2+rng.Intn(main-2)), "out"))
		}
	}
	m := n * 3
	for i := 0; i < m; i++ {
		from := int32(2 + rng.Intn(main-2))
		to := int32(rng.Intn(main))
		if rng.Intn(3) == 0 { // locality, like real heaps
			to = from + int32(rng.Intn(20)) - 5
			if to < 0 || int(to) >= main {
				to = from
			}
		}
		typ := []int{analysistest.PropertyEdge, analysistest.PropertyEdge, analysistest.PropertyEdge, analysistest.InternalEdge, analysistest.HiddenEdge, analysistest.ElementEdge, analysistest.ContextEdge, analysistest.WeakEdge, analysistest.ShortcutEdge}[rng.Intn(9)]
		edges = append(edges, analysistest.Edge{From: from, To: to, Type: typ, Name: "p", Index: uint32(i)})
	}
	// WeakMap entries: table -> value (ephemeron) and key -> value.
	for i := 0; i < n/20; i++ {
		tbl, key, val := int32(2+rng.Intn(main-2)), int32(2+rng.Intn(main-2)), int32(2+rng.Intn(main-2))
		if key == tbl {
			continue // the reader would mark both edges (both leave the table)
		}
		name := fmt.Sprintf("%d / part of key (K @%d) -> value (V @%d) pair in WeakMap (table @%d)", i, 2*key+1, 2*val+1, 2*tbl+1)
		edges = append(edges, analysistest.Edge{From: tbl, To: val, Type: analysistest.EphemeronEdge, Name: name}, analysistest.Edge{From: key, To: val, Type: analysistest.InternalEdge, Name: name})
	}
	return analysistest.Build(nodes, edges)
}

// heapx's semi-NCA must give exactly DevTools' Lengauer–Tarjan results.
func TestDominatorsMatchDevToolsOracle(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var weakOnly, leftover int
	for iter := 0; iter < 300; iter++ {
		n := 3 + rng.Intn(60)
		if iter%50 == 0 {
			n = 2000
		}
		g := randomGraph(rng, n, iter%3 != 0)
		restore := func() {}
		if iter%2 == 1 {
			// Odd graphs use 4-byte predecessor entries, as graphs of
			// 2^24 nodes or more do.
			restore = analysis.SetPackLimit(0)
		}
		a, err := analysis.Analyze(g, analysis.Options{NoClasses: true})
		restore()
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range devtoolsDistances(g) {
			if a.Distances[i] != d {
				t.Fatalf("graph %d node %d: distance %d, DevTools %d", iter, i, a.Distances[i], d)
			}
		}
		if a.Dominators.WeakOnly > 0 {
			weakOnly++
		}
		if a.Dominators.Leftover > 0 {
			leftover++
		}
		odom, oret, oself := devtoolsOracle(g)
		for i := range odom {
			want := odom[i]
			if int32(i) == g.Root {
				want = -1
			}
			d := a.Dominators
			if d.IDom[i] != want || float64(d.Retained[i]) != oret[i] || float64(a.Self.At(int(i))) != oself[i] {
				t.Fatalf("graph %d (n=%d) node %d: idom %d retained %d self %d; DevTools %d %v %v",
					iter, n, i, d.IDom[i], d.Retained[i], a.Self.At(int(i)), want, oret[i], oself[i])
			}
		}
		// The page-owned set derived during the DFS is FindRoots' one.
		fr := analysis.FindRoots(g)
		for v := 0; v < n; v++ {
			if (fr.PageOwned != nil && fr.PageOwned.Has(v)) != (a.Roots.PageOwned != nil && a.Roots.PageOwned.Has(v)) {
				t.Fatalf("graph %d: node %d page-owned differs", iter, v)
			}
		}
		// The standalone ShallowSizes agrees with the sizes recovered from
		// the tree.
		ss := analysis.ShallowSizes(g, fr, a.DOM)
		for i := range ss {
			if ss[i] != a.Self.At(int(i)) {
				t.Fatalf("graph %d: ShallowSizes[%d] = %d, Self %d", iter, i, ss[i], a.Self.At(int(i)))
			}
		}
	}
	if weakOnly < 20 || leftover < 20 {
		t.Errorf("only %d graphs with weak-only nodes and %d with leftovers: the generator should make more", weakOnly, leftover)
	}
}

// Degenerate graphs: a lone root, a root with a self loop, nodes held only
// by weak edges from each other.
func TestDominatorsDegenerate(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{{Type: "synthetic", Name: "", Size: 3}}, nil)
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil || a.Dominators.IDom[0] != -1 || a.Dominators.Retained[0] != 3 || len(a.Summary()) != 1 {
		t.Fatalf("lone root: %v %+v", err, a.Dominators)
	}
	g = analysistest.Build([]analysistest.Node{{Type: "synthetic", Name: "", Size: 1}, analysistest.Obj("A", 2), analysistest.Obj("B", 4)},
		[]analysistest.Edge{analysistest.Prop(0, 0, "self"), {From: 1, To: 2, Type: analysistest.WeakEdge, Name: "w"}, {From: 2, To: 1, Type: analysistest.WeakEdge, Name: "w"}})
	d := analyze(t, g, analysis.DevToolsPolicy)
	checkTree(t, g, d, []int32{-1, 0, 0}, []uint64{7, 2, 4})
	if d.WeakOnly != 2 {
		t.Errorf("weak-only %d", d.WeakOnly)
	}
	if _, err := analysis.Analyze(&model.Graph{}, analysis.Options{}); err == nil {
		t.Error("empty graph accepted")
	}
}

// FuzzDominators builds a small V8-like graph from the fuzzer's bytes (a
// node-type byte per node, then edge triples) and checks heapx against the
// port of DevTools' algorithm.
func FuzzDominators(f *testing.F) {
	f.Add([]byte{8, 3, 3, 0, 3, 1, 0, 2, 1, 1, 2, 3, 2, 3, 1, 6, 3, 4, 5})
	f.Add([]byte{5, 0, 1, 3, 3, 0, 1, 5, 1, 2, 0, 2, 3, 2, 2, 1, 6, 3, 1, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		n := 2 + int(data[0])%40
		data = data[1:]
		types := []string{"object", "hidden", "array", "synthetic", "native", "closure"}
		nodes := []analysistest.Node{{Type: "synthetic", Name: "", Size: 0}}
		for i := 1; i < n; i++ {
			tb := byte(i)
			if len(data) > 0 {
				tb, data = data[0], data[1:]
			}
			name := "N"
			switch tb % 16 {
			case 14:
				name = "(map descriptors)"
			case 15:
				name = "system / NativeContext"
			}
			nodes = append(nodes, analysistest.Node{Type: types[int(tb)%len(types)], Name: name, Size: uint64(tb)})
		}
		var edges []analysistest.Edge
		for ; len(data) >= 3; data = data[3:] {
			from, to := int32(int(data[0])%n), int32(int(data[1])%n)
			if data[2]%8 == 7 {
				// A WeakMap entry: table from, value to, key next to from.
				key := (from + 1) % int32(n)
				name := fmt.Sprintf("1 / part of key (K @%d) -> value (V @%d) pair in WeakMap (table @%d)", 2*key+1, 2*to+1, 2*from+1)
				edges = append(edges, analysistest.Edge{From: from, To: to, Type: analysistest.EphemeronEdge, Name: name}, analysistest.Edge{From: key, To: to, Type: analysistest.InternalEdge, Name: name})
				continue
			}
			typ := []int{analysistest.PropertyEdge, analysistest.ElementEdge, analysistest.InternalEdge, analysistest.HiddenEdge, analysistest.WeakEdge, analysistest.ShortcutEdge, analysistest.ContextEdge}[int(data[2]%8)]
			name := "e"
			if data[2]%16 == 9 {
				name = "sloppy_function_map"
			}
			edges = append(edges, analysistest.Edge{From: from, To: to, Type: typ, Name: name, Index: uint32(data[2]) % 8})
		}
		g := analysistest.Build(nodes, edges)
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range devtoolsDistances(g) {
			if a.Distances[i] != d {
				t.Fatalf("node %d: distance %d, DevTools %d", i, a.Distances[i], d)
			}
		}
		odom, oret, oself := devtoolsOracle(g)
		for i := range odom {
			want := odom[i]
			if int32(i) == g.Root {
				want = -1
			}
			if a.Dominators.IDom[i] != want || float64(a.Dominators.Retained[i]) != oret[i] || float64(a.Self.At(int(i))) != oself[i] {
				t.Fatalf("node %d: idom %d retained %d self %d; DevTools %d %v %v",
					i, a.Dominators.IDom[i], a.Dominators.Retained[i], a.Self.At(int(i)), want, oret[i], oself[i])
			}
		}
		a.Summary()
	})
}
