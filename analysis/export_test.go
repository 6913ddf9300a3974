package analysis

import "github.com/heapx/heapx/model"

// SetPackLimit sets the node count below which the dominator pass packs
// predecessors in three bytes, and returns a function restoring it.
func SetPackLimit(n int32) (restore func()) {
	old := packLimit
	packLimit = n
	return func() { packLimit = old }
}

// ReachableFromDistances is Reachable as Analysis.Unreachable derives it
// from the distances search (nil when it cannot).
func ReachableFromDistances(g *model.Graph) Bits {
	roots := FindRoots(g)
	dist, refused := distances(g, roots, nil)
	return reachableFromDistances(g, roots, dist, refused)
}

// KeptBuffers reports the buffers a's passes left for later ones and their
// capacities.
func KeptBuffers(a *Analysis) []int {
	var caps []int
	for _, b := range a.sc.bufs {
		caps = append(caps, cap(b))
	}
	return caps
}

// NearIndexed reports whether ShownPaths finds the paths to targets with
// an index of the nodes near them, not the whole graph's.
func NearIndexed(a *Analysis, targets []model.NodeIndex) bool {
	cost, _ := a.ShortestPathTree()
	return buildNearRetainers(a.Graph, a.Roots, cost, a.plainHops(), targets) != nil
}
