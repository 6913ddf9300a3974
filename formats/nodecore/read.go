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
	b := &builder{p: p, h: p.Heap, o: o, w: w, fns: fns, g: &model.Graph{}, k: p.Heap.kinds(),
		nodeType: map[string]uint8{}, ctorName: map[uint64]model.StringID{}, names: map[string]model.StringID{}, sfiName: map[uint64]string{}}
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
		return "object shape", b.str("system / Map")
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
	case kindFixedArray, kindHashTable, kindPropertyArray, kindWeakArrayList, kindFixedDoubleArray, kindByteArray, kindDescriptorArray:
		return "array", b.str("")
	case kindOddball:
		return "hidden", b.str("system / Oddball")
	default:
		if kd >= kindJSReceiver {
			return "object", b.constructorName(o.Map[i])
		}
	}
	c := b.w.l.classes[t]
	if c == "" {
		c = h.TypeName(t)
	}
	return "hidden", b.str("system / " + c)
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

// constructorName is the class name of objects with map m: the function
// its constructor_or_back_pointer chain ends at (through back pointers of
// transitioned maps), as V8's GetConstructorName; "Object" otherwise.
func (b *builder) constructorName(m uint64) model.StringID {
	if id, ok := b.ctorName[m]; ok {
		return id
	}
	h := b.h
	name := "Object"
	cur := m
	// Prototypes' maps lose their constructor to Object when V8
	// optimizes them as prototypes (Map::is_prototype_map, the bit_field3
	// bit below is_dictionary_map), and V8 names them Object.
	bf3 := uint64(binary.LittleEndian.Uint32(b.w.bytes(m+uint64(h.OffBitField3), 4)))
	if bf3&(1<<(b.w.l.dictShift-1)) != 0 {
		cur = 0
	}
	for range 10000 {
		if cur == 0 {
			break
		}
		c := b.w.word(cur + uint64(h.OffConstructor))
		if !h.IsHeapObject(c) {
			break
		}
		ca := h.Untag(c)
		t, err := h.InstanceType(ca)
		if err != nil {
			break
		}
		if t == h.MapType {
			cur = ca
			continue
		}
		if h.objKind(b.k, t, b.w.word(ca)-1) == kindJSFunction {
			if s := b.functionName(ca); s != "" {
				name = s
			}
		}
		break
	}
	id := b.str(name)
	b.ctorName[m] = id
	return id
}
