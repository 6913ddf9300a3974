package nodecore

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// EdgeKind is V8's heap-snapshot edge type an outgoing reference maps to,
// so a core's graph reads like a snapshot's (docs/nodecore.md).
type EdgeKind uint8

// Edge kinds, in V8's snapshot order.
const (
	EdgeContext  EdgeKind = iota // a closure variable: context slot by name
	EdgeElement                  // an array element, by index
	EdgeProperty                 // a named property
	EdgeInternal                 // a VM field, by name
	EdgeHidden                   // a VM slot, by index
	EdgeShortcut                 // a shortcut (root to user roots)
	EdgeWeak                     // a weak reference, by name
)

// edgeKindNames are V8's names of the kinds.
var edgeKindNames = []string{"context", "element", "property", "internal", "hidden", "shortcut", "weak"}

// Ref is one outgoing reference: to the object at address To, named Name
// (property, variable or field name) or, for element and hidden
// references, numbered Index.
type Ref struct {
	Kind  EdgeKind
	Name  string
	Index uint32
	To    uint64
}

// slots is a set of an object's word offsets (the first 256 words, more
// than V8's largest JSObject instance), the fields a walk already took,
// without a per-object allocation.
type slots [4]uint64

// maxSlotOffset is the first byte offset slots cannot hold.
const maxSlotOffset = int64(8 * 64 * len(slots{}))

func (s *slots) add(off int64) {
	if off >= 0 && off < maxSlotOffset {
		s[off/512] |= 1 << (off / 8 % 64)
	}
}

func (s slots) has(off int64) bool {
	return off >= 0 && off < maxSlotOffset && s[off/512]&(1<<(off/8%64)) != 0
}

// union adds the offsets of o.
func (s *slots) union(o slots) {
	for i := range s {
		s[i] |= o[i]
	}
}

// field is a named field offset of a V8 class.
type field struct {
	off  int64
	name string
}

// layout is what the reference walk needs, read once from the metadata.
type refLayout struct {
	offProperties, offElements                        int64
	dictShift                                         uint
	ownMask, ownShift                                 uint64
	elemKindMask, elemKindShift, elemDictionary       uint64
	descKey, descDetails, descValue                   int64
	locMask, locShift, locField, idxMask, idxShift    uint64
	nameDictStart, nameDictEntry                      int64
	numDictStart, numDictEntry                        int64
	ctxScopeInfo, ctxPrevious, ctxMinSlots            int64
	siNLocals, siFirstVars                            int64
	offFnShared, offFnContext, offSFIName, offGlobalD int64
	offSymbolName                                     int64
	// fields lists, per instance type, the named fields of its class and
	// its ancestors (class_<C>__<f> with parent_<C>__<P>).
	fields map[uint16][]field
	// classes maps instance types to V8's class names (JSObject).
	classes map[uint16]string
}

func (h *Heap) layout() (*refLayout, error) {
	n := h.p.Meta.Need()
	l := &refLayout{}
	l.offProperties = n.Field("JSReceiver.raw_properties_or_hash")
	l.offElements = n.Field("JSObject.elements")
	l.dictShift = uint(n.Value("bit_field3_is_dictionary_map_shift"))
	l.ownMask, l.ownShift = uint64(n.Value("bit_field3_number_of_own_descriptors_mask")), uint64(n.Value("bit_field3_number_of_own_descriptors_shift"))
	l.elemKindMask, l.elemKindShift = uint64(n.Value("bit_field2_elements_kind_mask")), uint64(n.Value("bit_field2_elements_kind_shift"))
	l.elemDictionary = uint64(n.Value("elements_dictionary_elements"))
	l.descKey, l.descDetails, l.descValue = n.Value("prop_desc_key"), n.Value("prop_desc_details"), n.Value("prop_desc_value")
	l.locMask, l.locShift, l.locField = uint64(n.Value("prop_location_mask")), uint64(n.Value("prop_location_shift")), uint64(n.Value("prop_location_Field"))
	l.idxMask, l.idxShift = uint64(n.Value("prop_index_mask")), uint64(n.Value("prop_index_shift"))
	l.nameDictStart = n.Value("namedictionary_prefix_start_index") + n.Value("namedictionaryshape_prefix_size")
	l.nameDictEntry = n.Value("namedictionaryshape_entry_size")
	l.numDictStart = n.Value("namedictionary_prefix_start_index") + n.Value("numberdictionaryshape_prefix_size")
	l.numDictEntry = n.Value("numberdictionaryshape_entry_size")
	l.ctxScopeInfo, l.ctxPrevious, l.ctxMinSlots = n.Value("context_idx_scope_info"), n.Value("context_idx_prev"), n.Value("context_min_slots")
	l.siNLocals, l.siFirstVars = n.Value("scopeinfo_idx_ncontextlocals"), n.Value("scopeinfo_idx_first_vars")
	l.offFnShared, l.offFnContext = n.Field("JSFunction.shared"), n.Field("JSFunction.context")
	l.offSFIName = n.Field("SharedFunctionInfo.name_or_scope_info")
	l.offGlobalD = n.Field("JSGlobalObject.global_dictionary")
	l.offSymbolName = n.Field("Symbol.name")
	if err := n.Err(); err != nil {
		return nil, err
	}
	m := h.p.Meta
	parents := map[string]string{}
	classFields := map[string][]field{}
	for name, v := range m.values {
		if rest, ok := strings.CutPrefix(name, "parent_"); ok {
			if c, p, ok := strings.Cut(rest, "__"); ok {
				parents[c] = p
			}
		}
		if rest, ok := strings.CutPrefix(name, "class_"); ok {
			parts := strings.SplitN(rest, "__", 3)
			if len(parts) == 3 && isTaggedSuffix(parts[2]) {
				classFields[parts[0]] = append(classFields[parts[0]], field{off: v, name: parts[1]})
			}
		}
	}
	l.fields, l.classes = map[uint16][]field{}, map[uint16]string{}
	for name, v := range m.values {
		rest, ok := strings.CutPrefix(name, "type_")
		if !ok || v < 0 || v >= 1<<16 {
			continue
		}
		c, _, _ := strings.Cut(rest, "__")
		l.classes[uint16(v)] = c
		seen := map[int64]bool{}
		var fs []field
		for k := c; k != "" && len(fs) < 64; k = parents[k] {
			for _, f := range classFields[k] {
				if !seen[f.off] && f.off > 0 {
					seen[f.off] = true
					fs = append(fs, f)
				}
			}
			if k == "HeapObject" {
				break
			}
		}
		l.fields[uint16(v)] = fs
	}
	return l, nil
}

// isTaggedSuffix reports whether a metadata field's type suffix is a
// tagged value (an object reference), not raw bytes.
func isTaggedSuffix(t string) bool {
	switch t {
	case "char", "int", "uint8_t", "uint16_t", "int16_t", "int32_t", "uint32_t", "uintptr_t", "size_t", "double", "SMI", "Smi", "Tagged_Smi_":
		return false
	}
	return true
}

// refWalker walks objects' references.
type refWalker struct {
	h    *Heap
	l    *refLayout
	k    *kinds
	objs *Objects
	// names caches decoded key strings by address.
	names map[uint64]string
	refs  []Ref
	// emit, when set, receives each reference instead of refs: the graph
	// builder adds edges as they are found, so no buffer grows to the
	// largest object's references (a 3-million-element array's are 120 MB
	// of Refs, and growing to them allocated 600 MB).
	emit func(Ref)
	// props, when non-nil, collects every named property with its raw
	// value (Smis included), for Heap.Properties.
	props *[]Property
}

// Property is one named property of a JavaScript object with its value as
// the tagged word V8 holds (a Smi or a heap-object pointer; a double field
// holds a HeapNumber pointer).
type Property struct {
	Name  string
	Value uint64
}

// Properties returns the named properties of the JavaScript object at
// address obj (fast in-object and out-of-object fields, constants in the
// descriptors, or the dictionary), in V8's order.
func (h *Heap) Properties(obj uint64) ([]Property, error) {
	m, err := h.MapOf(obj)
	if err != nil {
		return nil, err
	}
	t, err := h.MapInstanceType(m)
	if err != nil {
		return nil, err
	}
	w, err := h.newWalker(nil)
	if err != nil {
		return nil, err
	}
	if kd := h.objKind(w.k, t, m); kd < kindJSReceiver {
		return nil, fmt.Errorf("object at 0x%x is a %s, not a JavaScript object", obj, h.TypeName(t))
	}
	var props []Property
	w.props = &props
	var done slots
	w.properties(obj, m, &done)
	return props, nil
}

func (h *Heap) newWalker(o *Objects) (*refWalker, error) {
	l, err := h.layout()
	if err != nil {
		return nil, err
	}
	return &refWalker{h: h, l: l, k: h.kinds(), objs: o, names: map[uint64]string{}}, nil
}

// word reads the word at addr (0 when unmapped: a reference to nothing).
func (w *refWalker) word(addr uint64) uint64 {
	v, err := w.h.p.ReadWord(addr)
	if err != nil {
		return 0
	}
	return v
}

// add records a strong reference held by the tagged word v.
func (w *refWalker) add(kind EdgeKind, name string, index uint32, v uint64) {
	var r Ref
	switch {
	case w.h.IsHeapObject(v):
		r = Ref{Kind: kind, Name: name, Index: index, To: w.h.Untag(v)}
	case w.h.IsWeak(v):
		r = Ref{Kind: EdgeWeak, Name: name, Index: index, To: w.h.Untag(w.h.Strong(v))}
	default:
		return
	}
	if w.emit != nil {
		w.emit(r)
	} else {
		w.refs = append(w.refs, r)
	}
}

// keyName decodes a property key (a string or a symbol).
func (w *refWalker) keyName(v uint64) (string, bool) {
	if !w.h.IsHeapObject(v) {
		return "", false
	}
	a := w.h.Untag(v)
	if s, ok := w.names[a]; ok {
		return s, s != ""
	}
	t, err := w.h.InstanceType(a)
	s := ""
	if err == nil {
		switch {
		case w.h.IsString(t):
			s, _, _ = w.h.String(a, 1024)
		case w.k.kind[t] == kindSymbol:
			s = "<symbol>"
			if d := w.word(a + uint64(w.l.offSymbolName)); w.h.IsHeapObject(d) {
				if dt, err := w.h.InstanceType(w.h.Untag(d)); err == nil && w.h.IsString(dt) {
					ds, _, _ := w.h.String(w.h.Untag(d), 1024)
					s = "<symbol " + ds + ">"
				}
			}
		}
	}
	w.names[a] = s
	return s, s != ""
}

// References returns the outgoing references of object i (valid until the
// next call; empty when emit is set, which receives them instead).
func (w *refWalker) References(i int) []Ref {
	w.refs = w.refs[:0]
	o := w.objs
	a, m, t, size := o.Addr[i], o.Map[i], o.Type[i], int64(o.Size[i])
	h := w.h
	w.add(EdgeInternal, "map", 0, h.Tag(m))
	kd := h.objKind(w.k, t, m)
	switch {
	case kd == kindString:
		switch h.StringRepresentation(t) {
		case "cons":
			w.add(EdgeInternal, "first", 0, w.word(a+uint64(h.offConsFirst)))
			w.add(EdgeInternal, "second", 0, w.word(a+uint64(h.offConsSnd)))
		case "sliced":
			w.add(EdgeInternal, "parent", 0, w.word(a+uint64(h.offSlicedParent)))
		case "thin":
			w.add(EdgeInternal, "actual", 0, w.word(a+uint64(h.offThinActual)))
		}
		return w.refs
	case kd >= kindJSReceiver:
		w.jsObject(a, m, t, kd, size)
		return w.refs
	case kd == kindContext:
		w.context(a, size)
		return w.refs
	case kd == kindCode:
		// Code and bytecode: tagged header fields (the constant pool,
		// handler and source position tables), then raw instructions or
		// bytecodes; the header's words that point to objects are kept.
		done := w.namedFields(a, t, slots{})
		for off := int64(8); off < 56 && (size == 0 || off+8 <= size); off += 8 {
			if !done.has(off) {
				w.add(EdgeHidden, "", uint32(off/8-1), w.word(a+uint64(off)))
			}
		}
		return w.refs
	case kd == kindHeapNumber, kd == kindBigInt, kd == kindByteArray, kd == kindFixedDoubleArray,
		kd == kindFreeSpace, kd == kindFiller:
		w.namedFields(a, t, slots{})
		return w.refs
	}
	done := w.namedFields(a, t, slots{})
	// Everything else: every tagged slot of the body, numbered.
	if size > 0 {
		for off := int64(8); off+8 <= size; off += 8 {
			if done.has(off) {
				continue
			}
			w.add(EdgeHidden, "", uint32(off/8-1), w.word(a+uint64(off)))
		}
	}
	return w.refs
}

// namedFields adds the fields the metadata names for type t; skip, when
// set, lists offsets already walked. It returns the offsets it added.
func (w *refWalker) namedFields(a uint64, t uint16, skip slots) slots {
	var done slots
	for _, f := range w.l.fields[t] {
		if skip.has(f.off) {
			continue
		}
		done.add(f.off)
		w.add(EdgeInternal, f.name, 0, w.word(a+uint64(f.off)))
	}
	return done
}

// jsObject walks a JavaScript object: named properties (fast in-object
// and out-of-object, or dictionary), elements, the prototype, and what
// its kind holds (closures' context and code, collections' tables, bound
// functions' target and arguments, the global object's dictionary).
func (w *refWalker) jsObject(a, m uint64, t uint16, kd kind, size int64) {
	h, l := w.h, w.l
	var skip slots
	skip.add(0)
	skip.add(l.offProperties)
	skip.add(l.offElements)
	w.add(EdgeInternal, "properties", 0, w.word(a+uint64(l.offProperties)))
	w.properties(a, m, &skip)
	if kd == kindJSGlobalObject {
		skip.add(l.offGlobalD)
		w.globalDictionary(w.word(a + uint64(l.offGlobalD)))
	}
	elements := w.word(a + uint64(l.offElements))
	if kd != kindJSFunction && kd != kindJSBoundFunction {
		w.add(EdgeInternal, "elements", 0, elements)
		w.elements(m, elements)
	}
	if proto := w.word(m + uint64(h.OffPrototype)); h.IsHeapObject(proto) {
		w.add(EdgeProperty, "__proto__", 0, proto)
	}
	switch kd {
	case kindJSBoundFunction:
		// JSBoundFunction: bound_target_function, bound_this,
		// bound_arguments after the JSObject header (not in the metadata;
		// stable from V8 10 to 13).
		for j, name := range []string{"bound_function", "bound_this", "bound_argument_list"} {
			off := int64(24 + 8*j)
			skip.add(off)
			w.add(EdgeInternal, name, 0, w.word(a+uint64(off)))
		}
	case kindJSCollection, kindJSWeakCollection:
		skip.add(24)
		w.add(EdgeInternal, "table", 0, w.word(a+24))
	case kindJSPromise:
		w.promise(a, &skip)
	}
	if kd == kindJSGenerator || kd == kindJSReceiver {
		w.generator(a, size, &skip)
	}
	skip.union(w.namedFields(a, t, skip))
	// Every other tagged slot of the body, numbered, as V8's snapshot
	// adds them (its IndexedReferencesExtractor): embedder fields, the
	// fields of classes the metadata does not describe. Raw fields
	// (array buffers' lengths and pointers) become no edge: a reference
	// is kept only when it is the exact address of an object found.
	for off := int64(8); off+8 <= size; off += 8 {
		if !skip.has(off) {
			w.add(EdgeHidden, "", uint32(off/8-1), w.word(a+uint64(off)))
		}
	}
}

// The layouts of JSPromise and JSGeneratorObject, which the metadata does
// not describe: fields right after the JSObject header, the same from V8
// 10 to 13 (src/objects/js-promise.tq, js-generator.tq).
const (
	offPromiseReactionsOrResult = 24 // Smi 0, the PromiseReaction list while pending, else the value
	offPromiseFlags             = 32 // Smi: state and flags

	offGeneratorFunction   = 24
	offGeneratorContext    = 32
	offGeneratorReceiver   = 40
	offGeneratorResumeMode = 56 // Smi
	offGeneratorContinue   = 64 // Smi
	offGeneratorRegisters  = 72 // FixedArray: parameters and the registers of a suspended frame
	offGeneratorSize       = 80 // JSGeneratorObject's size: JSAsyncFunctionObject adds its promise here
)

// promise names a JSPromise's reactions_or_result, as V8's snapshot does:
// a pending promise's reactions (PromiseReactions, each holding the
// handlers and the derived promise or await closure) hang from it, so
// the objects awaiting a promise are retained by it.
func (w *refWalker) promise(a uint64, skip *slots) {
	if !w.h.IsSmi(w.word(a + offPromiseFlags)) {
		return
	}
	skip.add(offPromiseReactionsOrResult)
	w.add(EdgeInternal, "reactions_or_result", 0, w.word(a+offPromiseReactionsOrResult))
}

// generator names the fields of a generator or async function object
// suspended at a yield or an await, as V8's snapshot does: its function,
// context, receiver and parameters_and_registers (the frame's arguments
// and locals that live in registers, not in a context). Sync generators'
// instance type has no name in some majors' metadata, so the object is
// recognised by its fields: a JSFunction, a Context, two Smis and a
// FixedArray at the offsets above (a Context is never a JavaScript
// value, so no ordinary object has this shape).
// It reports whether the object is one.
func (w *refWalker) generator(a uint64, size int64, skip *slots) bool {
	if size < offGeneratorSize {
		return false
	}
	h := w.h
	if !h.IsSmi(w.word(a+offGeneratorResumeMode)) || !h.IsSmi(w.word(a+offGeneratorContinue)) ||
		w.kindAt(w.word(a+offGeneratorFunction)) != kindJSFunction ||
		w.kindAt(w.word(a+offGeneratorContext)) != kindContext ||
		w.kindAt(w.word(a+offGeneratorRegisters)) != kindFixedArray {
		return false
	}
	for _, f := range []field{{offGeneratorFunction, "function"}, {offGeneratorContext, "context"},
		{offGeneratorReceiver, "receiver"}, {offGeneratorRegisters, "parameters_and_registers"}} {
		skip.add(f.off)
		w.add(EdgeInternal, f.name, 0, w.word(a+uint64(f.off)))
	}
	return true
}

// kindAt is the kind of the object the tagged word v points to
// (kindUnknown for a Smi or an unreadable object).
func (w *refWalker) kindAt(v uint64) kind {
	if !w.h.IsHeapObject(v) {
		return kindUnknown
	}
	a := w.h.Untag(v)
	m, err := w.h.MapOf(a)
	if err != nil {
		return kindUnknown
	}
	t, err := w.h.MapInstanceType(m)
	if err != nil {
		return kindUnknown
	}
	return w.h.objKind(w.k, t, m)
}

// properties walks the named properties, dictionary or fast.
func (w *refWalker) properties(a, m uint64, skip *slots) {
	props := w.word(a + uint64(w.l.offProperties))
	bf3 := uint64(binary.LittleEndian.Uint32(w.bytes(m+uint64(w.h.OffBitField3), 4)))
	if bf3&(1<<w.l.dictShift) != 0 {
		w.nameDictionary(props)
	} else {
		w.fastProperties(a, m, props, skip)
	}
}

// property records a named property.
func (w *refWalker) property(name string, v uint64) {
	if w.props != nil {
		*w.props = append(*w.props, Property{Name: name, Value: v})
	}
	w.add(EdgeProperty, name, 0, v)
}

// bytes reads n bytes at addr, zeros when unmapped.
func (w *refWalker) bytes(addr uint64, n int) []byte {
	b, err := w.h.p.ReadBytes(addr, n)
	if err != nil {
		return make([]byte, n)
	}
	return b
}

// fastProperties walks the descriptors of a fast-mode map: fields in the
// object or its PropertyArray, constants in the descriptor itself.
func (w *refWalker) fastProperties(a, m, props uint64, skip *slots) {
	h, l := w.h, w.l
	bf3 := uint64(binary.LittleEndian.Uint32(w.bytes(m+uint64(h.OffBitField3), 4)))
	nown := int64((bf3 & l.ownMask) >> l.ownShift)
	descs := w.word(m + uint64(h.OffDescriptors))
	if nown == 0 || !h.IsHeapObject(descs) {
		return
	}
	d := h.Untag(descs)
	sz := w.bytes(m+uint64(h.OffInstanceSizeWords), 2)
	sizeWords, startWords := int64(sz[0]), int64(sz[1])
	inobject := sizeWords - startWords
	var propArray uint64
	if h.IsHeapObject(props) {
		propArray = h.Untag(props)
	}
	for j := int64(0); j < nown && j < 1020; j++ {
		base := d + uint64(h.descHeader+8*h.descStride*j)
		key := w.word(base + uint64(8*l.descKey))
		name, ok := w.keyName(key)
		if !ok {
			continue
		}
		details := w.word(base + uint64(8*l.descDetails))
		if !h.IsSmi(details) {
			continue
		}
		dv := uint64(h.SmiValue(details))
		if (dv&l.locMask)>>l.locShift != l.locField {
			w.property(name, w.word(base+uint64(8*l.descValue)))
			continue
		}
		idx := int64((dv & l.idxMask) >> l.idxShift)
		if idx < inobject {
			off := 8 * (sizeWords - inobject + idx)
			skip.add(off)
			w.property(name, w.word(a+uint64(off)))
		} else if propArray != 0 {
			w.property(name, w.word(propArray+16+8*uint64(idx-inobject)))
		}
	}
}

// fixedArray returns the length and element address of a FixedArray-like
// object, ok false if v is not one.
func (w *refWalker) fixedArray(v uint64) (n int64, data uint64, ok bool) {
	if !w.h.IsHeapObject(v) {
		return 0, 0, false
	}
	a := w.h.Untag(v)
	l := w.word(a + 8)
	if !w.h.IsSmi(l) {
		return 0, 0, false
	}
	n = w.h.SmiValue(l)
	if n < 0 || n > 1<<28 || !w.h.p.Mapped(a+16, int(8*n)) {
		return 0, 0, false
	}
	return n, a + 16, true
}

// nameDictionary walks a NameDictionary's key/value entries.
func (w *refWalker) nameDictionary(v uint64) {
	n, data, ok := w.fixedArray(v)
	if !ok || w.l.nameDictEntry < 2 {
		return
	}
	for i := w.l.nameDictStart; i+w.l.nameDictEntry <= n; i += w.l.nameDictEntry {
		name, ok := w.keyName(w.word(data + uint64(8*i)))
		if !ok {
			continue
		}
		w.property(name, w.word(data+uint64(8*(i+1))))
	}
}

// globalDictionary walks a GlobalDictionary: PropertyCells holding name
// (word 1) and value (word 3).
func (w *refWalker) globalDictionary(v uint64) {
	n, data, ok := w.fixedArray(v)
	if !ok {
		return
	}
	for i := int64(3); i < n; i++ {
		c := w.word(data + uint64(8*i))
		if !w.h.IsHeapObject(c) {
			continue
		}
		cell := w.h.Untag(c)
		name, ok := w.keyName(w.word(cell + 8))
		if !ok {
			continue
		}
		w.add(EdgeProperty, name, 0, w.word(cell+24))
	}
}

// elements walks an object's elements by its map's elements kind: tagged
// fast elements by index, dictionary elements by key; double and typed
// elements hold no references.
func (w *refWalker) elements(m, elements uint64) {
	bf2 := uint64(w.bytes(m+uint64(w.h.OffBitField2), 1)[0])
	ek := (bf2 & w.l.elemKindMask) >> w.l.elemKindShift
	switch {
	case ek <= 3 || (ek >= 6 && ek <= 11): // packed/holey smi and tagged, nonextensible, sealed, frozen
		n, data, ok := w.fixedArray(elements)
		if !ok {
			return
		}
		for i := int64(0); i < n; i++ {
			v := w.word(data + uint64(8*i))
			if w.h.IsHeapObject(v) && !w.isHole(v) {
				w.add(EdgeElement, "", uint32(i), v)
			}
		}
	case ek == w.l.elemDictionary:
		n, data, ok := w.fixedArray(elements)
		if !ok {
			return
		}
		for i := w.l.numDictStart; i+w.l.numDictEntry <= n; i += w.l.numDictEntry {
			k := w.word(data + uint64(8*i))
			if !w.h.IsSmi(k) {
				continue
			}
			w.add(EdgeElement, "", uint32(w.h.SmiValue(k)), w.word(data+uint64(8*(i+1))))
		}
	}
}

// isHole reports whether v is an oddball (the hole fills holey arrays).
func (w *refWalker) isHole(v uint64) bool {
	t, err := w.h.InstanceType(w.h.Untag(v))
	return err == nil && w.k.kind[t] == kindOddball
}

// context walks a Context: its scope info and parent context, and each
// captured variable by its name from the ScopeInfo.
func (w *refWalker) context(a uint64, size int64) {
	h, l := w.h, w.l
	slot := func(i int64) uint64 { return w.word(a + 16 + uint64(8*i)) }
	n := (size - 16) / 8
	si := slot(l.ctxScopeInfo)
	w.add(EdgeInternal, "scope_info", 0, si)
	w.add(EdgeInternal, "previous", 0, slot(l.ctxPrevious))
	names := w.ScopeInfoLocals(si)
	start := l.ctxMinSlots
	if int64(len(names)) == n-start-1 {
		start++ // a context extension slot precedes the locals
		w.add(EdgeInternal, "extension", 0, slot(l.ctxMinSlots))
	}
	for i := start; i < n; i++ {
		if j := i - start; j < int64(len(names)) {
			w.add(EdgeContext, names[j], 0, slot(i))
		} else if size > 0 {
			w.add(EdgeHidden, "", uint32(i), slot(i))
		}
	}
	_ = h
}

// ScopeInfoLocals returns the names of the context-allocated variables a
// ScopeInfo (tagged) lists, nil when it lists them in a hash table (more
// than 75) or is not one.
func (w *refWalker) ScopeInfoLocals(si uint64) []string {
	if !w.h.IsHeapObject(si) {
		return nil
	}
	a := w.h.Untag(si)
	c := w.word(a + 8 + uint64(8*w.l.siNLocals))
	if !w.h.IsSmi(c) {
		return nil
	}
	n := w.h.SmiValue(c)
	if n <= 0 || n > 75 {
		return nil
	}
	names := make([]string, n)
	for i := range names {
		s, ok := w.keyName(w.word(a + 8 + uint64(8*(w.l.siFirstVars+int64(i)))))
		if !ok {
			s = fmt.Sprintf("slot %d", i)
		}
		names[i] = s
	}
	return names
}

// Variables returns the variables a closure captured: the context-allocated
// locals of its context (JSFunction.context) by their ScopeInfo names, with
// their raw tagged values. Parent contexts are not included (follow
// "previous" in the graph).
func (h *Heap) Variables(fn uint64) ([]Property, error) {
	w, err := h.newWalker(nil)
	if err != nil {
		return nil, err
	}
	c := w.word(fn + uint64(w.l.offFnContext))
	if !h.IsHeapObject(c) {
		return nil, fmt.Errorf("function at 0x%x has no context", fn)
	}
	ctx := h.Untag(c)
	lw := w.word(ctx + 8)
	if !h.IsSmi(lw) {
		return nil, fmt.Errorf("context at 0x%x has no length", ctx)
	}
	n := h.SmiValue(lw)
	names := w.ScopeInfoLocals(w.word(ctx + 16 + uint64(8*w.l.ctxScopeInfo)))
	start := w.l.ctxMinSlots
	if int64(len(names)) == n-start-1 {
		start++
	}
	var out []Property
	for j, name := range names {
		if start+int64(j) >= n {
			break
		}
		out = append(out, Property{Name: name, Value: w.word(ctx + 16 + uint64(8*(start+int64(j))))})
	}
	return out, nil
}
