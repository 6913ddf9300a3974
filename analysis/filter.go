package analysis

import (
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// edgeFilter is a Policy compiled for one graph: per-edge-type tables plus
// the page-owned set, so deciding whether an edge is essential costs a few
// array loads. ComputeDominators uses it on the fly instead of a bit per
// edge, which saves a pass over the edges and E/8 bytes.
//
// The page-owned set comes either from Roots.PageOwned or, while
// ComputeDominators derives it during its DFS (see there), from the DFS
// numbers.
type edgeFilter struct {
	skip  [256]bool // weak edges, and ephemeron edges if the policy says so
	inner [256]bool // shortcut edges, skipped when not leaving the root
	weak  [256]bool // weak edges (never followed by the page-owned walk)
	self  bool      // skip self edges
	root  int32

	pageRule bool    // the policy has the page-owned rule and there are seeds
	page     Bits    // page-owned nodes, when known
	num      []int32 // DFS numbers + 1, while the seeds are searched
}

func newEdgeFilter(g *model.Graph, roots *Roots, p Policy) *edgeFilter {
	k := kinds.New(g)
	f := &edgeFilter{self: p.SkipSelfEdges, root: g.Root}
	for i := range g.EdgeTypes {
		if i >= 256 {
			break
		}
		f.skip[i] = k.Weak[i] || (p.SkipEphemeronEdges && k.Ephem[i])
		f.inner[i] = p.SkipInnerShortcuts && k.Short[i]
		f.weak[i] = k.Weak[i]
	}
	if p.SkipIntoPageOwned && roots != nil && roots.PageOwned != nil {
		f.pageRule, f.page = true, roots.PageOwned
	}
	return f
}

// derivePageOwned makes the filter read page ownership from DFS numbers:
// until seedsDone is called, every numbered node counts as page-owned.
func (f *edgeFilter) derivePageOwned(num []int32) {
	f.pageRule, f.num = true, num
}

// seedsDone fixes the page-owned set once the seeds' search is over.
func (f *edgeFilter) seedsDone(page Bits) {
	f.page, f.num = page, nil
}

// isPage reports whether v is page-owned.
func (f *edgeFilter) isPage(v int32) bool {
	if f.page != nil {
		return f.page.Has(int(v))
	}
	// While seeding, every numbered node but the root (number 0) is.
	return f.num[v] > 1
}

// srcState is what the filter needs to know about an edge's source; it is
// computed once per node, not per edge.
type srcState uint8

const (
	srcRoot    srcState = iota // the root: only the type rules apply
	srcPage                    // page-owned (or no page rule): type rules and inner shortcuts
	srcNonPage                 // not page-owned: edges into page-owned nodes are skipped too
)

func (f *edgeFilter) source(v int32) srcState {
	switch {
	case v == f.root:
		return srcRoot
	case !f.pageRule || f.isPage(v):
		return srcPage
	}
	return srcNonPage
}

// ok reports whether the edge e of type t from a source in state s (node
// src) to dst is essential.
func (f *edgeFilter) ok(s srcState, src int32, t uint8, dst int32) bool {
	if f.skip[t] {
		return false
	}
	if s != srcRoot {
		if f.inner[t] {
			return false
		}
		if s == srcNonPage && f.isPage(dst) {
			return false
		}
	}
	return !(f.self && src == dst)
}
