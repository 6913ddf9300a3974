package analysis

import (
	"sync/atomic"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/analysis/internal/parallel"
	"github.com/heapx/heapx/model"
)

// externalStringDataName is the native node V8 uses for an external
// string's characters; DevTools folds it into the string that owns it.
const externalStringDataName = "system / ExternalStringData"

const (
	ownerUnvisited = ^uint32(0)
	ownerMultiple  = ^uint32(0) - 1
)

// ShallowSizes returns the self sizes DevTools shows as "Shallow size"
// (JSHeapSnapshot.calculateShallowSizes). For a graph with user roots,
// every `hidden` or `array` node, and every native
// "system / ExternalStringData" node, that is reachable over non-weak edges
// from exactly one ordinary node (its owner; paths may pass through other
// such internal nodes) gets self size 0 and its size is added to the owner,
// unless the owner is synthetic or the root. Nodes reachable from several
// owners keep their size. Totals are unchanged; a Map then shows its hash
// table as its own size. Without user roots (exposeInternals snapshots,
// recent Chrome) the raw sizes are returned.
//
// ds supplies the "Detached " renaming (a renamed
// ExternalStringData node is not folded, as in DevTools); it may be nil.
func ShallowSizes(g *model.Graph, roots *Roots, ds *DOMState) []uint64 {
	if !roots.HasUserRoots() {
		return g.Nodes.Size.Slice()
	}
	n := g.NumNodes()
	size := model.Alloc[uint64](n)
	redistribute(g, roots, ds, model.Alloc[uint32](n), size)
	return size
}

// redistribute implements ShallowSizes. owners is scratch space (N
// entries) and size receives the result (N entries).
//
// An owned node's final owner is the join, over all owners that reach it
// through owned nodes, of unvisited < one owner < several owners. That
// fixed point does not depend on the order nodes are visited in, so the
// owners are explored on all cores at once, each change made with a
// compare-and-swap and followed by a revisit of the changed node by the
// goroutine that made it; the result is the same for any schedule.
func redistribute(g *model.Graph, roots *Roots, ds *DOMState, owners []uint32, size []uint64) {
	k := kinds.New(g)
	n := g.NumNodes()
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	const chunk = 1 << 14
	parallel.Chunks(n, chunk, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			switch k.Node[g.Nodes.Type[i]] {
			case kinds.Hidden, kinds.Array:
				owners[i] = ownerUnvisited
			case kinds.Native:
				if !ds.isRenamed(int32(i)) && g.NodeName(int32(i)) == externalStringDataName {
					owners[i] = ownerUnvisited
				} else {
					owners[i] = uint32(i)
				}
			default:
				owners[i] = uint32(i)
			}
		}
		g.Nodes.Size.CopyTo(size[lo:hi], lo)
	})
	parallel.Chunks(n, chunk, func(lo, hi int) {
		var stack []uint32
		for i := lo; i < hi; i++ {
			if atomic.LoadUint32(&owners[i]) != uint32(i) {
				continue
			}
			stack = append(stack[:0], uint32(i))
			for len(stack) > 0 {
				id := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				owner := atomic.LoadUint32(&owners[id])
				for e := fe[id]; e < fe[id+1]; e++ {
					if k.Weak[typ[e]] {
						continue
					}
					t := uint32(to[e])
					for {
						o := atomic.LoadUint32(&owners[t])
						if o == t || o == owner || o == ownerMultiple {
							break
						}
						nw := ownerMultiple
						if o == ownerUnvisited {
							nw = owner
						}
						if atomic.CompareAndSwapUint32(&owners[t], o, nw) {
							stack = append(stack, t)
							break
						}
					}
				}
			}
		}
	})
	root := uint32(roots.Root)
	parallel.Chunks(n, chunk, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			o := owners[i]
			if o == ownerUnvisited || o == ownerMultiple || o == uint32(i) {
				continue
			}
			if o == root || k.Node[g.Nodes.Type[o]] == kinds.Synthetic {
				continue
			}
			atomic.AddUint64(&size[o], g.Nodes.Size.At(i))
			size[i] = 0
		}
	})
}
