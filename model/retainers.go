package model

// Retainers is the reverse (incoming-edge) index of a graph in CSR form: the
// edges that point at node n are Edge[First[n]:First[n+1]], and From holds
// the source node of each, so walking retainers needs no search.
type Retainers struct {
	First []uint32
	Edge  []uint32
	From  []NodeIndex
}

// Of returns the half-open range of n's retaining edges in Edge and From.
func (r *Retainers) Of(n NodeIndex) (start, end uint32) {
	return r.First[n], r.First[n+1]
}

// BuildRetainers builds the reverse index with a counting sort: two passes
// over the edges and three flat arrays, retainers of each node in edge order.
func BuildRetainers(g *Graph) *Retainers {
	n := g.NumNodes()
	m := g.NumEdges()
	r := &Retainers{
		First: make([]uint32, n+1),
		Edge:  make([]uint32, m),
		From:  make([]NodeIndex, m),
	}
	for _, to := range g.Edges.To {
		r.First[to+1]++
	}
	for i := 1; i <= n; i++ {
		r.First[i] += r.First[i-1]
	}
	// next[i] is where the next retainer of node i goes; reuse a copy of
	// First so the array is not kept.
	next := make([]uint32, n)
	copy(next, r.First[:n])
	fe := g.Nodes.FirstEdge
	for src := 0; src < n; src++ {
		for e := fe[src]; e < fe[src+1]; e++ {
			to := g.Edges.To[e]
			p := next[to]
			r.Edge[p] = e
			r.From[p] = NodeIndex(src)
			next[to] = p + 1
		}
	}
	return r
}
