// Package model is heapx's runtime-neutral, in-memory heap graph.
//
// A Graph holds every node and edge of one heap dump as parallel columns
// (structure of arrays) indexed by int32 node indexes, with edges in CSR
// order: the out-edges of node n are Edges[FirstEdge[n]:FirstEdge[n+1]].
// Names are interned in a Strings table and referenced by StringID. Nothing
// here allocates a Go object per node or per edge, so a graph of 10^7 nodes
// and 10^8 edges costs a few bytes per element and no GC pressure.
//
// The vocabulary is shared by every runtime: each node type and edge type of
// a dump is recorded once in the graph's type tables with the runtime's own
// name under a namespace ("v8", "spidermonkey", "hprof") plus the neutral
// category it maps to, so analyses can be written once while nothing the
// input said is lost. Edge strength (strong, weak, shortcut, ephemeron) is a
// property of the edge type, so retained-size policies read it as data.
//
// Beside graphs it holds the other data readers produce for the analyses:
// V8's heap statistics updates (HeapStatsUpdate) and sampling heap
// profiles (SamplingProfile), so no analysis depends on a reader.
//
// The model performs no I/O; readers and writers live in formats/*.
package model

import (
	"fmt"
	"runtime"
	"sync"
)

// NodeIndex is the position of a node in a Graph's node columns.
type NodeIndex = int32

// StringID is the position of a string in a Graph's Strings table.
type StringID = uint32

// NoNode marks the absence of a node index (for example a dominator of the root).
const NoNode NodeIndex = -1

// KV is one metadata key/value pair. Keys may repeat; order is kept.
type KV struct {
	Key, Value string
}

// Graph is one heap dump: node and edge columns, type tables, strings,
// metadata and optional per-node side columns.
type Graph struct {
	// Meta holds snapshot metadata in file order (producer, format, title...).
	// Keys are namespaced when runtime-specific, e.g. "v8:trace_function_count".
	Meta []KV

	// NodeTypes and EdgeTypes are the type tables; the Type columns index them.
	NodeTypes []NodeType
	EdgeTypes []EdgeType

	// Strings holds every name and string value the dump refers to.
	Strings Strings

	Nodes Nodes
	Edges Edges

	// Root is the single synthetic node every analysis starts from
	// (V8's node 0 or snapshot.root_index, SpiderMonkey's first node, a
	// synthetic root for formats without one).
	Root NodeIndex

	// GCRoots lists nodes the runtime named as GC roots, with their category
	// (an index into RootKinds). Empty when the dump expresses roots only as
	// edges out of Root (as V8 does).
	GCRoots   []GCRoot
	RootKinds []string

	// Side columns, nil when the dump does not carry them.
	Detachedness []uint8    // V8 DOM state per node: 0 unknown, 1 attached, 2 detached
	TraceNodeID  []uint32   // V8 allocation-trace node per node (0: none)
	Locations    []Location // allocation sites of objects and closures
	// LocationScripts is, parallel to Locations, the Script node each
	// location's script_id names (newer V8's script_object_index), or nil
	// when the dump has none. It is a column of its own, not a field of
	// Location, so that a Location built without it (zero-valued) is never
	// taken for one naming node 0.
	LocationScripts []NodeIndex
	Trace           *AllocationTrace
	// HeapStats are V8's heap statistics recorded with an allocation
	// timeline, read from their side file; nil without one.
	HeapStats *HeapStats
	// Scripts are the scripts the program had loaded, recorded beside
	// the dump by heapx capture; nil without that side file.
	Scripts *Scripts

	// Sections keeps numeric top-level sections a reader understood only as
	// tables (for example V8's scopes), so a writer can carry them through.
	Sections []Section

	// Stacks are the threads' call stacks when the dump was taken (core
	// dumps), nil when the dump has none.
	Stacks []Stack
}

// Nodes are the node columns. All slices have the same length, except
// FirstEdge, which has one more entry (CSR offsets).
type Nodes struct {
	Type      []uint8    // index into Graph.NodeTypes
	Name      []StringID // class or node name
	ID        Uint64s    // the runtime's identifier (V8 id, address, Java object id)
	Size      Uint64s    // self (shallow) size in bytes
	FirstEdge []uint32   // out-edges of n are [FirstEdge[n], FirstEdge[n+1])
}

// Edges are the edge columns, grouped by source node in node order.
type Edges struct {
	Type []uint8 // index into Graph.EdgeTypes
	// Name is a StringID, or an element/slot index when the edge type is
	// Indexed.
	Name []uint32
	To   []NodeIndex
}

// GCRoot is a node the runtime named as a GC root.
type GCRoot struct {
	Node NodeIndex
	Kind uint16 // index into Graph.RootKinds
}

// Location is the source position a node was allocated at or defined by.
type Location struct {
	Node     NodeIndex
	ScriptID uint32
	Line     uint32 // zero-based, as V8 writes it
	Column   uint32 // zero-based
}

// AllocationTrace is an allocation call tree with its function table and
// timeline samples (V8 --track-heap-objects and heap timelines).
type AllocationTrace struct {
	Functions []TraceFunction
	Tree      []TraceNode // preorder; Parent < own index
	Samples   []TraceSample
}

// TraceFunction is one function of an allocation trace.
type TraceFunction struct {
	ID           uint64
	Name         StringID
	ScriptName   StringID
	ScriptID     uint32
	Line, Column int32 // -1 when unknown
}

// TraceNode is one node of the allocation call tree.
type TraceNode struct {
	ID       uint32
	Function uint32 // index into AllocationTrace.Functions
	Count    uint64
	Size     uint64
	Parent   int32 // index into Tree, -1 for a top-level node
}

// TraceSample is one heap-timeline sample.
type TraceSample struct {
	TimestampMicros uint64
	LastAssignedID  uint64
}

// Section is a numeric table of records kept verbatim from the input.
type Section struct {
	Name   string
	Fields []string
	Values []int64
}

// NumNodes reports the number of nodes.
func (g *Graph) NumNodes() int { return g.Nodes.ID.Len() }

// NodeID returns the runtime's identifier of node n.
func (g *Graph) NodeID(n NodeIndex) uint64 { return g.Nodes.ID.At(int(n)) }

// NodeSize returns the self size of node n.
func (g *Graph) NodeSize(n NodeIndex) uint64 { return g.Nodes.Size.At(int(n)) }

// NumEdges reports the number of edges.
func (g *Graph) NumEdges() int { return len(g.Edges.To) }

// EdgeRange returns the half-open range of n's out-edges.
func (g *Graph) EdgeRange(n NodeIndex) (start, end uint32) {
	return g.Nodes.FirstEdge[n], g.Nodes.FirstEdge[n+1]
}

// NodeType returns the type of node n.
func (g *Graph) NodeType(n NodeIndex) *NodeType { return &g.NodeTypes[g.Nodes.Type[n]] }

// EdgeType returns the type of edge e.
func (g *Graph) EdgeType(e uint32) *EdgeType { return &g.EdgeTypes[g.Edges.Type[e]] }

// NodeName returns the name of node n.
func (g *Graph) NodeName(n NodeIndex) string { return g.Strings.At(g.Nodes.Name[n]) }

// EdgeName returns the name of edge e as text: the string for named edges,
// the decimal index for indexed ones.
func (g *Graph) EdgeName(e uint32) string {
	if g.EdgeTypes[g.Edges.Type[e]].Indexed {
		return fmt.Sprint(g.Edges.Name[e])
	}
	return g.Strings.At(g.Edges.Name[e])
}

// MetaIDs is the metadata key under which a reader says what its node ids
// are when they are not what its node types' runtime usually numbers:
// "address" for a Node.js core, whose V8 nodes have the objects'
// addresses as ids rather than V8's counted ids.
const MetaIDs = "ids"

// MetaValue returns the first metadata value stored under key, and whether
// there is one.
func (g *Graph) MetaValue(key string) (string, bool) {
	for _, kv := range g.Meta {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// TotalSize is the sum of all self sizes.
func (g *Graph) TotalSize() uint64 {
	return g.Nodes.Size.Sum()
}

// AddNodeType appends t to the node type table unless an equal entry exists,
// and returns its index.
func (g *Graph) AddNodeType(t NodeType) (uint8, error) {
	for i, x := range g.NodeTypes {
		if x == t {
			return uint8(i), nil
		}
	}
	if len(g.NodeTypes) > 255 {
		return 0, fmt.Errorf("more than 256 node types (adding %s)", t.QualifiedName())
	}
	g.NodeTypes = append(g.NodeTypes, t)
	return uint8(len(g.NodeTypes) - 1), nil
}

// AddEdgeType appends t to the edge type table unless an equal entry exists,
// and returns its index.
func (g *Graph) AddEdgeType(t EdgeType) (uint8, error) {
	for i, x := range g.EdgeTypes {
		if x == t {
			return uint8(i), nil
		}
	}
	if len(g.EdgeTypes) > 255 {
		return 0, fmt.Errorf("more than 256 edge types (adding %s)", t.QualifiedName())
	}
	g.EdgeTypes = append(g.EdgeTypes, t)
	return uint8(len(g.EdgeTypes) - 1), nil
}

// Validate checks the structural invariants every reader must establish:
// equal column lengths, monotone CSR offsets, type and string indexes in
// range, edge targets in range and a valid root. It returns the first
// violation found, described by node or edge index.
func (g *Graph) Validate() error {
	n := g.Nodes.ID.Len()
	if len(g.Nodes.Type) != n || len(g.Nodes.Name) != n || g.Nodes.Size.Len() != n {
		return fmt.Errorf("node columns differ in length: type %d, name %d, id %d, size %d",
			len(g.Nodes.Type), len(g.Nodes.Name), n, g.Nodes.Size.Len())
	}
	if len(g.Nodes.FirstEdge) != n+1 {
		return fmt.Errorf("first-edge column has %d entries, want %d", len(g.Nodes.FirstEdge), n+1)
	}
	m := len(g.Edges.To)
	if len(g.Edges.Type) != m || len(g.Edges.Name) != m {
		return fmt.Errorf("edge columns differ in length: type %d, name %d, to %d",
			len(g.Edges.Type), len(g.Edges.Name), m)
	}
	if g.Nodes.FirstEdge[0] != 0 || int(g.Nodes.FirstEdge[n]) != m {
		return fmt.Errorf("first-edge offsets span [%d, %d], want [0, %d]", g.Nodes.FirstEdge[0], g.Nodes.FirstEdge[n], m)
	}
	if err := g.validateNodes(); err != nil {
		return err
	}
	if err := g.validateEdges(); err != nil {
		return err
	}
	if n > 0 && (g.Root < 0 || int(g.Root) >= n) {
		return fmt.Errorf("root node %d not in the %d nodes", g.Root, n)
	}
	for i, r := range g.GCRoots {
		if r.Node < 0 || int(r.Node) >= n || int(r.Kind) >= len(g.RootKinds) {
			return fmt.Errorf("gc root %d: node %d / kind %d out of range", i, r.Node, r.Kind)
		}
	}
	if g.Detachedness != nil && len(g.Detachedness) != n {
		return fmt.Errorf("detachedness column has %d entries, want %d", len(g.Detachedness), n)
	}
	if g.TraceNodeID != nil && len(g.TraceNodeID) != n {
		return fmt.Errorf("trace-node column has %d entries, want %d", len(g.TraceNodeID), n)
	}
	for i, l := range g.Locations {
		if l.Node < 0 || int(l.Node) >= n {
			return fmt.Errorf("location %d: node %d not in the %d nodes", i, l.Node, n)
		}
	}
	if g.LocationScripts != nil {
		if len(g.LocationScripts) != len(g.Locations) {
			return fmt.Errorf("location-script column has %d entries, want one per location (%d)", len(g.LocationScripts), len(g.Locations))
		}
		for i, s := range g.LocationScripts {
			if s < 0 || int(s) >= n {
				return fmt.Errorf("location %d: script node %d not in the %d nodes", i, s, n)
			}
		}
	}
	return nil
}

// validateNodes checks the nodes' first-edge offsets, types and names,
// reporting the same violation as checking node by node would: the first
// node whose offsets decrease, else the first with a type or name out of
// range. The nodes are checked in chunks on every core: Validate reads
// every node and edge of a graph that can be a few GB.
func (g *Graph) validateNodes() error {
	n := g.Nodes.ID.Len()
	fe, typ, name := g.Nodes.FirstEdge, g.Nodes.Type, g.Nodes.Name
	nt, ns := len(g.NodeTypes), uint32(g.Strings.Len())
	order := firstIndex(n, func(lo, hi int) int {
		for i := lo; i < hi; i++ {
			if fe[i] > fe[i+1] {
				return i
			}
		}
		return -1
	})
	if order >= 0 {
		return fmt.Errorf("node %d: first-edge offset %d after next node's %d", order, fe[order], fe[order+1])
	}
	bad := firstIndex(n, func(lo, hi int) int {
		for i := lo; i < hi; i++ {
			if int(typ[i]) >= nt || name[i] >= ns {
				return i
			}
		}
		return -1
	})
	switch {
	case bad < 0:
		return nil
	case int(typ[bad]) >= nt:
		return fmt.Errorf("node %d: type %d not in the %d node types", bad, typ[bad], nt)
	}
	return fmt.Errorf("node %d: name string %d not in the %d strings", bad, name[bad], ns)
}

// validateEdges checks the edges' types, names and targets as
// validateNodes does the nodes.
func (g *Graph) validateEdges() error {
	n, m := g.Nodes.ID.Len(), len(g.Edges.To)
	typ, name, to := g.Edges.Type, g.Edges.Name, g.Edges.To
	et, ns := len(g.EdgeTypes), uint32(g.Strings.Len())
	var named [256]bool // edge types whose Name is a string
	for i, t := range g.EdgeTypes {
		if i < len(named) {
			named[i] = !t.Indexed
		}
	}
	e := firstIndex(m, func(lo, hi int) int {
		for e := lo; e < hi; e++ {
			t := int(typ[e])
			if t >= et || named[t] && name[e] >= ns || to[e] < 0 || int(to[e]) >= n {
				return e
			}
		}
		return -1
	})
	switch {
	case e < 0:
		return nil
	case int(typ[e]) >= et:
		return fmt.Errorf("edge %d: type %d not in the %d edge types", e, typ[e], et)
	case named[typ[e]] && name[e] >= ns:
		return fmt.Errorf("edge %d: name string %d not in the %d strings", e, name[e], ns)
	}
	return fmt.Errorf("edge %d: target node %d not in the %d nodes", e, to[e], n)
}

// firstIndex returns the smallest index in [0, n) that check reports in
// some chunk [lo, hi) it is given (check returns the first in its chunk,
// or -1), or -1 if none. Chunks are checked on every core.
func firstIndex(n int, check func(lo, hi int) int) int {
	const chunk = 1 << 20
	w := runtime.GOMAXPROCS(0)
	if n <= chunk || w == 1 {
		return check(0, n)
	}
	chunks := (n + chunk - 1) / chunk
	first := make([]int, chunks)
	var next sync.Mutex
	c := 0
	var wg sync.WaitGroup
	for range min(w, chunks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				k := c
				c++
				next.Unlock()
				if k >= chunks {
					return
				}
				first[k] = check(k*chunk, min(n, (k+1)*chunk))
			}
		}()
	}
	wg.Wait()
	for _, i := range first {
		if i >= 0 {
			return i
		}
	}
	return -1
}
