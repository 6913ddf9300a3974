package v8

import (
	"fmt"
	"sync"

	"github.com/heapx/heapx/model"
)

// Roles of node and edge fields, resolved once from snapshot.meta so the
// hot loops switch on a small integer instead of comparing names.
const (
	roleIgnore = iota
	roleType
	roleName
	roleID
	roleSize
	roleEdgeCount
	roleTraceNode
	roleDetachedness
	roleTo
)

// initialCap bounds the first allocation of a column to what the input can
// really hold, so a header claiming 10^12 nodes costs nothing until the
// numbers arrive.
func initialCap(claimed, bound uint64) uint64 {
	if bound < claimed {
		return bound
	}
	return claimed
}

func growLen(cur, need, max uint64) uint64 {
	n := cur * 2
	if n < need {
		n = need
	}
	if n < 1024 {
		n = 1024
	}
	if n > max {
		n = max
	}
	return n
}

// resize returns s copied into a new column of length n (model.Alloc, so
// the new memory is neither cleared twice nor faulted in 4 KB pages).
func resize[T any](s []T, n uint64) []T {
	t := model.Alloc[T](int(n))
	copy(t, s)
	return t
}

// nodeSink writes the nodes array into the graph's node columns. The
// edge_count field goes to FirstEdge[n+1] and is prefix-summed afterwards.
type nodeSink struct {
	g      *model.Graph
	fields uint64
	roles  []uint8
	claim  uint64 // node_count from the header
	have   uint64 // nodes the columns can hold
	ntypes int64
	detach bool
	trace  bool
	// The low words of the id and size columns, taken when they are
	// (re)allocated, so that parsing goroutines need not look at the
	// columns' high words, which setUint64 may be allocating.
	idLo, sizeLo []uint32
	wide         sync.Mutex // see setUint64
}

func (s *nodeSink) reserve(n uint64) (bool, error) {
	if n > s.claim*s.fields {
		return false, fmt.Errorf("nodes array holds more than snapshot.node_count (%d) × %d fields numbers", s.claim, s.fields)
	}
	return n > s.have*s.fields, nil
}

func (s *nodeSink) grow(n uint64) {
	c := growLen(s.have, (n+s.fields-1)/s.fields, s.claim)
	g := s.g
	g.Nodes.Type = resize(g.Nodes.Type, c)
	g.Nodes.Name = resize(g.Nodes.Name, c)
	g.Nodes.ID = g.Nodes.ID.Resize(int(c))
	g.Nodes.Size = g.Nodes.Size.Resize(int(c))
	s.idLo, _ = g.Nodes.ID.Low()
	s.sizeLo, _ = g.Nodes.Size.Low()
	g.Nodes.FirstEdge = resize(g.Nodes.FirstEdge, c+1)
	if s.detach {
		g.Detachedness = resize(g.Detachedness, c)
	}
	if s.trace {
		g.TraceNodeID = resize(g.TraceNodeID, c)
	}
	s.have = c
}

func (s *nodeSink) put(k0 uint64, vals []int64) (int, error) {
	g := s.g
	n := k0 / s.fields
	f := k0 % s.fields
	nodes := &g.Nodes
	for i, v := range vals {
		switch s.roles[f] {
		case roleType:
			if v < 0 || v >= s.ntypes {
				return i, fmt.Errorf("node %d: type %d is not one of the %d node types in meta", n, v, s.ntypes)
			}
			nodes.Type[n] = uint8(v)
		case roleName:
			if v < 0 || v > 1<<32-1 {
				return i, fmt.Errorf("node %d: name %d is not a string index", n, v)
			}
			nodes.Name[n] = uint32(v)
		case roleID:
			if v < 0 {
				return i, fmt.Errorf("node %d: negative id %d", n, v)
			}
			s.setUint64(&nodes.ID, s.idLo, n, uint64(v))
		case roleSize:
			if v < 0 {
				return i, fmt.Errorf("node %d: negative self_size %d", n, v)
			}
			s.setUint64(&nodes.Size, s.sizeLo, n, uint64(v))
		case roleEdgeCount:
			if v < 0 || v > 1<<32-1 {
				return i, fmt.Errorf("node %d: edge_count %d out of range", n, v)
			}
			nodes.FirstEdge[n+1] = uint32(v)
		case roleTraceNode:
			if v < 0 || v > 1<<32-1 {
				return i, fmt.Errorf("node %d: trace_node_id %d out of range", n, v)
			}
			g.TraceNodeID[n] = uint32(v)
		case roleDetachedness:
			if v < 0 || v > 255 {
				return i, fmt.Errorf("node %d: detachedness %d out of range", n, v)
			}
			if v != 0 { // as parseColumns does: the column is zeroed
				g.Detachedness[n] = uint8(v)
			}
		}
		f++
		if f == s.fields {
			f = 0
			n++
		}
	}
	return 0, nil
}

// setUint64 stores v as value n of c (a node column, lo its low words).
// Blocks are parsed on several goroutines, each writing nodes of its own
// into fresh, zeroed columns: a value that needs c's high words takes the
// lock to store it (the first one allocates them), the others write their
// low words only, leaving the high words zero.
func (s *nodeSink) setUint64(c *model.Uint64s, lo []uint32, n, v uint64) {
	if v > 1<<32-1 {
		s.wide.Lock()
		c.Set(int(n), v)
		s.wide.Unlock()
		return
	}
	lo[n] = uint32(v)
}

// columns maps each node field's role to its column code (parseColumns),
// which stores values of up to 32 bits in the id and size columns' low
// words and leaves larger ones to put (setUint64).
func (s *nodeSink) columns() *columns {
	g := s.g
	c := &columns{code: make([]uint8, len(s.roles)), fields: s.fields, types: uint64(s.ntypes),
		nodeType: g.Nodes.Type, nodeName: g.Nodes.Name, nodeID: s.idLo, nodeSize: s.sizeLo,
		firstEdge: g.Nodes.FirstEdge, trace: g.TraceNodeID, detach: g.Detachedness}
	for f, r := range s.roles {
		c.code[f] = [...]uint8{roleIgnore: colSkip, roleType: colNodeType, roleName: colNodeName, roleID: colNodeID,
			roleSize: colNodeSize, roleEdgeCount: colNodeEdges, roleTraceNode: colNodeTrace, roleDetachedness: colNodeDetach, roleTo: colSkip}[r]
	}
	return c
}

// edgeSink writes the edges array into the graph's edge columns, turning
// to_node (an offset into the flat nodes array) into a node index.
type edgeSink struct {
	g      *model.Graph
	fields uint64
	roles  []uint8
	claim  uint64
	have   uint64
	nodeF  int64 // node field count: to_node is a multiple of it
	nodes  int64
	etypes int64
	// count checks the edges without storing them (ReadOptions.CountEdges):
	// the columns stay empty.
	count bool
}

func (s *edgeSink) reserve(n uint64) (bool, error) {
	if n > s.claim*s.fields {
		return false, fmt.Errorf("edges array holds more than snapshot.edge_count (%d) × %d fields numbers", s.claim, s.fields)
	}
	return n > s.have*s.fields, nil
}

func (s *edgeSink) grow(n uint64) {
	c := growLen(s.have, (n+s.fields-1)/s.fields, s.claim)
	if s.count {
		s.have = c
		return
	}
	e := &s.g.Edges
	e.Type = resize(e.Type, c)
	e.Name = resize(e.Name, c)
	e.To = resize(e.To, c)
	s.have = c
}

func (s *edgeSink) put(k0 uint64, vals []int64) (int, error) {
	n := k0 / s.fields
	f := k0 % s.fields
	e := &s.g.Edges
	for i, v := range vals {
		switch s.roles[f] {
		case roleType:
			if v < 0 || v >= s.etypes {
				return i, fmt.Errorf("edge %d: type %d is not one of the %d edge types in meta", n, v, s.etypes)
			}
			if !s.count {
				e.Type[n] = uint8(v)
			}
		case roleName:
			if v < 0 || v > 1<<32-1 {
				return i, fmt.Errorf("edge %d: name_or_index %d out of range", n, v)
			}
			if !s.count {
				e.Name[n] = uint32(v)
			}
		case roleTo:
			// Division by a constant compiles to a multiplication; Node
			// writes 7 node fields and Chrome 6, so those get their own.
			var q, r int64
			switch s.nodeF {
			case 7:
				q, r = v/7, v%7
			case 6:
				q, r = v/6, v%6
			default:
				q, r = v/s.nodeF, v%s.nodeF
			}
			if v < 0 || r != 0 || q >= s.nodes {
				return i, fmt.Errorf("edge %d: to_node %d is not the start of one of the %d nodes (a multiple of %d below %d)", n, v, s.nodes, s.nodeF, s.nodes*s.nodeF)
			}
			if !s.count {
				e.To[n] = model.NodeIndex(q)
			}
		}
		f++
		if f == s.fields {
			f = 0
			n++
		}
	}
	return 0, nil
}

// columns maps each edge field's role to its column code (parseColumns);
// nil when the edges are only counted, which the general parser does.
func (s *edgeSink) columns() *columns {
	if s.count {
		return nil
	}
	e := &s.g.Edges
	c := &columns{code: make([]uint8, len(s.roles)), fields: s.fields, types: uint64(s.etypes),
		edgeType: e.Type, edgeName: e.Name, edgeTo: e.To, nodeF: uint64(s.nodeF), nodes: uint64(s.nodes)}
	for f, r := range s.roles {
		switch r {
		case roleType:
			c.code[f] = colEdgeType
		case roleName:
			c.code[f] = colEdgeName
		case roleTo:
			c.code[f] = colEdgeTo
		}
	}
	return c
}

// tableSink collects a small numeric section in order (parsed sequentially).
type tableSink struct {
	vals  []int64
	limit uint64
}

func (s *tableSink) reserve(n uint64) (bool, error) {
	if n > s.limit {
		return false, fmt.Errorf("section holds more numbers than the input can (%d)", s.limit)
	}
	return false, nil
}

func (s *tableSink) grow(uint64) {}

func (s *tableSink) put(_ uint64, vals []int64) (int, error) {
	s.vals = append(s.vals, vals...)
	return 0, nil
}

// locationSink writes location records into their columns by index, so
// that blocks of the locations array (a few percent of a snapshot) parse
// on every core: a record's fields may come from two blocks, each storing
// its own.
type locationSink struct {
	fields uint64
	ix     []int // positions of object_index, script_id, line, column, script_object_index
	nodeF  int64
	nodes  int64
	limit  uint64
	locs   []model.Location // as many as the numbers reserved hold records
	// scripts is the script_object_index column, resolved to nodes; nil
	// when location_fields lacks it.
	scripts []model.NodeIndex
}

// records is how many records n numbers start.
func (s *locationSink) records(n uint64) uint64 { return (n + s.fields - 1) / s.fields }

func (s *locationSink) reserve(n uint64) (bool, error) {
	if n > s.limit {
		return false, fmt.Errorf("locations hold more numbers than the input can (%d)", s.limit)
	}
	return s.records(n) > uint64(len(s.locs)), nil
}

func (s *locationSink) grow(n uint64) {
	c := max(s.records(n), 2*uint64(len(s.locs)), 1024)
	s.locs = resize(s.locs, c)
	if s.scripts != nil {
		s.scripts = resize(s.scripts, c)
	}
}

func (s *locationSink) put(k0 uint64, vals []int64) (int, error) {
	r, f := k0/s.fields, k0%s.fields
	for i, v := range vals {
		l := &s.locs[r]
		switch int(f) {
		case s.ix[0]:
			n, ok := s.node(v)
			if !ok {
				return i, fmt.Errorf("location %d: object_index %d is not the start of a node", r, v)
			}
			l.Node = n
		case s.ix[1]:
			l.ScriptID = clampU32(v)
		case s.ix[2]:
			l.Line = clampU32(v)
		case s.ix[3]:
			l.Column = clampU32(v)
		case s.ix[4]:
			n, ok := s.node(v)
			if !ok {
				return i, fmt.Errorf("location %d: script_object_index %d is not the start of a node", r, v)
			}
			s.scripts[r] = n
		}
		if f++; f == s.fields {
			f = 0
			r++
		}
	}
	return 0, nil
}

// node resolves a node offset (node index times the number of node
// fields) to a node index.
func (s *locationSink) node(o int64) (model.NodeIndex, bool) {
	if o < 0 || o%s.nodeF != 0 || o/s.nodeF >= s.nodes {
		return 0, false
	}
	return model.NodeIndex(o / s.nodeF), true
}

// clampU32 is a location field as the model keeps it: negative values
// (V8's -1 for none) read as 0.
func clampU32(v int64) uint32 {
	if v < 0 {
		return 0
	}
	return uint32(v)
}
