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

// Check reports whether r fits g and holds together: every column has
// one entry per node, the dominators form a tree rooted at g's root (only
// the root has none, no dominator is out of range, no chain comes back to
// itself) and every retained size is the node's shallow size plus the
// retained sizes of the nodes it dominates, so none exceeds the root's,
// the heap's total. Readers call it before handing results out, writers
// before writing them, so results computed for another graph, or damaged
// or edited in a file, are never taken for valid ones: a view would
// print a retained size of 2^64-1 as a percentage, or walk a dominator
// cycle. It costs a pass over the nodes and 8 bytes per node.
func (r *Results) Check(g *Graph) error {
	n := g.NumNodes()
	if len(r.Shallow) != n || len(r.Retained) != n || len(r.Dominator) != n || len(r.Distance) != n {
		return fmt.Errorf("results have %d/%d/%d/%d entries (shallow/retained/dominator/distance), the graph %d nodes",
			len(r.Shallow), len(r.Retained), len(r.Dominator), len(r.Distance), n)
	}
	if n == 0 {
		return nil
	}
	root := g.Root
	if root < 0 || int(root) >= n {
		return fmt.Errorf("results: the root, node %d, is not one of the %d nodes", root, n)
	}
	id := func(v NodeIndex) uint64 { return g.NodeID(v) }
	// The retained sizes each node's children add up to.
	children := make([]uint64, n)
	for v, d := range r.Dominator {
		switch {
		case NodeIndex(v) == root && d != NoNode:
			return fmt.Errorf("results: the root (node id %d) has a dominator, node id %d", id(root), id(d))
		case NodeIndex(v) == root:
		case d == NoNode:
			return fmt.Errorf("results: node id %d has no dominator; only the root (node id %d) has none", id(NodeIndex(v)), id(root))
		case d < 0 || int(d) >= n:
			return fmt.Errorf("results: dominator of node id %d is node %d, not one of the %d nodes", id(NodeIndex(v)), d, n)
		default:
			sum := children[d] + r.Retained[v]
			if sum < children[d] {
				return fmt.Errorf("results: the nodes that node id %d dominates retain more than 2^64 bytes in all", id(d))
			}
			children[d] = sum
		}
	}
	if err := checkAcyclic(r.Dominator, root, id); err != nil {
		return err
	}
	for v := range n {
		if want := r.Shallow[v] + children[v]; want < children[v] || r.Retained[v] != want {
			return fmt.Errorf("results: node id %d retains %d bytes, not its shallow size %d plus the %d its dominated nodes retain",
				id(NodeIndex(v)), r.Retained[v], r.Shallow[v], children[v])
		}
	}
	return nil
}

// checkAcyclic reports a dominator chain that never reaches root. Each
// node's chain is walked up to a node already known to reach the root,
// marking the walk as it goes, so every node is walked once.
func checkAcyclic(dom []NodeIndex, root NodeIndex, id func(NodeIndex) uint64) error {
	n := len(dom)
	done := make([]uint64, (n+63)/64)   // reaches the root
	onWalk := make([]uint64, (n+63)/64) // on the current walk
	has := func(b []uint64, v NodeIndex) bool { return b[v/64]&(1<<(v%64)) != 0 }
	set := func(b []uint64, v NodeIndex) { b[v/64] |= 1 << (v % 64) }
	set(done, root)
	for v := range NodeIndex(n) {
		u := v
		for !has(done, u) {
			if has(onWalk, u) {
				return fmt.Errorf("results: the dominators of node id %d go round in a cycle", id(u))
			}
			set(onWalk, u)
			u = dom[u]
		}
		for u = v; !has(done, u); u = dom[u] {
			set(done, u)
		}
	}
	return nil
}
