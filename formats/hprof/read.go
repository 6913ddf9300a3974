package hprof

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/heapx/heapx/internal/input"
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
	nd.ID = model.Grow(nd.ID, 1)
	nd.Size = model.Grow(nd.Size, 1)
	i := int32(len(nd.ID))
	nd.Type = append(nd.Type, t)
	nd.Name = append(nd.Name, name)
	nd.ID = append(nd.ID, id)
	nd.Size = append(nd.Size, size)
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

// classDump reads a CLASS DUMP. Pass 1 keeps everything; pass 2 emits the
// class's edges from what pass 1 kept.
func (rd *reader) classDump(start, end int64) error {
	in := rd.in
	n := rd.idSize
	if rd.pass > 1 {
		c := &rd.classes[rd.slot(rd.peekID())]
		if rd.pass == 2 {
			rd.classEdges(c)
		}
		if !in.skip(c.dumpLen) {
			return in.truncated("heap dump")
		}
		return nil
	}
	hdr := 7*n + 10
	if !in.fill(hdr) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	cid := rd.id(b)
	s := rd.slot(cid)
	c := &rd.classes[s]
	if c.dumped {
		return in.errorf(start, "heap dump", "class 0x%x dumped twice", cid)
	}
	c.dumped = true
	rd.dumped++
	c.dumpAt = start
	c.super = rd.id(b[n+4:])
	c.loader = rd.id(b[2*n+4:])
	c.rawSize = u4(b[7*n+4:])
	cp := int(u2(b[7*n+8:]))
	in.r += hdr
	for range cp {
		if !in.fill(3) {
			return in.truncated("heap dump")
		}
		sz := rd.valueSize(in.buf[in.r+2])
		if sz == 0 {
			return in.errorf(in.pos()+2, "heap dump", "constant pool entry of invalid type %d", in.buf[in.r+2])
		}
		if !in.fill(3 + sz) {
			return in.truncated("heap dump")
		}
		in.r += 3 + sz
	}
	if !in.fill(2) {
		return in.truncated("heap dump")
	}
	ns := int(u2(in.buf[in.r:]))
	in.r += 2
	for range ns {
		if !in.fill(n + 1) {
			return in.truncated("heap dump")
		}
		name, t := rd.id(in.buf[in.r:]), in.buf[in.r+n]
		sz := rd.valueSize(t)
		if sz == 0 {
			return in.errorf(in.pos()+int64(n), "heap dump", "static field of invalid type %d", t)
		}
		if !in.fill(n + 1 + sz) {
			return in.truncated("heap dump")
		}
		v := in.buf[in.r+n+1:]
		switch t {
		case tObject:
			if id := rd.id(v); id != 0 {
				c.statics = append(c.statics, static{name, id})
			}
		case tLong:
			c.longs = append(c.longs, static{name, u8(v)})
		}
		in.r += n + 1 + sz
		if in.pos() > end {
			return rd.pastEnd(start, subClassDump, end)
		}
	}
	if !in.fill(2) {
		return in.truncated("heap dump")
	}
	nf := int(u2(in.buf[in.r:]))
	in.r += 2
	c.fields = make([]field, 0, nf)
	for range nf {
		if !in.fill(n + 1) {
			return in.truncated("heap dump")
		}
		f := field{rd.id(in.buf[in.r:]), in.buf[in.r+n]}
		if rd.valueSize(f.typ) == 0 {
			return in.errorf(in.pos()+int64(n), "heap dump", "instance field of invalid type %d", f.typ)
		}
		c.fields = append(c.fields, f)
		in.r += n + 1
		if in.pos() > end {
			return rd.pastEnd(start, subClassDump, end)
		}
	}
	c.dumpLen = in.pos() - start - 1
	i, err := rd.object(start, ntClass, uint32(s), cid, 0)
	c.node = i
	return err
}

// peekID decodes the identifier at the current position (the caller has
// made sure it is there or fails on the next fill).
func (rd *reader) peekID() uint64 {
	if !rd.in.fill(rd.idSize) {
		return 0
	}
	return rd.id(rd.in.buf[rd.in.r:])
}

// classEdges emits a class object's edges in pass 2.
func (rd *reader) classEdges(c *class) {
	rd.beginNode()
	if c.super != 0 {
		rd.edgeTo(etInternal, rd.nSuper, c.super)
	}
	if c.loader != 0 {
		rd.edgeTo(etInternal, rd.nLoader, c.loader)
	}
	for _, s := range c.statics {
		rd.edgeTo(etStatic, rd.internUTF8(s.name), s.value)
	}
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

// instanceDump reads an INSTANCE DUMP.
func (rd *reader) instanceDump(start, end int64) error {
	in := rd.in
	n := rd.idSize
	if !in.fill(2*n + 8) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	oid, cid, nb := rd.id(b), rd.id(b[n+4:]), u4(b[2*n+4:])
	in.r += 2*n + 8
	if err := rd.payload(start, subInstanceDump, uint64(nb), end); err != nil {
		return err
	}
	switch rd.pass {
	case 1:
		s := rd.slot(cid)
		rd.classes[s].count++
		rd.instRefs += 1 + uint64(nb)/uint64(n)
		i, err := rd.object(start, ntInstance, uint32(s), oid, uint64(s))
		if err != nil {
			return err
		}
		if s == rd.stringSlot && rd.stringLayout1() && nb == rd.strLayout.dataBytes {
			if !in.fill(int(nb)) {
				return in.truncated("heap dump")
			}
			rd.registerString(i, in.buf[in.r:in.r+int(nb)])
		}
	case 2:
		s, ok := rd.classByID[cid]
		if !ok || !rd.classes[s].dumped {
			return in.errorf(start, "heap dump", "instance 0x%x of class 0x%x, which has no CLASS DUMP", oid, cid)
		}
		c := &rd.classes[s]
		if uint64(nb) != c.dataLen {
			return in.errorf(start, "heap dump", "instance 0x%x has %d bytes of field data, its class %s's fields take %d", oid, nb, c.name, c.dataLen)
		}
		if !in.fill(int(nb)) {
			return in.truncated("heap dump")
		}
		data := in.buf[in.r : in.r+int(nb)]
		i := rd.node
		rd.beginNode()
		if c.node >= 0 {
			rd.edge(etInternal, rd.nClass, c.node)
		}
		// The own fields of each class along the chain that has any; a
		// superclass's fields follow its subclasses' (layouts).
		for a := c.withRefs; a >= 0; {
			k := &rd.classes[a]
			base := c.dataLen - k.dataLen
			for _, f := range k.own {
				if id := rd.id(data[base+uint64(f.off):]); id != 0 {
					t := etField
					if f.weak {
						t = etWeak
					}
					rd.edgeTo(t, f.name, id)
				}
			}
			if k.superSlot < 0 {
				break
			}
			a = rd.classes[k.superSlot].withRefs
		}
		if rd.g.Nodes.Type[i] == ntString && !rd.isRegistered(i) {
			rd.registerString(i, data)
		}
	}
	if !in.skip(int64(nb)) {
		return in.truncated("heap dump")
	}
	return nil
}

// objArrayDump reads an OBJECT ARRAY DUMP.
func (rd *reader) objArrayDump(start, end int64) error {
	in := rd.in
	n := rd.idSize
	if !in.fill(2*n + 8) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	oid, length, cid := rd.id(b), u4(b[n+4:]), rd.id(b[n+8:])
	in.r += 2*n + 8
	size := uint64(length) * uint64(n)
	if err := rd.payload(start, subObjArrayDump, size, end); err != nil {
		return err
	}
	switch rd.pass {
	case 1:
		s := rd.slot(cid)
		rd.objArrElems += uint64(length)
		if _, err := rd.object(start, ntObjArray, uint32(s), oid, uint64(length)); err != nil {
			return err
		}
	case 2:
		rd.beginNode()
		if s, ok := rd.classByID[cid]; ok && rd.classes[s].node >= 0 {
			rd.edge(etInternal, rd.nClass, rd.classes[s].node)
		}
		const chunk = 4096
		for k := uint32(0); k < length; {
			m := min(length-k, chunk)
			if !in.fill(int(m) * n) {
				return in.truncated("heap dump")
			}
			data := in.buf[in.r:]
			for j := range m {
				if id := rd.id(data[int(j)*n:]); id != 0 {
					rd.edgeTo(etElement, k+j, id)
				}
			}
			in.r += int(m) * n
			k += m
		}
		return nil
	}
	if !in.skip(int64(size)) {
		return in.truncated("heap dump")
	}
	return nil
}

// primArrayDump reads a PRIMITIVE ARRAY DUMP (or Android's variant without
// data when hasData is false).
func (rd *reader) primArrayDump(start, end int64, hasData bool) error {
	in := rd.in
	n := rd.idSize
	if !in.fill(n + 9) {
		return in.truncated("heap dump")
	}
	b := in.buf[in.r:]
	oid, length, t := rd.id(b), u4(b[n+4:]), b[n+8]
	in.r += n + 9
	if t == tObject || rd.valueSize(t) == 0 {
		return in.errorf(start+int64(n)+9, "heap dump", "primitive array of invalid element type %d", t)
	}
	var size uint64
	if hasData {
		size = uint64(length) * uint64(rd.valueSize(t))
	}
	if err := rd.payload(start, subPrimArrayDump, size, end); err != nil {
		return err
	}
	switch rd.pass {
	case 1:
		rd.primArrays++
		if _, err := rd.object(start, ntPrimArray, rd.names.Intern([]byte(primNames[t])), oid, uint64(length)<<8|uint64(t)); err != nil {
			return err
		}
	case 2:
		rd.beginNode()
		if c := rd.primClass[t]; c >= 0 {
			rd.edge(etInternal, rd.nClass, c)
		}
	}
	if rd.pass > 1 && rd.wanted != nil && (t == tByte || t == tChar) && size > 0 {
		if k := rd.wanted.Get(oid); k >= 0 {
			if size > 1<<31 {
				return in.errorf(start, "heap dump", "string value array of %d bytes", size)
			}
			if !in.fill(int(size)) {
				return in.truncated("heap dump")
			}
			rd.decodeStrings(k, t, in.buf[in.r:in.r+int(size)])
		}
	}
	if !in.skip(int64(size)) {
		return in.truncated("heap dump")
	}
	return nil
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

// slotNamed returns the slot of the dumped class with Java name name, or -1.
func (rd *reader) slotNamed(name string) int32 {
	for s := range rd.classes {
		if rd.classes[s].dumped && rd.classes[s].name == name {
			return int32(s)
		}
	}
	return -1
}

// layouts lays out every dumped class's instance data along its
// superclass chain: the class's own fields come first, then its
// superclass's, and so on (HotSpot's order). Each class is laid out once,
// after its superclass, from the superclass's totals, so the work and the
// memory are linear in the fields however deep the chains; a chain that
// comes back to itself is an error, since no instance could have a
// layout. The field "referent" declared by java.lang.ref.Reference (slot
// reference) is weak.
func (rd *reader) layouts(reference int32) error {
	var walk []int32
	for s := range rd.classes {
		if !rd.classes[s].dumped || rd.classes[s].state == 2 {
			continue
		}
		// Walk up to a laid-out class or the top, then lay out on the
		// way back.
		walk = walk[:0]
		for cur := int32(s); cur >= 0; {
			k := &rd.classes[cur]
			if k.state == 1 {
				return rd.superCycle(walk, cur)
			}
			k.state = 1
			walk = append(walk, cur)
			k.superSlot = -1
			if sup, ok := rd.classByID[k.super]; k.super != 0 && ok && rd.classes[sup].dumped {
				k.superSlot = sup
			}
			cur = k.superSlot
			if cur >= 0 && rd.classes[cur].state == 2 {
				break
			}
		}
		for i := len(walk) - 1; i >= 0; i-- {
			rd.layoutClass(walk[i], reference)
		}
	}
	return nil
}

// layoutClass lays out class s, whose superclass is laid out.
func (rd *reader) layoutClass(s, reference int32) {
	c := &rd.classes[s]
	var own uint64
	for _, f := range c.fields {
		if f.typ == tObject {
			name := rd.utf8[f.name]
			c.own = append(c.own, ref{off: uint32(own), name: rd.names.Intern([]byte(name)), weak: s == reference && name == "referent"})
			c.fieldSum[1]++
		} else {
			c.fieldSum[0] += uint64(rd.valueSize(f.typ))
		}
		own += uint64(rd.valueSize(f.typ))
	}
	c.dataLen, c.refCount, c.withRefs = own, uint64(len(c.own)), -1
	if len(c.own) > 0 {
		c.withRefs = s
	}
	if c.superSlot >= 0 {
		sup := &rd.classes[c.superSlot]
		c.dataLen += sup.dataLen
		c.refCount += sup.refCount
		c.fieldSum[0] += sup.fieldSum[0]
		c.fieldSum[1] += sup.fieldSum[1]
		if c.withRefs < 0 {
			c.withRefs = sup.withRefs
		}
	}
	c.state = 2
}

// superCycle is the error for a superclass chain that comes back to class
// back, which walk (the chain so far) holds.
func (rd *reader) superCycle(walk []int32, back int32) error {
	i := 0
	for walk[i] != back {
		i++
	}
	cycle := walk[i:]
	var b []byte
	const shown = 4
	for j, s := range cycle {
		if j == shown {
			b = fmt.Appendf(b, " extends ... (%d classes)", len(cycle))
			break
		}
		if j > 0 {
			b = append(b, " extends "...)
		}
		b = append(b, rd.classes[s].name...)
	}
	if len(cycle) <= shown {
		b = append(append(b, " extends "...), rd.classes[back].name...)
	}
	return rd.in.errorf(rd.classes[back].dumpAt, "heap dump", "superclass cycle: %s", b)
}

// hiddenBase strips the address from the name of a hidden class (a
// lambda's "LeakDemo$$Lambda$14/0x0000000800c03000", JDK 21's
// "LeakDemo$$Lambda/0x...", a LambdaForm's "...LambdaForm$MH+0x..."; the
// heap dumper writes the "/" as "+"), in the JVM's spelling, arrays of
// them included. The address is where the JVM put the class in this run:
// without it, the same lambda has the same name in every run, so a diff
// across runs matches it, and the instances of a program's many
// LambdaForm classes count as one class, as the program sees them.
func hiddenBase(name string) (string, bool) {
	end := len(name)
	if strings.HasPrefix(name, "[") && strings.HasSuffix(name, ";") {
		end--
	}
	i := strings.LastIndex(name[:end], "0x")
	// At least 8 hex digits (a 32-bit address), after "+" or "/".
	if i < 1 || end-i-2 < 8 || name[i-1] != '+' && name[i-1] != '/' {
		return name, false
	}
	for _, c := range name[i+2 : end] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return name, false
		}
	}
	return name[:i-1] + name[end:], true
}

// javaName turns a JVM class name ("java/lang/String", "[I",
// "[[Ljava/lang/Object;") into Java's spelling ("java.lang.String",
// "int[]", "java.lang.Object[][]"). Android's names are already spelled so.
func javaName(s string) string {
	dims := 0
	for dims < len(s) && s[dims] == '[' {
		dims++
	}
	base := s[dims:]
	if dims > 0 {
		switch {
		case len(base) == 1:
			if t := primLetter(base[0]); t != "" {
				base = t
			}
		case len(base) > 2 && base[0] == 'L' && base[len(base)-1] == ';':
			base = base[1 : len(base)-1]
		}
	}
	out := make([]byte, 0, len(base)+2*dims)
	for i := 0; i < len(base); i++ {
		if base[i] == '/' {
			out = append(out, '.')
		} else {
			out = append(out, base[i])
		}
	}
	for range dims {
		out = append(out, "[]"...)
	}
	return string(out)
}

func primLetter(c byte) string {
	switch c {
	case 'Z':
		return "boolean"
	case 'C':
		return "char"
	case 'F':
		return "float"
	case 'D':
		return "double"
	case 'B':
		return "byte"
	case 'S':
		return "short"
	case 'I':
		return "int"
	case 'J':
		return "long"
	}
	return ""
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
