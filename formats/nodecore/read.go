package nodecore

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"

	"github.com/heapx/heapx/formats"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// Name is the format's registry name.
const Name = "nodecore"

func init() {
	formats.Register(formats.Format{
		Name:        Name,
		Description: "Node.js core dump (ELF x86-64 core with its node binary: --binary)",
		Extensions:  []string{".core"},
		Detect:      Detect,
		Read: func(path string, opt formats.ReadOptions) (*model.Graph, error) {
			return ReadFile(path, ReadOptions{Binary: opt.Binary, Progress: opt.Progress})
		},
	})
}

// Detect reports whether head starts an ELF core file (any architecture:
// the reader then says which it reads, instead of "not a heap dump").
func Detect(head []byte) bool {
	return len(head) >= 18 && bytes.HasPrefix(head, []byte(elf.ELFMAG)) && head[16] == byte(elf.ET_CORE) && head[17] == 0
}

// ReadOptions tune a read.
type ReadOptions struct {
	// Binary is the node executable the process ran; "" takes the path
	// the core's NT_FILE note names, when it exists.
	Binary string
	// Progress, if set, is called with the pages scanned and walked.
	Progress func(done, total int64)
	// KeepGarbage keeps the objects no root reaches over strong
	// references (garbage the next collection would free, dead copies
	// beyond a semispace's allocation top); by default they are left out,
	// as V8 leaves them out of a heap snapshot by collecting first, and
	// counted in the metadata (nodecore:garbage_objects, _bytes).
	KeepGarbage bool
}

// Synthetic node ids: odd, so never an object's (8-byte aligned) address.
const (
	idRoot           = 1
	idGCRoots        = 3
	idStackRoots     = 5
	idNativeContexts = 7
	idGlobalHandles  = 9
	idMicrotasks     = 11
	idNativeRoots    = 13
)

// gcRootNames are the children of "(GC roots)", in node order after it.
var gcRootNames = []string{"(Stack roots)", "(Native contexts)", "(Global handles)", "(Microtask queue)", "(Native roots)"}

// ReadFile reads the heap of the Node.js core at path into a graph shaped
// like a V8 heap snapshot's: V8's node and edge types, objects named by
// constructor, closures by function, strings by value, object addresses as
// ids. The root reaches the global objects (shortcut edges, DevTools' user
// roots) and "(GC roots)", which holds "(Native contexts)" and "(Stack
// roots)" (the frame refWalker's slots, when linked: StackRoots).
func ReadFile(path string, opt ReadOptions) (*model.Graph, error) {
	p, err := Open(path, opt.Binary)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	g, err := p.Graph(opt.Progress)
	if err != nil {
		return nil, err
	}
	if !opt.KeepGarbage {
		n, size := DropGarbage(g)
		g.Meta = append(g.Meta, model.KV{Key: "nodecore:garbage_objects", Value: strconv.Itoa(n)},
			model.KV{Key: "nodecore:garbage_bytes", Value: strconv.FormatUint(size, 10)})
	}
	return g, nil
}

// DropGarbage removes from g, in place, the nodes its root does not reach
// over edges that are not weak, with every edge to them, and returns how
// many it removed and their size.
func DropGarbage(g *model.Graph) (int, uint64) {
	n := g.NumNodes()
	reach := make([]bool, n)
	weak := make([]bool, len(g.EdgeTypes))
	for i, t := range g.EdgeTypes {
		weak[i] = t.Strength == model.Weak
	}
	stack := []int32{g.Root}
	reach[g.Root] = true
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s, e := g.EdgeRange(v)
		for j := s; j < e; j++ {
			if to := g.Edges.To[j]; !weak[g.Edges.Type[j]] && !reach[to] {
				reach[to] = true
				stack = append(stack, to)
			}
		}
	}
	newIdx := make([]int32, n)
	k := int32(0)
	for i := range n {
		newIdx[i] = -1
		if reach[i] {
			newIdx[i] = k
			k++
		}
	}
	var dropped int
	var size uint64
	nd, ne := int32(0), uint32(0)
	for i := range n {
		s, e := g.EdgeRange(int32(i))
		if !reach[i] {
			dropped++
			size += g.Nodes.Size.At(i)
			continue
		}
		g.Nodes.Type[nd], g.Nodes.Name[nd] = g.Nodes.Type[i], g.Nodes.Name[i]
		g.Nodes.ID.Set(int(nd), g.Nodes.ID.At(i))
		g.Nodes.Size.Set(int(nd), g.Nodes.Size.At(i))
		g.Nodes.FirstEdge[nd] = ne
		for j := s; j < e; j++ {
			if to := newIdx[g.Edges.To[j]]; to >= 0 {
				g.Edges.Type[ne], g.Edges.Name[ne], g.Edges.To[ne] = g.Edges.Type[j], g.Edges.Name[j], to
				ne++
			}
		}
		nd++
	}
	g.Nodes.Type, g.Nodes.Name = g.Nodes.Type[:nd], g.Nodes.Name[:nd]
	g.Nodes.ID.Truncate(int(nd))
	g.Nodes.Size.Truncate(int(nd))
	g.Nodes.FirstEdge = append(g.Nodes.FirstEdge[:nd], ne)
	g.Edges.Type, g.Edges.Name, g.Edges.To = g.Edges.Type[:ne], g.Edges.Name[:ne], g.Edges.To[:ne]
	g.Root = newIdx[g.Root]
	return dropped, size
}

// Graph builds the heap graph of the process.
func (p *Process) Graph(progress func(done, total int64)) (*model.Graph, error) {
	h := p.Heap
	pages := h.Pages()
	if len(pages) == 0 {
		return nil, fmt.Errorf("%s: no V8 heap pages found with %s: not a Node.js process's core, or not this binary's", p.Path, p.Meta.Runtime)
	}
	objs, err := h.Scan(pages)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	b, err := newBuilder(p, objs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Path, err)
	}
	b.pages = pages
	return b.build(progress)
}

// builder turns objects and their references into a model.Graph.
type builder struct {
	p     *Process
	h     *Heap
	o     *Objects
	w     *refWalker
	g     *model.Graph
	in    *model.Interner
	k     *kinds
	fns   *Functions
	base  int32 // node index of object 0
	pages []Page

	nodeType map[string]uint8
	edgeType [7]uint8
	ctorName map[uint64]model.StringID // by map
	names    map[string]model.StringID // short names interned
	sfiName  map[uint64]string
	native   map[int]bool // object indexes of the native contexts
	// pw reads own properties for class names, apart from w, whose
	// references go to the graph.
	pw        *refWalker
	props     []Property
	protoName map[uint64]string // step 2 of constructorName, by prototype (tagged)
}

func newBuilder(p *Process, o *Objects) (*builder, error) {
	w, err := p.Heap.newWalker(o)
	if err != nil {
		return nil, err
	}
	fns, err := NewFunctions(p)
	if err != nil {
		return nil, err
	}
	pw, err := p.Heap.newWalker(o)
	if err != nil {
		return nil, err
	}
	b := &builder{p: p, h: p.Heap, o: o, w: w, pw: pw, fns: fns, g: &model.Graph{}, k: p.Heap.kinds(),
		nodeType: map[string]uint8{}, ctorName: map[uint64]model.StringID{}, protoName: map[uint64]string{}, names: map[string]model.StringID{}, sfiName: map[uint64]string{}}
	b.in = model.NewInterner(&b.g.Strings)
	for _, t := range []string{"hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native",
		"synthetic", "concatenated string", "sliced string", "symbol", "bigint", "object shape"} {
		ix, err := b.g.AddNodeType(v8.NodeType(t))
		if err != nil {
			return nil, err
		}
		b.nodeType[t] = ix
	}
	for i, t := range edgeKindNames {
		ix, err := b.g.AddEdgeType(v8.EdgeType(t))
		if err != nil {
			return nil, err
		}
		b.edgeType[i] = ix
	}
	return b, nil
}

// str interns a name that repeats (edge, class and function names): a
// small map by string answers most calls without the interner's byte
// conversion.
func (b *builder) str(s string) model.StringID {
	if id, ok := b.names[s]; ok {
		return id
	}
	id := b.in.Intern([]byte(s))
	if len(s) <= 64 {
		b.names[s] = id
	}
	return id
}

// addNode appends a node.
func (b *builder) addNode(typ string, name model.StringID, id, size uint64) {
	g := b.g
	g.Nodes.Type = append(g.Nodes.Type, b.nodeType[typ])
	g.Nodes.Name = append(g.Nodes.Name, name)
	g.Nodes.ID.Append(id)
	g.Nodes.Size.Append(size)
	g.Nodes.FirstEdge = append(g.Nodes.FirstEdge, uint32(len(g.Edges.To)))
}

// addEdge appends an edge of the last node to the object at address to,
// dropping references to anything that is not an object found.
func (b *builder) addEdge(r Ref) {
	i := b.o.Index(r.To)
	if i < 0 {
		return
	}
	b.addEdgeTo(r, b.base+int32(i))
}

func (b *builder) addEdgeTo(r Ref, to int32) {
	g := b.g
	g.Edges.Type = append(g.Edges.Type, b.edgeType[r.Kind])
	name := r.Index
	if r.Kind != EdgeElement && r.Kind != EdgeHidden {
		name = b.str(r.Name)
	}
	g.Edges.Name = append(g.Edges.Name, name)
	g.Edges.To = append(g.Edges.To, to)
}

func (b *builder) build(progress func(done, total int64)) (*model.Graph, error) {
	g, o, h := b.g, b.o, b.h
	g.Meta = []model.KV{
		{Key: "format", Value: "nodecore"},
		{Key: "producer", Value: b.p.RuntimeName() + " core dump"},
		{Key: "nodecore:binary", Value: b.p.Binary},
		{Key: "nodecore:threads", Value: strconv.Itoa(len(b.p.Threads))},
		{Key: model.MetaIDs, Value: "address"},
	}
	var stack []StackRoot
	if StackRoots != nil {
		var err error
		if stack, err = StackRoots(b.p); err != nil {
			return nil, err
		}
	}
	b.base = int32(2 + len(gcRootNames))
	n := o.Len()
	// Columns sized up front (objects have about four references each),
	// so appends rarely copy.
	g.Nodes.Type = model.Alloc[uint8](n + 8)[:0]
	g.Nodes.Name = model.Alloc[model.StringID](n + 8)[:0]
	g.Nodes.ID.Grow(n + 8)
	g.Nodes.Size.Grow(n + 8)
	g.Nodes.FirstEdge = model.Alloc[uint32](n + 9)[:0]
	g.Edges.Type = model.Alloc[uint8](5 * n)[:0]
	g.Edges.Name = model.Alloc[uint32](5 * n)[:0]
	g.Edges.To = model.Alloc[model.NodeIndex](5 * n)[:0]
	// Synthetic roots first: the CSR edge order follows node order.
	var globals []int32
	for i := range n {
		if b.k.kind[o.Type[i]] == kindJSGlobalObject {
			globals = append(globals, b.base+int32(i))
		}
	}
	natives := b.nativeContexts()
	native := h.NativeRoots(b.pages, o, natives)
	b.addNode("synthetic", b.str(""), idRoot, 0)
	b.addEdgeTo(Ref{Kind: EdgeElement, Index: 1}, 1)
	for j, gi := range globals {
		b.addEdgeTo(Ref{Kind: EdgeShortcut, Name: strconv.Itoa(j + 1)}, gi)
	}
	b.addNode("synthetic", b.str("(GC roots)"), idGCRoots, 0)
	for j := range gcRootNames {
		b.addEdgeTo(Ref{Kind: EdgeElement, Index: uint32(j + 1)}, int32(2+j))
	}
	b.addNode("synthetic", b.str("(Stack roots)"), idStackRoots, 0)
	for _, s := range stack {
		if h.IsHeapObject(s.Value) {
			b.addEdge(Ref{Kind: EdgeInternal, Name: s.Name, To: h.Untag(s.Value)})
		}
	}
	elements := func(id uint64, name string, kind EdgeKind, lists ...[]int32) {
		b.addNode("synthetic", b.str(name), id, 0)
		j := uint32(0)
		for _, l := range lists {
			for _, oi := range l {
				j++
				b.addEdgeTo(Ref{Kind: kind, Index: j, Name: strconv.Itoa(int(j))}, b.base+oi)
			}
			kind = EdgeWeak // a second list holds weak references
		}
	}
	nc := make([]int32, len(natives))
	for j, i := range natives {
		nc[j] = int32(i)
	}
	elements(idNativeContexts, "(Native contexts)", EdgeElement, nc)
	elements(idGlobalHandles, "(Global handles)", EdgeElement, native.GlobalStrong, native.GlobalWeak)
	elements(idMicrotasks, "(Microtask queue)", EdgeElement, native.Microtasks)
	elements(idNativeRoots, "(Native roots)", EdgeElement, native.Other)
	b.w.emit = b.addEdge
	pg := 0 // the page the walk is in: objects are in address order
	for i := range n {
		if progress != nil && i%(1<<16) == 0 {
			progress(int64(i), int64(n))
		}
		// Pages the walk has left are released from the resident set (a
		// later read of one, naming a string or a constructor, faults
		// it back in from the page cache).
		for ; pg < len(b.pages) && b.pages[pg].AreaEnd <= o.Addr[i]; pg++ {
			h.p.Release(b.pages[pg].AreaStart, int(b.pages[pg].AreaEnd-b.pages[pg].AreaStart))
		}
		typ, name := b.describe(i)
		b.addNode(typ, name, o.Addr[i], uint64(o.Size[i]))
		b.w.References(i)
	}
	g.Nodes.FirstEdge = append(g.Nodes.FirstEdge, uint32(len(g.Edges.To)))
	g.Root = 0
	b.weakenNativeRoots()
	// The threads' stacks travel with the heap (convert to .jsonl/.db
	// keeps them); a stack the frame walker cannot read costs the stacks,
	// not the heap.
	if st, err := b.p.Stacks(); err == nil {
		g.Stacks = st
	} else {
		g.Meta = append(g.Meta, model.KV{Key: "nodecore:stack_error", Value: err.Error()})
	}
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.p.Path, err)
	}
	return g, nil
}

// weakenNativeRoots makes weak the edges of "(Native roots)" (the
// conservative scan of native memory) to JavaScript objects that the
// precise roots reach: the globals, native contexts, stacks, global
// handles and microtasks. Such a native reference is, for a process at
// rest, nearly always a stale word of a live C++ buffer (a heap
// snapshot's or a collection's leftovers), and as a root it would cut the
// object from its owner: not dominated by it, its path shown through
// "(Native roots)". The references to objects nothing else reaches stay
// strong (Node's native data holds them), and so do those to strings and
// V8's internals, which V8's own tables (the string table, the roots
// table) root in a snapshot too.
func (b *builder) weakenNativeRoots() {
	g := b.g
	native := int32(1 + len(gcRootNames)) // "(Native roots)", the last of them
	js := map[uint8]bool{b.nodeType["object"]: true, b.nodeType["closure"]: true, b.nodeType["regexp"]: true}
	reach := make([]bool, g.NumNodes())
	reach[g.Root] = true
	stack := []int32{g.Root}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s, e := g.EdgeRange(v)
		for j := s; j < e; j++ {
			to := g.Edges.To[j]
			if reach[to] || (v == native && js[g.Nodes.Type[to]]) || g.EdgeType(j).Strength == model.Weak {
				continue
			}
			reach[to] = true
			stack = append(stack, to)
		}
	}
	weak := b.edgeType[EdgeWeak]
	s, e := g.EdgeRange(native)
	for j := s; j < e; j++ {
		if to := g.Edges.To[j]; js[g.Nodes.Type[to]] && reach[to] {
			g.Edges.Type[j] = weak
			g.Edges.Name[j] = b.str(strconv.Itoa(int(g.Edges.Name[j])))
		}
	}
}

// nativeContexts returns the object indexes of the native contexts, in
// address order. NATIVE_CONTEXT_TYPE has no name in the metadata (only
// the range of context types does); a context's map names its native
// context instead (Map::native_context, in the slot that other maps use
// for their constructor).
func (b *builder) nativeContexts() []int {
	o, h := b.o, b.h
	found := map[int]bool{}
	maps := map[uint64]bool{}
	for i := range o.Len() {
		if b.k.kind[o.Type[i]] != kindContext || maps[o.Map[i]] {
			continue
		}
		maps[o.Map[i]] = true
		nc := b.w.word(o.Map[i] + uint64(h.OffConstructor))
		if b.w.kindAt(nc) != kindContext {
			continue
		}
		if j := o.Index(h.Untag(nc)); j >= 0 {
			found[j] = true
		}
	}
	out := make([]int, 0, len(found))
	for j := range found {
		out = append(out, j)
	}
	sort.Ints(out)
	b.native = found
	return out
}

// describe returns object i's V8 snapshot node type and name.
func (b *builder) describe(i int) (string, model.StringID) {
	h, o := b.h, b.o
	a, t := o.Addr[i], o.Type[i]
	switch kd := h.objKind(b.k, t, o.Map[i]); kd {
	case kindString:
		switch h.StringRepresentation(t) {
		case "cons":
			return "concatenated string", b.str("(concatenated string)")
		case "sliced":
			return "sliced string", b.str("(sliced string)")
		}
		s, _, err := h.String(a, 1024)
		if err != nil {
			s = ""
		}
		return "string", b.in.Intern([]byte(s)) // values rarely repeat: not cached by str
	case kindHeapNumber:
		return "number", b.str("heap number")
	case kindSymbol:
		return "symbol", b.str("symbol")
	case kindBigInt:
		return "bigint", b.str("bigint")
	case kindJSFunction:
		return "closure", b.str(b.functionName(a))
	case kindJSBoundFunction:
		return "closure", b.str("native_bind")
	case kindJSRegExp:
		return "regexp", b.str(b.regexpSource(a))
	case kindMap:
		return b.shapeType(), b.str("system / Map")
	case kindContext:
		if b.native[i] {
			return "hidden", b.str("system / NativeContext")
		}
		return "object", b.str("system / Context")
	case kindJSGlobalObject, kindJSGlobalProxy:
		return "object", b.str("global")
	case kindSharedFunctionInfo:
		return "code", b.str(b.sfiNameOf(a))
	case kindCode:
		return "code", b.str("(code)")
	case kindPropertyArray:
		return "hidden", b.str("system / PropertyArray")
	case kindDescriptorArray:
		return b.shapeType(), b.str("system / DescriptorArray")
	case kindFixedArray, kindHashTable, kindWeakArrayList, kindFixedDoubleArray, kindByteArray:
		if typ := systemTypes[h.TypeName(t)]; typ != "" {
			break
		}
		return "array", b.str("")
	case kindOddball:
		return "hidden", b.str("system / Oddball")
	default:
		if kd >= kindJSReceiver {
			return "object", b.constructorName(a, o.Map[i], t, int64(o.Size[i]))
		}
	}
	c := b.w.l.classes[t]
	if c == "" {
		c = h.TypeName(t)
	}
	typ := systemTypes[h.TypeName(t)]
	switch typ {
	case "":
		typ = "hidden"
	case "object shape":
		typ = b.shapeType()
	}
	return typ, b.str("system / " + c)
}

// shapeType is the node type of maps and their kin: "object shape" from
// V8 11 (Node 20) on, "hidden" in V8 10's snapshots, which have no such
// type.
func (b *builder) shapeType() string {
	if b.p.V8[0] < 11 {
		return "hidden"
	}
	return "object shape"
}

// systemTypes are the snapshot node types V8 gives its internal objects
// other than hidden (V8HeapExplorer::GetSystemEntryType): code-like
// objects are "code", shape-like ones "object shape". DevTools sums them
// as "(compiled code)" and "(object shape)", not "(system)".
var systemTypes = map[string]string{
	"ALLOCATION_SITE_TYPE": "code", "ARRAY_BOILERPLATE_DESCRIPTION_TYPE": "code", "BYTECODE_ARRAY_TYPE": "code",
	"BYTECODE_WRAPPER_TYPE": "code", "CLOSURE_FEEDBACK_CELL_ARRAY_TYPE": "code", "CODE_TYPE": "code",
	"CODE_WRAPPER_TYPE": "code", "FEEDBACK_CELL_TYPE": "code", "FEEDBACK_METADATA_TYPE": "code",
	"FEEDBACK_VECTOR_TYPE": "code", "INSTRUCTION_STREAM_TYPE": "code", "INTERPRETER_DATA_TYPE": "code",
	"LOAD_HANDLER_TYPE": "code", "OBJECT_BOILERPLATE_DESCRIPTION_TYPE": "code", "PREPARSE_DATA_TYPE": "code",
	"REG_EXP_BOILERPLATE_DESCRIPTION_TYPE": "code", "SCOPE_INFO_TYPE": "code", "STORE_HANDLER_TYPE": "code",
	"TEMPLATE_OBJECT_DESCRIPTION_TYPE": "code", "TRUSTED_BYTE_ARRAY_TYPE": "code",
	"UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_TYPE": "code", "UNCOMPILED_DATA_WITH_PREPARSE_DATA_TYPE": "code",
	"UNCOMPILED_DATA_WITHOUT_PREPARSE_DATA_WITH_JOB_TYPE": "code", "UNCOMPILED_DATA_WITH_PREPARSE_DATA_AND_JOB_TYPE": "code",
	"TURBOFAN_BITSET_TYPE_TYPE": "code", "TURBOFAN_HEAP_CONSTANT_TYPE_TYPE": "code",
	"TURBOFAN_OTHER_NUMBER_CONSTANT_TYPE_TYPE": "code", "TURBOFAN_RANGE_TYPE_TYPE": "code", "TURBOFAN_UNION_TYPE_TYPE": "code",
	"TRANSITION_ARRAY_TYPE": "object shape", "PROTOTYPE_INFO_TYPE": "object shape", "ENUM_CACHE_TYPE": "object shape",
}

// functionName is a JSFunction's name, from its SharedFunctionInfo.
func (b *builder) functionName(fn uint64) string {
	sfi := b.w.word(fn + uint64(b.w.l.offFnShared))
	if !b.h.IsHeapObject(sfi) {
		return ""
	}
	return b.sfiNameOf(b.h.Untag(sfi))
}

// sfiNameOf is a SharedFunctionInfo's function name (Functions.sharedName),
// cached: many closures share one.
func (b *builder) sfiNameOf(sfi uint64) string {
	if s, ok := b.sfiName[sfi]; ok {
		return s
	}
	name, _ := b.fns.sharedName(sfi)
	b.sfiName[sfi] = name
	return name
}

// regexpSource is a JSRegExp's source text.
func (b *builder) regexpSource(a uint64) string {
	off, ok := b.p.Meta.Field("JSRegExp", "source")
	if !ok {
		return ""
	}
	s, _ := b.w.keyName(b.w.word(a + uint64(off)))
	return s
}

// constructorName is the class name of the JavaScript object at address
// a (of type t, with map m), as V8's heap snapshot names it
// (JSReceiver::GetConstructorName):
//
//  1. the function the map's constructor_or_back_pointer chain ends at
//     (through back pointers of transitioned maps), unless the map is a
//     prototype's (V8 drops those constructors) or the name is empty or
//     "Object";
//  2. else along the prototype chain from the object: an own data
//     property Symbol.toStringTag holding a string, or (from the object's
//     prototype on) an own data property "constructor" holding a function
//     with a name other than "Object";
//  3. else the name V8 gives its instance type (JSReceiver::class_name):
//     "Generator" for generators and async functions, "Promise", "Error",
//     ...; "Object" for the rest.
//
// Names are cached by map, except for dictionary-mode maps, which objects
// with different own properties share (V8's Intl.Collator.prototype and
// the Intl object, one "Intl.Collator", the other "Intl"); step 2's walk
// from the object's prototype on is cached by prototype. Proxies are
// named by step 3 only.
func (b *builder) constructorName(a, m uint64, t uint16, size int64) model.StringID {
	if id, ok := b.ctorName[m]; ok {
		return id
	}
	bf3 := uint64(binary.LittleEndian.Uint32(b.w.bytes(m+uint64(b.h.OffBitField3), 4)))
	shared := bf3&(1<<b.w.l.dictShift) == 0
	var name string
	if b.k.kind[t] != kindJSProxy {
		name = b.mapConstructor(m)
		if name == "" {
			tag, _ := b.ownNames(a, m)
			name = b.stringAt(tag)
		}
		if name == "" {
			name = b.prototypeName(b.w.word(m + uint64(b.h.OffPrototype)))
		}
	}
	if name == "" {
		name = b.className(a, t, size)
	}
	id := b.str(name)
	if shared {
		b.ctorName[m] = id
	}
	return id
}

// mapConstructor is step 1 of constructorName.
func (b *builder) mapConstructor(m uint64) string {
	h := b.h
	// Prototypes' maps lose their constructor to Object when V8
	// optimizes them as prototypes (Map::is_prototype_map, the bit_field3
	// bit below is_dictionary_map). The map of an instance of a derived
	// class (new.target is not the base: Map::new_target_is_base, the
	// bit_field2 bit below is_immutable_prototype and the elements kind)
	// names the base, so V8 reads the prototype chain instead: Node's
	// FastBuffers are "Buffer" (FastBuffer.prototype.constructor), not
	// Uint8Array.
	bf3 := uint64(binary.LittleEndian.Uint32(b.w.bytes(m+uint64(h.OffBitField3), 4)))
	if bf3&(1<<(b.w.l.dictShift-1)) != 0 {
		return ""
	}
	if bf2 := uint64(b.w.bytes(m+uint64(h.OffBitField2), 1)[0]); b.w.l.elemKindShift == 2 && bf2&1 == 0 {
		return ""
	}
	cur := m
	for range 10000 {
		c := b.w.word(cur + uint64(h.OffConstructor))
		switch b.w.kindAt(c) {
		case kindMap:
			cur = h.Untag(c)
			continue
		case kindJSFunction:
			if s := b.functionName(h.Untag(c)); s != "Object" {
				return s
			}
		}
		break
	}
	return ""
}

// ownNames returns the values of the own data properties
// Symbol.toStringTag and "constructor" of the object at a (0 when absent).
func (b *builder) ownNames(a, m uint64) (tag, ctor uint64) {
	b.pw.props = &b.props
	b.props = b.props[:0]
	var done slots
	b.pw.properties(a, m, &done)
	b.pw.refs = b.pw.refs[:0]
	for _, p := range b.props {
		switch p.Name {
		case "<symbol Symbol.toStringTag>":
			tag = p.Value
		case "constructor":
			ctor = p.Value
		}
	}
	return tag, ctor
}

// stringAt decodes the string the tagged word v points to, "" if it is
// not one.
func (b *builder) stringAt(v uint64) string {
	h := b.h
	if !h.IsHeapObject(v) {
		return ""
	}
	if t, err := h.InstanceType(h.Untag(v)); err != nil || !h.IsString(t) {
		return ""
	}
	s, _, _ := h.String(h.Untag(v), 1024)
	return s
}

// prototypeName is step 2 of constructorName from the prototype proto
// (a tagged word) on: its own Symbol.toStringTag string, or its own
// "constructor" function's name when not "Object", else its prototype's.
func (b *builder) prototypeName(proto uint64) string {
	var chain []uint64
	name := ""
	for range 100 {
		if b.w.kindAt(proto) < kindJSReceiver {
			break
		}
		if s, ok := b.protoName[proto]; ok {
			name = s
			break
		}
		chain = append(chain, proto)
		a := b.h.Untag(proto)
		m, err := b.h.MapOf(a)
		if err != nil {
			break
		}
		tag, ctor := b.ownNames(a, m)
		if name = b.stringAt(tag); name != "" {
			break
		}
		if b.w.kindAt(ctor) == kindJSFunction {
			if s := b.functionName(b.h.Untag(ctor)); s != "Object" && s != "" {
				name = s
				break
			}
		}
		proto = b.w.word(m + uint64(b.h.OffPrototype))
	}
	for _, p := range chain {
		b.protoName[p] = name
	}
	return name
}

// typeClassNames are V8's class names of instance types
// (JSReceiver::class_name), by the metadata's type names.
var typeClassNames = map[string]string{
	"JS_ARGUMENTS_OBJECT_TYPE": "Arguments", "JS_ARRAY_TYPE": "Array", "JS_ARRAY_BUFFER_TYPE": "ArrayBuffer",
	"JS_ARRAY_ITERATOR_TYPE": "ArrayIterator", "JS_DATE_TYPE": "Date", "JS_ERROR_TYPE": "Error",
	"JS_GENERATOR_OBJECT_TYPE": "Generator", "JS_ASYNC_FUNCTION_OBJECT_TYPE": "Generator",
	"JS_ASYNC_GENERATOR_OBJECT_TYPE": "Generator", "JS_MAP_TYPE": "Map", "JS_SET_TYPE": "Set",
	"JS_MAP_KEY_ITERATOR_TYPE": "MapIterator", "JS_MAP_KEY_VALUE_ITERATOR_TYPE": "MapIterator",
	"JS_MAP_VALUE_ITERATOR_TYPE": "MapIterator", "JS_SET_KEY_VALUE_ITERATOR_TYPE": "SetIterator",
	"JS_SET_VALUE_ITERATOR_TYPE": "SetIterator", "JS_PROMISE_TYPE": "Promise", "JS_REG_EXP_TYPE": "RegExp",
	"JS_WEAK_MAP_TYPE": "WeakMap", "JS_WEAK_SET_TYPE": "WeakSet", "JS_WEAK_REF_TYPE": "WeakRef",
	"JS_FINALIZATION_REGISTRY_TYPE": "FinalizationRegistry", "JS_DATA_VIEW_TYPE": "DataView",
	"JS_RAB_GSAB_DATA_VIEW_TYPE": "DataView",
}

// className is step 3 of constructorName. Generators whose type the
// metadata does not name are told by their fields (refWalker.generator).
func (b *builder) className(a uint64, t uint16, size int64) string {
	if s, ok := typeClassNames[b.h.TypeName(t)]; ok {
		return s
	}
	var done slots
	if b.pw.generator(a, size, &done) {
		b.pw.refs = b.pw.refs[:0]
		return "Generator"
	}
	return "Object"
}
