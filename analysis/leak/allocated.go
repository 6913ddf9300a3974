package leak

import (
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// IDRange is DevTools' Summary filter "Objects allocated between Snapshot
// 1 and Snapshot 2" (and "Objects allocated before Snapshot 1"): the
// nodes whose id is above After and at most Through, where each bound is
// the newest V8 heap-object id of a snapshot of the same process
// (DevTools' maxJSObjectId; 0 for "before the first"). V8 numbers an
// object when a snapshot first meets it, from a counter that only grows,
// so an object alive in a later snapshot with an id in the range was
// first seen after the first snapshot and by the second: allocated
// between them, as far as snapshots can tell (HeapSnapshot.ts,
// createNodeIdFilter: id > minNodeId && id <= maxNodeId). The test is on
// every node, embedder (even) ids included, as DevTools makes it.
type IDRange struct {
	After, Through uint64
}

// Contains reports whether id is in the range.
func (r IDRange) Contains(id uint64) bool { return id > r.After && id <= r.Through }

// Nodes returns the nodes of g whose id is in the range, and how many.
func (r IDRange) Nodes(g *model.Graph) (analysis.Bits, int) {
	n := g.NumNodes()
	keep := analysis.NewBits(n)
	count := 0
	for v := range n {
		if r.Contains(g.Nodes.ID.At(v)) {
			keep.Set(v)
			count++
		}
	}
	return keep, count
}

// NewestID is DevTools' maxJSObjectId of the digest's snapshot: its
// largest V8 heap-object (odd) id, 0 for a snapshot whose ids are not
// V8's counted ids (see IDKind).
func (d *Digest) NewestID() uint64 {
	if d.IDs != CountedIDs {
		return 0
	}
	return d.sample.newest
}

// NewestID returns DevTools' maxJSObjectId of g: its largest V8
// heap-object (odd) id, 0 when g's ids are not V8's counted ids.
func NewestID(g *model.Graph) uint64 {
	if IDKindOf(g) != CountedIDs {
		return 0
	}
	return newestCountedID(g)
}
