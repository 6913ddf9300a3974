package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/internal/input"
	"github.com/heapx/heapx/model"
)

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with the number of input
	// bytes consumed (compressed bytes for gzip input) and the input size
	// (-1 if unknown).
	Progress func(done, total int64)
	// Results, if set, receives the analysis results the file carries;
	// without them its columns stay nil.
	Results *model.Results
}

// maxLine caps one line. Real lines are short (a string record holds at
// most a few MB, V8 cuts names at 1024 characters); the cap keeps a file
// without newlines from growing the buffer without end.
const maxLine = 256 << 20

// ReadFile reads the flat file at path, plain or gzip-compressed.
func ReadFile(path string, opt ReadOptions) (*model.Graph, error) {
	return input.ReadFile(path, opt.Progress, opt.read)
}

// Read reads a flat file from r; name is used in error messages.
func Read(r io.Reader, name string, opt ReadOptions) (*model.Graph, error) {
	return input.Read(r, -1, name, opt.Progress, opt.read)
}

func (opt ReadOptions) read(in *input.Reader) (*model.Graph, error) {
	rd := newReader(in, in.Name(), in.Bound(), opt)
	defer func() {
		if rd.rs != nil {
			rd.rs.close()
		}
	}()
	if err := rd.run(); err != nil {
		return nil, err
	}
	return rd.g, nil
}

// Field roles: what the reader does with each declared field.
const (
	fSkip  = iota // unknown: skipped and counted
	fQuiet        // known but not wanted (results nobody asked for): skipped
	fID
	fType
	fName
	fSize
	fTraceNode
	fDetach
	fShallow
	fRetained
	fDominator
	fDistance
	fFrom
	fTo
	fSmi
	fKey
	fValue
	fText
	fIndex
	fCategory
	fFields
	fStrength
	fNameKind
	fNode
	fScriptID
	fLine
	fColumn
	fFunctionID
	fScriptName
	fParent
	fFunctionIndex
	fCount
	fTimestamp
	fLastID
	fValues
	fKind
	fScript
)

// known lists, per record type, the fields the reader understands and
// which of them a declaration must have.
var known = map[string]struct {
	roles    map[string]uint8
	required []string
}{
	"string":    {map[string]uint8{"id": fID, "text": fText}, []string{"id", "text"}},
	"node_type": {map[string]uint8{"index": fIndex, "name": fName, "category": fCategory, "fields": fFields}, []string{"index", "name", "category"}},
	"edge_type": {map[string]uint8{"index": fIndex, "name": fName, "category": fCategory, "strength": fStrength, "name_kind": fNameKind}, []string{"index", "name", "category", "strength", "name_kind"}},
	"node": {map[string]uint8{"id": fID, "type": fType, "name": fName, "self_size": fSize, "v8:trace_node_id": fTraceNode, "v8:detachedness": fDetach,
		"heapx:shallow_size": fShallow, "heapx:retained_size": fRetained, "heapx:dominator": fDominator, "heapx:distance": fDistance}, []string{"id", "type", "name", "self_size"}},
	"edge":              {map[string]uint8{"from": fFrom, "type": fType, "name": fName, "to": fTo, "smi": fSmi}, []string{"from", "type", "name", "to"}},
	"v8:location":       {map[string]uint8{"node": fNode, "script_id": fScriptID, "script": fScript, "line": fLine, "column": fColumn}, []string{"node"}},
	"v8:trace_function": {map[string]uint8{"index": fIndex, "function_id": fFunctionID, "name": fName, "script_name": fScriptName, "script_id": fScriptID, "line": fLine, "column": fColumn}, []string{"index"}},
	"v8:trace_node":     {map[string]uint8{"index": fIndex, "parent": fParent, "id": fID, "function_index": fFunctionIndex, "count": fCount, "size": fSize}, []string{"index", "parent"}},
	"v8:sample":         {map[string]uint8{"timestamp_us": fTimestamp, "last_assigned_id": fLastID}, nil},
	"v8:section":        {map[string]uint8{"name": fName, "fields": fFields, "values": fValues}, []string{"name", "values"}},
	"heapx:gc_root":     {map[string]uint8{"node": fNode, "kind": fKind}, []string{"node", "kind"}},
}

// decl is a record type declared by the file.
type decl struct {
	name    string
	fields  []string
	roles   []uint8
	known   bool
	has     map[uint8]bool
	skipped []int64 // per field: records whose value was skipped
	count   int64   // records read
	plain   bool    // an edge declared as heapx writes it: from, type, name, to
}

// ref kinds: what a deferred node reference or string reference fills.
const (
	refEdgeFrom = iota
	refEdgeTo
	refLocation
	refGCRoot
	refDominator
	refRoot
	refNodeName // string references
	refEdgeName
	refFuncName
	refFuncScript
)

// pending is a reference that could not be resolved when it was read: a
// node identifier not seen yet, or a string identifier read before the
// file showed its strings are not numbered 0, 1, 2, ...
type pending struct {
	line int64
	id   uint64
	at   uint32 // index in the column the kind names
	kind uint8
}

type reader struct {
	src   *input.Reader
	name  string
	bound int64
	opt   ReadOptions
	g     *model.Graph

	buf  []byte
	pos  int
	end  int
	eof  bool
	line int64
	// cutLine is the number of the input's last line when no newline
	// ends it (0 before the end).
	cutLine int64
	c       cursor
	decls   map[string]*decl
	nodeD   *decl
	edgeD   *decl
	strD    *decl
	lastD   *decl            // the last extension record type seen
	undecl  map[string]int64 // records of undeclared types

	// ids maps node identifiers to indexes. Inserts and edge-target
	// lookups are batched: done one per line, between parsing, each
	// waits for a cache miss; done in a tight loop over a batch, the
	// CPU overlaps many (measured 3x faster on 4M nodes / 12M edges).
	rs        *resolver
	pipe      *pipeline // the parallel parser, while it runs
	inserted  int       // nodes [0, inserted) were sent to rs
	nodeLines []int64   // lines of the nodes not sent yet
	toJob     *resJob   // edge targets being batched
	fromJob   *resJob   // edge sources the scan did not find
	lastFrom  uint64
	lastIdx   int32 // index of lastFrom, -1 before the first edge
	noScan    bool  // edges are not grouped by source in node order
	locRaw    []uint64
	locLine   []int64
	// Script node ids of the locations, while g.LocationScripts is not
	// nil; scriptNull counts the records whose script was null.
	scriptRaw  []uint64
	scriptNull int64

	// Type tables: file index -> model index.
	nodeTypeIx map[uint64]uint8
	edgeTypeIx map[uint64]uint8
	smallNT    [256]int16 // fast path for indexes < 256: model index + 1
	smallET    [256]int16
	subFields  [][]string // per model node type: subtype fields to skip

	// Edges in file order; from is resolved to an index (or -1 pending).
	from []int32
	smi  int64 // edges to small integers, skipped

	pend      []pending
	strSeq    bool     // string ids so far were 0, 1, 2, ...
	strIDs    []uint64 // string ids in table order, once strSeq is false
	domRaw    []uint64 // heapx:dominator ids, resolved at the end
	subSkip   map[string]int64
	res       *model.Results
	rootID    uint64
	haveRoot  bool
	counts    [3]int64 // node, edge, string count promises; -1 when absent
	rootKinds map[string]uint16
	funcIdx   []uint64 // index field of each v8:trace_function, in file order
	treeIdx   []uint64 // index field of each v8:trace_node, in file order
	meta      []model.KV
}

func newReader(src *input.Reader, name string, bound int64, opt ReadOptions) *reader {
	size := 1 << 20
	if bound < int64(size) {
		size = max(int(bound), 4096)
	}
	rd := &reader{
		src: src, name: name, bound: bound, opt: opt, g: &model.Graph{},
		buf: make([]byte, size), decls: map[string]*decl{}, undecl: map[string]int64{},
		nodeTypeIx: map[uint64]uint8{}, edgeTypeIx: map[uint64]uint8{}, strSeq: true,
		counts: [3]int64{-1, -1, -1}, rootKinds: map[string]uint16{}, subSkip: map[string]int64{},
		lastIdx: -1,
	}
	return rd
}

func (rd *reader) errorf(format string, args ...any) error {
	return &formats.FormatError{File: rd.name, Section: "line " + strconv.FormatInt(rd.line, 10), Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

func (rd *reader) errAt(line int64, format string, args ...any) error {
	sec := ""
	if line > 0 {
		sec = "line " + strconv.FormatInt(line, 10)
	}
	return &formats.FormatError{File: rd.name, Section: sec, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// nextLine returns the next line without its newline, or nil at the end.
func (rd *reader) nextLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(rd.buf[rd.pos:rd.end], '\n'); i >= 0 {
			l := rd.buf[rd.pos : rd.pos+i]
			rd.pos += i + 1
			rd.line++
			return l, nil
		}
		if rd.eof {
			if rd.pos < rd.end {
				l := rd.buf[rd.pos:rd.end]
				rd.pos = rd.end
				rd.line++
				rd.cutLine = rd.line
				return l, nil
			}
			return nil, nil
		}
		// Move the partial line to the front, growing the buffer for a
		// line longer than it.
		if rd.pos == 0 && rd.end == len(rd.buf) {
			if len(rd.buf) >= maxLine {
				rd.line++
				return nil, rd.errorf("line longer than %d bytes (is this a JSON Lines file?)", maxLine)
			}
			nb := make([]byte, 2*len(rd.buf))
			copy(nb, rd.buf[:rd.end])
			rd.buf = nb
		} else {
			copy(rd.buf, rd.buf[rd.pos:rd.end])
			rd.end -= rd.pos
			rd.pos = 0
		}
		n, eof, err := fill(rd.src, rd.buf[rd.end:])
		rd.end += n
		rd.eof = eof
		if err != nil {
			rd.line++
			return nil, rd.inputError()
		}
	}
}

// fill reads into b until b is full or the input ends (eof). A read
// error is the input's (see inputError).
func fill(src io.Reader, b []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(src, b)
	switch err {
	case nil:
		return n, false, nil
	case io.EOF, io.ErrUnexpectedEOF: // io.ReadFull's: the input ended
		return n, true, nil
	}
	return n, false, err
}

// inputError is the error for input that failed, or ended, inside line
// rd.line: the input layer's, which every format gives.
func (rd *reader) inputError() error {
	return rd.src.EndError("line " + strconv.FormatInt(rd.line, 10))
}

func (rd *reader) run() error {
	first := true
	for {
		if !first && rd.bulkAhead() {
			// The rest of the file goes through the parallel parser.
			if err := rd.runParallel(); err != nil {
				return err
			}
			break
		}
		l, err := rd.nextLine()
		if err != nil {
			return err
		}
		if l == nil {
			break
		}
		if first {
			if err := rd.version(l); err != nil {
				return err
			}
			first = false
			continue
		}
		if err := rd.handle(l); err != nil {
			return err
		}
	}
	if first {
		return rd.errAt(0, "empty file, not a heapx flat file")
	}
	return rd.finish()
}

// handle reads one line other than the first.
func (rd *reader) handle(l []byte) error {
	if len(l) == 0 || len(l) == 1 && l[0] == '\r' {
		return nil
	}
	if err := rd.record(l); err != nil {
		if rd.line == rd.cutLine {
			// A last line without its newline that does not parse: the
			// file was cut inside it.
			return rd.inputError()
		}
		var fe *formats.FormatError
		if errors.As(err, &fe) {
			return err
		}
		return rd.errorf("%v", err)
	}
	return nil
}

// version checks the first line: ["metadata","version_major","1"].
func (rd *reader) version(l []byte) error {
	l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
	c := &rd.c
	c.b, c.i = l, 0
	want := `not a heapx flat file: the first line must be ["metadata","version_major","1"]`
	if c.expect('[', "'['") != nil {
		return rd.errorf("%s", want)
	}
	if t, err := c.str("record type"); err != nil || string(t) != "metadata" {
		return rd.errorf("%s", want)
	}
	if k, err := c.nextStr("key"); err != nil || string(k) != exchange.KeyVersion {
		return rd.errorf("%s", want)
	}
	v, err := c.nextStr("version_major")
	if err != nil {
		return rd.errorf("%v", err)
	}
	if string(v) != strconv.Itoa(exchange.VersionMajor) {
		return rd.errorf("unsupported heapx format version_major %q: this heapx reads version %d", v, exchange.VersionMajor)
	}
	return rd.end1()
}

// end1 checks that the record's array ends here and nothing follows.
func (rd *reader) end1() error {
	c := &rd.c
	if err := c.expect(']', "']' ending the record"); err != nil {
		return rd.errorf("%v", err)
	}
	c.ws()
	if c.i != len(c.b) {
		return rd.errorf("unexpected %s after the record", c.found())
	}
	return nil
}

// record dispatches one line.
func (rd *reader) record(l []byte) error {
	c := &rd.c
	c.b, c.i = l, 0
	if err := c.expect('[', "'[' starting a record"); err != nil {
		return err
	}
	tag, err := c.str("record type")
	if err != nil {
		return err
	}
	var d *decl
	switch string(tag) {
	case "edge":
		d = rd.edgeD
	case "node":
		d = rd.nodeD
	case "string":
		d = rd.strD
	case "metadata":
		return rd.metadata()
	case "record":
		return rd.declare()
	default:
		// Extension records come in runs (all locations, then all
		// trace nodes): remember the last one instead of a map lookup
		// per line.
		if rd.lastD != nil && string(tag) == rd.lastD.name {
			d = rd.lastD
		} else {
			d = rd.decls[string(tag)]
			rd.lastD = d
		}
	}
	if d == nil {
		if _, ok := known[string(tag)]; ok {
			return fmt.Errorf("%q record before its declaration ([\"record\",%q,[...]])", tag, tag)
		}
		rd.undecl[string(tag)]++
		return nil
	}
	d.count++
	if !d.known {
		return nil
	}
	switch d.name {
	case "edge":
		err = rd.edge(d)
	case "node":
		err = rd.node(d)
	case "string":
		err = rd.str(d)
	case "node_type":
		err = rd.nodeType(d)
	case "edge_type":
		err = rd.edgeType(d)
	case "v8:location":
		err = rd.location(d)
	case "v8:trace_function":
		err = rd.traceFunction(d)
	case "v8:trace_node":
		err = rd.traceNode(d)
	case "v8:sample":
		err = rd.sample(d)
	case "v8:section":
		err = rd.section(d)
	case "heapx:gc_root":
		err = rd.gcRoot(d)
	}
	if err != nil {
		return err
	}
	return rd.end1()
}

// sep consumes the ',' before field k. The message is built only on
// failure: this runs for every field of every line.
func (rd *reader) sep(d *decl, k int) error {
	c := &rd.c
	if c.i < len(c.b) && c.b[c.i] == ',' {
		c.i++
		return nil
	}
	return c.expect(',', fmt.Sprintf("',' before field %q of the %s record (declared with %d fields)", d.fields[k], d.name, len(d.fields)))
}

// skipField skips field k's value and counts it.
func (rd *reader) skipField(d *decl, k int) error {
	d.skipped[k]++
	if err := rd.c.skip(); err != nil {
		return fmt.Errorf("field %q: %v", d.fields[k], err)
	}
	return nil
}

func (rd *reader) metadata() error {
	c := &rd.c
	k, err := c.nextStr("metadata key")
	if err != nil {
		return err
	}
	key := string(k)
	v, err := c.nextStr("metadata value")
	if err != nil {
		return err
	}
	val := string(v)
	if err := rd.end1(); err != nil {
		return err
	}
	count := func(i int) error {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("metadata %s: %q is not a count", key, val)
		}
		if n > rd.bound/8 {
			return rd.src.ShortError("line "+strconv.FormatInt(rd.line, 10), fmt.Errorf("metadata %s: %d records cannot fit in an input of at most %d bytes", key, n, rd.bound))
		}
		rd.counts[i] = n
		return nil
	}
	switch key {
	case exchange.KeyVersion:
		if val != strconv.Itoa(exchange.VersionMajor) {
			return fmt.Errorf("a second version_major, %q, contradicts the first", val)
		}
	case exchange.KeyGenerator:
		rd.meta = append(rd.meta, model.KV{Key: key, Value: val})
	case exchange.KeyRoot:
		id, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return fmt.Errorf("metadata %s: %q is not a node identifier", key, val)
		}
		rd.rootID, rd.haveRoot = id, true
	case exchange.KeyNodeCount:
		return count(0)
	case exchange.KeyEdgeCount:
		return count(1)
	case exchange.KeyStringCount:
		return count(2)
	case exchange.KeyAnalysis:
		if rd.opt.Results != nil {
			rd.opt.Results.Policy = val
		}
	default:
		rd.meta = append(rd.meta, model.KV{Key: key, Value: val})
	}
	return nil
}

func (rd *reader) declare() error {
	c := &rd.c
	n, err := c.nextStr("declared record type")
	if err != nil {
		return err
	}
	name := string(n)
	if err := c.expect(',', "','"); err != nil {
		return err
	}
	fields, err := c.strs("field list")
	if err != nil {
		return err
	}
	if err := rd.end1(); err != nil {
		return err
	}
	if name == "metadata" || name == "record" {
		return fmt.Errorf("%q has a fixed layout and must not be declared", name)
	}
	if _, dup := rd.decls[name]; dup {
		return fmt.Errorf("record type %q declared twice", name)
	}
	d := &decl{name: name, fields: fields, roles: make([]uint8, len(fields)), has: map[uint8]bool{}, skipped: make([]int64, len(fields))}
	if k, ok := known[name]; ok {
		d.known = true
		seen := map[string]bool{}
		for i, f := range fields {
			if seen[f] {
				return fmt.Errorf("record type %q declares field %q twice", name, f)
			}
			seen[f] = true
			d.roles[i] = k.roles[f]
			d.has[d.roles[i]] = true
		}
		for _, f := range k.required {
			if !seen[f] {
				return fmt.Errorf("the declaration of %q lacks the required field %q (has %v)", name, f, fields)
			}
		}
	}
	switch name {
	case "node":
		// Results are all or nothing (docs/format.md, section 4).
		all := d.has[fShallow] && d.has[fRetained] && d.has[fDominator] && d.has[fDistance]
		if !all || rd.opt.Results == nil {
			for i, r := range d.roles {
				if r >= fShallow && r <= fDistance {
					d.roles[i] = fSkip
					if all {
						d.roles[i] = fQuiet // complete, just not asked for
					}
				}
			}
		}
		if all && rd.opt.Results != nil {
			rd.res = rd.opt.Results
		}
		if d.has[fTraceNode] {
			rd.g.TraceNodeID = []uint32{}
		}
		if d.has[fDetach] {
			rd.g.Detachedness = []uint8{}
		}
		rd.nodeD = d
	case "edge":
		d.plain = len(fields) == 4 && fields[0] == "from" && fields[1] == "type" && fields[2] == "name" && fields[3] == "to"
		rd.edgeD = d
	case "string":
		rd.strD = d
	case "v8:location":
		if d.has[fScript] {
			// Declared, so the dump has the column, even with no
			// location records (a V8 snapshot's header still lists it).
			rd.g.LocationScripts = []model.NodeIndex{}
		}
	}
	rd.decls[name] = d
	return nil
}

// nodeTypeOf maps a file's node type index to the model's.
func (rd *reader) nodeTypeOf(v uint64) (uint8, bool) {
	if v < 256 {
		t := rd.smallNT[v]
		return uint8(t - 1), t != 0
	}
	t, ok := rd.nodeTypeIx[v]
	return t, ok
}

func (rd *reader) edgeTypeOf(v uint64) (uint8, bool) {
	if v < 256 {
		t := rd.smallET[v]
		return uint8(t - 1), t != 0
	}
	t, ok := rd.edgeTypeIx[v]
	return t, ok
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

// batch is the size of the batches of id-map inserts and lookups.
const batch = 1 << 14

// resolver returns the id-map goroutine, starting it sized by the file's
// node count when it promised one.
func (rd *reader) resolver() *resolver {
	if rd.rs == nil {
		n := 1 << 16
		if rd.counts[0] > 0 {
			n = int(min(rd.counts[0], 1<<24))
		}
		rd.rs = newResolver(n)
	}
	return rd.rs
}

// flushNodes sends the nodes read since the last flush to the id map.
func (rd *reader) flushNodes() {
	ids := rd.g.Nodes.ID
	if rd.inserted == len(ids) {
		return
	}
	if rd.pipe != nil {
		rd.pipe.thaw()
	}
	r := rd.resolver()
	j := r.job(jobInsert, rd.inserted)
	j.vals = append(j.vals, ids[rd.inserted:]...)
	j.lines = append(j.lines, rd.nodeLines...)
	r.jobs <- j
	rd.inserted = len(ids)
	rd.nodeLines = rd.nodeLines[:0]
}

// flushEdges sends the batched edge endpoints for lookup (after the nodes
// read before them) and collects the lookups done meanwhile.
func (rd *reader) flushEdges() {
	rd.flushNodes()
	r := rd.resolver()
	if rd.toJob != nil && len(rd.toJob.vals) > 0 {
		r.jobs <- rd.toJob
		rd.toJob = nil
	}
	if rd.fromJob != nil && len(rd.fromJob.vals) > 0 {
		r.jobs <- rd.fromJob
		rd.fromJob = nil
	}
	rd.collect()
}

// collect stores finished lookups in the edge columns; endpoints whose
// node has not been read yet are deferred to the end.
func (rd *reader) collect() {
	if rd.rs == nil {
		return
	}
	for _, j := range rd.rs.finished() {
		for k, i := range j.out {
			at, kind := j.first+k, uint8(refEdgeTo)
			if j.kind == jobFrom {
				at, kind = int(j.at[k]), refEdgeFrom
			}
			switch {
			case i < 0:
				rd.pend = append(rd.pend, pending{line: j.lines[k], id: j.vals[k], at: uint32(at), kind: kind})
			case kind == refEdgeTo:
				rd.g.Edges.To[at] = i
			default:
				rd.from[at] = i
			}
		}
		rd.rs.recycle(j)
	}
}

// sync waits for the id map to hold every node read so far, reporting a
// duplicate id. The reader may then use rd.rs.ids until its next job.
func (rd *reader) sync() error {
	rd.flushNodes()
	r := rd.resolver()
	r.barrier()
	if r.dup {
		return rd.errAt(r.dupLine, "node id %d appears twice", r.dupID)
	}
	return nil
}

// nodeRef resolves a node identifier now if its node was read, and defers
// it otherwise. It waits for the id map: for rare references only.
func (rd *reader) nodeRef(id uint64, kind uint8, at int) (int32, error) {
	if err := rd.sync(); err != nil {
		return 0, err
	}
	if i := rd.rs.ids.Get(id); i >= 0 {
		return i, nil
	}
	rd.pend = append(rd.pend, pending{line: rd.line, id: id, at: uint32(at), kind: kind})
	return -1, nil
}

// nodeRec is one node record's values as parsed, before the reader's
// state (type table, string numbering, id map) is applied to them: the
// parallel parse workers fill these, and so does node for one line.
type nodeRec struct {
	id, size, name    uint64
	shallow, retained uint64
	dom               uint64
	typ               uint64 // the file's node type index
	trace             uint32
	dist              int32
	det               uint8
	domNull           bool
	line, off         uint32 // in a parsed block: line and byte offset within it
}

func (rd *reader) node(d *decl) error {
	c := &rd.c
	var r nodeRec
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		var v uint64
		switch role {
		case fID:
			r.id, err = c.uint("node id")
		case fType:
			r.typ, err = c.uint("node type")
			if err == nil {
				if _, ok := rd.nodeTypeOf(r.typ); !ok {
					return fmt.Errorf("node type %d is not declared by a node_type record before this line", r.typ)
				}
			}
		case fName:
			r.name, err = c.uint("node name (a string id)")
		case fSize:
			r.size, err = c.uint("self_size")
		case fTraceNode:
			if !c.null() {
				v, err = c.uintMax("v8:trace_node_id", 1<<32-1)
				r.trace = uint32(v)
			}
		case fDetach:
			if !c.null() {
				v, err = c.uintMax("v8:detachedness", 255)
				r.det = uint8(v)
			}
		case fShallow:
			r.shallow, err = c.uint("heapx:shallow_size")
		case fRetained:
			r.retained, err = c.uint("heapx:retained_size")
		case fDominator:
			if r.domNull = c.null(); !r.domNull {
				r.dom, err = c.uint("heapx:dominator (a node id or null)")
			}
		case fDistance:
			var x int64
			x, err = c.intRange("heapx:distance", -1<<31, 1<<31-1)
			r.dist = int32(x)
		case fQuiet:
			// Results are integers or null: checked as such, which costs
			// a third of the general skip (no token copy, no float parse).
			switch {
			case c.null():
			case c.i < len(c.b) && c.b[c.i] == '-':
				_, err = c.int("a heapx result")
			default:
				_, err = c.uint("a heapx result")
			}
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	// Subtype fields of this node's type follow the declared ones.
	g := rd.g
	typ, _ := rd.nodeTypeOf(r.typ)
	for _, f := range rd.subFields[typ] {
		if err := c.expect(',', fmt.Sprintf("',' before subtype field %q of node type %s", f, g.NodeTypes[typ].QualifiedName())); err != nil {
			return err
		}
		if err := c.skip(); err != nil {
			return fmt.Errorf("subtype field %q: %v", f, err)
		}
		rd.subSkip["node_type "+g.NodeTypes[typ].QualifiedName()+"."+f]++
	}
	return rd.addNode(&r, typ)
}

// addNode appends a parsed node, of model type typ, to the columns.
func (rd *reader) addNode(r *nodeRec, typ uint8) error {
	g := rd.g
	ns := &g.Nodes
	n := len(ns.ID)
	if n >= 1<<31-1 {
		return fmt.Errorf("more than %d nodes", 1<<31-1)
	}
	if n == cap(ns.ID) {
		rd.growNodes(n)
	}
	rd.nodeLines = append(rd.nodeLines, rd.line)
	ns.ID = append(ns.ID, r.id)
	ns.Type = append(ns.Type, typ)
	ns.Name = append(ns.Name, rd.strRef(r.name, refNodeName, n))
	ns.Size = append(ns.Size, r.size)
	if g.TraceNodeID != nil {
		g.TraceNodeID = append(g.TraceNodeID, r.trace)
	}
	if g.Detachedness != nil {
		g.Detachedness = append(g.Detachedness, r.det)
	}
	if res := rd.res; res != nil {
		res.Shallow = append(res.Shallow, r.shallow)
		res.Retained = append(res.Retained, r.retained)
		res.Distance = append(res.Distance, r.dist)
		// Dominators often come before the nodes they name: resolved
		// at the end, from a raw column rather than a pending entry per
		// node.
		if r.domNull {
			res.Dominator = append(res.Dominator, model.NoNode)
		} else {
			res.Dominator = append(res.Dominator, 0)
		}
		rd.domRaw = append(rd.domRaw, r.dom)
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
	g.Nodes.ID = regrow(g.Nodes.ID, c)
	g.Nodes.Type = regrow(g.Nodes.Type, c)
	g.Nodes.Name = regrow(g.Nodes.Name, c)
	g.Nodes.Size = regrow(g.Nodes.Size, c)
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

func (rd *reader) edge(d *decl) error {
	c := &rd.c
	var from, to, nameV uint64
	var typ uint8
	toNull, isSmi := false, false
	if d.plain {
		// The layout heapx writes: four numbers, parsed without the
		// per-field dispatch below.
		var err error
		var t uint64
		if err = rd.sep(d, 0); err == nil {
			from, err = c.uint("edge from (a node id)")
		}
		if err == nil {
			if err = rd.sep(d, 1); err == nil {
				t, err = c.uint("edge type")
			}
		}
		if err == nil {
			if err = rd.sep(d, 2); err == nil {
				nameV, err = c.uint("edge name (a string id or an index)")
			}
		}
		if err == nil {
			if err = rd.sep(d, 3); err == nil && !c.null() {
				to, err = c.uint("edge to (a node id or null)")
			} else if err == nil {
				toNull = true
			}
		}
		if err != nil {
			return err
		}
		var ok bool
		if typ, ok = rd.edgeTypeOf(t); !ok {
			return fmt.Errorf("edge type %d is not declared by an edge_type record before this line", t)
		}
	}
	for k, role := range d.roles {
		if d.plain {
			break
		}
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		switch role {
		case fFrom:
			from, err = c.uint("edge from (a node id)")
		case fType:
			var v uint64
			v, err = c.uint("edge type")
			if err == nil {
				var ok bool
				if typ, ok = rd.edgeTypeOf(v); !ok {
					return fmt.Errorf("edge type %d is not declared by an edge_type record before this line", v)
				}
			}
		case fName:
			nameV, err = c.uint("edge name (a string id or an index)")
		case fTo:
			if toNull = c.null(); !toNull {
				to, err = c.uint("edge to (a node id or null)")
			}
		case fSmi:
			if !c.null() {
				_, err = c.int("edge smi")
				isSmi = true
			}
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	if toNull != isSmi {
		if toNull {
			return fmt.Errorf("edge has neither a target node (to is null) nor a small integer (smi)")
		}
		return fmt.Errorf("edge has both a target node and a small integer (smi)")
	}
	if isSmi {
		// The model has no edges to values that are not nodes.
		rd.smi++
		return nil
	}
	return rd.addEdge(&edgeRec{from: from, name: nameV, to: to}, typ)
}

// addEdge appends a parsed edge, of model type typ, to the columns. Its
// endpoints go to the id map, unless a parse worker looked them up.
func (rd *reader) addEdge(r *edgeRec, typ uint8) error {
	from, nameV, to := r.from, r.name, r.to
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
		for j := int(rd.lastIdx) + 1; j < len(ids); j++ {
			if ids[j] == from {
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

func (rd *reader) str(d *decl) error {
	c := &rd.c
	var id uint64
	var text []byte
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		switch role {
		case fID:
			id, err = c.uint("string id")
		case fText:
			text, err = c.str("string text")
			if err == nil && len(text) > 0 && k+1 < len(d.roles) {
				// text aliases the scratch buffer; a later string
				// field would overwrite it.
				text = append([]byte(nil), text...)
			}
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	s := &rd.g.Strings
	if s.Len() >= 1<<32-1 {
		return fmt.Errorf("more than %d strings", uint32(1<<32-1))
	}
	if rd.strSeq && id != uint64(s.Len()) {
		// Not numbered 0, 1, 2, ...: from here on string references
		// are resolved at the end through a sorted id table.
		rd.strSeq = false
		rd.strIDs = make([]uint64, s.Len())
		for i := range rd.strIDs {
			rd.strIDs[i] = uint64(i)
		}
		// References read so far were taken as direct indexes; defer
		// them too.
		rd.deferDirectStrings()
	}
	if !rd.strSeq {
		rd.strIDs = append(rd.strIDs, id)
	}
	s.Add(text)
	return nil
}

// deferDirectStrings turns the string references read while ids looked
// sequential into pending ones, once the file shows they are not.
func (rd *reader) deferDirectStrings() {
	g := rd.g
	deferred := map[uint64]bool{} // references already pending, by kind<<32|at
	for _, p := range rd.pend {
		if p.kind >= refNodeName {
			deferred[uint64(p.kind)<<32|uint64(p.at)] = true
		}
	}
	add := func(kind uint8, at int, v uint32) {
		if !deferred[uint64(kind)<<32|uint64(at)] {
			rd.pend = append(rd.pend, pending{line: 0, id: uint64(v), at: uint32(at), kind: kind})
		}
	}
	for i, v := range g.Nodes.Name {
		add(refNodeName, i, v)
	}
	for i, v := range g.Edges.Name {
		if !g.EdgeTypes[g.Edges.Type[i]].Indexed {
			add(refEdgeName, i, v)
		}
	}
	if t := g.Trace; t != nil {
		for i, f := range t.Functions {
			add(refFuncName, i, f.Name)
			add(refFuncScript, i, f.ScriptName)
		}
	}
}

func (rd *reader) nodeType(d *decl) error {
	c := &rd.c
	var index uint64
	var name, cat string
	var sub []string
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		switch role {
		case fIndex:
			index, err = c.uintMax("node_type index", 1<<32-1)
		case fName:
			var b []byte
			b, err = c.str("node_type name")
			name = string(b)
		case fCategory:
			var b []byte
			b, err = c.str("node_type category")
			cat = string(b)
		case fFields:
			sub, err = rd.subtypeFields()
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	if _, dup := rd.nodeTypeOf(index); dup {
		return fmt.Errorf("node_type %d declared twice", index)
	}
	g := rd.g
	if len(g.NodeTypes) == 256 {
		return fmt.Errorf("more than 256 node types (heapx's limit)")
	}
	g.NodeTypes = append(g.NodeTypes, exchange.NodeType(name, cat))
	t := uint8(len(g.NodeTypes) - 1)
	if index < 256 {
		rd.smallNT[index] = int16(t) + 1
	} else {
		rd.nodeTypeIx[index] = t
	}
	rd.subFields = append(rd.subFields, sub)
	return nil
}

// subtypeFields parses a node_type's fields: an array of [name, kind]
// pairs. Only the names matter to this reader, which skips the values.
func (rd *reader) subtypeFields() ([]string, error) {
	c := &rd.c
	if c.null() {
		return nil, nil
	}
	if err := c.expect('[', "'[' starting the subtype fields"); err != nil {
		return nil, err
	}
	var names []string
	if c.peek() == ']' {
		c.i++
		return nil, nil
	}
	for {
		if err := c.expect('[', "'[' starting a [name, kind] pair"); err != nil {
			return nil, err
		}
		n, err := c.str("subtype field name")
		if err != nil {
			return nil, err
		}
		names = append(names, string(n))
		if _, err := c.nextStr("subtype field kind"); err != nil {
			return nil, err
		}
		if err := c.expect(']', "']' ending a [name, kind] pair"); err != nil {
			return nil, err
		}
		if c.peek() == ']' {
			c.i++
			return names, nil
		}
		if err := c.expect(',', "',' or ']' in the subtype fields"); err != nil {
			return nil, err
		}
	}
}

func (rd *reader) edgeType(d *decl) error {
	c := &rd.c
	var index uint64
	var name, cat, strength, kind string
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		var b []byte
		switch role {
		case fIndex:
			index, err = c.uintMax("edge_type index", 1<<32-1)
		case fName:
			b, err = c.str("edge_type name")
			name = string(b)
		case fCategory:
			b, err = c.str("edge_type category")
			cat = string(b)
		case fStrength:
			b, err = c.str("edge_type strength")
			strength = string(b)
		case fNameKind:
			b, err = c.str("edge_type name_kind")
			kind = string(b)
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	if kind != "string" && kind != "index" {
		return fmt.Errorf("edge_type name_kind %q is neither \"string\" nor \"index\"", kind)
	}
	if _, dup := rd.edgeTypeOf(index); dup {
		return fmt.Errorf("edge_type %d declared twice", index)
	}
	g := rd.g
	if len(g.EdgeTypes) == 256 {
		return fmt.Errorf("more than 256 edge types (heapx's limit)")
	}
	g.EdgeTypes = append(g.EdgeTypes, exchange.EdgeType(name, cat, strength, kind))
	t := uint8(len(g.EdgeTypes) - 1)
	if index < 256 {
		rd.smallET[index] = int16(t) + 1
	} else {
		rd.edgeTypeIx[index] = t
	}
	return nil
}

func (rd *reader) location(d *decl) error {
	c := &rd.c
	var id, script uint64
	var l model.Location
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		var v uint64
		switch role {
		case fNode:
			id, err = c.uint("location node")
		case fScript:
			if c.null() {
				rd.scriptNull++
			} else {
				script, err = c.uint("location script (a node id or null)")
			}
		case fScriptID:
			v, err = c.uintMax("script_id", 1<<32-1)
			l.ScriptID = uint32(v)
		case fLine:
			v, err = c.uintMax("line", 1<<32-1)
			l.Line = uint32(v)
		case fColumn:
			v, err = c.uintMax("column", 1<<32-1)
			l.Column = uint32(v)
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	// Resolved at the end, in one pass: there is one per object.
	g := rd.g
	rd.locRaw = append(model.Grow(rd.locRaw, 1), id)
	rd.locLine = append(model.Grow(rd.locLine, 1), rd.line)
	if g.LocationScripts != nil {
		rd.scriptRaw = append(model.Grow(rd.scriptRaw, 1), script)
	}
	g.Locations = model.Grow(g.Locations, 1)
	g.Locations = append(g.Locations, l)
	return nil
}

// resolveScripts turns the locations' script node ids into
// g.LocationScripts. The column is all or nothing, like results
// (docs/format.md, 2.7): when some records have a null script, it is
// dropped and its values reported as skipped.
func (rd *reader) resolveScripts() error {
	g := rd.g
	if g.LocationScripts == nil {
		return nil
	}
	if rd.scriptNull > 0 {
		g.LocationScripts = nil
		d := rd.decls["v8:location"]
		for k, r := range d.roles {
			if r == fScript {
				d.skipped[k] += int64(len(rd.scriptRaw)) - rd.scriptNull
			}
		}
		rd.scriptRaw = nil
		return nil
	}
	ids := rd.rs.ids
	ss := model.Alloc[model.NodeIndex](len(rd.scriptRaw))
	for k, id := range rd.scriptRaw {
		i := ids.Get(id)
		if i < 0 {
			return rd.errAt(rd.locLine[k], "a v8:location's script refers to node id %d, which no node record has", id)
		}
		ss[k] = i
	}
	g.LocationScripts, rd.scriptRaw = ss, nil
	return nil
}

func (rd *reader) trace() *model.AllocationTrace {
	if rd.g.Trace == nil {
		rd.g.Trace = &model.AllocationTrace{}
	}
	return rd.g.Trace
}

// byIndex puts the entries of a table that the file may list in any
// order (v8:trace_function, v8:trace_node) in the order of their index
// fields, which must be 0, 1, ..., n-1. Entries are kept in file order
// while reading, so memory follows the records actually there, whatever
// index a hostile line claims.
func byIndex[T any](s []T, idx []uint64) ([]T, error) {
	sorted := true
	for i, x := range idx {
		if x != uint64(i) {
			sorted = false
			break
		}
	}
	if sorted {
		return s, nil
	}
	out := make([]T, len(s))
	seen := make([]bool, len(s))
	for i, x := range idx {
		if x >= uint64(len(s)) {
			return nil, fmt.Errorf("index %d, but there are only %d records (indexes run from 0)", x, len(s))
		}
		if seen[x] {
			return nil, fmt.Errorf("index %d appears twice", x)
		}
		seen[x] = true
		out[x] = s[i]
	}
	return out, nil
}

func (rd *reader) traceFunction(d *decl) error {
	c := &rd.c
	var f model.TraceFunction
	f.Line, f.Column = -1, -1
	var index uint64
	var name, script uint64
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		var v uint64
		var x int64
		switch role {
		case fIndex:
			index, err = c.uint("trace function index")
		case fFunctionID:
			f.ID, err = c.uint("function_id")
		case fName:
			name, err = c.uint("trace function name (a string id)")
		case fScriptName:
			script, err = c.uint("script_name (a string id)")
		case fScriptID:
			v, err = c.uintMax("script_id", 1<<32-1)
			f.ScriptID = uint32(v)
		case fLine:
			x, err = c.intRange("line", -1<<31, 1<<31-1)
			f.Line = int32(x)
		case fColumn:
			x, err = c.intRange("column", -1<<31, 1<<31-1)
			f.Column = int32(x)
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	t := rd.trace()
	at := len(t.Functions)
	f.Name = rd.strRef(name, refFuncName, at)
	f.ScriptName = rd.strRef(script, refFuncScript, at)
	t.Functions = append(t.Functions, f)
	rd.funcIdx = append(rd.funcIdx, index)
	return nil
}

func (rd *reader) traceNode(d *decl) error {
	c := &rd.c
	var n model.TraceNode
	var index uint64
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		var v uint64
		var x int64
		switch role {
		case fIndex:
			index, err = c.uintMax("trace node index", 1<<31-1)
		case fParent:
			x, err = c.intRange("parent", -1, 1<<31-1)
			n.Parent = int32(x)
		case fID:
			v, err = c.uintMax("trace node id", 1<<32-1)
			n.ID = uint32(v)
		case fFunctionIndex:
			v, err = c.uintMax("function_index", 1<<32-1)
			n.Function = uint32(v)
		case fCount:
			n.Count, err = c.uint("count")
		case fSize:
			n.Size, err = c.uint("size")
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	if int64(n.Parent) >= int64(index) {
		return fmt.Errorf("v8:trace_node %d: parent %d does not come before it (the tree is in preorder)", index, n.Parent)
	}
	t := rd.trace()
	t.Tree = append(t.Tree, n)
	rd.treeIdx = append(rd.treeIdx, index)
	return nil
}

func (rd *reader) sample(d *decl) error {
	c := &rd.c
	var s model.TraceSample
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		switch role {
		case fTimestamp:
			s.TimestampMicros, err = c.uint("timestamp_us")
		case fLastID:
			s.LastAssignedID, err = c.uint("last_assigned_id")
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	t := rd.trace()
	t.Samples = append(t.Samples, s)
	return nil
}

func (rd *reader) section(d *decl) error {
	c := &rd.c
	var s model.Section
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		switch role {
		case fName:
			var b []byte
			b, err = c.str("section name")
			s.Name = string(b)
		case fFields:
			s.Fields, err = c.strs("section fields")
		case fValues:
			s.Values, err = rd.int64s()
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	rd.g.Sections = append(rd.g.Sections, s)
	return nil
}

func (rd *reader) int64s() ([]int64, error) {
	c := &rd.c
	if err := c.expect('[', "'[' starting the section's values"); err != nil {
		return nil, err
	}
	vals := []int64{}
	if c.peek() == ']' {
		c.i++
		return vals, nil
	}
	for {
		v, err := c.int("section value")
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		if c.peek() == ']' {
			c.i++
			return vals, nil
		}
		if err := c.expect(',', "',' or ']' in the section's values"); err != nil {
			return nil, err
		}
	}
}

func (rd *reader) gcRoot(d *decl) error {
	c := &rd.c
	var id uint64
	var kind string
	for k, role := range d.roles {
		if err := rd.sep(d, k); err != nil {
			return err
		}
		var err error
		switch role {
		case fNode:
			id, err = c.uint("gc root node")
		case fKind:
			var b []byte
			b, err = c.str("gc root kind")
			kind = string(b)
		default:
			err = rd.skipField(d, k)
		}
		if err != nil {
			return err
		}
	}
	g := rd.g
	kid, ok := rd.rootKinds[kind]
	if !ok {
		if len(g.RootKinds) == 1<<16 {
			return fmt.Errorf("more than %d gc root kinds", 1<<16)
		}
		kid = uint16(len(g.RootKinds))
		g.RootKinds = append(g.RootKinds, kind)
		rd.rootKinds[kind] = kid
	}
	node, err := rd.nodeRef(id, refGCRoot, len(g.GCRoots))
	if err != nil {
		return err
	}
	g.GCRoots = append(g.GCRoots, model.GCRoot{Node: node, Kind: kid})
	return nil
}

// finish resolves deferred references, checks the promised counts, builds
// the CSR edge offsets and the metadata, and validates the graph.
func (rd *reader) finish() error {
	g := rd.g
	n := len(g.Nodes.ID)
	check := func(what string, i int, have int) error {
		switch {
		case rd.counts[i] < 0 || rd.counts[i] == int64(have):
			return nil
		case rd.counts[i] > int64(have):
			// The file ends where a line would start.
			rd.line++
			return rd.inputError()
		}
		return rd.errAt(0, "the file promises %d %s records (metadata heapx:%s_count) but holds %d", rd.counts[i], what, what, have)
	}
	// A node read twice is the error to report, not the count it makes
	// wrong.
	if err := rd.sync(); err != nil {
		return err
	}
	if err := check("node", 0, n); err != nil {
		return err
	}
	if err := check("edge", 1, len(g.Edges.To)+int(rd.smi)); err != nil {
		return err
	}
	if err := check("string", 2, g.Strings.Len()); err != nil {
		return err
	}
	rd.flushEdges()
	if err := rd.sync(); err != nil {
		return err
	}
	rd.collect()
	ids := rd.rs.ids
	for k, id := range rd.locRaw {
		i := ids.Get(id)
		if i < 0 {
			return rd.errAt(rd.locLine[k], "%s refers to node id %d, which no node record has", refWhat(refLocation), id)
		}
		g.Locations[k].Node = i
	}
	if err := rd.resolveScripts(); err != nil {
		return err
	}
	rd.locRaw, rd.locLine = nil, nil
	if err := rd.resolveStrings(); err != nil {
		return err
	}
	for _, p := range rd.pend {
		if p.kind >= refNodeName {
			continue
		}
		i := ids.Get(p.id)
		if i < 0 {
			return rd.errAt(p.line, "%s refers to node id %d, which no node record has", refWhat(p.kind), p.id)
		}
		switch p.kind {
		case refEdgeFrom:
			rd.from[p.at] = i
		case refEdgeTo:
			g.Edges.To[p.at] = i
		case refLocation:
			g.Locations[p.at].Node = i
		case refGCRoot:
			g.GCRoots[p.at].Node = i
		}
	}
	rd.pend = nil
	if r := rd.res; r != nil {
		if i := resolveDominators(ids, r.Dominator, rd.domRaw); i >= 0 {
			return rd.errAt(0, "node %d (id %d): heapx:dominator names node id %d, which no node record has", i, g.Nodes.ID[i], rd.domRaw[i])
		}
		rd.domRaw = nil
	}
	if rd.haveRoot {
		i := ids.Get(rd.rootID)
		if i < 0 {
			return rd.errAt(0, "metadata heapx:root names node id %d, which no node record has", rd.rootID)
		}
		g.Root = i
	}
	if t := g.Trace; t != nil {
		// After resolveStrings: pending string references name
		// functions by file position.
		var err error
		if t.Functions, err = byIndex(t.Functions, rd.funcIdx); err != nil {
			return rd.errAt(0, "v8:trace_function records: %v", err)
		}
		if t.Tree, err = byIndex(t.Tree, rd.treeIdx); err != nil {
			return rd.errAt(0, "v8:trace_node records: %v", err)
		}
		for i, nd := range t.Tree {
			if int(nd.Function) >= len(t.Functions) {
				return rd.errAt(0, "v8:trace_node %d: function_index %d is not one of the %d v8:trace_function records", i, nd.Function, len(t.Functions))
			}
		}
	}
	rd.buildCSR()
	if g.TraceNodeID != nil && len(g.TraceNodeID) == 0 && n > 0 {
		g.TraceNodeID = nil
	}
	if r := rd.res; r != nil {
		if err := r.Check(g); err != nil {
			return rd.errAt(0, "%v", err)
		}
	}

	meta := []model.KV{{Key: "format", Value: FormatName}}
	meta = append(meta, rd.meta...)
	meta = append(meta, rd.skippedMeta()...)
	g.Meta = meta
	if err := g.Validate(); err != nil {
		return rd.errAt(0, "%v", err)
	}
	return nil
}

// resolveDominators turns the nodes' dominator ids into indexes, a cache
// miss each, on every core: the id map is complete and only read. It
// returns the first node whose dominator is no node, or -1.
func resolveDominators(ids *model.IDMap, dom []model.NodeIndex, raw []uint64) int {
	parts := runtime.GOMAXPROCS(0)
	bad := make([]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(dom)*p/parts, len(dom)*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			bad[p] = -1
			for i := lo; i < hi; i++ {
				if dom[i] == model.NoNode {
					continue
				}
				if dom[i] = ids.Get(raw[i]); dom[i] < 0 {
					bad[p] = i
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return i
		}
	}
	return -1
}

func refWhat(kind uint8) string {
	switch kind {
	case refEdgeFrom:
		return "an edge's from"
	case refEdgeTo:
		return "an edge's to"
	case refLocation:
		return "a v8:location"
	case refGCRoot:
		return "a heapx:gc_root"
	case refDominator:
		return "a node's heapx:dominator"
	}
	return "a reference"
}

// resolveStrings maps deferred string references through the sorted
// string ids, when the file's strings were not numbered 0, 1, 2, ...; and
// checks that every direct reference is in range.
func (rd *reader) resolveStrings() error {
	g := rd.g
	ns := uint64(g.Strings.Len())
	if rd.strSeq {
		// Direct references: the model's Validate checks node and edge
		// names; trace function names are checked here.
		for _, p := range rd.pend {
			if p.kind >= refNodeName {
				return rd.errAt(p.line, "string id %d is not one of the %d string records", p.id, ns)
			}
		}
		if t := g.Trace; t != nil {
			for i, f := range t.Functions {
				if uint64(f.Name) >= ns || uint64(f.ScriptName) >= ns {
					return rd.errAt(0, "v8:trace_function %d: name %d or script_name %d is not one of the %d string records", i, f.Name, f.ScriptName, ns)
				}
			}
		}
		return nil
	}
	order := make([]uint32, len(rd.strIDs))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		x, y := rd.strIDs[a], rd.strIDs[b]
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for i := 1; i < len(order); i++ {
		if rd.strIDs[order[i]] == rd.strIDs[order[i-1]] {
			return rd.errAt(0, "string id %d appears twice", rd.strIDs[order[i]])
		}
	}
	lookup := func(id uint64) (uint32, bool) {
		k, ok := slices.BinarySearchFunc(order, id, func(a uint32, id uint64) int {
			switch x := rd.strIDs[a]; {
			case x < id:
				return -1
			case x > id:
				return 1
			}
			return 0
		})
		if !ok {
			return 0, false
		}
		return order[k], true
	}
	for _, p := range rd.pend {
		if p.kind < refNodeName {
			continue
		}
		s, ok := lookup(p.id)
		if !ok {
			return rd.errAt(p.line, "string id %d is not one of the string records", p.id)
		}
		switch p.kind {
		case refNodeName:
			g.Nodes.Name[p.at] = s
		case refEdgeName:
			g.Edges.Name[p.at] = s
		case refFuncName:
			g.Trace.Functions[p.at].Name = s
		case refFuncScript:
			g.Trace.Functions[p.at].ScriptName = s
		}
	}
	return nil
}

// buildCSR turns the edges, read in file order with their sources, into
// the model's CSR layout. heapx writes edges grouped by source in node
// order, which needs only the offsets; other orders get a stable counting
// sort, which keeps each node's edges in file order (docs/format.md, 1.8).
func (rd *reader) buildCSR() {
	g := rd.g
	n := len(g.Nodes.ID)
	fe := model.Alloc[uint32](n + 1)
	sorted := true
	for i, f := range rd.from {
		fe[f+1]++
		if i > 0 && f < rd.from[i-1] {
			sorted = false
		}
	}
	for i := 1; i <= n; i++ {
		fe[i] += fe[i-1]
	}
	g.Nodes.FirstEdge = fe
	if !sorted {
		m := len(rd.from)
		next := make([]uint32, n)
		copy(next, fe[:n])
		typ, name, to := model.Alloc[uint8](m), model.Alloc[uint32](m), model.Alloc[model.NodeIndex](m)
		for e, f := range rd.from {
			p := next[f]
			next[f]++
			typ[p], name[p], to[p] = g.Edges.Type[e], g.Edges.Name[e], g.Edges.To[e]
		}
		g.Edges.Type, g.Edges.Name, g.Edges.To = typ, name, to
	}
	rd.from = nil
}

// skippedMeta reports what was skipped (docs/format.md, 7.2).
func (rd *reader) skippedMeta() []model.KV {
	var out []model.KV
	var recs []string
	for t, n := range rd.undecl {
		recs = append(recs, fmt.Sprintf("%s=%d", t, n))
	}
	for _, d := range rd.decls {
		if !d.known && d.count > 0 {
			recs = append(recs, fmt.Sprintf("%s=%d", d.name, d.count))
		}
	}
	if rd.smi > 0 {
		recs = append(recs, fmt.Sprintf("edge(smi)=%d", rd.smi))
	}
	slices.Sort(recs)
	for _, r := range recs {
		out = append(out, model.KV{Key: exchange.KeySkippedRecords, Value: r})
	}
	var fields []string
	for _, d := range rd.decls {
		for k, n := range d.skipped {
			if n > 0 {
				fields = append(fields, fmt.Sprintf("%s.%s=%d", d.name, d.fields[k], n))
			}
		}
	}
	for f, n := range rd.subSkip {
		fields = append(fields, fmt.Sprintf("%s=%d", f, n))
	}
	slices.Sort(fields)
	for _, f := range fields {
		out = append(out, model.KV{Key: exchange.KeySkippedFields, Value: f})
	}
	return out
}
