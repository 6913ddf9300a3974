package model

// Retainers is the reverse (incoming-edge) index of a graph in CSR form: the
// edges that point at node n are Edge[First[n]:First[n+1]], in edge order.
//
// The source of each edge is not stored (that column cost 4 bytes an edge,
// 172 MB on a graph of 43M edges, as much again as Edge): From finds it in
// the graph's edge offsets, starting from a table of the node that holds
// every 64th edge, so a lookup is a binary search over the few nodes
// whose edges share that stretch (5 steps at 3 edges a node, in one or
// two cache lines).
type Retainers struct {
	First []uint32
	Edge  []uint32

	firstEdge []uint32    // the graph's FirstEdge
	near      []NodeIndex // near[b]: the node whose edge range holds edge b<<nearShift
}

// nearShift sets the stretch of edges one entry of Retainers.near covers:
// 64 edges, a table of 1/64 of the Edge column's size (2.7 MB for 43M
// edges).
const nearShift = 6

// Of returns the half-open range of n's retaining edges in Edge (and the
// positions From takes).
func (r *Retainers) Of(n NodeIndex) (start, end uint32) {
	return r.First[n], r.First[n+1]
}

// From returns the source of retaining edge i (a position in Edge): the
// node whose out-edges hold Edge[i].
func (r *Retainers) From(i uint32) NodeIndex {
	e := r.Edge[i]
	b := e >> nearShift
	lo, hi := r.near[b], r.near[b+1] // the source is in [lo, hi]
	fe := r.firstEdge
	// The largest v in [lo, hi] with fe[v] <= e: its range holds e, as
	// every later node starts after e.
	for lo < hi {
		mid := int32(uint32(lo+hi+1) >> 1)
		if fe[mid] <= e {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// BuildRetainers builds the reverse index with a counting sort: one pass
// over the edges counts each node's retainers, one pass backwards places
// them, the offsets counting down to where each node's range starts (no
// array of next positions besides the two of the index).
func BuildRetainers(g *Graph) *Retainers {
	n := g.NumNodes()
	m := g.NumEdges()
	fe := g.Nodes.FirstEdge
	r := &Retainers{
		First:     Alloc[uint32](n + 1),
		Edge:      Alloc[uint32](m),
		firstEdge: fe,
	}
	to := g.Edges.To
	for _, t := range to {
		r.First[t]++
	}
	// First[i] becomes the end of i's range; placing an edge takes the
	// slot below it, so after the edges, taken from the last, First[i] is
	// where i's range starts, and its edges are in order.
	var end uint32
	for i := 0; i < n; i++ {
		end += r.First[i]
		r.First[i] = end
	}
	r.First[n] = uint32(m)
	for e := len(to) - 1; e >= 0; e-- {
		t := to[e]
		r.First[t]--
		r.Edge[r.First[t]] = uint32(e)
	}
	// near[b] is the source of edge b<<nearShift; the entry past the last
	// stretch is the last node, a bound for the search.
	r.near = make([]NodeIndex, (m>>nearShift)+2)
	b := 0
	for v := 0; v < n; v++ {
		for ; b<<nearShift < int(fe[v+1]); b++ {
			r.near[b] = NodeIndex(v)
		}
	}
	for ; b < len(r.near); b++ {
		r.near[b] = NodeIndex(max(n-1, 0))
	}
	return r
}
