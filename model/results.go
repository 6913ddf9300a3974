package model

import "fmt"

// Results are the per-node analysis columns a dump file can carry so that
// reopening an analysed dump needs no recomputation (docs/format.md,
// section 4). They are plain columns indexed like the graph's nodes, so
// persisting 10^7 nodes' results costs four flat arrays.
type Results struct {
	// Policy names the retained-size policy that produced the results
	// ("devtools"); the metadata key heapx:analysis in a file.
	Policy string
	// Shallow is the self size the analysis used (DevTools' "Shallow
	// size", after its redistribution of some internal nodes' sizes).
	Shallow []uint64
	// Retained is each node's retained size.
	Retained []uint64
	// Dominator is each node's immediate dominator, NoNode for the root.
	Dominator []NodeIndex
	// Distance is DevTools' raw distance (100000000 and up for nodes
	// reached only through internal roots, -5 for unreachable ones).
	Distance []int32
}

// Check reports whether r fits g: every column has one entry per node and
// every dominator is a node of g. Readers call it before handing results
// out, writers before writing them, so a stale result set (computed for
// another graph) is never taken for a valid one.
func (r *Results) Check(g *Graph) error {
	n := g.NumNodes()
	if len(r.Shallow) != n || len(r.Retained) != n || len(r.Dominator) != n || len(r.Distance) != n {
		return fmt.Errorf("results have %d/%d/%d/%d entries (shallow/retained/dominator/distance), the graph %d nodes",
			len(r.Shallow), len(r.Retained), len(r.Dominator), len(r.Distance), n)
	}
	for i, d := range r.Dominator {
		if d != NoNode && (d < 0 || int(d) >= n) {
			return fmt.Errorf("results: dominator of node %d is %d, not one of the %d nodes", i, d, n)
		}
	}
	return nil
}
