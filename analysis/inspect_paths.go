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
	// Objects counts the targets whose path passes here, Retained sums
	// their retained sizes, Ends counts those whose path ends here.
	Objects  int
	Retained uint64
	Ends     int
	Example  model.NodeIndex // the first node seen here
}

// MergedPaths merges the shortest retainer paths of targets into one tree
// from the graph root down (MAT's "merge shortest paths to GC roots"):
// path steps are grouped by parent tree node, the class of the node
// reached and the edge's type and name, except that element edges merge
// whatever their index, so the 1500 items of one array share one tree
// node. The tree comes in preorder, children by Objects, then Retained,
// descending. Unreachable targets are left out (the root has Objects equal
// to the targets with a path).
//
// The paths come from one BFS (ShortestPaths): each is a shortest path
// with the cost PathFinder.Find uses; where several are equally short it
// may pick another one than Find.
func (a *Analysis) MergedPaths(targets []model.NodeIndex) []MergedPathNode {
	g := a.Graph
	k := newKinds(g)
	type key struct {
		parent int32
		class  string
		etype  uint8
		name   uint32
	}
	nodes := []MergedPathNode{{Parent: -1, Class: a.className(g.Root), Example: g.Root}}
	index := map[key]int32{}
	paths := a.ShortestPaths(targets)
	for i, t := range targets {
		if paths[i].Cost < 0 || (len(paths[i].Steps) == 0 && t != g.Root) {
			continue
		}
		ret := a.Dominators.Retained[t]
		cur := int32(0)
		nodes[0].Objects++
		nodes[0].Retained += ret
		for _, s := range paths[i].Steps {
			et := g.Edges.Type[s.Edge]
			ky := key{parent: cur, class: a.className(s.To), etype: et, name: g.Edges.Name[s.Edge]}
			if k.indexed[et] {
				ky.name = 0
			}
			next, ok := index[ky]
			if !ok {
				label := "[]"
				if !k.indexed[et] {
					label = EdgeString(g, s.Edge)
				}
				nodes = append(nodes, MergedPathNode{Parent: cur, Depth: nodes[cur].Depth + 1, Edge: label, Class: ky.class, Example: s.To})
				next = int32(len(nodes) - 1)
				index[ky] = next
			}
			cur = next
			nodes[cur].Objects++
			nodes[cur].Retained += ret
		}
		nodes[cur].Ends++
	}
	return preorder(nodes)
}

// preorder reorders a tree given by parent links (parents before
// children) into preorder, children by Objects then Retained descending,
// and rewrites the parent links.
func preorder(nodes []MergedPathNode) []MergedPathNode {
	kids := make([][]int32, len(nodes))
	for i := 1; i < len(nodes); i++ {
		p := nodes[i].Parent
		kids[p] = append(kids[p], int32(i))
	}
	out := make([]MergedPathNode, 0, len(nodes))
	var walk func(i, parent int32)
	walk = func(i, parent int32) {
		n := nodes[i]
		n.Parent = parent
		out = append(out, n)
		me := int32(len(out) - 1)
		c := kids[i]
		sort.SliceStable(c, func(x, y int) bool {
			a, b := &nodes[c[x]], &nodes[c[y]]
			if a.Objects != b.Objects {
				return a.Objects > b.Objects
			}
			return a.Retained > b.Retained
		})
		for _, k := range c {
			walk(k, me)
		}
	}
	walk(0, -1)
	return out
}
