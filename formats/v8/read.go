// Package v8 reads V8 heap snapshots (.heapsnapshot and .heaptimeline, as
// written by Node.js, Chrome and Electron, plain or gzip-compressed) into a
// model.Graph.
//
// The reader streams: it never holds the file, or its strings section, in
// one buffer. The field layout comes from snapshot.meta, never from fixed
// offsets; unknown node fields are ignored and unknown top-level sections
// are kept when they are numeric tables and skipped otherwise.
package v8

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/internal/termtext"
	"github.com/heapx/heapx/model"
)

func init() {
	formats.Register(formats.Format{
		Name:        "v8",
		Description: "V8 heap snapshot (.heapsnapshot, .heaptimeline) from Node.js, Chrome, Electron; plain or gzip",
		Extensions:  []string{".heapsnapshot", ".heaptimeline"},
		Detect:      Detect,
		Read: func(path string, opt formats.ReadOptions) (*model.Graph, error) {
			return ReadFile(path, ReadOptions{Progress: opt.Progress, CountEdges: opt.CountEdges})
		},
		ReadStream: func(r io.Reader, size int64, name string, opt formats.ReadOptions) (*model.Graph, error) {
			o := ReadOptions{Progress: opt.Progress, CountEdges: opt.CountEdges}
			return input.Read(r, size, name, o.Progress, o.read)
		},
		Write: writeFormat,
	})
}

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with the number of input
	// bytes consumed and the input size (-1 if unknown).
	Progress func(done, total int64)
	// Workers is the number of parsing goroutines; 0 means GOMAXPROCS.
	Workers int
	// CountEdges, if set, leaves the edges out of the graph
	// (formats.ReadOptions.CountEdges): they are parsed and checked as
	// ever (separators, types, to_node; their names are not checked
	// against the strings, which the graph then does not use) but not
	// stored, and *CountEdges is set to their number.
	CountEdges *int
}

// Namespace is the namespace of V8's node and edge types in the model.
const Namespace = "v8"

// Detect reports whether head, the first bytes of a file (decompressed
// if it was gzip), looks like a V8 heap snapshot: a JSON object whose first
// key is "snapshot".
func Detect(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	t = bytes.TrimLeft(t[1:], " \t\r\n")
	return bytes.HasPrefix(t, []byte(`"snapshot"`))
}

// ReadFile reads the snapshot at path. Gzip input is recognized by its magic
// bytes.
func ReadFile(path string, opt ReadOptions) (*model.Graph, error) {
	g, err := input.ReadFile(path, opt.Progress, opt.read)
	if err == nil {
		g.HeapStats = heapStatsBeside(path)
		g.Scripts = scriptsBeside(path)
	}
	return g, err
}

// Read reads a snapshot from r; name is used in error messages. Gzip input
// is recognized by its magic bytes.
func Read(r io.Reader, name string, opt ReadOptions) (*model.Graph, error) {
	return input.Read(r, -1, name, opt.Progress, opt.read)
}

// unknownSizeCap is the most a column gets before data arrives when the
// input size is unknown (a pipe, say): the header's counts only cap growth.
const unknownSizeCap = 1 << 16

func (opt ReadOptions) read(in *input.Reader) (*model.Graph, error) {
	bound := uint64(in.Bound()) // upper bound of the uncompressed length
	alloc := uint64(1 << 62)
	if in.Size() < 0 || in.Gzip() {
		// A compressed stream's real length is unknown: grow with the data.
		alloc = unknownSizeCap
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Small inputs get small buffers: a fuzzer or a test reading a 4 KB
	// snapshot should not allocate 8 MB of blocks per call.
	bs := blockSize
	if bound < blockSize {
		bs = max(int(bound), 4096)
	}
	rd := &reader{s: newScanner(in, bs), g: &model.Graph{}, bound: bound, alloc: alloc, p: newPipeline(workers, bs), countEdges: opt.CountEdges,
		weakMapTables: map[model.StringID]uint64{}}
	defer rd.p.close()
	if err := rd.readTop(); err != nil {
		return nil, err
	}
	return rd.g, nil
}

// header is snapshot.meta and the counts next to it.
type header struct {
	Meta struct {
		NodeFields []string          `json:"node_fields"`
		NodeTypes  []json.RawMessage `json:"node_types"`
		EdgeFields []string          `json:"edge_fields"`
		EdgeTypes  []json.RawMessage `json:"edge_types"`
	} `json:"meta"`
	NodeCount          *int64 `json:"node_count"`
	EdgeCount          *int64 `json:"edge_count"`
	TraceFunctionCount *int64 `json:"trace_function_count"`
	RootIndex          *int64 `json:"root_index"`
	ExtraNativeBytes   *int64 `json:"extra_native_bytes"`
}

type reader struct {
	s     *scanner
	g     *model.Graph
	p     *pipeline
	bound uint64 // most bytes the (uncompressed) input can have
	alloc uint64 // most elements a column gets before its data is read

	hdr       *header
	metaRaw   map[string]json.RawMessage
	nodeF     int
	nodes     *nodeSink
	edges     *edgeSink
	haveNodes bool
	haveEdges bool
	haveStrs  bool
	internal  int // edge type index of "internal", -1 if none
	ephemeron uint8
	samples   bool
	// countEdges is ReadOptions.CountEdges: nil keeps the edges.
	countEdges *int
	// weakMapTables maps the strings that name a WeakMap entry's edges to
	// the table's id (weakMapTableID), found as the strings are read.
	weakMapTables map[model.StringID]uint64
}

func (r *reader) errorf(format string, args ...any) error { return r.s.errorf(format, args...) }

func (r *reader) readTop() error {
	s := r.s
	s.section = "top level"
	if err := s.expect('{', "'{' starting the snapshot object"); err != nil {
		return err
	}
	first := true
	for {
		c, ok := s.skipSpace()
		if !ok {
			return s.unexpectedEnd()
		}
		if c == '}' {
			s.pos++
			break
		}
		if !first {
			if err := s.expect(',', "',' between sections"); err != nil {
				return err
			}
		}
		first = false
		kb, err := s.readString()
		if err != nil {
			return err
		}
		key := string(kb)
		if err := s.expect(':', "':' after a key"); err != nil {
			return err
		}
		s.section = key
		if key != "snapshot" && r.hdr == nil {
			return r.errorf("section %s before the snapshot header", termtext.Quote(key))
		}
		if err := r.section(key); err != nil {
			return err
		}
		s.section = "top level"
	}
	if c, ok := s.skipSpace(); ok {
		return r.errorf("unexpected %s after the snapshot object", quoteByte(c))
	}
	if s.r.Err() != nil {
		// The JSON ended but the stream did not (a gzip trailer missing).
		return s.unexpectedEnd()
	}
	return r.finish()
}

func (r *reader) section(key string) error {
	switch key {
	case "snapshot":
		return r.readHeader()
	case "nodes":
		return r.readNodes()
	case "edges":
		return r.readEdges()
	case "strings":
		return r.readStrings()
	case "locations":
		return r.readLocations()
	case "trace_function_infos":
		return r.readTraceFunctions()
	case "trace_tree":
		return r.readTraceTree()
	case "samples":
		return r.readSamples()
	}
	return r.readOther(key)
}

// headerLimit caps snapshot.meta; real ones are about 1 KB.
const headerLimit = 16 << 20

func (r *reader) readHeader() error {
	if r.hdr != nil {
		return r.errorf("second snapshot header")
	}
	start := r.s.offset()
	var raw []byte
	if err := r.s.skipValue(&raw, headerLimit); err != nil {
		return err
	}
	h := &header{}
	if err := json.Unmarshal(raw, h); err != nil {
		return &formats.FormatError{File: r.s.file, Section: "snapshot", Offset: start, Msg: "malformed header: " + err.Error()}
	}
	// encoding/json matches keys case-insensitively; the header's keys are
	// checked exactly here so that "Node_Count" is not taken for
	// node_count.
	var top map[string]json.RawMessage
	_ = json.Unmarshal(raw, &top)
	_ = json.Unmarshal(top["meta"], &r.metaRaw)
	r.hdr = h
	hdrErr := func(msg string, args ...any) error {
		return &formats.FormatError{File: r.s.file, Section: "snapshot", Offset: start, Msg: fmt.Sprintf(msg, args...)}
	}
	for _, k := range []string{"meta", "node_count", "edge_count"} {
		if _, ok := top[k]; !ok {
			return hdrErr("header lacks %q", k)
		}
	}
	for _, k := range []string{"node_fields", "node_types", "edge_fields", "edge_types"} {
		if _, ok := r.metaRaw[k]; !ok {
			return hdrErr("meta lacks %q", k)
		}
	}
	if h.NodeCount == nil || h.EdgeCount == nil {
		return hdrErr("header lacks node_count or edge_count")
	}
	if *h.NodeCount < 0 || *h.EdgeCount < 0 {
		return hdrErr("negative node_count %d or edge_count %d", *h.NodeCount, *h.EdgeCount)
	}
	g := r.g
	g.Meta = append(g.Meta, model.KV{Key: "format", Value: "v8.heapsnapshot"}, model.KV{Key: "producer", Value: "V8"}) // refined in finish

	// Node fields and types.
	m := &h.Meta
	r.nodeF = len(m.NodeFields)
	roles, err := fieldRoles(m.NodeFields, map[string]uint8{
		"type": roleType, "name": roleName, "id": roleID, "self_size": roleSize,
		"edge_count": roleEdgeCount, "trace_node_id": roleTraceNode, "detachedness": roleDetachedness,
	}, []string{"type", "name", "id", "self_size", "edge_count"})
	if err != nil {
		return hdrErr("meta.node_fields: %v", err)
	}
	typeNames, err := typeList(m.NodeTypes, m.NodeFields, "type")
	if err != nil {
		return hdrErr("meta.node_types: %v", err)
	}
	for _, t := range typeNames {
		if _, err := g.AddNodeType(model.NodeType{Namespace: Namespace, Name: t, Category: nodeCategory(t)}); err != nil {
			return hdrErr("%v", err)
		}
	}
	if len(g.NodeTypes) != len(typeNames) {
		return hdrErr("meta.node_types lists a type twice")
	}
	ignored := []string{}
	for i, f := range m.NodeFields {
		if roles[i] == roleIgnore {
			ignored = append(ignored, f)
		}
	}
	if len(ignored) > 0 {
		g.Meta = append(g.Meta, model.KV{Key: "v8:ignored_node_fields", Value: strings.Join(ignored, ",")})
	}

	// Edge fields and types.
	eroles, err := fieldRoles(m.EdgeFields, map[string]uint8{
		"type": roleType, "name_or_index": roleName, "to_node": roleTo,
	}, []string{"type", "name_or_index", "to_node"})
	if err != nil {
		return hdrErr("meta.edge_fields: %v", err)
	}
	etypes, err := typeList(m.EdgeTypes, m.EdgeFields, "type")
	if err != nil {
		return hdrErr("meta.edge_types: %v", err)
	}
	r.internal = -1
	for i, t := range etypes {
		if _, err := g.AddEdgeType(edgeType(t)); err != nil {
			return hdrErr("%v", err)
		}
		if t == "internal" {
			r.internal = i
		}
	}
	if len(g.EdgeTypes) != len(etypes) {
		return hdrErr("meta.edge_types lists a type twice")
	}
	// The WeakMap table->value edge gets a type of its own (see markEphemerons).
	eph := edgeType("internal")
	eph.Strength = model.Ephemeron
	g.EdgeTypes = append(g.EdgeTypes, eph)
	r.ephemeron = uint8(len(g.EdgeTypes) - 1)
	if len(g.EdgeTypes) > 256 {
		return hdrErr("too many edge types (%d)", len(etypes))
	}

	// Counts: refuse ones the input cannot hold before allocating anything
	// (in a plain file, the header of a file cut short).
	nc, ec := uint64(*h.NodeCount), uint64(*h.EdgeCount)
	if nc > r.bound/uint64(2*r.nodeF) || nc > 1<<31-1 {
		return r.s.r.ShortError("snapshot", hdrErr("node_count %d cannot fit in an input of at most %d bytes", nc, r.bound))
	}
	if ec > r.bound/uint64(2*len(m.EdgeFields)) || ec > 1<<32-1 {
		return r.s.r.ShortError("snapshot", hdrErr("edge_count %d cannot fit in an input of at most %d bytes", ec, r.bound))
	}
	// trace_node_id is only meaningful with an allocation trace; without one
	// (trace_function_count 0, the default) the column would be all zeros
	// and cost 4 bytes a node, so it is not kept.
	keepTrace := h.TraceFunctionCount != nil && *h.TraceFunctionCount > 0
	detach, trace := false, false
	for i, ro := range roles {
		if ro == roleTraceNode && !keepTrace {
			roles[i] = roleIgnore
			ro = roleIgnore
		}
		detach = detach || ro == roleDetachedness
		trace = trace || ro == roleTraceNode
	}
	r.nodes = &nodeSink{g: g, fields: uint64(r.nodeF), roles: roles, claim: nc, ntypes: int64(len(typeNames)), detach: detach, trace: trace}
	r.nodes.grow(initialCap(nc, min(r.alloc, r.bound/uint64(2*r.nodeF))) * uint64(r.nodeF))
	r.edges = &edgeSink{g: g, fields: uint64(len(m.EdgeFields)), roles: eroles, claim: ec, nodeF: int64(r.nodeF), nodes: int64(nc), etypes: int64(len(etypes)),
		count: r.countEdges != nil}
	r.edges.grow(initialCap(ec, min(r.alloc, r.bound/uint64(2*len(m.EdgeFields)))) * uint64(len(m.EdgeFields)))

	g.Meta = append(g.Meta,
		model.KV{Key: "v8:node_fields", Value: strings.Join(m.NodeFields, ",")},
		model.KV{Key: "v8:edge_fields", Value: strings.Join(m.EdgeFields, ",")},
	)
	if h.TraceFunctionCount != nil {
		g.Meta = append(g.Meta, model.KV{Key: "v8:trace_function_count", Value: strconv.FormatInt(*h.TraceFunctionCount, 10)})
	}
	if h.ExtraNativeBytes != nil {
		g.Meta = append(g.Meta, model.KV{Key: "v8:extra_native_bytes", Value: strconv.FormatInt(*h.ExtraNativeBytes, 10)})
	}
	if h.RootIndex != nil {
		ri := *h.RootIndex
		if ri < 0 || ri%int64(r.nodeF) != 0 || uint64(ri/int64(r.nodeF)) >= nc {
			return hdrErr("root_index %d is not the start of a node", ri)
		}
		g.Root = model.NodeIndex(ri / int64(r.nodeF))
	}
	return nil
}

// fieldRoles maps field names to roles and checks the required ones exist.
func fieldRoles(fields []string, known map[string]uint8, required []string) ([]uint8, error) {
	roles := make([]uint8, len(fields))
	seen := map[string]bool{}
	for i, f := range fields {
		if seen[f] {
			return nil, fmt.Errorf("field %s listed twice", termtext.Quote(f))
		}
		seen[f] = true
		roles[i] = known[f]
	}
	for _, f := range required {
		if !seen[f] {
			return nil, fmt.Errorf("missing field %q in %s", f, fieldList(fields))
		}
	}
	return roles, nil
}

// fieldList quotes a meta field list for a message, cut short: a crafted
// meta can list a million names.
func fieldList(fields []string) string {
	return strconv.Itoa(len(fields)) + " fields " + termtext.Quote(strings.Join(fields, ","))
}

// typeList extracts the enum of the field named field: meta's *_types
// array holds, at that field's position, the list of type names.
func typeList(types []json.RawMessage, fields []string, field string) ([]string, error) {
	for i, f := range fields {
		if f != field {
			continue
		}
		if i >= len(types) {
			return nil, fmt.Errorf("no entry for field %q", field)
		}
		var names []string
		if err := json.Unmarshal(types[i], &names); err != nil {
			return nil, fmt.Errorf("entry for %q is not a list of names", field)
		}
		return names, nil
	}
	return nil, fmt.Errorf("no field %q", field)
}

// nodeCategory maps V8's node types to the neutral vocabulary.
func nodeCategory(t string) model.Category {
	switch t {
	case "hidden":
		return model.CatInternal
	case "array":
		return model.CatArray
	case "string":
		return model.CatString
	case "object":
		return model.CatObject
	case "code":
		return model.CatCode
	case "closure":
		return model.CatClosure
	case "regexp":
		return model.CatRegExp
	case "number":
		return model.CatHeapNumber
	case "native":
		return model.CatNative
	case "synthetic":
		return model.CatSynthetic
	case "concatenated string":
		return model.CatConsString
	case "sliced string":
		return model.CatSlicedString
	case "symbol":
		return model.CatSymbol
	case "bigint":
		return model.CatBigInt
	case "object shape":
		return model.CatShape
	case "wasm object":
		return model.CatObject
	}
	return model.CatOther
}

// edgeType maps V8's edge types to the neutral vocabulary. element and
// hidden edges carry an index; every other type, weak included, carries a
// string (V8's serializer and DevTools agree on this).
func edgeType(t string) model.EdgeType {
	et := model.EdgeType{Namespace: Namespace, Name: t}
	switch t {
	case "context":
		et.Category = model.EdgeContext
	case "element":
		et.Category, et.Indexed = model.EdgeElement, true
	case "property":
		et.Category = model.EdgeProperty
	case "internal":
		et.Category = model.EdgeInternal
	case "hidden":
		et.Category, et.Indexed = model.EdgeInternal, true
	case "shortcut":
		et.Strength = model.Shortcut
	case "weak":
		et.Category, et.Strength = model.EdgeInternal, model.Weak
	}
	return et
}

func (r *reader) readNodes() error {
	if r.haveNodes {
		return r.errorf("second nodes section")
	}
	r.haveNodes = true
	if err := r.s.expect('[', "'[' starting the nodes array"); err != nil {
		return err
	}
	start := r.s.offset()
	n, err := r.p.numberArray(r.s, r.nodes, true)
	if err != nil {
		return err
	}
	want := r.nodes.claim * r.nodes.fields
	if n != want {
		return &formats.FormatError{File: r.s.file, Section: "nodes", Offset: start,
			Msg: fmt.Sprintf("nodes array holds %d numbers, header says %d nodes × %d fields = %d", n, r.nodes.claim, r.nodes.fields, want)}
	}
	// edge_count per node -> CSR offsets.
	fe := r.g.Nodes.FirstEdge
	var sum uint64
	for i := 1; i < len(fe); i++ {
		sum += uint64(fe[i])
		if sum > 1<<32-1 {
			break
		}
		fe[i] = uint32(sum)
	}
	if sum != r.edges.claim {
		return &formats.FormatError{File: r.s.file, Section: "nodes", Offset: start,
			Msg: fmt.Sprintf("node edge_counts add up to %d, header says edge_count %d", sum, r.edges.claim)}
	}
	return nil
}

func (r *reader) readEdges() error {
	if r.haveEdges {
		return r.errorf("second edges section")
	}
	r.haveEdges = true
	if err := r.s.expect('[', "'[' starting the edges array"); err != nil {
		return err
	}
	start := r.s.offset()
	n, err := r.p.numberArray(r.s, r.edges, true)
	if err != nil {
		return err
	}
	if want := r.edges.claim * r.edges.fields; n != want {
		return &formats.FormatError{File: r.s.file, Section: "edges", Offset: start,
			Msg: fmt.Sprintf("edges array holds %d numbers, header says %d edges × %d fields = %d", n, r.edges.claim, r.edges.fields, want)}
	}
	return nil
}

// ownBuffer is the length from which a string keeps the buffer it was
// decoded into instead of being copied into the string table's arena.
const ownBuffer = 1 << 20

func (r *reader) readStrings() error {
	if r.haveStrs {
		return r.errorf("second strings section")
	}
	r.haveStrs = true
	s := r.s
	if err := s.expect('[', "'[' starting the strings array"); err != nil {
		return err
	}
	if c, ok := s.skipSpace(); ok && c == ']' {
		s.pos++
		return nil
	}
	// In blocks on every core while they decode whole (stringblocks.go);
	// one string at a time from where they stop, for a block's worth of
	// input at least before blocks are tried again.
	blocksAfter := s.offset()
	for {
		if stringBlocks && s.offset() >= blocksAfter {
			if !r.readStringBlocks() {
				blocksAfter = s.offset() + stringBlock
			}
		}
		b, err := s.readString()
		if err != nil {
			return err
		}
		id := r.g.Strings.Len()
		if len(b) >= ownBuffer {
			// The table takes the decoding buffer itself: one copy of
			// a long string, not two.
			r.g.Strings.AddBlock(b[:len(b):len(b)], []uint32{uint32(len(b))})
			s.scratch = nil
		} else {
			r.g.Strings.Add(b)
		}
		if r.internal >= 0 && len(b) > 0 {
			if t, ok := weakMapTableID(unsafe.String(&b[0], len(b))); ok {
				r.weakMapTables[model.StringID(id)] = t
			}
		}
		c, ok := s.skipSpace()
		if !ok {
			return s.unexpectedEnd()
		}
		s.pos++
		if c == ']' {
			return nil
		}
		if c != ',' {
			s.pos--
			return r.errorf("expected ',' or ']' in strings, found %s", quoteByte(c))
		}
	}
}

// table reads a small numeric section sequentially and returns its values.
func (r *reader) table() ([]int64, error) {
	if err := r.s.expect('[', "'['"); err != nil {
		return nil, err
	}
	t := &tableSink{limit: r.bound / 2}
	if _, err := r.p.numberArray(r.s, t, false); err != nil {
		return nil, err
	}
	return t.vals, nil
}

// metaFields returns meta[key] as a list of field names, or nil.
func (r *reader) metaFields(key string) []string {
	var f []string
	if raw, ok := r.metaRaw[key]; ok {
		_ = json.Unmarshal(raw, &f)
	}
	return f
}

// fieldIndex returns the positions of names in fields (-1 when absent).
func fieldIndex(fields []string, names ...string) []int {
	idx := make([]int, len(names))
	for i, n := range names {
		idx[i] = -1
		for j, f := range fields {
			if f == n {
				idx[i] = j
			}
		}
	}
	return idx
}

func (r *reader) records(key, metaKey string) ([]int64, []string, error) {
	start := r.s.offset()
	vals, err := r.table()
	if err != nil {
		return nil, nil, err
	}
	fields := r.metaFields(metaKey)
	if len(vals) > 0 && (len(fields) == 0 || len(vals)%len(fields) != 0) {
		return nil, nil, &formats.FormatError{File: r.s.file, Section: key, Offset: start,
			Msg: fmt.Sprintf("%d numbers do not form records of meta.%s %s", len(vals), termtext.Quote(metaKey), fieldList(fields))}
	}
	return vals, fields, nil
}

func (r *reader) readInt() (int64, error) {
	s := r.s
	var b [24]byte
	n := 0
	for s.fill() && isScalarByte(s.buf[s.pos]) && n < len(b) {
		b[n] = s.buf[s.pos]
		n++
		s.pos++
	}
	v, err := strconv.ParseInt(string(b[:n]), 10, 64)
	if err != nil {
		return 0, r.errorf("expected an integer, found %q", b[:n])
	}
	return v, nil
}

// readOther keeps an unknown section that is an array of integers (with
// its meta.<name>_fields layout when there is one) and skips anything else.
func (r *reader) readOther(key string) error {
	s := r.s
	c, ok := s.skipSpace()
	if !ok {
		return s.unexpectedEnd()
	}
	if c == '[' {
		// Peek at the first element: numbers are kept, anything else skipped.
		if s.ensure(2) {
			i := s.pos + 1
			for i < s.end && (s.buf[i] == ' ' || s.buf[i] == '\n' || s.buf[i] == '\r' || s.buf[i] == '\t') {
				i++
			}
			if i < s.end && (s.buf[i]-'0' <= 9 || s.buf[i] == '-') {
				vals, err := r.table()
				if err != nil {
					return err
				}
				name := strings.TrimSuffix(key, "s")
				r.g.Sections = append(r.g.Sections, model.Section{Name: key, Fields: r.metaFields(name + "_fields"), Values: vals})
				return nil
			}
		}
	}
	r.g.Meta = append(r.g.Meta, model.KV{Key: "v8:skipped_section", Value: key})
	return s.skipValue(nil, 0)
}

// producer names the embedder that wrote the snapshot. V8 does not record
// it, so it is inferred from the embedder's own nodes: Node.js adds a
// "Node / Environment" node to its embedder graph and Blink a native
// "Window / <origin>" node per window. Anything else is just "V8".
func producer(g *model.Graph) string {
	var node, blink bool
	for n := range g.Nodes.Name {
		c := g.NodeTypes[g.Nodes.Type[n]].Category
		if c != model.CatNative && c != model.CatSynthetic {
			continue
		}
		name := g.Strings.At(g.Nodes.Name[n])
		node = node || name == "Node / Environment"
		blink = blink || c == model.CatNative && strings.HasPrefix(name, "Window / ")
	}
	switch {
	case node:
		return "Node.js (V8)"
	case blink:
		return "Chromium (V8, Blink)"
	}
	return "V8"
}

// weakMapTableID recognizes the name V8 gives both edges of a WeakMap
// entry, "<i> / part of key (<K> @<id>) -> value (<V> @<id>) pair in
// WeakMap (table @<id>)", and returns the table's id.
func weakMapTableID(s string) (uint64, bool) {
	const tail = " pair in WeakMap (table @"
	if !strings.HasSuffix(s, ")") {
		return 0, false
	}
	i := strings.LastIndex(s, tail)
	if i < 0 || !strings.Contains(s[:i], " / part of key (") || !strings.Contains(s[:i], ") -> value (") {
		return 0, false
	}
	id, err := strconv.ParseUint(s[i+len(tail):len(s)-1], 10, 64)
	return id, err == nil
}

// finish checks that every required section was present, classifies the
// WeakMap table->value edges as ephemerons and validates the graph.
func (r *reader) finish() error {
	fail := func(msg string, args ...any) error {
		return &formats.FormatError{File: r.s.file, Section: "", Offset: -1, Msg: fmt.Sprintf(msg, args...)}
	}
	if r.hdr == nil {
		return fail("no snapshot header")
	}
	if !r.haveNodes || !r.haveEdges || !r.haveStrs {
		return fail("missing section: nodes %v, edges %v, strings %v", r.haveNodes, r.haveEdges, r.haveStrs)
	}
	g := r.g
	if r.samples {
		g.Meta[0].Value = "v8.heaptimeline"
	}
	if r.countEdges != nil {
		// The edges were only counted: no node has any in this graph.
		*r.countEdges = int(r.edges.claim)
		clear(g.Nodes.FirstEdge)
	}
	if r.internal >= 0 {
		r.markEphemerons()
	}
	g.Meta[1].Value = producer(g)
	if err := g.Validate(); err != nil {
		return fail("%v", err)
	}
	return nil
}

// markEphemerons gives the table->value edge of each WeakMap entry the
// ephemeron type: V8 writes two internal edges per entry, one from the
// table and one from the key, and only the key's keeps the value alive
// (DevTools ignores the table's when computing dominators).
func (r *reader) markEphemerons() {
	g := r.g
	// A bitset over string ids screens the tens of millions of internal
	// edges; only the few WeakMap names go through the map.
	// The names were found as the strings were read (weakMapTables).
	table := r.weakMapTables
	if len(table) == 0 {
		return
	}
	ns := g.Strings.Len()
	isPair := make([]uint64, (ns+63)/64)
	for i := range table {
		isPair[i/64] |= 1 << (i % 64)
	}
	internal := uint8(r.internal)
	fe, typ, names := g.Nodes.FirstEdge, g.Edges.Type, g.Edges.Name
	// The edges in chunks on every core, by edge index: a pair's source,
	// whose id the name must give, is found by a binary search in the
	// first-edge offsets, for the few edges that are pairs at all.
	var wg sync.WaitGroup
	m := len(typ)
	w := r.p.workers
	for i := range w {
		lo, hi := m*i/w, m*(i+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := lo; e < hi; e++ {
				name := names[e]
				if typ[e] != internal || int(name) >= ns || isPair[name/64]&(1<<(name%64)) == 0 {
					continue
				}
				src := sort.Search(len(fe)-1, func(n int) bool { return int(fe[n+1]) > e })
				if table[name] == g.Nodes.ID.At(src) {
					typ[e] = r.ephemeron
				}
			}
		}()
	}
	wg.Wait()
}

// NodeType returns the model's node type for V8's snapshot node type name
// ("object", "closure"...), as the reader records it, for readers that
// build V8-shaped graphs from other sources (formats/nodecore).
func NodeType(name string) model.NodeType {
	return model.NodeType{Namespace: Namespace, Name: name, Category: nodeCategory(name)}
}

// EdgeType returns the model's edge type for V8's snapshot edge type
// name ("property", "element"...), as the reader records it.
func EdgeType(name string) model.EdgeType { return edgeType(name) }
