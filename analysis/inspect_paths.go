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
// Each path is read off the path finder's distances (PathFinder.Distance):
// from the target, step to the first retainer one unit nearer the roots,
// so a path costs one scan of retainers per step and no search. It is a
// shortest path with the cost PathFinder.Find uses; where several are
// equally short it may pick another one than Find.
func (a *Analysis) MergedPaths(targets []model.NodeIndex) []MergedPathNode {
	g := a.Graph
	pf := NewPathFinder(g, a.Retainers(), a.Roots, PathOptions{K: 1})
	type key struct {
		parent int32
		class  string
		etype  uint8
		name   uint32
	}
	nodes := []MergedPathNode{{Parent: -1, Class: a.className(g.Root), Example: g.Root}}
	index := map[key]int32{}
	var steps []PathStep
	for _, t := range targets {
		steps = pf.shortestSteps(t, steps[:0])
		if steps == nil {
			continue
		}
		ret := a.Dominators.Retained[t]
		cur := int32(0)
		nodes[0].Objects++
		nodes[0].Retained += ret
		for i := len(steps) - 1; i >= 0; i-- {
			s := steps[i]
			et := g.Edges.Type[s.Edge]
			k := key{parent: cur, class: a.className(s.To), etype: et, name: g.Edges.Name[s.Edge]}
			if pf.k.indexed[et] {
				k.name = 0
			}
			next, ok := index[k]
			if !ok {
				label := "[]"
				if !pf.k.indexed[et] {
					label = EdgeString(g, s.Edge)
				}
				nodes = append(nodes, MergedPathNode{Parent: cur, Depth: nodes[cur].Depth + 1, Edge: label, Class: k.class, Example: s.To})
				next = int32(len(nodes) - 1)
				index[k] = next
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

// shortestSteps appends to buf one shortest path's steps from target back
// to the root (target's step first), or returns nil when no path reaches
// target.
func (pf *PathFinder) shortestSteps(target model.NodeIndex, buf []PathStep) []PathStep {
	g := pf.g
	if pf.h[target] < 0 {
		return nil
	}
	for v := target; v != g.Root; {
		if pf.isUser.Has(int(v)) && pf.h[v] == 1 {
			s, end := g.EdgeRange(g.Root)
			for e := s; e < end; e++ {
				if g.Edges.To[e] == v && pf.allowed(e, v) {
					return append(buf, PathStep{From: g.Root, Edge: e, To: v})
				}
			}
			return nil
		}
		found := false
		s, end := pf.ret.Of(v)
		for r := s; r < end; r++ {
			e, u := pf.ret.Edge[r], pf.ret.From[r]
			if pf.h[u] >= 0 && pf.h[u]+1 == pf.h[v] && pf.allowed(e, v) && !pf.ignNodes.Has(int(u)) {
				buf = append(buf, PathStep{From: u, Edge: e, To: v})
				v, found = u, true
				break
			}
		}
		if !found {
			return nil
		}
	}
	return buf
}
