package model

// NodeField is one namespaced integer field of every node, which the
// exchange format lets a producer declare beside the built-in ones
// (docs/format.md 2.5): an extra node field in the flat form, an extra
// node column in the SQLite form (formats.WriteOptions.NodeFields).
// Readers that do not know it skip it.
type NodeField struct {
	// Name is namespaced, NAMESPACE:name ("heapx_lifetime:alloc_time").
	Name string
	// Values holds one value per node, in node order.
	Values []uint64
	// Missing, when not nil, marks the nodes that have no value (null).
	Missing []bool
}
