package lifetime

// ContextTree is the calling-context tree of allocations: node 0 is the
// top level, and every other node is a call site under its caller's node.
// It counts the objects each allocation site made under each node, so a
// site's call tree (MemInsight's allocation-site view) is the paths from
// the root to the nodes that allocated from it.
type ContextTree struct {
	// Parent and Site are per node: the calling node and the call's
	// site (Parent[0] is -1).
	Parent  []int32
	Site    []uint64
	childOf map[treeKey]int32
	// Allocs counts allocations per (node, allocation site).
	Allocs map[TreeSite]uint64
}

type treeKey struct {
	parent int32
	site   uint64
}

// TreeSite is one allocation site under one calling-context node.
type TreeSite struct {
	Node int32
	Site uint64
}

func (c *ContextTree) init() {
	c.Parent, c.Site = []int32{-1}, []uint64{0}
	c.childOf, c.Allocs = map[treeKey]int32{}, map[TreeSite]uint64{}
}

// child returns the node of a call from site under parent.
func (c *ContextTree) child(parent int32, site uint64) int32 {
	k := treeKey{parent, site}
	if n, ok := c.childOf[k]; ok {
		return n
	}
	n := int32(len(c.Parent))
	c.Parent = append(c.Parent, parent)
	c.Site = append(c.Site, site)
	c.childOf[k] = n
	return n
}

func (c *ContextTree) count(node int32, site uint64) { c.Allocs[TreeSite{node, site}]++ }

// Path returns the call sites from the top level down to node.
func (c *ContextTree) Path(node int32) []uint64 {
	var p []uint64
	for ; node > 0; node = c.Parent[node] {
		p = append(p, c.Site[node])
	}
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
	return p
}
