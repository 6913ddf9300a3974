// What DevTools needs of a graph from another runtime: V8's own node and
// edge types, one root edge per root, and V8's edge type names.

package v8

import (
	"slices"
	"strings"

	"github.com/heapx/heapx/model"
)

// FromV8 reports whether every type of g is one of V8's, as in a graph
// read from a V8 snapshot: Write then keeps the graph's own types, field
// lists and layout, byte for byte.
func FromV8(g *model.Graph) bool {
	for _, t := range g.NodeTypes {
		if t.Namespace != Namespace {
			return false
		}
	}
	for _, t := range g.EdgeTypes {
		if t.Namespace != Namespace {
			return false
		}
	}
	return true
}

// DevToolsTypes returns, index for index, the V8 node and edge types that
// Write gives g's types: g's own tables for a graph read from V8, and for
// other runtimes the mapping that makes Chrome DevTools show heapx's
// numbers for them:
//
//   - Every node is an "object" (or "native", for native memory), whose
//     class DevTools takes from the node name, as heapx does for other
//     runtimes, except strings, closures and synthetic nodes. Arrays and
//     VM internals in particular are not written as V8's "array" and
//     "hidden": DevTools folds the self size of those into their single
//     owner (calculateShallowSizes), which made a Java RequestRecord's
//     shallow size its byte[]'s, 7.4 MB instead of 640 kB, and would
//     class them "(array)" and "(system)".
//   - Strings keep V8's string types, which DevTools classes "(string)":
//     written as objects they would lose their text.
//   - Closures keep V8's "closure" (DevTools classes it "Function") when
//     every node of the type is named Function, as SpiderMonkey's are;
//     otherwise they are objects, classed by name.
//   - Synthetic nodes stay "synthetic": DevTools takes the targets of the
//     root's edges that are not synthetic for user roots, as heapx does.
//
// Edge types map by strength, then category (v8EdgeType). The returned
// edge types keep Indexed from g, since g's name column is what they
// describe. Write also merges the root's edges to one target (see
// DuplicateRootEdges).
func DevToolsTypes(g *model.Graph) ([]model.NodeType, []model.EdgeType) {
	if FromV8(g) {
		return g.NodeTypes, g.EdgeTypes
	}
	// A closure type stays a closure only when DevTools' class for it,
	// "Function", is the node name heapx classes it by.
	function := make([]bool, len(g.NodeTypes))
	for t, nt := range g.NodeTypes {
		function[t] = nt.Category == model.CatClosure
	}
	if slices.Contains(function, true) {
		for i, t := range g.Nodes.Type {
			if function[t] && g.Strings.At(g.Nodes.Name[i]) != "Function" {
				function[t] = false
			}
		}
	}
	nts := make([]model.NodeType, len(g.NodeTypes))
	for t, nt := range g.NodeTypes {
		name := "object"
		switch nt.Category {
		case model.CatString:
			name = "string"
		case model.CatConsString:
			name = "concatenated string"
		case model.CatSlicedString:
			name = "sliced string"
		case model.CatSynthetic:
			name = "synthetic"
		case model.CatNative:
			name = "native"
		case model.CatClosure:
			if function[t] {
				name = "closure"
			}
		}
		nts[t] = model.NodeType{Namespace: Namespace, Name: name, Category: nodeCategory(name)}
	}
	ets := make([]model.EdgeType, len(g.EdgeTypes))
	for t, et := range g.EdgeTypes {
		ets[t] = edgeType(v8EdgeType(et))
		ets[t].Indexed = et.Indexed
	}
	return nts, ets
}

// DuplicateRootEdges counts the edges from g's root to a node an earlier
// root edge already reaches, which Write leaves out of a graph that does
// not come from V8: DevTools seeds its distance pass with every root
// edge's target, once per edge, into a queue sized for one entry per
// node, and fails ("BFS failed. Nodes to visit (…) is more than nodes
// count") when repeats overflow it, as on every Firefox page dump, whose
// root reaches many objects twice. The edge kept carries the names of
// the edges left out, joined by " / ", so no root kind is lost.
func DuplicateRootEdges(g *model.Graph) int {
	if FromV8(g) || g.NumNodes() == 0 {
		return 0
	}
	n := 0
	for _, dup := range rootDuplicates(g) {
		if dup >= 0 {
			n++
		}
	}
	return n
}

// rootDuplicates returns, for each edge of the root in order, -1 when it
// is the first to its target, else the index (in the root's edges) of the
// first one.
func rootDuplicates(g *model.Graph) []int32 {
	lo, hi := g.EdgeRange(g.Root)
	first := make(map[model.NodeIndex]int32, hi-lo)
	dup := make([]int32, hi-lo)
	for e := lo; e < hi; e++ {
		to := g.Edges.To[e]
		if f, ok := first[to]; ok {
			dup[e-lo] = f
		} else {
			first[to] = int32(e - lo)
			dup[e-lo] = -1
		}
	}
	return dup
}

// mergeRootEdges marks the root's repeated edges to be left out (see
// DuplicateRootEdges) and gives the edge kept, when its type is named,
// the distinct names of all of them.
func (sw *snapshotWriter) mergeRootEdges() {
	g := sw.g
	if g.NumNodes() == 0 {
		return
	}
	dup := rootDuplicates(g)
	lo, _ := g.EdgeRange(g.Root)
	var names map[int32][]string
	for i, f := range dup {
		if f < 0 {
			continue
		}
		if sw.rootDrop == nil {
			sw.rootDrop = make([]bool, len(dup))
			names = map[int32][]string{}
		}
		sw.rootDrop[i] = true
		sw.rootDropped++
		kept, this := lo+uint32(f), lo+uint32(i)
		if g.EdgeTypes[g.Edges.Type[kept]].Indexed || g.EdgeTypes[g.Edges.Type[this]].Indexed {
			continue
		}
		if names[f] == nil {
			names[f] = []string{g.Strings.At(g.Edges.Name[kept])}
		}
		if s := g.Strings.At(g.Edges.Name[this]); !slices.Contains(names[f], s) {
			names[f] = append(names[f], s)
		}
	}
	if sw.rootDrop == nil {
		return
	}
	sw.rootLo = lo
	sw.rootName = map[uint32]uint32{}
	for f := range dup {
		if ns := names[int32(f)]; len(ns) > 1 {
			sw.rootName[lo+uint32(f)] = sw.addExtra(strings.Join(ns, rootEdgeSeparator))
		}
	}
}

// v8EdgeType maps a neutral edge type onto a V8 edge type. Strength comes
// first: it is what retained sizes depend on.
func v8EdgeType(t model.EdgeType) string {
	switch t.Strength {
	case model.Weak:
		return "weak"
	case model.Shortcut:
		return "shortcut"
	}
	switch t.Category {
	case model.EdgeContext:
		return "context"
	case model.EdgeInternal:
		if t.Indexed {
			return "hidden"
		}
		return "internal"
	case model.EdgeElement:
		return "element"
	}
	if t.Indexed {
		return "element"
	}
	return "property"
}
