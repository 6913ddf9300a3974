package jsonl

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/heapx/heapx/model"
)

// columns are the graph's node and edge columns being appended, with what
// the model keeps elsewhere: each edge's source until the CSR is built, the
// edges to small integers it has no place for, gc root kinds.
type columns struct {
	from      []int32 // per edge in file order: its source (-1 pending)
	smi       int64   // edges to small integers, skipped
	rootKinds map[string]uint16
}

// Node and edge records, nearly all of a file's lines, are read by the
// parallel parser's workers as well as by the line parser: both decode
// them through the tables below into the records here, raw numbers
// without the reader's state (type tables, string numbering, id map),
// which is applied when the record is added.

// Slots of a node record's numbers.
const (
	nodeID = iota
	nodeType
	nodeName
	nodeSize
	nodeTrace
	nodeDetachedness
	nodeShallow
	nodeRetained
	nodeDominator
	nodeDistance
	nodeSlots
)

// nodeRec is one node record's values as decoded.
type nodeRec struct {
	num  [nodeSlots]uint64
	null nulls
	blockPos
}

func (r *nodeRec) numbers() ([]uint64, *nulls) { return r.num[:], &r.null }

var nodeRecord = recordType[nodeRec]{
	fields: []field[nodeRec]{
		{name: "id", num: unsigned(nodeID, "node id")},
		{name: "type", num: unsigned(nodeType, "node type")},
		{name: "name", num: unsigned(nodeName, "node name (a string id)")},
		{name: "self_size", num: unsigned(nodeSize, "self_size")},
		{name: "v8:trace_node_id", num: upTo(nodeTrace, "v8:trace_node_id", 1<<32-1).orNull()},
		{name: "v8:detachedness", num: upTo(nodeDetachedness, "v8:detachedness", 255).orNull()},
		{name: "heapx:shallow_size", num: unsigned(nodeShallow, "heapx:shallow_size")},
		{name: "heapx:retained_size", num: unsigned(nodeRetained, "heapx:retained_size")},
		{name: "heapx:dominator", num: unsigned(nodeDominator, "heapx:dominator (a node id or null)").orNull()},
		{name: "heapx:distance", num: signed(nodeDistance, "heapx:distance", math.MinInt32, math.MaxInt32)},
	},
	required: []string{"id", "type", "name", "self_size"},
	numbers:  (*nodeRec).numbers,
	add:      (*reader).addNodeLine,
	failed: func(rd *reader, d *decl, r *nodeRec, read int, err error) error {
		return typeFirst(&rd.nodeTypes, r.num[nodeType], d, read, err)
	},
}

// typeFirst picks the error to report for a node or edge record whose
// fields did not all read: that its type is not declared, if the type was
// read (a reader checking each field as it reads it stops there), or err.
func typeFirst(types *typeIndex, typ uint64, d *decl, read int, err error) error {
	if _, terr := types.of(typ); terr != nil && slices.Index(d.fields, "type") < read {
		return terr
	}
	return err
}

// addNodeLine adds a node the line parser read, skipping the subtype
// fields of its type, which follow the declared ones.
func (rd *reader) addNodeLine(r *nodeRec) error {
	typ, err := rd.nodeTypes.of(r.num[nodeType])
	if err != nil {
		return err
	}
	c := &rd.c
	g := rd.g
	for _, f := range rd.subFields[typ] {
		if err := c.expect(',', fmt.Sprintf("',' before subtype field %q of node type %s", f, g.NodeTypes[typ].QualifiedName())); err != nil {
			return err
		}
		if err := c.skip(); err != nil {
			return fmt.Errorf("subtype field %q: %v", f, err)
		}
		rd.subSkip["node_type "+g.NodeTypes[typ].QualifiedName()+"."+f]++
	}
	return rd.addNode(r, typ)
}

// addNode appends a parsed node, of model type typ, to the columns.
func (rd *reader) addNode(r *nodeRec, typ uint8) error {
	g := rd.g
	ns := &g.Nodes
	n := ns.ID.Len()
	if n >= 1<<31-1 {
		return fmt.Errorf("more than %d nodes", 1<<31-1)
	}
	if n == cap(ns.Type) {
		rd.growNodes(n)
	}
	rd.nodeLines = append(rd.nodeLines, rd.line)
	ns.ID.Append(r.num[nodeID])
	ns.Type = append(ns.Type, typ)
	ns.Name = append(ns.Name, rd.strRef(r.num[nodeName], refNodeName, n))
	ns.Size.Append(r.num[nodeSize])
	if g.TraceNodeID != nil {
		g.TraceNodeID = append(g.TraceNodeID, uint32(r.num[nodeTrace]))
	}
	if g.Detachedness != nil {
		g.Detachedness = append(g.Detachedness, uint8(r.num[nodeDetachedness]))
	}
	if res := rd.res; res != nil {
		res.Shallow = append(res.Shallow, r.num[nodeShallow])
		res.Retained = append(res.Retained, r.num[nodeRetained])
		res.Distance = append(res.Distance, int32(r.num[nodeDistance]))
		// Dominators often come before the nodes they name: resolved
		// at the end, from a raw column rather than a pending entry per
		// node.
		if r.null.has(nodeDominator) {
			res.Dominator = append(res.Dominator, model.NoNode)
		} else {
			res.Dominator = append(res.Dominator, 0)
		}
		rd.domRaw = append(rd.domRaw, r.num[nodeDominator])
	}
	if len(rd.nodeLines) >= batch {
		rd.flushNodes()
	}
	return nil
}

// growNodes doubles the node columns (model.Alloc: huge pages, one copy).
// The first allocation uses the file's node count when it promised one,
// bounded by what the input can hold, so a lying header costs nothing.
func (rd *reader) growNodes(n int) {
	c := max(2*n, 4096)
	if n == 0 && rd.counts[0] > 0 {
		c = int(min(rd.counts[0], rd.bound/16, 1<<31-1))
	}
	g := rd.g
	g.Nodes.ID.Grow(c - n)
	g.Nodes.Type = regrow(g.Nodes.Type, c)
	g.Nodes.Name = regrow(g.Nodes.Name, c)
	g.Nodes.Size.Grow(c - n)
	if g.TraceNodeID != nil {
		g.TraceNodeID = regrow(g.TraceNodeID, c)
	}
	if g.Detachedness != nil {
		g.Detachedness = regrow(g.Detachedness, c)
	}
	if r := rd.res; r != nil {
		r.Shallow = regrow(r.Shallow, c)
		r.Retained = regrow(r.Retained, c)
		r.Dominator = regrow(r.Dominator, c)
		r.Distance = regrow(r.Distance, c)
		rd.domRaw = regrow(rd.domRaw, c)
	}
}

// regrow returns s with capacity c (>= len(s)).
func regrow[T any](s []T, c int) []T {
	if c <= cap(s) {
		return s
	}
	t := model.Alloc[T](c)
	copy(t, s)
	return t[:len(s)]
}

func (rd *reader) growEdges(n int) {
	c := max(2*n, 4096)
	if n == 0 && rd.counts[1] > 0 {
		c = int(min(rd.counts[1], rd.bound/16, 1<<32-1))
	}
	e := &rd.g.Edges
	e.Type = regrow(e.Type, c)
	e.Name = regrow(e.Name, c)
	e.To = regrow(e.To, c)
	rd.from = regrow(rd.from, c)
}

// Slots of an edge record's numbers.
const (
	edgeFrom = iota
	edgeType
	edgeName
	edgeTo
	edgeSlots
	// The small integer of an edge to one: only whether it is null is
	// kept, past the numbers.
	edgeSmi = edgeSlots
)

// edgeRec is one edge record's values as decoded.
type edgeRec struct {
	num  [edgeSlots]uint64
	null nulls
	blockPos
	// looked: a worker looked the endpoints up in the frozen id map, and
	// fromIx and toIx are their indexes (-1: no such node yet).
	fromIx, toIx int32
	looked       bool
}

func (r *edgeRec) numbers() ([]uint64, *nulls) { return r.num[:], &r.null }

var edgeRecord = recordType[edgeRec]{
	fields: []field[edgeRec]{
		{name: "from", num: unsigned(edgeFrom, "edge from (a node id)")},
		{name: "type", num: unsigned(edgeType, "edge type")},
		{name: "name", num: unsigned(edgeName, "edge name (a string id or an index)")},
		{name: "to", num: unsigned(edgeTo, "edge to (a node id or null)").orNull()},
		{name: "smi", num: signed(edgeSmi, "edge smi", math.MinInt64, math.MaxInt64).orNull()},
	},
	required: []string{"from", "type", "name", "to"},
	blank:    edgeRec{null: 1 << edgeSmi}, // a layout without smi: edges to nodes
	numbers:  (*edgeRec).numbers,
	add:      (*reader).addEdgeLine,
	failed: func(rd *reader, d *decl, r *edgeRec, read int, err error) error {
		if d.plain {
			// In heapx's own layout the type is checked after all four
			// fields, the order of the fast path an earlier reader had
			// for it, kept so that errors stay the same.
			return err
		}
		return typeFirst(&rd.edgeTypes, r.num[edgeType], d, read, err)
	},
}

// toSmi reports whether the edge goes to a small integer, not a node.
func (r *edgeRec) toSmi() bool { return !r.null.has(edgeSmi) }

// check says what is wrong with an edge whose fields read, from the edge
// alone (the workers check too): it must have a target node or a small
// integer, not both.
func (r *edgeRec) check() error {
	switch toNull := r.null.has(edgeTo); {
	case toNull && !r.toSmi():
		return errNoEnd
	case !toNull && r.toSmi():
		return errTwoEnds
	}
	return nil
}

var (
	errNoEnd   = errors.New("edge has neither a target node (to is null) nor a small integer (smi)")
	errTwoEnds = errors.New("edge has both a target node and a small integer (smi)")
)

// addEdgeLine adds an edge the line parser read.
func (rd *reader) addEdgeLine(r *edgeRec) error {
	typ, err := rd.edgeTypes.of(r.num[edgeType])
	if err != nil {
		return err
	}
	if err := r.check(); err != nil {
		return err
	}
	if r.toSmi() {
		// The model has no edges to values that are not nodes.
		rd.smi++
		return nil
	}
	return rd.addEdge(r, typ)
}

// addEdge appends a parsed edge, of model type typ, to the columns. Its
// endpoints go to the id map, unless a parse worker looked them up.
func (rd *reader) addEdge(r *edgeRec, typ uint8) error {
	from, nameV, to := r.num[edgeFrom], r.num[edgeName], r.num[edgeTo]
	es := &rd.g.Edges
	m := len(es.To)
	if m >= 1<<32-1 {
		return fmt.Errorf("more than %d edges", uint32(1<<32-1))
	}
	if m == cap(es.To) {
		rd.growEdges(m)
	}
	var name uint32
	if rd.g.EdgeTypes[typ].Indexed {
		if nameV > 1<<32-1 {
			return fmt.Errorf("edge index %d does not fit in 32 bits", nameV)
		}
		name = uint32(nameV)
	} else {
		name = rd.strRef(nameV, refEdgeName, m)
	}
	// Edges come grouped by source in node order (heapx writes them so):
	// the source is the last edge's or a node after it, found by a
	// forward scan of the id column without the id map. In heapx's order
	// the scans add up to one pass over the nodes; the first time one
	// fails the file is in some other order, and sources go to the id
	// map like targets.
	fi := int32(-1)
	if r.looked {
		return rd.addLooked(r, typ, name, m)
	}
	if from == rd.lastFrom && rd.lastIdx >= 0 {
		fi = rd.lastIdx
	} else if !rd.noScan {
		ids := rd.g.Nodes.ID
		for j := int(rd.lastIdx) + 1; j < ids.Len(); j++ {
			if ids.At(j) == from {
				fi = int32(j)
				break
			}
		}
		if fi >= 0 {
			rd.lastFrom, rd.lastIdx = from, fi
		} else {
			rd.noScan = true
		}
	}
	rs := rd.resolver()
	if fi < 0 {
		if rd.fromJob == nil {
			rd.fromJob = rs.job(jobFrom, 0)
		}
		j := rd.fromJob
		j.vals, j.at, j.lines = append(j.vals, from), append(j.at, uint32(m)), append(j.lines, rd.line)
	}
	if rd.toJob == nil {
		rd.toJob = rs.job(jobTo, m)
	}
	j := rd.toJob
	j.vals, j.lines = append(j.vals, to), append(j.lines, rd.line)
	es.Type = append(es.Type, typ)
	es.Name = append(es.Name, name)
	es.To = append(es.To, -1)
	rd.from = append(rd.from, fi)
	if len(j.vals) >= batch || rd.fromJob != nil && len(rd.fromJob.vals) >= batch {
		rd.flushEdges()
	}
	return nil
}

// addLooked appends edge m, whose endpoints a worker looked up; one not
// found is resolved at the end, like any reference to a later node.
func (rd *reader) addLooked(r *edgeRec, typ uint8, name uint32, m int) error {
	if rd.toJob != nil && len(rd.toJob.vals) > 0 {
		rd.flushEdges() // a lookup job covers consecutive edges
	}
	if r.fromIx >= 0 {
		rd.lastFrom, rd.lastIdx = r.num[edgeFrom], r.fromIx
	} else {
		rd.pend = append(rd.pend, pending{line: rd.line, id: r.num[edgeFrom], at: uint32(m), kind: refEdgeFrom})
	}
	if r.toIx < 0 {
		rd.pend = append(rd.pend, pending{line: rd.line, id: r.num[edgeTo], at: uint32(m), kind: refEdgeTo})
	}
	es := &rd.g.Edges
	es.Type = append(es.Type, typ)
	es.Name = append(es.Name, name)
	es.To = append(es.To, r.toIx)
	rd.from = append(rd.from, r.fromIx)
	return nil
}

// strRef records a string reference: direct while string ids are 0, 1,
// 2, ... (every heapx file), deferred otherwise.
func (rd *reader) strRef(v uint64, kind uint8, at int) uint32 {
	if rd.strSeq && v < 1<<32 {
		return uint32(v)
	}
	rd.pend = append(rd.pend, pending{line: rd.line, id: v, at: uint32(at), kind: kind})
	return 0
}
