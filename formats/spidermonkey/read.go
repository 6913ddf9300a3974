package spidermonkey

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
)

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with the number of input
	// bytes consumed and the input size (-1 if unknown).
	Progress func(done, total int64)
}

// ReadFile reads the core dump at path, gzip-compressed (as Firefox writes
// it) or not.
func ReadFile(path string, opt ReadOptions) (*model.Graph, error) {
	return input.ReadFile(path, opt.Progress, opt.read)
}

// Read reads a core dump from r; name is used in error messages.
func Read(r io.Reader, name string, opt ReadOptions) (*model.Graph, error) {
	return input.Read(r, -1, name, opt.Progress, opt.read)
}

// blockSize is the input window; a bigger message grows it.
const blockSize = 256 << 10

// maxMessage bounds a message's length: Gecko reads lengths with protobuf's
// ReadVarint32, and protobuf messages are limited to 2 GB.
const maxMessage = math.MaxInt32

// streamChunk is the longest Node message decoded from one buffer; a
// longer one is decoded a window of fields at a time (streamNode), so a
// length that lies costs nothing until the bytes arrive, and then no more
// than the window.
const streamChunk = blockSize

// maxField bounds a Metadata message and any one field of a Node message
// (a string, an edge, an allocation stack), which is what the reader
// buffers whole. Real ones are a few hundred bytes: type and class names,
// property names, script URLs, stacks of a few dozen frames.
const maxField = 64 << 20

// Bytes of input per node and per edge, measured on Firefox's dumps (about
// 7 per node and 2.5 per edge compressed, 70 and 23 plain), for sizing the
// columns before the data arrives; they grow past the estimate as needed.
const (
	gzipBytesPerNode  = 6
	gzipBytesPerEdge  = 2
	plainBytesPerNode = 60
	plainBytesPerEdge = 20
	unknownSizeCap    = 1 << 16
	// idMapShare is the percentage of the estimated node count the id
	// table is sized for: the estimates are made high, for columns.
	idMapShare = 75
)

// maxOwnTypes is how many node types get a table entry of their own; the
// rest of the 256 entries are kept for the catch-all types, one per
// category the reader assigns.
const maxOwnTypes = 256 - 11

type reader struct {
	name string
	src  *input.Reader

	// The input window: buf[pos:end] is unread, buf[0] is at stream
	// offset base.
	buf      []byte
	pos, end int
	base     int64
	eof      bool // the input ended, or failed (src keeps why)

	g *model.Graph
	// two and one are Gecko's string tables, as StringIDs in g.Strings.
	// Gecko de-duplicates each table, so strings are added as they come,
	// without an interner of their own (a page's dump has a hundred
	// thousand distinct edge names); a text in both tables is stored
	// twice, which nothing keyed by StringID minds (classes are keyed by
	// text).
	two, one []model.StringID
	utf8     []byte // scratch for string conversion
	empty    model.StringID
	function model.StringID // "Function", once seen; noString before

	ids *model.IDMap
	// newIDs are the ids of the last nodes read, not yet in ids (see
	// addIDs), with their messages' offsets for the duplicate error.
	newIDs []pendingID
	refs   []uint64 // per edge, the referent's id, resolved by resolve

	types    map[typeKey]uint8
	lastKey  typeKey
	lastType uint8
	haveLast bool
	folded   map[model.StringID]bool

	frames  map[uint64]int32 // frame id -> index in g.Trace.Tree
	pending []pendingFrame

	timestamp    uint64
	hasTimestamp bool
}

// noString marks a StringID not (yet) known.
const noString = math.MaxUint32

// typeKey is what a node's type depends on.
type typeKey struct {
	name     model.StringID
	coarse   uint8
	function bool
}

// pendingID is a node id waiting to go into the id table.
type pendingID struct {
	id  uint64
	off int64
}

// idBatch is how many node ids are inserted into the id table at a time.
// Each insert misses the cache (the table is spread over tens of MB);
// inserted back to back, the misses overlap, where between the parsing of
// two nodes they did not: measured 35 against 90 ms for the medium dump's
// 914k ids.
const idBatch = 4096

// pendingFrame is a stack frame whose parent chain is still being read.
type pendingFrame struct {
	fn  model.TraceFunction
	off int64
}

func (opt ReadOptions) read(in *input.Reader) (*model.Graph, error) {
	size := in.Size()
	// Small inputs get small buffers: a fuzzer or a test reading a few
	// kilobytes should not allocate a block per call.
	bs := blockSize
	if size >= 0 && size < blockSize {
		bs = max(int(size), 4096)
	}
	r := &reader{name: in.Name(), src: in, buf: make([]byte, bs), g: &model.Graph{},
		types: map[typeKey]uint8{}, function: noString}
	nodes, edges := unknownSizeCap, unknownSizeCap
	switch {
	case size >= 0 && in.Gzip():
		nodes, edges = int(size/gzipBytesPerNode), int(size/gzipBytesPerEdge)
	case size >= 0:
		nodes, edges = int(size/plainBytesPerNode), int(size/plainBytesPerEdge)
	}
	r.grow(nodes+1, edges)
	// Unlike the columns, whose capacity past the data is never touched,
	// the hash table is touched all over: it is sized for the nodes
	// expected, not for an overestimate (the medium test dump needs 2M
	// slots, 32 MB; an estimate 20% higher would double that), and grows
	// if there are more.
	r.ids = model.NewIDMap(nodes * idMapShare / 100)
	r.empty = r.g.Strings.Add(nil)
	if err := r.readAll(); err != nil {
		return nil, err
	}
	return r.g, nil
}

// grow sizes the node and edge columns for the expected counts.
func (r *reader) grow(nodes, edges int) {
	n := &r.g.Nodes
	n.Type = model.Alloc[uint8](nodes)[:0]
	n.Name = model.Alloc[model.StringID](nodes)[:0]
	n.ID, n.Size = model.Uint64s{}, model.Uint64s{}
	n.ID.Grow(nodes)
	n.Size.Grow(nodes)
	n.FirstEdge = model.Alloc[uint32](nodes + 1)[:0]
	r.g.Edges.Name = model.Alloc[uint32](edges)[:0]
	r.refs = model.Alloc[uint64](edges)[:0]
}

// push appends v to s, growing it with model.Grow (huge pages, no garbage
// from append's own growth policy).
func push[T any](s []T, v T) []T {
	return append(model.Grow(s, 1), v)
}

func (r *reader) errAt(section string, off int64, format string, args ...any) error {
	return &formats.FormatError{File: r.name, Section: section, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// binaryMaxVarint is the longest varint (10 bytes for 64 bits).
const binaryMaxVarint = 10

func (r *reader) readAll() error {
	meta, off, err := r.next("metadata")
	if err != nil {
		return err
	}
	if meta == nil {
		return r.errAt("metadata", 0, "empty input: no Metadata message")
	}
	if err := r.metadata(meta, off); err != nil {
		return err
	}
	for {
		n, k, off, ok, err := r.length("node")
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		if n > streamChunk {
			err = r.streamNode(n, k, off)
		} else {
			var msg []byte
			if msg, err = r.take("node", n, k, off); err == nil {
				err = r.node(msg, off)
			}
		}
		if err != nil {
			return err
		}
	}
	if r.g.Nodes.ID.Len() == 0 {
		return r.errAt("node", r.base+int64(r.end), "no root node: the input ends after the Metadata message")
	}
	if err := r.addIDs(); err != nil {
		return err
	}
	return r.finish()
}

func (r *reader) metadata(b []byte, off int64) error {
	for p := 0; p < len(b); {
		num, typ, k := protowire.ConsumeTag(b[p:])
		if k < 0 {
			return r.wireErr("metadata", off+int64(p), k)
		}
		p += k
		if num == metaTimeStamp && typ == protowire.VarintType {
			r.timestamp, k = protowire.ConsumeVarint(b[p:])
			r.hasTimestamp = true
		} else {
			k = protowire.ConsumeFieldValue(num, typ, b[p:])
		}
		if k < 0 {
			return r.wireErr("metadata", off+int64(p), k)
		}
		p += k
	}
	return nil
}

// node decodes one Node message into the columns.
func (r *reader) node(b []byte, off int64) error {
	m := r.newNodeMsg()
	if err := r.nodeFields(&m, b, off); err != nil {
		return err
	}
	return r.addNode(&m, off)
}

// nodeMsg is what a Node message says, as its fields are decoded.
type nodeMsg struct {
	id, size, coarse  uint64
	haveID, haveSize  bool
	typeName          model.StringID
	class, desc, file model.StringID
	stack             int32
	firstEdge         int
}

func (r *reader) newNodeMsg() nodeMsg {
	return nodeMsg{typeName: noString, class: noString, desc: noString, file: noString, stack: -1, firstEdge: len(r.refs)}
}

// streamNode decodes a Node message of n bytes at stream offset off (its
// length took k bytes) a window of whole fields at a time, never holding
// more of it than streamChunk or its longest field: a message's length is
// only what the file claims, and a big one is a big node's many edges. A
// field longer than maxField is an error, as no sane dump has one.
func (r *reader) streamNode(n, k int, off int64) error {
	const section = "node"
	r.pos += k
	m := r.newNodeMsg()
	at := off
	for left := n; left > 0; {
		// The window, short at the end of the input: what it holds is
		// decoded before the input's end is an error, which then says
		// what the message was in the middle of.
		want := min(left, streamChunk)
		r.fill(want)
		b := r.buf[r.pos : r.pos+min(want, r.end-r.pos)]
		whole := len(b)
		if len(b) < left {
			whole = wholeFields(b)
		}
		if whole == 0 {
			// The first field does not fit the window.
			size, ok := fieldSize(b)
			switch {
			case !ok && len(b) < want:
				return r.src.EndError(section)
			case !ok:
				// Malformed: decoding says how.
				if err := r.nodeFields(&m, b, at); err != nil {
					return err
				}
				return r.errAt(section, at, "malformed protobuf field")
			case size > left:
				return r.errAt(section, at, "field of %d bytes runs past the end of its message (%d bytes left)", size, left)
			case size > maxField:
				return r.errAt(section, at, "field of %d bytes, more than the %d MB a node's field can need", size, maxField>>20)
			}
			if !r.fill(size) {
				return r.src.EndError(section)
			}
			b, whole = r.buf[r.pos:r.pos+size], size
		}
		if err := r.nodeFields(&m, b[:whole], at); err != nil {
			return err
		}
		r.pos += whole
		at += int64(whole)
		left -= whole
	}
	return r.addNode(&m, off)
}

// wholeFields returns the length of the longest prefix of b made of whole
// fields.
func wholeFields(b []byte) int {
	p := 0
	for p < len(b) {
		num, typ, k := protowire.ConsumeTag(b[p:])
		if k < 0 {
			return p
		}
		v := protowire.ConsumeFieldValue(num, typ, b[p+k:])
		if v < 0 {
			return p
		}
		p += k + v
	}
	return p
}

// fieldSize returns the length of the length-delimited field that b starts
// with, tag included; ok is false for anything else (a field of another
// type is short, so a window holds it whole unless it is malformed).
func fieldSize(b []byte) (int, bool) {
	_, typ, k := protowire.ConsumeTag(b)
	if k < 0 || typ != protowire.BytesType {
		return 0, false
	}
	v, n := protowire.ConsumeVarint(b[k:])
	if n < 0 || v > maxMessage {
		return 0, false
	}
	return k + n + int(v), true
}

// nodeFields decodes the fields of (a piece of) a Node message at stream
// offset off into m, adding its edges to the columns.
func (r *reader) nodeFields(m *nodeMsg, b []byte, off int64) error {
	const section = "node"
	var (
		err error
		v   uint64
		s   []byte
		k   int
		typ protowire.Type
		num protowire.Number
	)
	for p := 0; p < len(b); p += k {
		num, typ, k = tag(b[p:])
		if k < 0 {
			return r.wireErr(section, off+int64(p), k)
		}
		p += k
		at := off + int64(p)
		switch typ {
		case protowire.VarintType:
			v, k = varint(b[p:])
			if k < 0 {
				return r.wireErr(section, at, k)
			}
			switch num {
			case nodeID:
				m.id, m.haveID = v, true
			case nodeSize:
				m.size, m.haveSize = v, true
			case nodeCoarseType:
				m.coarse = v
			case nodeTypeNameRef:
				m.typeName, err = r.ref(r.two, v, "two-byte", section, at)
			case nodeClassNameRef:
				m.class, err = r.ref(r.one, v, "one-byte", section, at)
			case nodeScriptFilenameRef:
				m.file, err = r.ref(r.one, v, "one-byte", section, at)
			case nodeDescriptiveRef:
				m.desc, err = r.ref(r.two, v, "two-byte", section, at)
			}
		case protowire.BytesType:
			s, k = protowire.ConsumeBytes(b[p:])
			if k < 0 {
				return r.wireErr(section, at, k)
			}
			at += int64(k - len(s))
			switch num {
			case nodeEdges:
				err = r.edge(s, at)
			case nodeTypeName:
				m.typeName, err = r.addTwo(s, section, at)
			case nodeClassName:
				m.class = r.addOne(s)
			case nodeScriptFilename:
				m.file = r.addOne(s)
			case nodeDescriptive:
				m.desc, err = r.addTwo(s, section, at)
			case nodeAllocationStack:
				m.stack, err = r.frame(s, at)
			}
		default:
			k = protowire.ConsumeFieldValue(num, typ, b[p:])
			if k < 0 {
				return r.wireErr(section, at, k)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addNode checks a whole Node message and adds the node.
func (r *reader) addNode(m *nodeMsg, off int64) error {
	const section = "node"
	switch {
	case !m.haveID:
		return r.errAt(section, off, "node without an id")
	case m.typeName == noString:
		return r.errAt(section, off, "node %d without a typeName", m.id)
	case !m.haveSize:
		return r.errAt(section, off, "node %d without a size", m.id)
	case m.coarse >= numCoarse:
		return r.errAt(section, off, "node %d has coarse type %d, not one of SpiderMonkey's %d", m.id, m.coarse, numCoarse)
	}
	idx := int32(r.g.Nodes.ID.Len())
	if idx == math.MaxInt32 {
		return r.errAt(section, off, "more than %d nodes", math.MaxInt32)
	}
	t, folded := r.nodeType(m.typeName, uint8(m.coarse), m.class != noString && m.class == r.function)
	name := m.typeName
	switch {
	case folded:
	case m.class != noString:
		name = m.class
	case m.desc != noString:
		name = m.desc
	case m.file != noString:
		name = m.file
	}
	n := &r.g.Nodes
	n.ID.Append(m.id)
	n.Size.Append(m.size)
	n.Type = push(n.Type, t)
	n.Name = push(n.Name, name)
	n.FirstEdge = push(n.FirstEdge, uint32(m.firstEdge))
	r.newIDs = append(r.newIDs, pendingID{m.id, off})
	if len(r.newIDs) == idBatch {
		if err := r.addIDs(); err != nil {
			return err
		}
	}
	if len(r.refs) > math.MaxUint32 {
		return r.errAt(section, off, "more than %d edges", uint32(math.MaxUint32))
	}
	if m.stack >= 0 || r.g.TraceNodeID != nil {
		r.allocatedAt(m.stack, m.size)
	}
	return nil
}

// addIDs inserts the pending node ids into the id table, failing on a
// duplicate.
func (r *reader) addIDs() error {
	base := int32(r.g.Nodes.ID.Len() - len(r.newIDs))
	for i, p := range r.newIDs {
		if !r.ids.Insert(p.id, base+int32(i)) {
			return r.errAt("node", p.off, "duplicate node id %d", p.id)
		}
	}
	r.newIDs = r.newIDs[:0]
	return nil
}

// allocatedAt records the allocation frame of the node just added (-1 for
// none); the column starts with the first node that has one.
func (r *reader) allocatedAt(frame int32, size uint64) {
	g := r.g
	if g.TraceNodeID == nil {
		g.TraceNodeID = model.Alloc[uint32](g.Nodes.ID.Len() - 1)
	}
	g.TraceNodeID = push(g.TraceNodeID, uint32(frame+1))
	if frame >= 0 {
		t := &g.Trace.Tree[frame]
		t.Count++
		t.Size += size
	}
}

// nodeType returns the type table entry for a node, adding it on first
// sight, and whether its type name was folded into a catch-all.
func (r *reader) nodeType(name model.StringID, coarse uint8, function bool) (uint8, bool) {
	key := typeKey{name, coarse, function}
	if r.haveLast && key == r.lastKey {
		return r.lastType, r.folded[name]
	}
	t, ok := r.types[key]
	if !ok {
		tn := r.g.Strings.At(name)
		nt := model.NodeType{Namespace: Namespace, Name: tn, Category: category(tn, uint64(coarse), function)}
		if len(r.g.NodeTypes) >= maxOwnTypes {
			if r.folded == nil {
				r.folded = map[model.StringID]bool{}
			}
			if !r.folded[name] {
				r.folded[name] = true
				r.g.Meta = append(r.g.Meta, model.KV{Key: MetaFoldedType, Value: tn})
			}
			nt.Name = FoldedTypeName
		}
		// Cannot fail: maxOwnTypes leaves an entry for each category's
		// catch-all.
		t, _ = r.g.AddNodeType(nt)
		r.types[key] = t
	}
	r.lastKey, r.lastType, r.haveLast = key, t, true
	return t, r.folded[name]
}

// edge decodes one Edge message of the current node.
func (r *reader) edge(b []byte, off int64) error {
	const section = "edge"
	var (
		referent uint64
		have     bool
		name     = r.empty
		err      error
	)
	for p, k := 0, 0; p < len(b); p += k {
		num, typ, k0 := tag(b[p:])
		if k0 < 0 {
			return r.wireErr(section, off+int64(p), k0)
		}
		p += k0
		at := off + int64(p)
		switch {
		case num == edgeReferent && typ == protowire.VarintType:
			referent, k = varint(b[p:])
			have = true
		case num == edgeNameRef && typ == protowire.VarintType:
			var v uint64
			v, k = varint(b[p:])
			if k >= 0 {
				name, err = r.ref(r.two, v, "two-byte", section, at)
			}
		case num == edgeName && typ == protowire.BytesType:
			var s []byte
			s, k = protowire.ConsumeBytes(b[p:])
			if k >= 0 {
				name, err = r.addTwo(s, section, at+int64(k-len(s)))
			}
		default:
			k = protowire.ConsumeFieldValue(num, typ, b[p:])
		}
		if k < 0 {
			return r.wireErr(section, at, k)
		}
		if err != nil {
			return err
		}
	}
	if !have {
		return r.errAt(section, off, "edge without a referent")
	}
	r.refs = push(r.refs, referent)
	r.g.Edges.Name = push(r.g.Edges.Name, name)
	return nil
}

// ref resolves a reference into a string table.
func (r *reader) ref(table []model.StringID, v uint64, which, section string, off int64) (model.StringID, error) {
	if v >= uint64(len(table)) {
		return 0, r.errAt(section, off, "reference to %s string %d, but only %d are defined so far", which, v, len(table))
	}
	return table[v], nil
}

// addTwo appends a UTF-16LE string to the two-byte table.
func (r *reader) addTwo(s []byte, section string, off int64) (model.StringID, error) {
	if len(s)%2 != 0 {
		return 0, r.errAt(section, off, "two-byte string of odd length %d", len(s))
	}
	u := r.utf8[:0]
	for i := 0; i < len(s); i += 2 {
		c := rune(s[i]) | rune(s[i+1])<<8
		if utf16.IsSurrogate(c) && i+3 < len(s) {
			if d := rune(s[i+2]) | rune(s[i+3])<<8; utf16.DecodeRune(c, d) != utf8.RuneError {
				c = utf16.DecodeRune(c, d)
				i += 2
			}
		}
		u = utf8.AppendRune(u, c)
	}
	r.utf8 = u
	id := r.g.Strings.Add(u)
	r.two = append(r.two, id)
	return id, nil
}

// addOne appends a one-byte string to the one-byte table: UTF-8 as it is,
// anything else as Latin-1.
func (r *reader) addOne(s []byte) model.StringID {
	if !utf8.Valid(s) {
		u := r.utf8[:0]
		for _, c := range s {
			u = utf8.AppendRune(u, rune(c))
		}
		r.utf8, s = u, u
	}
	id := r.g.Strings.Add(s)
	r.one = append(r.one, id)
	if r.function == noString && string(s) == "Function" {
		r.function = id
	}
	return id
}

// finish resolves edge referents to node indexes, drops dangling edges,
// sets the metadata and validates the graph.
func (r *reader) finish() error {
	g := r.g
	g.Nodes.FirstEdge = push(g.Nodes.FirstEdge, uint32(len(r.refs)))
	g.Root = 0
	dangling := r.resolve()
	r.refs = nil
	if _, err := g.AddEdgeType(model.EdgeType{Namespace: Namespace, Name: EdgeTypeName, Category: model.EdgeProperty}); err != nil {
		return r.errAt("", -1, "%v", err)
	}
	g.Edges.Type = model.Alloc[uint8](len(g.Edges.To))
	if g.Trace != nil {
		g.Trace.Tree = preorder(g.Trace.Tree)
	}
	meta := []model.KV{
		{Key: "format", Value: "spidermonkey.fxsnapshot"},
		{Key: "producer", Value: "Gecko (SpiderMonkey)"},
	}
	if r.hasTimestamp {
		meta = append(meta, model.KV{Key: MetaTimestamp, Value: strconv.FormatUint(r.timestamp, 10)})
	}
	meta = append(meta, model.KV{Key: MetaDanglingEdges, Value: strconv.Itoa(dangling)})
	g.Meta = append(meta, g.Meta...)
	if err := g.Validate(); err != nil {
		return r.errAt("", -1, "%v", err)
	}
	return nil
}

// resolveChunk is how many edges one resolving goroutine takes at a time.
const resolveChunk = 1 << 14

// resolve turns the edges' referent ids into node indexes on every core
// (the hash lookups are random memory accesses, the slowest part of a
// read), then, if some referents are not nodes of the file, drops those
// edges. It returns how many it dropped.
func (r *reader) resolve() int {
	g := r.g
	n := g.Nodes.ID.Len()
	to := model.Alloc[model.NodeIndex](len(r.refs))
	workers := runtime.GOMAXPROCS(0)
	missing := make([]int, workers)
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for {
				lo := int(next.Add(resolveChunk) - resolveChunk)
				if lo >= len(r.refs) {
					return
				}
				hi := min(lo+resolveChunk, len(r.refs))
				for e := lo; e < hi; e++ {
					t := r.ids.Get(r.refs[e])
					to[e] = t
					if t < 0 {
						missing[w]++
					}
				}
			}
		}(w)
	}
	wg.Wait()
	dangling := 0
	for _, m := range missing {
		dangling += m
	}
	if dangling > 0 {
		fe, names := g.Nodes.FirstEdge, g.Edges.Name
		w := uint32(0)
		for i := 0; i < n; i++ {
			s, e := fe[i], fe[i+1]
			fe[i] = w
			for j := s; j < e; j++ {
				if to[j] >= 0 {
					to[w], names[w] = to[j], names[j]
					w++
				}
			}
		}
		fe[n] = w
		to, g.Edges.Name = to[:w], names[:w]
	}
	g.Edges.To = to
	return dangling
}
