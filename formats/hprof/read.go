package hprof

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
)

// reader holds the state of one read across its passes.
type reader struct {
	src  *input.Reader
	in   *window
	buf  []byte // the window's buffer, kept across passes
	pass int    // 1, 2 or 3 (see the package doc)

	version   string
	idSize    int
	headerLen int64
	timestamp uint64

	g     *model.Graph
	names *model.Interner
	ids   *model.IDMap

	utf8        map[uint64]string
	loadClass   map[uint64]uint64 // class object id -> name string id
	classSerial map[uint32]uint64 // class serial -> class object id
	frames      map[uint64]frame
	traces      []trace
	threads     []model.KV
	hidden      []model.KV // hprof:hidden_class entries

	classes     []class
	classByID   map[uint64]int32
	dumped      int    // CLASS DUMPs read
	lastCID     uint64 // one-entry cache of classByID
	lastSlot    int32
	stringSlot  int32 // slot of java.lang.String, -1 if not seen yet
	strLayout   stringLayout
	objArrElems uint64 // total object array length (edge capacity)
	instRefs    uint64 // most edges the instances' field data can hold
	primArrays  uint64
	primClass   [12]int32 // node of each primitive array class, -1 if none

	rootIDs  []uint64
	rootTags []byte

	threadRoots []threadRoot // the GC roots that name a thread
	thr         threadLayout
	orphanRoots uint64 // thread roots of a thread the dump has no object or trace of

	// Strings registered for decoding: the String node, its coder, and the
	// next String sharing the same value array (-1 ends the chain);
	// wanted maps value array ids to the chain's head.
	strNode    []int32
	strCoder   []uint8
	strNext    []int32
	wanted     *model.IDMap
	registered []uint64 // bit per node: String registered
	decoded    int
	needPass3  bool
	scratch    []byte

	oop, header uint64 // the size rule's reference and header sizes

	node     int32 // pass 2: the node being read
	dangling uint64
	danglRt  uint64

	// Edge names used by every object.
	nClass, nSuper, nLoader, nEmpty model.StringID
	rootName                        [256]model.StringID
}

type frame struct {
	method, source uint64 // string ids
	classSerial    uint32
	line           int32
}

type trace struct {
	serial, thread uint32
	frames         []uint64
}

// class is what the reader knows of one class, by slot.
type class struct {
	id       uint64
	super    uint64
	loader   uint64
	rawSize  uint32 // instance size as the CLASS DUMP states it
	dumped   bool
	dumpAt   int64 // stream offset of the CLASS DUMP sub-record
	dumpLen  int64 // bytes of the CLASS DUMP sub-record after its tag
	node     int32 // the class object's node, -1 until dumped
	count    uint64
	fields   []field // own instance fields, in dump order
	statics  []static
	longs    []static // long statics, for the compressed-oops guess
	name     string   // Java spelling
	nameID   model.StringID
	objName  model.StringID // "class " + name
	instSize uint64

	// The layout (see layouts): each class keeps only its own reference
	// fields, so a chain of n classes costs n entries, not n²/2.
	own       []ref     // own reference fields, offsets from its own first field
	superSlot int32     // the dumped superclass's slot, -1 for none
	withRefs  int32     // nearest class from this one up the chain with own references, -1 for none
	dataLen   uint64    // instance data bytes along the chain
	refCount  uint64    // reference fields along the chain
	fieldSum  [2]uint64 // primitive bytes, reference count along the chain
	state     uint8     // layouts' walk: 0 not laid out, 1 on the walk, 2 done
}

type field struct {
	name uint64 // string id
	typ  byte
}

type static struct {
	name  uint64 // string id
	value uint64 // object id, or the long value
}

type ref struct {
	off  uint32
	name model.StringID
	weak bool
}

// stringLayout is where java.lang.String keeps its value and coder.
type stringLayout struct {
	known bool
	// impossible: no layout can be found (a superclass cycle, or more
	// field data than an instance can have).
	impossible bool
	triedAt    int   // reader.dumped at the last try that failed
	value      int32 // byte offset of the value reference, -1 if none
	coder      int32 // byte offset of the coder byte, -1 if none
	dataBytes  uint32
}

func (rd *reader) read() (*model.Graph, error) {
	rd.g = &model.Graph{}
	g := rd.g
	for _, t := range nodeTypes {
		if _, err := g.AddNodeType(t); err != nil {
			return nil, err
		}
	}
	for _, t := range edgeTypes {
		if _, err := g.AddEdgeType(t); err != nil {
			return nil, err
		}
	}
	rd.names = model.NewInterner(&g.Strings)
	rd.nEmpty = rd.names.Intern(nil)
	rd.nClass = rd.names.Intern([]byte("<class>"))
	rd.nSuper = rd.names.Intern([]byte("<super>"))
	rd.nLoader = rd.names.Intern([]byte("<classloader>"))
	rd.utf8 = map[uint64]string{}
	rd.loadClass = map[uint64]uint64{}
	rd.classSerial = map[uint32]uint64{}
	rd.frames = map[uint64]frame{}
	rd.classByID = map[uint64]int32{}
	rd.stringSlot = -1
	rd.lastSlot = -1
	for i := range rd.primClass {
		rd.primClass[i] = -1
	}
	est := 1024
	if size := rd.src.Size(); size > 0 {
		est = int(min(size/64, 1<<26))
	}
	rd.ids = model.NewIDMap(est)
	// The root is node 0.
	rd.addNode(ntRoot, rd.names.Intern([]byte("(GC roots)")), 0, 0)

	for rd.pass = 1; rd.pass <= 3; rd.pass++ {
		if rd.pass == 3 && !rd.needPass3 {
			break
		}
		if err := rd.start(); err != nil {
			return nil, err
		}
		if err := rd.records(); err != nil {
			return nil, err
		}
		if rd.pass == 1 {
			if err := rd.endPass1(); err != nil {
				return nil, err
			}
		}
		if rd.pass == 2 {
			if int(rd.node) != g.NumNodes() {
				return nil, rd.in.errorf(-1, "", "second pass found %d objects, the first %d (input changed while reading?)", rd.node, g.NumNodes())
			}
			g.Nodes.FirstEdge[rd.node] = uint32(len(g.Edges.To))
		}
	}
	rd.ids = nil
	rd.wanted = nil
	rd.sizes()
	rd.stacks()
	rd.meta()
	return g, nil
}

// start starts the input again for the next pass.
func (rd *reader) start() error {
	if rd.pass > 1 {
		if err := rd.src.Rewind(); err != nil {
			return err
		}
	}
	if rd.buf == nil {
		size := 1 << 20
		if !rd.src.Gzip() && rd.src.Size() < int64(size) {
			size = max(int(rd.src.Size()), 64)
		}
		rd.buf = make([]byte, size)
	}
	rd.in = &window{src: rd.src, buf: rd.buf}
	if rd.pass > 1 {
		if !rd.in.skip(rd.headerLen) {
			return rd.in.truncated("header")
		}
		return nil
	}
	return rd.readHeader()
}

// readHeader reads the version string, identifier size and timestamp.
func (rd *reader) readHeader() error {
	in := rd.in
	in.fill(64)
	head := in.buf[in.r:in.w]
	nul := bytes.IndexByte(head, 0)
	if nul < 0 || !Detect(head) {
		return in.errorf(0, "header", "not an HPROF dump: no \"JAVA PROFILE 1.0.x\" header")
	}
	rd.version = string(head[:nul])
	if !in.fill(nul + 13) {
		return in.truncated("header")
	}
	b := in.buf[in.r+nul+1:]
	ids := u4(b)
	if ids != 4 && ids != 8 {
		return in.errorf(int64(nul+1), "header", "identifier size %d is not supported (HPROF identifiers are 4 or 8 bytes)", ids)
	}
	rd.idSize = int(ids)
	rd.timestamp = u8(b[4:])
	rd.headerLen = int64(nul + 13)
	in.r += nul + 13
	return nil
}

// id decodes an identifier at b.
func (rd *reader) id(b []byte) uint64 {
	if rd.idSize == 8 {
		return u8(b)
	}
	return uint64(u4(b))
}

// records walks the top-level records.
func (rd *reader) records() error {
	in := rd.in
	for {
		if !in.fill(1) {
			if in.src.Err() != nil {
				return in.truncated("record")
			}
			return nil
		}
		start := in.pos()
		if !in.fill(9) {
			return in.truncated("record")
		}
		b := in.buf[in.r:]
		tag, length := b[0], int64(u4(b[5:]))
		in.r += 9
		end := in.pos() + length
		var err error
		switch tag {
		case tagHeapDump, tagHeapDumpSegment:
			err = rd.heapDump(end)
		case tagUTF8, tagLoadClass, tagStackFrame, tagStackTrace, tagStartThread:
			if rd.pass != 1 {
				if !in.skip(length) {
					return in.truncated("record")
				}
				continue
			}
			if length > 1<<31 {
				return in.errorf(start, "record", "record (tag 0x%02x) claims %d bytes", tag, length)
			}
			if !in.fill(int(length)) {
				return in.truncated("record")
			}
			err = rd.small(start, tag, in.buf[in.r:in.r+int(length)])
			in.r += int(length)
		case tagUnloadClass, tagAllocSites, tagHeapSummary, tagEndThread, tagCPUSamples, tagControlSettings, tagHeapDumpEnd:
			if !in.skip(length) {
				return in.truncated("record")
			}
		default:
			return in.errorf(start, "record", "unknown record tag 0x%02x", tag)
		}
		if err != nil {
			return err
		}
		if in.pos() != end {
			return in.errorf(start, "record", "record (tag 0x%02x) says it has %d bytes but its contents take %d", tag, length, in.pos()-end+length)
		}
	}
}

// small decodes the records pass 1 keeps: names, classes, stack frames
// and traces, threads.
func (rd *reader) small(start int64, tag byte, b []byte) error {
	n := rd.idSize
	short := func(what string, need int) error {
		return rd.in.errorf(start, "record", "%s record of %d bytes, needs %d", what, len(b), need)
	}
	switch tag {
	case tagUTF8:
		if len(b) < n {
			return short("UTF8", n)
		}
		rd.utf8[rd.id(b)] = string(b[n:])
	case tagLoadClass:
		if len(b) != 8+2*n {
			return short("LOAD CLASS", 8+2*n)
		}
		cid := rd.id(b[4:])
		rd.loadClass[cid] = rd.id(b[8+n:])
		rd.classSerial[u4(b)] = cid
	case tagStackFrame:
		if len(b) != 8+4*n {
			return short("STACK FRAME", 8+4*n)
		}
		rd.frames[rd.id(b)] = frame{method: rd.id(b[n:]), source: rd.id(b[3*n:]), classSerial: u4(b[4*n:]), line: int32(u4(b[4*n+4:]))}
	case tagStackTrace:
		if len(b) < 12 {
			return short("STACK TRACE", 12)
		}
		k := int(u4(b[8:]))
		if len(b) != 12+k*n {
			return short("STACK TRACE", 12+k*n)
		}
		t := trace{serial: u4(b), thread: u4(b[4:]), frames: make([]uint64, k)}
		for i := range t.frames {
			t.frames[i] = rd.id(b[12+i*n:])
		}
		rd.traces = append(rd.traces, t)
	case tagStartThread:
		if len(b) != 8+4*n {
			return short("START THREAD", 8+4*n)
		}
		rd.threads = append(rd.threads, model.KV{Key: "hprof:thread", Value: fmt.Sprintf("%d 0x%x %q group %q", u4(b), rd.id(b[4:]), rd.utf8[rd.id(b[8+n:])], rd.utf8[rd.id(b[8+2*n:])])})
	}
	return nil
}

// heapDump walks the sub-records of a HEAP DUMP or HEAP DUMP SEGMENT
// record ending at end.
func (rd *reader) heapDump(end int64) error {
	in := rd.in
	n := rd.idSize
	for in.pos() < end {
		start := in.pos()
		if !in.fill(1) {
			return in.truncated("heap dump")
		}
		st := in.buf[in.r]
		in.r++
		var err error
		switch st {
		case subClassDump:
			err = rd.classDump(start, end)
		case subInstanceDump:
			err = rd.instanceDump(start, end)
		case subObjArrayDump:
			err = rd.objArrayDump(start, end)
		case subPrimArrayDump, subPrimArrayNoData:
			err = rd.primArrayDump(start, end, st == subPrimArrayDump)
		case subHeapDumpInfo:
			if !in.fill(4 + n) {
				return in.truncated("heap dump")
			}
			in.r += 4 + n
		default:
			k := rootKinds[st]
			if k.name == "" {
				return in.errorf(start, "heap dump", "unknown heap dump sub-record tag 0x%02x", st)
			}
			size := n + k.extra
			if k.extra < 0 {
				size = 2 * n
			}
			if !in.fill(size) {
				return in.truncated("heap dump")
			}
			if rd.pass == 1 {
				rd.rootIDs = append(rd.rootIDs, rd.id(in.buf[in.r:]))
				rd.rootTags = append(rd.rootTags, st)
				if isThreadRoot(st) {
					rd.addThreadRoot(st, in.buf[in.r:in.r+size])
				}
			}
			in.r += size
		}
		if err != nil {
			return err
		}
		if in.pos() > end {
			return rd.pastEnd(start, st, end)
		}
	}
	return nil
}

func (rd *reader) pastEnd(start int64, st byte, end int64) error {
	return rd.in.errorf(start, "heap dump", "sub-record (tag 0x%02x) runs past the end of its heap dump record at byte %d", st, end)
}

// payload checks that a sub-record's variable part of size bytes, starting
// after a header that ends at the current position, stays inside its heap
// dump record, before anything that large is read or skipped.
func (rd *reader) payload(start int64, st byte, size uint64, end int64) error {
	if uint64(end-rd.in.pos()) < size || rd.in.pos() > end {
		return rd.pastEnd(start, st, end)
	}
	return nil
}

// slot returns the class slot of a class object id, creating it.
func (rd *reader) slot(cid uint64) int32 {
	if cid == rd.lastCID && rd.lastSlot >= 0 {
		return rd.lastSlot
	}
	s, ok := rd.classByID[cid]
	if !ok {
		s = int32(len(rd.classes))
		rd.classes = append(rd.classes, class{id: cid, node: -1})
		rd.classByID[cid] = s
		if nm, ok := rd.loadClass[cid]; ok && rd.stringSlot < 0 {
			if t := rd.utf8[nm]; t == "java/lang/String" || t == "java.lang.String" {
				rd.stringSlot = s
			}
		}
	}
	rd.lastCID, rd.lastSlot = cid, s
	return s
}

// addNode appends a node in pass 1; Name and Size hold what endPass1 and
// sizes turn into the final values (see there).
func (rd *reader) addNode(t uint8, name uint32, id, size uint64) int32 {
	nd := &rd.g.Nodes
	nd.Type = model.Grow(nd.Type, 1)
	nd.Name = model.Grow(nd.Name, 1)
	i := int32(nd.ID.Len())
	nd.Type = append(nd.Type, t)
	nd.Name = append(nd.Name, name)
	nd.ID.Append(id)
	nd.Size.Append(size)
	return i
}

// object registers the object with id at start in pass 1.
func (rd *reader) object(start int64, t uint8, name uint32, id, size uint64) (int32, error) {
	if id == 0 {
		return 0, rd.in.errorf(start, "heap dump", "object with id 0")
	}
	i := rd.addNode(t, name, id, size)
	if !rd.ids.Insert(id, i) {
		return 0, rd.in.errorf(start, "heap dump", "object id 0x%x appears twice", id)
	}
	return i, nil
}

// internUTF8 interns the text of string id sid.
func (rd *reader) internUTF8(sid uint64) model.StringID {
	return rd.names.Intern([]byte(rd.utf8[sid]))
}

// beginNode starts the edges of the next node in pass 2.
func (rd *reader) beginNode() {
	rd.g.Nodes.FirstEdge[rd.node] = uint32(len(rd.g.Edges.To))
	rd.node++
}

// edgeTo adds an edge of the current node to the object with id, unless
// it is not in the dump.
func (rd *reader) edgeTo(t uint8, name uint32, id uint64) {
	to := rd.ids.Get(id)
	if to < 0 {
		rd.dangling++
		return
	}
	rd.edge(t, name, to)
}

func (rd *reader) edge(t uint8, name uint32, to int32) {
	e := &rd.g.Edges
	if len(e.To) == cap(e.To) {
		e.Type = model.Grow(e.Type, 1)
		e.Name = model.Grow(e.Name, 1)
		e.To = model.Grow(e.To, 1)
	}
	e.Type = append(e.Type, t)
	e.Name = append(e.Name, name)
	e.To = append(e.To, to)
}

// endPass1 resolves class names and layouts, fixes node names and types,
// sizes the edge columns and emits the root's edges.
func (rd *reader) endPass1() error {
	g := rd.g
	for s := range rd.classes {
		c := &rd.classes[s]
		if nm, ok := rd.loadClass[c.id]; ok {
			raw := rd.utf8[nm]
			if base, ok := hiddenBase(raw); ok {
				rd.hidden = append(rd.hidden, model.KV{Key: "hprof:hidden_class", Value: fmt.Sprintf("0x%x %s", c.id, javaName(raw))})
				raw = base
			}
			c.name = javaName(raw)
		} else {
			c.name = fmt.Sprintf("(class 0x%x)", c.id)
		}
		c.nameID = rd.names.Intern([]byte(c.name))
		c.objName = rd.names.Intern([]byte("class " + c.name))
		if c.dumped {
			for t, pn := range primNames {
				if pn != "" && pn == c.name {
					rd.primClass[t] = c.node
				}
			}
		}
	}
	if rd.stringSlot < 0 {
		// LOAD CLASS came after the heap dump: find String by name now.
		for s := range rd.classes {
			if rd.classes[s].name == "java.lang.String" {
				rd.stringSlot = int32(s)
			}
		}
	}
	if err := rd.layouts(rd.slotNamed("java.lang.ref.Reference")); err != nil {
		return err
	}
	rd.resolveThreads()
	edges := uint64(len(rd.rootIDs)) + rd.objArrElems + rd.primArrays
	bound := edges + rd.instRefs
	for s := range rd.classes {
		c := &rd.classes[s]
		if !c.dumped {
			continue
		}
		edges += c.count*(c.refCount+1) + uint64(len(c.statics)) + 2
		bound += uint64(len(c.statics)) + 2
	}
	// An instance has no more references than its field data has room
	// for (instRefs): the bound keeps a class whose fields do not fit its
	// instances, an error in pass 2, from sizing the columns.
	edges = min(edges, bound)
	nodes := g.NumNodes()
	nd := &g.Nodes
	for i := 1; i < nodes; i++ {
		switch nd.Type[i] {
		case ntInstance:
			s := int32(nd.Name[i])
			if s == rd.stringSlot {
				nd.Type[i] = ntString
				nd.Name[i] = rd.nEmpty
			} else {
				nd.Name[i] = rd.classes[s].nameID
			}
		case ntObjArray:
			nd.Name[i] = rd.classes[nd.Name[i]].nameID
		case ntClass:
			nd.Name[i] = rd.classes[nd.Name[i]].objName
		}
	}
	nd.FirstEdge = model.Alloc[uint32](nodes + 1)
	g.Edges.Type = model.Alloc[uint8](int(edges))[:0]
	g.Edges.Name = model.Alloc[uint32](int(edges))[:0]
	g.Edges.To = model.Alloc[int32](int(edges))[:0]
	// The root's edges, one per GC root record.
	kinds := map[byte]uint16{}
	rd.beginNode()
	for i, id := range rd.rootIDs {
		tag := rd.rootTags[i]
		to := rd.ids.Get(id)
		if to < 0 {
			rd.danglRt++
			continue
		}
		k, ok := kinds[tag]
		if !ok {
			k = uint16(len(g.RootKinds))
			kinds[tag] = k
			g.RootKinds = append(g.RootKinds, Namespace+":"+rootKinds[tag].name)
			rd.rootName[tag] = rd.names.Intern([]byte(rootKinds[tag].name))
		}
		g.GCRoots = append(g.GCRoots, model.GCRoot{Node: to, Kind: k})
		rd.edge(etRoot, rd.rootName[tag], to)
	}
	rd.rootIDs, rd.rootTags = nil, nil
	return nil
}

// meta fills the graph's metadata.
func (rd *reader) meta() {
	g := rd.g
	kv := func(k, v string) { g.Meta = append(g.Meta, model.KV{Key: k, Value: v}) }
	producer := "Java VM"
	if rd.version == "JAVA PROFILE 1.0.3" {
		producer = "Android runtime"
	}
	kv("format", "hprof")
	kv("producer", producer)
	kv("hprof:version", rd.version)
	kv("hprof:id_size", strconv.Itoa(rd.idSize))
	kv("hprof:timestamp", strconv.FormatUint(rd.timestamp, 10))
	kv("hprof:oop_size", strconv.FormatUint(rd.oop, 10))
	kv("hprof:header_size", strconv.FormatUint(rd.header, 10))
	kv("hprof:dangling_refs", strconv.FormatUint(rd.dangling, 10))
	if rd.danglRt > 0 {
		kv("hprof:dangling_roots", strconv.FormatUint(rd.danglRt, 10))
	}
	if rd.orphanRoots > 0 {
		kv("hprof:orphan_thread_roots", strconv.FormatUint(rd.orphanRoots, 10))
	}
	strs := 0
	for _, t := range g.Nodes.Type {
		if t == ntString {
			strs++
		}
	}
	if u := strs - rd.decoded; u > 0 {
		kv("hprof:undecoded_strings", strconv.Itoa(u))
	}
	for _, t := range rd.traces {
		var b []byte
		b = fmt.Appendf(b, "%d thread %d:", t.serial, t.thread)
		for i, fid := range t.frames {
			if i > 0 {
				b = append(b, ';')
			}
			b = append(b, ' ')
			b = rd.appendFrame(b, fid)
		}
		kv("hprof:stack_trace", string(b))
	}
	g.Meta = append(g.Meta, rd.threads...)
	g.Meta = append(g.Meta, rd.hidden...)
}

// appendFrame formats a stack frame as "pkg.Class.method(File.java:line)".
func (rd *reader) appendFrame(b []byte, fid uint64) []byte {
	f, ok := rd.frames[fid]
	if !ok {
		return fmt.Appendf(b, "(frame 0x%x)", fid)
	}
	if cid, ok := rd.classSerial[f.classSerial]; ok {
		if s, ok := rd.classByID[cid]; ok {
			b = append(b, rd.classes[s].name...)
		} else {
			b = append(b, javaName(rd.utf8[rd.loadClass[cid]])...)
		}
		b = append(b, '.')
	}
	b = append(b, rd.utf8[f.method]...)
	b = append(b, '(')
	switch {
	case f.line == -3:
		b = append(b, "Native Method"...)
	case rd.utf8[f.source] == "":
		b = append(b, "Unknown Source"...)
	default:
		b = append(b, rd.utf8[f.source]...)
		if f.line > 0 {
			b = strconv.AppendInt(append(b, ':'), int64(f.line), 10)
		}
	}
	return append(b, ')')
}
