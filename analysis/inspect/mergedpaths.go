package inspect

import (
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// MergedPathNode is one node of a merged shortest-paths tree: the objects
// whose shortest retainer path runs through the same classes over the same
// edges down to here.
type MergedPathNode struct {
	Parent int32  // index of the parent in the returned slice, -1 for the graph root
	Depth  int    // edges from the graph root
	Edge   string // the edge from the parent (EdgeString; "[]" for any element index)
	Class  string // the class of the nodes here
	// Objects counts the targets whose path passes here (once however
	// often it passes), Ends those whose path ends here. Retained sums the
	// retained sizes of those of them no other target dominates, so
	// nothing is counted twice (the items of a linked list each retain
	// the rest of it). Where repeats fold, a node's children may count
	// more objects than it does: the paths that pass it again after them.
	Objects  int
	Retained uint64
	Ends     int
	Example  model.NodeIndex // the first node seen here
	// Hops is 1, or more where paths pass here again and again: the hops
	// of a linked list, .next into the same class, or the blocks of up to
	// three hops of a list of several classes, merged into the nodes of
	// the first. It is the most times one path passes here.
	Hops int
	// Slots says the node stands for the slots of one collection,
	// whatever their index (Edge "[]"): an array's elements, or the
	// numbered entries of a Map's or a Set's table.
	Slots bool
}

// MergedPaths merges the shortest retainer paths of targets into one tree
// from the graph root down (MAT's "merge shortest paths to GC roots"):
// path steps are grouped by parent tree node, the class of the node
// reached and the edge's type and name, except that the slots of a
// collection merge whatever their index: element edges, and the numbered
// internal edges of a Map's or a Set's table, so the 1500 items of one
// array, or the 2,511 entries of one Map, share one tree node (Slots). A hop that repeats the block of up to three hops before it (the
// same edges into the same classes) goes back to that block's nodes, as
// leak traces fold them (traceShapes): the items of a linked list share
// one node, those of a list of two classes in turn three (the first of
// the second class, then one per class), however long the list (see
// MergedPathNode.Hops). The tree comes in preorder,
// children by Objects, then Retained, descending. Unreachable targets are
// left out (the root has Objects equal to the targets with a path).
//
// The paths are those of ShortestPaths, read off its BFS tree without
// building them: each tree node of the BFS tree is mapped to its merged
// node once, from its parent's, so the cost is the number of distinct
// nodes on the paths, not their total length (a leaked linked list of K
// items would otherwise cost K^2/2 steps). Each is a shortest path with
// the cost PathFinder.Find uses; where several are equally short it may
// pick another one than Find.
func MergedPaths(a *analysis.Analysis, targets []model.NodeIndex) []MergedPathNode {
	g := a.Graph
	k := kinds.New(g)
	h, parent := a.ShortestPathTree()
	// hop is what merges: the class reached over the edge type and name.
	type hop struct {
		class string
		etype uint8
		name  uint32
	}
	type key struct {
		parent int32
		hop
	}
	nodes := []MergedPathNode{{Parent: -1, Class: className(a, g.Root), Example: g.Root, Hops: 1}}
	hops := []hop{{}}
	index := map[key]int32{}
	// up returns the merged node i levels above m.
	up := func(m int32, i int) int32 {
		for ; i > 0; i-- {
			m = nodes[m].Parent
		}
		return m
	}
	// step returns the merged node of the hop over edge e into v from the
	// merged node p.
	step := func(p int32, e uint32, v int32) int32 {
		et := g.Edges.Type[e]
		hp := hop{class: className(a, v), etype: et, name: g.Edges.Name[e]}
		slots := isSlot(g, k, e)
		if slots {
			hp.name = 0
		}
		// level i is the hop i hops back: 0 this one, 1 p's, 2 p's parent's.
		level := func(i int) hop {
			if i == 0 {
				return hp
			}
			return hops[up(p, i-1)]
		}
		if period := analysis.RepeatPeriod(nodes[p].Depth, func(i, j int) bool { return level(i) == level(j) }); period > 0 {
			return up(p, period-1) // the block again: back to its first hop's node
		}
		ky := key{parent: p, hop: hp}
		c, ok := index[ky]
		if !ok {
			label := "[]"
			if !slots {
				label = analysis.EdgeString(g, e)
			}
			c = int32(len(nodes))
			nodes = append(nodes, MergedPathNode{Parent: p, Depth: nodes[p].Depth + 1, Edge: label, Class: hp.class, Example: v, Hops: 1, Slots: slots})
			hops = append(hops, hp)
			index[ky] = c
		}
		return c
	}
	n := g.NumNodes()
	merged := make([]int32, n) // graph node -> merged node + 1; 0 unknown
	merged[g.Root] = 1
	// from is each mapped graph node's BFS parent (the root for the user
	// roots, -1 at the root), and passes how many times its path has
	// passed its merged node, for Hops.
	from, passes := make([]int32, n), make([]int32, n)
	from[g.Root], passes[g.Root] = -1, 1
	mapped := []int32{g.Root} // the mapped graph nodes, parents first
	var stack []int32
	mergedOf := func(t int32) int32 {
		v := t
		for merged[v] == 0 {
			stack = append(stack, v)
			if parent[v] == analysis.NoParent {
				break
			}
			v = analysis.EdgeSource(g, parent[v])
		}
		// v is mapped (the BFS parent of the top of the stack), or the
		// top of the stack is a user root.
		for i := len(stack) - 1; i >= 0; i-- {
			w := stack[i]
			var m int32
			if e := parent[w]; e != analysis.NoParent {
				from[w] = v
				m = step(merged[v]-1, e, w)
			} else {
				// A user root: the hop is the root's edge to it.
				from[w] = g.Root
				m = 0
				s, end := g.EdgeRange(g.Root)
				for e := s; e < end; e++ {
					if g.Edges.To[e] == w && !k.Weak[g.Edges.Type[e]] {
						m = step(0, e, w)
						break
					}
				}
			}
			merged[w] = m + 1
			mapped = append(mapped, w)
			v = w
			// A path passes m again when one of the last hops was there.
			passes[w] = 1
			for j, u := 0, from[w]; j < analysis.MaxRepeatPeriod && u >= 0; j, u = j+1, from[u] {
				if merged[u]-1 == m {
					passes[w] = passes[u] + 1
					break
				}
			}
			nodes[m].Hops = max(nodes[m].Hops, int(passes[w]))
		}
		stack = stack[:0]
		return merged[t] - 1
	}
	marked := analysis.NewBits(n)
	for _, t := range targets {
		marked.Set(int(t))
	}
	owner := analysis.NearestMarkedDominators(a.Dominators.IDom, marked, targets, func(t int32) int32 { return t })
	// objects and retained sum, per mapped graph node, the targets of its
	// BFS subtree (ends and those no other target dominates).
	objects, retained := make([]int32, n), make([]uint64, n)
	for i, t := range targets {
		if h[t] < 0 {
			continue
		}
		m := mergedOf(t)
		nodes[m].Ends++
		objects[t]++
		if owner[i] < 0 {
			retained[t] += a.Dominators.Retained[t]
		}
	}
	// The paths that pass a merged node are those through the graph
	// nodes where they first come to it: a path that comes back comes
	// back within a few hops (a repeat goes back to the node of its
	// block's first hop), so the others have passes above 1. Children
	// come after their parents in mapped.
	for i := len(mapped) - 1; i >= 0; i-- {
		w := mapped[i]
		if passes[w] == 1 {
			m := merged[w] - 1
			nodes[m].Objects += int(objects[w])
			nodes[m].Retained += retained[w]
		}
		if u := from[w]; u >= 0 {
			objects[u] += objects[w]
			retained[u] += retained[w]
		}
	}
	return preorder(nodes)
}

// isSlot reports whether edge e is a collection's slot, merged whatever
// its index: an indexed edge (V8's elements, hidden slots; other
// runtimes' array slots), or an internal edge named by a number (the
// entries of a Map's or a Set's table, V8 writes "{5124}").
func isSlot(g *model.Graph, k *kinds.Table, e uint32) bool {
	et := g.Edges.Type[e]
	if k.Indexed[et] {
		return true
	}
	if k.Edge[et] != kinds.EdgeInternal {
		return false
	}
	name := g.Strings.At(g.Edges.Name[e])
	return name != "" && strings.Trim(name, "0123456789") == ""
}

// preorder reorders a tree given by parent links (parents before
// children) into preorder, children by Objects then Retained descending,
// and rewrites the parent links. It walks with a stack of its own, so a
// tree as deep as a long chain of distinct hops costs no goroutine stack.
func preorder(nodes []MergedPathNode) []MergedPathNode {
	kids := make([][]int32, len(nodes))
	for i := 1; i < len(nodes); i++ {
		p := nodes[i].Parent
		kids[p] = append(kids[p], int32(i))
	}
	for _, c := range kids {
		sort.SliceStable(c, func(x, y int) bool {
			a, b := &nodes[c[x]], &nodes[c[y]]
			if a.Objects != b.Objects {
				return a.Objects > b.Objects
			}
			return a.Retained > b.Retained
		})
	}
	out := make([]MergedPathNode, 0, len(nodes))
	type frame struct{ node, parent int32 }
	stack := []frame{{0, -1}}
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := nodes[f.node]
		n.Parent = f.parent
		out = append(out, n)
		me := int32(len(out) - 1)
		c := kids[f.node]
		for i := len(c) - 1; i >= 0; i-- {
			stack = append(stack, frame{c[i], me})
		}
	}
	return out
}
