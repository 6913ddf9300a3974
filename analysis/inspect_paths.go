package analysis

import (
	"sort"

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
	// Objects counts the targets whose path passes here, Ends those whose
	// path ends here. Retained sums the retained sizes of those of them
	// no other target dominates, so nothing is counted twice (the items of
	// a linked list each retain the rest of it).
	Objects  int
	Retained uint64
	Ends     int
	Example  model.NodeIndex // the first node seen here
	// Hops is 1, or more where paths run through several like hops in a
	// row (the same edge into the same class: a linked list's .next),
	// which are merged into this one node: the most such hops a path
	// makes here.
	Hops int
}

// MergedPaths merges the shortest retainer paths of targets into one tree
// from the graph root down (MAT's "merge shortest paths to GC roots"):
// path steps are grouped by parent tree node, the class of the node
// reached and the edge's type and name, except that element edges merge
// whatever their index, so the 1500 items of one array share one tree
// node, and a hop like the one before it (the same edge into the same
// class) stays on that one's node, so the items of a linked list share
// one node too (see MergedPathNode.Hops). The tree comes in preorder,
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
func (a *Analysis) MergedPaths(targets []model.NodeIndex) []MergedPathNode {
	g := a.Graph
	k := newKinds(g)
	h, parent := a.shortestPathTree()
	type key struct {
		parent int32
		class  string
		etype  uint8
		name   uint32
	}
	nodes := []MergedPathNode{{Parent: -1, Class: a.className(g.Root), Example: g.Root, Hops: 1}}
	keys := []key{{parent: -1}}
	index := map[key]int32{}
	// first and last are the least and most BFS costs of the graph nodes
	// mapped to each merged node, for Hops.
	first, last := []int64{h[g.Root]}, []int64{h[g.Root]}
	merged := make([]int32, g.NumNodes()) // graph node -> merged node + 1; 0 unknown
	merged[g.Root] = 1
	// step returns the merged node of the hop over edge e into v from the
	// merged node p.
	step := func(p int32, e uint32, v int32) int32 {
		et := g.Edges.Type[e]
		ky := key{parent: p, class: a.className(v), etype: et, name: g.Edges.Name[e]}
		if k.indexed[et] {
			ky.name = 0
		}
		if own := keys[p]; own.class == ky.class && own.etype == ky.etype && own.name == ky.name && p != 0 {
			return p // a like hop again: stay
		}
		c, ok := index[ky]
		if !ok {
			label := "[]"
			if !k.indexed[et] {
				label = EdgeString(g, e)
			}
			c = int32(len(nodes))
			nodes = append(nodes, MergedPathNode{Parent: p, Depth: nodes[p].Depth + 1, Edge: label, Class: ky.class, Example: v, Hops: 1})
			keys = append(keys, ky)
			first, last = append(first, h[v]), append(last, h[v])
			index[ky] = c
		}
		return c
	}
	var stack []int32
	mergedOf := func(t int32) int32 {
		v := t
		for merged[v] == 0 {
			stack = append(stack, v)
			if parent[v] == noParent {
				break
			}
			v = edgeSource(g, parent[v])
		}
		for i := len(stack) - 1; i >= 0; i-- {
			w := stack[i]
			var m int32
			if e := parent[w]; e != noParent {
				m = step(merged[edgeSource(g, e)]-1, e, w)
			} else {
				// A user root: the hop is the root's edge to it.
				m = 0
				s, end := g.EdgeRange(g.Root)
				for e := s; e < end; e++ {
					if g.Edges.To[e] == w && !k.weak[g.Edges.Type[e]] {
						m = step(0, e, w)
						break
					}
				}
			}
			merged[w] = m + 1
			first[m], last[m] = min(first[m], h[w]), max(last[m], h[w])
		}
		stack = stack[:0]
		return merged[t] - 1
	}
	marked := NewBits(g.NumNodes())
	for _, t := range targets {
		marked.Set(int(t))
	}
	owner := nearestMarkedDominators(a.Dominators.IDom, marked, targets, func(t int32) int32 { return t })
	for i, t := range targets {
		if h[t] < 0 {
			continue
		}
		m := mergedOf(t)
		nodes[m].Ends++
		if owner[i] < 0 {
			nodes[m].Retained += a.Dominators.Retained[t]
		}
	}
	// Sum up the tree: children come after their parents.
	for i := len(nodes) - 1; i >= 0; i-- {
		nd := &nodes[i]
		nd.Objects += nd.Ends
		nd.Hops = int(last[i]-first[i]) + 1
		if i > 0 {
			nodes[nd.Parent].Objects += nd.Objects
			nodes[nd.Parent].Retained += nd.Retained
		}
	}
	nodes[0].Hops = 1
	return preorder(nodes)
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
