package analysis

import (
	"encoding/binary"
	"sort"

	"github.com/heapx/heapx/model"
)

// LeakOptions tune Leaks.
type LeakOptions struct {
	// MinRetained is memlab's --trace-object-size-above: an object is
	// reported only when its retained size in the final snapshot exceeds
	// it. 0 is memlab's --trace-all-objects (any retained size above 0).
	MinRetained uint64
	// MaxPathLength drops objects whose shortest retainer path has more
	// edges than this, as memlab drops traces longer than 100; 0 means
	// 100.
	MaxPathLength int
	// Examples is how many reported objects each cluster lists (node
	// indexes in the final snapshot, in node order); 0 lists none.
	Examples int
}

// LeakClass counts a cluster's leaked objects of one class.
type LeakClass struct {
	Class uint32 // index into the final snapshot's Classes.Names
	Name  string
	Count int
	// Shallow sums their shallow sizes in the final snapshot.
	Shallow uint64
}

// LeakCluster is one leak: leaked objects whose shortest retainer paths
// have the same shape, with the objects they dominate folded in.
type LeakCluster struct {
	// Count is the number of reported objects: those the paths end at.
	Count int
	// Objects counts the leaked objects of the cluster: the reported ones
	// and those folded into them (memlab's cluster count, which lists
	// both as traces of one cluster).
	Objects int
	// Retained is the sum of the reported objects' retained sizes in the
	// final snapshot. No reported object dominates another, so nothing is
	// counted twice (memlab's aggregateDominatorMetrics).
	Retained uint64
	// Representative is the reported object with the largest retained
	// size (the first in node order on ties) and Path its shortest
	// retainer path in the final snapshot.
	Representative model.NodeIndex
	Path           Path
	// Classes counts the cluster's objects by class, most first.
	Classes []LeakClass
	// Examples are the first LeakOptions.Examples reported objects.
	Examples []model.NodeIndex
}

// LeakResult is the outcome of Leaks.
type LeakResult struct {
	// Matching is MatchByID when the snapshots' ids are stable (see
	// StableIDFraction, measured as the share of the baseline's ids found
	// in the target: IDOverlap). With MatchByClass nothing can be told
	// about single objects and there are no clusters.
	Matching  Matching
	IDOverlap float64
	// Allocated counts the target's nodes whose id is not in the
	// baseline; Leaked those of them still in the final snapshot.
	Allocated, Leaked int
	// Trivial counts leaked numbers, strings and VM-internal nodes, which
	// memlab never reports; Small the other leaked objects whose retained
	// size is not above MinRetained; NoPath the objects left that have no
	// strong retainer path, or one longer than MaxPathLength.
	Trivial, Small, NoPath int
	// Clusters are sorted by retained size, largest first.
	Clusters []LeakCluster
}

// Leaks finds objects allocated between the baseline and the target
// snapshot that are still alive in the final one, as memlab's find-leaks
// does with --baseline, --target, --final and --trace-all-objects (on a
// Node.js heap memlab's default filter reports nothing: it looks for
// detached DOM elements and React fibers):
//
//   - leaked: the final snapshot's nodes whose id is in the target and not
//     in the baseline;
//   - filtered as memlab's FilterTrivialNode rule does: heap numbers,
//     strings of every representation and VM-internal nodes (V8 "hidden")
//     are not leaks; then, as its FilterOverSizedNodeAsLeak rule, nor is
//     an object whose retained size is not above MinRetained;
//   - each remaining object's shortest retainer path in the final
//     snapshot (PathFinder: from a user root if there is one);
//   - clustering: where memlab compares traces by a similarity score,
//     objects are grouped here by the exact shape of their path, the
//     sequence of (edge type, edge name, class of the node reached) from
//     the root, with element and other indexed edge names left out (so
//     the items of one array share a shape);
//   - folding: a cluster whose every object is dominated (in the final
//     snapshot) by an object of another cluster at least as large, with
//     no other leaked object between them, is folded into that cluster:
//     the 500 arrays of 500 leaked items are part of the items' leak, not
//     a leak of their own, while one new backing store holding 500 leaked
//     items does not swallow them.
//
// Retained sizes are those of the final Analysis (DevTools' policy and
// shallow sizes, where memlab uses raw self sizes). All three analyses
// need classes and the ids must be stable: Leaks returns nil without
// classes.
func Leaks(baseline, target, final *Analysis, opt LeakOptions) *LeakResult {
	if final.Classes == nil {
		return nil
	}
	if opt.MaxPathLength <= 0 {
		opt.MaxPathLength = 100
	}
	bIDs, tIDs := sortedIDs(baseline.Graph), sortedIDs(target.Graph)
	r := &LeakResult{IDOverlap: idOverlap(baseline.Graph, tIDs)}
	if r.IDOverlap < StableIDFraction {
		r.Matching = MatchByClass
		return r
	}
	for _, id := range tIDs {
		if !hasID(bIDs, id) {
			r.Allocated++
		}
	}
	g := final.Graph
	n := g.NumNodes()
	k := newKinds(g)
	leaked, cand := NewBits(n), NewBits(n)
	for v, id := range g.Nodes.ID {
		if !hasID(tIDs, id) || hasID(bIDs, id) {
			continue
		}
		leaked.Set(v)
		r.Leaked++
		switch {
		case isTrivialLeak(k, g, int32(v)):
			r.Trivial++
		case final.Dominators.Retained[v] <= opt.MinRetained:
			r.Small++
		default:
			cand.Set(v)
		}
	}
	bIDs, tIDs = nil, nil

	// Cluster the candidates by path shape; objs are in node order.
	// One BFS gives every candidate's path (ShortestPaths), where a
	// search per object would need the retainer index.
	var cands []model.NodeIndex
	for v := 0; v < n; v++ {
		if cand.Has(v) {
			cands = append(cands, int32(v))
		}
	}
	paths := final.ShortestPaths(cands)
	type object struct{ node, cluster int32 }
	var objs []object
	clusterOf := map[string]int32{}
	var clusterSize []int
	var key []byte
	for i, v := range cands {
		ps := paths[i]
		if ps.Cost < 0 || len(ps.Steps) > opt.MaxPathLength {
			r.NoPath++
			continue
		}
		key = pathShape(key[:0], g, final.Classes, ps)
		c, ok := clusterOf[string(key)]
		if !ok {
			c = int32(len(clusterSize))
			clusterOf[string(key)] = c
			clusterSize = append(clusterSize, 0)
		}
		clusterSize[c]++
		objs = append(objs, object{node: int32(v), cluster: c})
	}
	clusterOf = nil
	clusterOfNode := func(v int32) int32 {
		i := sort.Search(len(objs), func(i int) bool { return objs[i].node >= v })
		if v < 0 || i == len(objs) || objs[i].node != v {
			return -1
		}
		return objs[i].cluster
	}

	// Fold a cluster into another when the nearest candidate dominating
	// each of its objects lies in that one cluster, at least as large.
	owner := nearestMarkedDominators(final.Dominators.IDom, cand, objs, func(o object) int32 { return o.node })
	const none, mixed = -1, -2
	into := make([]int32, len(clusterSize))
	for i := range into {
		into[i] = none
	}
	for i, o := range objs {
		to := clusterOfNode(owner[i])
		if to < 0 {
			to = mixed
		}
		if into[o.cluster] == none {
			into[o.cluster] = to
		} else if into[o.cluster] != to {
			into[o.cluster] = mixed
		}
	}
	for c, to := range into {
		if to < 0 || int(to) == c || clusterSize[to] < clusterSize[c] {
			into[c] = none
		}
	}
	resolve := func(c int32) int32 {
		for into[c] != none {
			c = into[c]
		}
		return c
	}

	// Build the clusters that remain.
	out := make([]int32, len(clusterSize)) // cluster -> index in r.Clusters + 1
	var hist []map[uint32]LeakClass
	for _, o := range objs {
		c := resolve(o.cluster)
		if out[c] == 0 {
			r.Clusters = append(r.Clusters, LeakCluster{Representative: model.NoNode})
			hist = append(hist, map[uint32]LeakClass{})
			out[c] = int32(len(r.Clusters))
		}
		lc := &r.Clusters[out[c]-1]
		lc.Objects++
		cl := final.Classes.Of[o.node]
		h := hist[out[c]-1][cl]
		h.Count++
		h.Shallow += final.Self[o.node]
		hist[out[c]-1][cl] = h
		if c != o.cluster {
			continue // folded
		}
		ret := final.Dominators.Retained[o.node]
		lc.Count++
		lc.Retained += ret
		if lc.Representative < 0 || ret > final.Dominators.Retained[lc.Representative] {
			lc.Representative = o.node
		}
		if len(lc.Examples) < opt.Examples {
			lc.Examples = append(lc.Examples, o.node)
		}
	}
	for i := range r.Clusters {
		lc := &r.Clusters[i]
		lc.Path = paths[sort.Search(len(cands), func(j int) bool { return cands[j] >= lc.Representative })]
		lc.Classes = leakClasses(final, hist[i])
	}
	sort.SliceStable(r.Clusters, func(a, b int) bool {
		x, y := &r.Clusters[a], &r.Clusters[b]
		if x.Retained != y.Retained {
			return x.Retained > y.Retained
		}
		return x.Count > y.Count
	})
	return r
}

// isTrivialLeak is memlab's FilterTrivialNode: numbers, strings and
// VM-internal ("hidden") nodes are never leaks.
func isTrivialLeak(k *kinds, g *model.Graph, v int32) bool {
	switch k.nodeKindOf(g, v) {
	case kNumber, kString, kConsString, kSlicedString, kHidden:
		return true
	}
	return false
}

// pathShape appends p's shape to key: per step the edge type, the edge
// name (none for indexed edges, so array positions do not matter) and the
// class of the node reached.
func pathShape(key []byte, g *model.Graph, cls *Classes, p Path) []byte {
	for _, s := range p.Steps {
		t := g.Edges.Type[s.Edge]
		name := g.Edges.Name[s.Edge]
		if g.EdgeTypes[t].Indexed {
			name = ^uint32(0)
		}
		key = append(key, t)
		key = binary.LittleEndian.AppendUint32(key, name)
		key = binary.LittleEndian.AppendUint32(key, cls.Of[s.To])
	}
	return key
}

// nearestMarkedDominators returns, for each item, the nearest strict
// dominator of its node that is marked, or -1. Results for the nodes on
// the way are cached in one int32 per graph node, so every dominator chain
// is walked once in all.
func nearestMarkedDominators[T any](idom []int32, marked Bits, items []T, node func(T) int32) []int32 {
	const unknown = -2
	near := make([]int32, len(idom))
	for i := range near {
		near[i] = unknown
	}
	var stack []int32
	res := make([]int32, len(items))
	for i, it := range items {
		v := node(it)
		// Climb until a node whose answer is known (or the root).
		for near[v] == unknown {
			p := idom[v]
			if p < 0 {
				near[v] = -1
				break
			}
			if marked.Has(int(p)) {
				near[v] = p
				break
			}
			stack = append(stack, v)
			v = p
		}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			near[u] = near[v]
			v = u
		}
		res[i] = near[node(it)]
	}
	return res
}

// leakClasses turns a class histogram into LeakClass rows, most first,
// then by name.
func leakClasses(a *Analysis, h map[uint32]LeakClass) []LeakClass {
	rows := make([]LeakClass, 0, len(h))
	for c, x := range h {
		x.Class, x.Name = c, a.Classes.Names[c]
		rows = append(rows, x)
	}
	sort.Slice(rows, func(x, y int) bool {
		if rows[x].Count != rows[y].Count {
			return rows[x].Count > rows[y].Count
		}
		if rows[x].Name != rows[y].Name {
			return rows[x].Name < rows[y].Name
		}
		return rows[x].Class < rows[y].Class
	})
	return rows
}
