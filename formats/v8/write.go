package v8

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/jsonstr"
	"github.com/heapx/heapx/model"
)

// WriteOptions tune Write.
type WriteOptions struct {
	// Progress, if set, is called now and then with the number of node and
	// edge records written and their total.
	Progress func(done, total int64)
	// Compact forces the layout of newer V8 (one line per section, as
	// Chrome writes) or, when false, V8 11's (one record per line, as Node
	// 20 writes). Nil picks the source's layout (see layoutOf).
	Compact *bool
}

// Default field lists: V8 11's, as Node 20 writes them, for graphs that do
// not say which fields their source had.
var (
	defaultNodeFields   = []string{"type", "name", "id", "self_size", "edge_count", "trace_node_id", "detachedness"}
	defaultEdgeFields   = []string{"type", "name_or_index", "to_node"}
	defaultNodeTypes    = []string{"hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native", "synthetic", "concatenated string", "sliced string", "symbol", "bigint", "object shape", "wasm object"}
	defaultEdgeTypes    = []string{"context", "element", "property", "internal", "hidden", "shortcut", "weak"}
	traceFunctionFields = []string{"function_id", "name", "script_name", "script_id", "line", "column"}
	traceNodeFields     = []string{"id", "function_info_index", "count", "size", "children"}
	sampleFields        = []string{"timestamp_us", "last_assigned_id"}
	locationFields      = []string{"object_index", "script_id", "line", "column"}
	// Newer V8's (Chrome 156's), for graphs with Graph.LocationScripts.
	locationScriptFields  = []string{"object_index", "script_id", "script_object_index", "line", "column"}
	chunkNodes, chunkEdge = 32 << 10, 64 << 10
)

// writeFormat registers Write with the format registry (see read.go).
func writeFormat(w io.Writer, g *model.Graph, opt formats.WriteOptions) error {
	return Write(w, g, WriteOptions{Progress: opt.Progress})
}

// Write writes g as a V8 heap snapshot that Chrome DevTools loads. A graph
// read from a V8 snapshot is written back with the same node and edge
// types, field lists, ids, order, sections and string escaping, so a
// snapshot survives V8 -> heapx -> V8 byte for byte where the model keeps
// everything (docs/format.md, 3.4, lists what it does not). Other graphs
// are mapped onto V8's types so that DevTools shows heapx's numbers for
// them (DevToolsTypes, DuplicateRootEdges).
//
// The output streams through a bufio.Writer; nodes and edges, nearly all
// of it, are formatted on every core and written in order.
func Write(w io.Writer, g *model.Graph, opt WriteOptions) error {
	if err := g.Validate(); err != nil {
		return fmt.Errorf("v8: not writing an invalid graph: %w", err)
	}
	sw, err := newSnapshotWriter(g)
	if err != nil {
		return err
	}
	sw.compact = layoutOf(g)
	if opt.Compact != nil {
		sw.compact = *opt.Compact
	}
	sw.w = bufio.NewWriterSize(w, 1<<20)
	sw.progress = opt.Progress
	sw.total = int64(g.NumNodes() + g.NumEdges())
	for _, step := range []func() error{sw.header, sw.nodes, sw.edges, sw.trace, sw.locations, sw.sections, sw.strings} {
		if err := step(); err != nil {
			return err
		}
	}
	if opt.Progress != nil {
		opt.Progress(sw.total, sw.total)
	}
	return sw.w.Flush()
}

// layoutOf says whether g's source used the compact layout: newer V8
// (Chrome 13x) writes each section on one line and has dropped
// trace_node_id from node_fields, V8 11 (Node 20) writes one record per
// line and lists it. Graphs without V8 field lists get V8 11's.
func layoutOf(g *model.Graph) bool {
	f, ok := g.MetaValue("v8:node_fields")
	return ok && !strings.Contains(","+f+",", ",trace_node_id,")
}

type snapshotWriter struct {
	g        *model.Graph
	w        *bufio.Writer
	compact  bool
	buf      []byte
	progress func(done, total int64)
	done     int64
	total    int64

	nodeFields []string
	nodeRoles  []uint8
	nodeTypes  []string
	nodeType   []uint64 // model node type -> V8 type index
	edgeFields []string
	edgeRoles  []uint8
	edgeTypes  []string
	edgeType   []uint64 // model edge type -> V8 type index
	edgeIdx    []bool   // model edge type -> V8 type takes an index
	// Strings after g's (only for graphs not read from V8): the names of
	// indexed model edges written as V8 string-named edges, and of merged
	// root edges.
	extra   []string
	extraIx map[uint32]uint32
	// The root's edges to a target an earlier one has (graphs not read
	// from V8; see DuplicateRootEdges): rootDrop[e-rootLo] leaves edge e
	// out, rootName renames the edge kept, rootDropped counts them.
	rootLo      uint32
	rootDrop    []bool
	rootName    map[uint32]uint32
	rootDropped int
}

func newSnapshotWriter(g *model.Graph) (*snapshotWriter, error) {
	sw := &snapshotWriter{g: g}
	allV8 := FromV8(g)
	sw.nodeFields, sw.edgeFields = defaultNodeFields, defaultEdgeFields
	if allV8 {
		if f, ok := g.MetaValue("v8:node_fields"); ok && f != "" {
			sw.nodeFields = strings.Split(f, ",")
		}
		if f, ok := g.MetaValue("v8:edge_fields"); ok && f != "" {
			sw.edgeFields = strings.Split(f, ",")
		}
	}
	var err error
	if sw.nodeRoles, err = fieldRoles(sw.nodeFields, map[string]uint8{
		"type": roleType, "name": roleName, "id": roleID, "self_size": roleSize,
		"edge_count": roleEdgeCount, "trace_node_id": roleTraceNode, "detachedness": roleDetachedness,
	}, []string{"type", "name", "id", "self_size", "edge_count"}); err != nil {
		return nil, fmt.Errorf("v8: metadata v8:node_fields: %v", err)
	}
	if sw.edgeRoles, err = fieldRoles(sw.edgeFields, map[string]uint8{
		"type": roleType, "name_or_index": roleName, "to_node": roleTo,
	}, []string{"type", "name_or_index", "to_node"}); err != nil {
		return nil, fmt.Errorf("v8: metadata v8:edge_fields: %v", err)
	}

	// Node types: V8's own names in their order; others as DevToolsTypes
	// maps them, after V8's standard list so every name DevTools looks up
	// exists.
	nodeTypes, edgeTypes := DevToolsTypes(g)
	if !allV8 {
		sw.nodeTypes = append([]string(nil), defaultNodeTypes...)
		sw.edgeTypes = append([]string(nil), defaultEdgeTypes...)
	}
	index := func(list *[]string, name string) uint64 {
		for i, n := range *list {
			if n == name {
				return uint64(i)
			}
		}
		*list = append(*list, name)
		return uint64(len(*list) - 1)
	}
	for _, t := range nodeTypes {
		sw.nodeType = append(sw.nodeType, index(&sw.nodeTypes, t.Name))
	}
	// The V8 reader adds an ephemeron twin of "internal" for WeakMap
	// edges (see markEphemerons); it names no type of its own in V8, and
	// is listed only if an edge uses it, so that a snapshot without
	// "internal" does not gain it.
	used := make([]bool, len(g.EdgeTypes))
	for _, t := range g.Edges.Type {
		used[t] = true
	}
	for i, t := range edgeTypes {
		var ix uint64
		if t.Strength != model.Ephemeron || used[i] {
			ix = index(&sw.edgeTypes, t.Name)
		}
		sw.edgeType = append(sw.edgeType, ix)
		sw.edgeIdx = append(sw.edgeIdx, t.Name == "element" || t.Name == "hidden")
	}
	// A model edge whose name kind differs from its V8 type's: an
	// indexed edge under a string-named type gets its index as a
	// string; a named edge under an indexed type cannot be written.
	sw.extraIx = map[uint32]uint32{}
	for e, t := range g.Edges.Type {
		ix, v8ix := g.EdgeTypes[t].Indexed, sw.edgeIdx[t]
		if ix == v8ix {
			continue
		}
		if !ix {
			return nil, fmt.Errorf("v8: edge type %s is named but maps to V8's indexed type %s", g.EdgeTypes[t].QualifiedName(), sw.edgeTypes[sw.edgeType[t]])
		}
		n := g.Edges.Name[e]
		if _, ok := sw.extraIx[n]; !ok {
			sw.extraIx[n] = sw.addExtra(strconv.FormatUint(uint64(n), 10))
		}
	}
	if !allV8 {
		sw.mergeRootEdges()
	}
	return sw, nil
}

// addExtra appends a string after g's and returns its string-table index.
func (sw *snapshotWriter) addExtra(s string) uint32 {
	sw.extra = append(sw.extra, s)
	return uint32(sw.g.Strings.Len() + len(sw.extra) - 1)
}

// rootEdgeSeparator joins the names of the root's edges to one target.
const rootEdgeSeparator = " / "

func (sw *snapshotWriter) flush() error {
	_, err := sw.w.Write(sw.buf)
	sw.buf = sw.buf[:0]
	return err
}

// appendJSONList appends ["a","b"] (names from fixed lists and meta; V8
// escaping is plain for these ASCII names).
func appendJSONList(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendV8String(b, s)
	}
	return append(b, ']')
}

func (sw *snapshotWriter) header() error {
	g := sw.g
	b := append(sw.buf, `{"snapshot":{"meta":{"node_fields":`...)
	b = appendJSONList(b, sw.nodeFields)
	b = append(b, `,"node_types":[`...)
	b = appendJSONList(b, sw.nodeTypes)
	for _, f := range sw.nodeFields {
		switch f {
		case "type":
		case "name":
			b = append(b, `,"string"`...)
		default:
			b = append(b, `,"number"`...)
		}
	}
	b = append(b, `],"edge_fields":`...)
	b = appendJSONList(b, sw.edgeFields)
	b = append(b, `,"edge_types":[`...)
	b = appendJSONList(b, sw.edgeTypes)
	for _, f := range sw.edgeFields {
		switch f {
		case "type":
		case "name_or_index":
			b = append(b, `,"string_or_number"`...)
		case "to_node":
			b = append(b, `,"node"`...)
		default:
			b = append(b, `,"number"`...)
		}
	}
	b = append(b, `],"trace_function_info_fields":`...)
	b = appendJSONList(b, traceFunctionFields)
	b = append(b, `,"trace_node_fields":`...)
	b = appendJSONList(b, traceNodeFields)
	b = append(b, `,"sample_fields":`...)
	b = appendJSONList(b, sampleFields)
	b = append(b, `,"location_fields":`...)
	if g.LocationScripts != nil {
		b = appendJSONList(b, locationScriptFields)
	} else {
		b = appendJSONList(b, locationFields)
	}
	for _, s := range g.Sections {
		if len(s.Fields) == 0 {
			continue
		}
		b = append(b, ',')
		b = appendV8String(b, strings.TrimSuffix(s.Name, "s")+"_fields")
		b = append(b, ':')
		b = appendJSONList(b, s.Fields)
	}
	b = append(b, `},"node_count":`...)
	b = strconv.AppendInt(b, int64(g.NumNodes()), 10)
	b = append(b, `,"edge_count":`...)
	b = strconv.AppendInt(b, int64(g.NumEdges()-sw.rootDropped), 10)
	// V8 always writes trace_function_count; a snapshot that lacked it
	// (read from V8, so with v8:node_fields) is written without it.
	_, fromV8 := g.MetaValue("v8:node_fields")
	if v, ok := g.MetaValue("v8:trace_function_count"); ok && isInt(v) {
		b = append(b, `,"trace_function_count":`...)
		b = append(b, v...)
	} else if !fromV8 {
		b = append(b, `,"trace_function_count":`...)
		n := 0
		if g.Trace != nil {
			n = len(g.Trace.Functions)
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	if g.Root != 0 {
		b = append(b, `,"root_index":`...)
		b = strconv.AppendInt(b, int64(g.Root)*int64(len(sw.nodeFields)), 10)
	}
	if v, ok := g.MetaValue("v8:extra_native_bytes"); ok && isInt(v) {
		b = append(b, `,"extra_native_bytes":`...)
		b = append(b, v...)
	}
	b = append(b, "},\n"...)
	sw.buf = b
	return sw.flush()
}

func isInt(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// sep is what goes between two records of a numeric section: V8 11 puts
// each record on its own line, starting with the comma.
func (sw *snapshotWriter) sep() string {
	if sw.compact {
		return ","
	}
	return "\n,"
}

// end closes a numeric section of n records.
func (sw *snapshotWriter) end(n int) string {
	if sw.compact || n == 0 {
		return "],\n"
	}
	return "\n],\n"
}

func (sw *snapshotWriter) nodes() error {
	g := sw.g
	n := g.NumNodes()
	sw.buf = append(sw.buf, `"nodes":[`...)
	if err := sw.flush(); err != nil {
		return err
	}
	sep := sw.sep()
	fe := g.Nodes.FirstEdge
	err := sw.parallel(n, chunkNodes, func(b []byte, lo, hi int) []byte {
		for i := lo; i < hi; i++ {
			if i > 0 {
				b = append(b, sep...)
			}
			for k, role := range sw.nodeRoles {
				if k > 0 {
					b = append(b, ',')
				}
				var v uint64
				switch role {
				case roleType:
					v = sw.nodeType[g.Nodes.Type[i]]
				case roleName:
					v = uint64(g.Nodes.Name[i])
				case roleID:
					v = g.Nodes.ID.At(i)
				case roleSize:
					v = g.Nodes.Size.At(i)
				case roleEdgeCount:
					v = uint64(fe[i+1] - fe[i])
					if int32(i) == g.Root {
						v -= uint64(sw.rootDropped)
					}
				case roleTraceNode:
					if g.TraceNodeID != nil {
						v = uint64(g.TraceNodeID[i])
					}
				case roleDetachedness:
					if g.Detachedness != nil {
						v = uint64(g.Detachedness[i])
					}
				}
				b = strconv.AppendUint(b, v, 10)
			}
		}
		return b
	})
	if err != nil {
		return err
	}
	sw.buf = append(sw.buf, sw.end(n)...)
	return sw.flush()
}

func (sw *snapshotWriter) edges() error {
	g := sw.g
	m := g.NumEdges()
	sw.buf = append(sw.buf, `"edges":[`...)
	if err := sw.flush(); err != nil {
		return err
	}
	sep := sw.sep()
	nf := uint64(len(sw.nodeFields))
	err := sw.parallel(m, chunkEdge, func(b []byte, lo, hi int) []byte {
		es := &g.Edges
		for e := lo; e < hi; e++ {
			root := sw.rootDrop != nil && uint32(e)-sw.rootLo < uint32(len(sw.rootDrop))
			if root && sw.rootDrop[uint32(e)-sw.rootLo] {
				continue
			}
			// Edge 0 is always written: it is the first edge of the
			// first node with edges, never a repeat.
			if e > 0 {
				b = append(b, sep...)
			}
			t := es.Type[e]
			for k, role := range sw.edgeRoles {
				if k > 0 {
					b = append(b, ',')
				}
				var v uint64
				switch role {
				case roleType:
					v = sw.edgeType[t]
				case roleName:
					v = uint64(es.Name[e])
					if g.EdgeTypes[t].Indexed && !sw.edgeIdx[t] {
						v = uint64(sw.extraIx[es.Name[e]])
					}
					if root {
						if n, ok := sw.rootName[uint32(e)]; ok {
							v = uint64(n)
						}
					}
				case roleTo:
					v = uint64(es.To[e]) * nf
				}
				b = strconv.AppendUint(b, v, 10)
			}
		}
		return b
	})
	if err != nil {
		return err
	}
	sw.buf = append(sw.buf, sw.end(m)...)
	return sw.flush()
}

var chunkBufs = sync.Pool{New: func() any { return make([]byte, 0, 4<<20) }}

// parallel formats the ranges [k*chunk, (k+1)*chunk) of n records on every
// core and writes them in order; the queue's capacity bounds the chunks in
// flight. Progress counts records.
func (sw *snapshotWriter) parallel(n, chunk int, format func(b []byte, lo, hi int) []byte) error {
	if n == 0 {
		return nil
	}
	queue := make(chan chan []byte, 2*runtime.GOMAXPROCS(0))
	stop := make(chan struct{})
	go func() {
		defer close(queue)
		for lo := 0; lo < n; lo += chunk {
			ch := make(chan []byte, 1)
			select {
			case queue <- ch:
			case <-stop:
				return
			}
			hi := min(lo+chunk, n)
			go func(lo, hi int) { ch <- format(chunkBufs.Get().([]byte)[:0], lo, hi) }(lo, hi)
		}
	}()
	var err error
	lo := 0
	for ch := range queue {
		b := <-ch
		if err == nil {
			if _, err = sw.w.Write(b); err != nil {
				close(stop)
			}
			sw.done += int64(min(chunk, n-lo))
			if sw.progress != nil {
				sw.progress(sw.done, sw.total)
			}
		}
		lo += chunk
		//lint:ignore SA6002 the slice header this allocates is nothing next to the 4 MB chunk it recycles
		chunkBufs.Put(b[:0])
	}
	return err
}

// records writes a small numeric section record by record.
func (sw *snapshotWriter) records(name string, n int, rec func(b []byte, i int) []byte) error {
	sw.buf = append(sw.buf, '"')
	sw.buf = append(sw.buf, name...)
	sw.buf = append(sw.buf, `":[`...)
	sep := sw.sep()
	for i := 0; i < n; i++ {
		if i > 0 {
			sw.buf = append(sw.buf, sep...)
		}
		sw.buf = rec(sw.buf, i)
		if len(sw.buf) >= 1<<20 {
			if err := sw.flush(); err != nil {
				return err
			}
		}
	}
	sw.buf = append(sw.buf, sw.end(n)...)
	return sw.flush()
}

func appendInts(b []byte, vs ...int64) []byte {
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return b
}

func (sw *snapshotWriter) trace() error {
	t := sw.g.Trace
	if t == nil {
		t = &model.AllocationTrace{}
	}
	err := sw.records("trace_function_infos", len(t.Functions), func(b []byte, i int) []byte {
		f := &t.Functions[i]
		return appendInts(b, int64(f.ID), int64(f.Name), int64(f.ScriptName), int64(f.ScriptID), int64(f.Line), int64(f.Column))
	})
	if err != nil {
		return err
	}
	// The tree is nested: [id, function_info_index, count, size,
	// [children...]] flattened into the parent's children array (the
	// top-level array for top-level nodes). In preorder a node's first
	// child comes right after it, so a comma is needed unless the node
	// opens its parent's array. An explicit stack replaces recursion.
	b := append(sw.buf, `"trace_tree":[`...)
	var open []int32
	for i := range t.Tree {
		nd := &t.Tree[i]
		for len(open) > 0 && open[len(open)-1] != nd.Parent {
			b = append(b, ']') // close that node's children
			open = open[:len(open)-1]
		}
		if i > 0 && (len(open) == 0 || open[len(open)-1] != int32(i-1)) {
			b = append(b, ',') // a sibling of an earlier node
		}
		b = appendInts(b, int64(nd.ID), int64(nd.Function), int64(nd.Count), int64(nd.Size))
		b = append(b, ",["...)
		open = append(open, int32(i))
		if len(b) >= 1<<20 {
			sw.buf = b
			if err := sw.flush(); err != nil {
				return err
			}
			b = sw.buf
		}
	}
	for range open {
		b = append(b, ']')
	}
	sw.buf = append(b, "],\n"...)
	if err := sw.flush(); err != nil {
		return err
	}
	return sw.records("samples", len(t.Samples), func(b []byte, i int) []byte {
		s := &t.Samples[i]
		return appendInts(b, int64(s.TimestampMicros), int64(s.LastAssignedID))
	})
}

func (sw *snapshotWriter) locations() error {
	ls := sw.g.Locations
	nf := int64(len(sw.nodeFields))
	if ss := sw.g.LocationScripts; ss != nil {
		return sw.records("locations", len(ls), func(b []byte, i int) []byte {
			l := &ls[i]
			return appendInts(b, int64(l.Node)*nf, int64(l.ScriptID), int64(ss[i])*nf, int64(l.Line), int64(l.Column))
		})
	}
	return sw.records("locations", len(ls), func(b []byte, i int) []byte {
		l := &ls[i]
		return appendInts(b, int64(l.Node)*nf, int64(l.ScriptID), int64(l.Line), int64(l.Column))
	})
}

func (sw *snapshotWriter) sections() error {
	for _, s := range sw.g.Sections {
		err := sw.records(s.Name, len(s.Values), func(b []byte, i int) []byte {
			return strconv.AppendInt(b, s.Values[i], 10)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (sw *snapshotWriter) strings() error {
	g := sw.g
	sep := ",\n"
	if sw.compact {
		sep = ","
	}
	sw.buf = append(sw.buf, `"strings":[`...)
	n := g.Strings.Len()
	for i := 0; i < n+len(sw.extra); i++ {
		if i > 0 {
			sw.buf = append(sw.buf, sep...)
		}
		if i < n {
			sw.buf = appendV8String(sw.buf, g.Strings.At(model.StringID(i)))
		} else {
			sw.buf = appendV8String(sw.buf, sw.extra[i-n])
		}
		if len(sw.buf) >= 1<<20 {
			if err := sw.flush(); err != nil {
				return err
			}
		}
	}
	sw.buf = append(sw.buf, "]}"...)
	return sw.flush()
}

// appendV8String appends s as V8's serializer writes a string: every
// character outside printable ASCII escaped (see jsonstr.Append).
func appendV8String(b []byte, s string) []byte { return jsonstr.Append(b, s, true) }
