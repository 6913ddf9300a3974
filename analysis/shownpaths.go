package analysis

import (
	"math"
	"slices"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// ShownPaths returns the path heapx shows for each of targets (Paths'
// first with K 1; a Path with Cost -1 and no steps where none reaches
// it), for a caller that shows a few (the report's suspects). Their
// searches read the retainers of only the nodes from which the root is
// near enough for a path they may return: those are indexed, found by
// walking back from the targets a hop at a time, each hop one scan of
// the graph's edges, instead of the retainer index of the whole graph
// (4 bytes an edge and a node, 62 MB on a heap of 4M nodes) being built
// and kept. The paths are Paths': the searches expand the same partial
// paths in the same order (see nearRetainers). Targets far from the root,
// or whose neighbourhood is most of the heap, get the whole index.
func (a *Analysis) ShownPaths(targets []model.NodeIndex) []Path {
	cost, _ := a.ShortestPathTree()
	a.collectGarbage()
	var pf *PathFinder
	if near := buildNearRetainers(a.Graph, a.Roots, cost, a.plainHops(), targets); near != nil {
		pf = a.treeFinder(near)
	} else {
		pf = a.PathFinder(PathOptions{K: 1})
	}
	out := make([]Path, len(targets))
	for i, t := range targets {
		out[i] = Path{Cost: -1}
		if ps := pf.Find(t); len(ps) > 0 {
			out[i] = ps[0]
		}
	}
	return out
}

// Bounds of a nearRetainers: the hops walked back (a scan of the edges
// each) and the retainers indexed, a share of the edges (12 bytes each:
// at most 1.5 bytes an edge) or on a small graph up to minNearRetainers.
const (
	maxNearHops      = 40
	nearShare        = 8
	minNearRetainers = 1 << 16
)

// nearRetainers is the retainer index of the nodes Find's searches with
// K 1 may expand for a few targets. The first search (Shortest) is
// guided by exact costs, so until its path is found it expands only
// nodes on a cheapest path to the target: a node u whose hops from the
// root, plain(u) (its cost, less BaseSystemDistance when it is a system
// cost), and hops to the target d(u) add up to the target's, n. The
// second (readable) expands only nodes from which the root is near
// enough (hops(u), plainHops) for the path to stay within n+PathSlack:
// hops(u) + d(u) <= n + PathSlack. So a node is indexed when, for some
// target, min(hops(u), plain(u)+PathSlack) + d(u) <= n + PathSlack, d
// taken over non-weak edges (the searches take no other) through indexed
// nodes only (each node on a partial path passed the test at its place).
// Each node's retainers are all of its retaining edges, in edge order,
// as in the whole index: the searches then see what they see there.
type nearRetainers struct {
	nodes []model.NodeIndex // the indexed nodes, ascending
	first []uint32          // nodes[i]'s retainers are [first[i], first[i+1])
	edge  []uint32
	from  []model.NodeIndex
}

// Of returns n's range of retainers, empty for a node not indexed.
func (r *nearRetainers) Of(n model.NodeIndex) (start, end uint32) {
	if i, ok := slices.BinarySearch(r.nodes, n); ok {
		return r.first[i], r.first[i+1]
	}
	return 0, 0
}

// EdgeAt returns retaining edge i.
func (r *nearRetainers) EdgeAt(i uint32) uint32 { return r.edge[i] }

// From returns the source of retaining edge i.
func (r *nearRetainers) From(i uint32) model.NodeIndex { return r.from[i] }

// buildNearRetainers walks back from targets over g's non-weak edges,
// cost being the shortest-path tree's costs and hops plainHops, and
// indexes the retainers of the nodes the searches may expand (see
// nearRetainers). The walk is by remaining budget, highest first: a
// target starts at n+PathSlack, a retainer of a node with r left has
// r-1, and a node met first at r keeps it (no later one is larger). It
// returns nil when a target is farther than maxNearHops or the index
// would exceed its share of the edges.
func buildNearRetainers(g *model.Graph, roots *Roots, cost, hops []int32, targets []model.NodeIndex) *nearRetainers {
	sysCost := int32(0)
	if len(roots.User) > 0 {
		sysCost = BaseSystemDistance
	}
	plain := func(u int32) int32 {
		if c := cost[u]; c >= sysCost && sysCost > 0 {
			return c - sysCost
		}
		return cost[u]
	}
	// key is the least budget at which u may be on a path.
	key := func(u int32) int32 {
		k := int32(math.MaxInt32)
		if hops[u] >= 0 {
			k = hops[u]
		}
		if cost[u] >= 0 {
			k = min(k, plain(u)+PathSlack)
		}
		return k
	}
	budget := map[int32][]model.NodeIndex{}
	top := int32(0)
	for _, t := range targets {
		if t == g.Root || cost[t] < 0 {
			continue // Find answers without a search
		}
		b := plain(t) + PathSlack
		if b > maxNearHops {
			return nil
		}
		budget[b] = append(budget[b], t)
		top = max(top, b)
	}
	seen, inLevel := NewBits(g.NumNodes()), NewBits(g.NumNodes())
	var level, next []int32
	var to, edge []uint32
	var from []int32
	limit := max(g.NumEdges()/nearShare, minNearRetainers)
	weak := kinds.For(g).Weak
	for r := top; r >= 1; r-- {
		for _, t := range budget[r] {
			if !seen.Has(int(t)) {
				seen.Set(int(t))
				level = append(level, t)
			}
		}
		if len(level) == 0 {
			continue
		}
		for _, w := range level {
			inLevel.Set(int(w))
		}
		next = next[:0]
		for v := range int32(g.NumNodes()) {
			s, end := g.EdgeRange(v)
			for e := s; e < end; e++ {
				w := g.Edges.To[e]
				if !inLevel.Has(int(w)) {
					continue
				}
				to, edge, from = append(to, uint32(w)), append(edge, e), append(from, v)
				if !weak[g.Edges.Type[e]] && !seen.Has(int(v)) {
					seen.Set(int(v))
					if key(v) <= r-1 {
						next = append(next, v)
					}
				}
			}
		}
		if len(edge) > limit {
			return nil
		}
		for _, w := range level {
			inLevel.Clear(int(w))
		}
		level, next = next, level
	}
	return groupNear(to, edge, from)
}

// groupNear makes the index of retaining edges listed as (to, edge,
// from) in edge order: grouped by the node retained, each node's in
// edge order.
func groupNear(to, edge []uint32, from []int32) *nearRetainers {
	r := &nearRetainers{edge: make([]uint32, len(edge)), from: make([]model.NodeIndex, len(edge))}
	idx := make([]int32, len(edge))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortStableFunc(idx, func(i, j int32) int { return int(to[i]) - int(to[j]) })
	for k, i := range idx {
		if k == 0 || to[i] != to[idx[k-1]] {
			r.nodes = append(r.nodes, model.NodeIndex(to[i]))
			r.first = append(r.first, uint32(k))
		}
		r.edge[k], r.from[k] = edge[i], from[i]
	}
	r.first = append(r.first, uint32(len(edge)))
	return r
}
