package nodecore

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode/utf16"
)

// Heap decodes V8's tagged values in a Process with the layout its
// metadata gives: Smis and heap-object pointers, maps and instance types,
// strings of every representation. Tagged values are 64-bit words as they
// sit in memory (official Node builds have no pointer compression; the
// metadata's TaggedSize is checked). Object addresses are untagged.
type Heap struct {
	p *Process

	smiTagMask, smiTag uint64
	smiShift           uint
	hoTagMask, hoTag   uint64

	// Map layout.
	OffMap, OffInstanceType, OffInstanceSizeWords, OffInObjectStart int64
	OffBitField, OffBitField2, OffBitField3, OffDescriptors         int64
	OffConstructor                                                  int64
	OffPrototype                                                    int64
	// MapType is MAP_TYPE.
	MapType uint16
	// FirstNonstringType: instance types below it are strings.
	FirstNonstringType uint16

	strReprMask, strEncMask, oneByteTag                 uint16
	seqTag, consTag, externalTag, slicedTag, thinTag    uint16
	offStrLength, offSeqChars, offConsFirst, offConsSnd int64
	offSlicedParent, offSlicedOffset, offThinActual     int64
	offExtResource, offNodeExtData                      int64

	descHeader, descStride int64 // DescriptorArray header bytes, slots per descriptor
	offNumberValue         int64

	mu       sync.Mutex
	metaMaps map[uint64]bool // untagged addresses of meta maps seen

	kindsOnce sync.Once
	kindTable *kinds
}

func newHeap(p *Process) (*Heap, error) {
	n := p.Meta.Need()
	h := &Heap{p: p, metaMaps: map[uint64]bool{}}
	if ts := n.Value("TaggedSize"); ts != 8 && ts != 0 {
		return nil, fmt.Errorf("%s uses %d-byte tagged values (pointer compression); heapx reads 8-byte ones only", p.Meta.Runtime, ts)
	}
	h.smiTagMask, h.smiTag = uint64(n.Value("SmiTagMask")), uint64(n.Value("SmiTag"))
	h.smiShift = uint(n.Value("SmiShiftSize") + n.Value("SmiValueShift"))
	h.hoTagMask, h.hoTag = uint64(n.Value("HeapObjectTagMask")), uint64(n.Value("HeapObjectTag"))
	h.OffMap = n.Field("HeapObject.map")
	h.OffInstanceType = n.Field("Map.instance_type")
	h.OffInstanceSizeWords = n.Field("Map.instance_size_in_words")
	h.OffInObjectStart = n.Field("Map.inobject_properties_start_or_constructor_function_index")
	h.OffBitField = n.Field("Map.bit_field")
	h.OffBitField2 = n.Field("Map.bit_field2")
	h.OffBitField3 = n.Field("Map.bit_field3")
	h.OffDescriptors = n.Field("Map.instance_descriptors")
	h.OffConstructor = n.Field("Map.constructor_or_back_pointer")
	h.OffPrototype = n.Field("Map.prototype")
	h.MapType = n.Type("MAP_TYPE")
	h.FirstNonstringType = uint16(n.Value("FirstNonstringType"))
	h.strReprMask = uint16(n.Value("StringRepresentationMask"))
	h.strEncMask = uint16(n.Value("StringEncodingMask"))
	h.oneByteTag = uint16(n.Value("OneByteStringTag"))
	h.seqTag, h.consTag = uint16(n.Value("SeqStringTag")), uint16(n.Value("ConsStringTag"))
	h.externalTag, h.slicedTag = uint16(n.Value("ExternalStringTag")), uint16(n.Value("SlicedStringTag"))
	h.thinTag = uint16(n.Value("ThinStringTag"))
	h.offStrLength = n.Field("String.length")
	h.offSeqChars = n.Field("SeqOneByteString.chars")
	h.offConsFirst, h.offConsSnd = n.Field("ConsString.first"), n.Field("ConsString.second")
	h.offSlicedParent, h.offSlicedOffset = n.Field("SlicedString.parent"), n.Field("SlicedString.offset")
	h.offThinActual = n.Field("ThinString.actual")
	h.offExtResource = n.Field("ExternalString.resource")
	h.offNodeExtData = n.Value("nodedbg_offset_ExternalString__data__uintptr_t")
	h.descHeader = n.Field("DescriptorArray.header_size")
	h.offNumberValue = n.Field("HeapNumber.value")
	h.descStride = n.Value("prop_desc_size")
	if err := n.Err(); err != nil {
		return nil, err
	}
	return h, nil
}

// Process returns the process the heap belongs to.
func (h *Heap) Process() *Process { return h.p }

// IsSmi reports whether w is a small integer.
func (h *Heap) IsSmi(w uint64) bool { return w&h.smiTagMask == h.smiTag }

// SmiValue decodes a Smi.
func (h *Heap) SmiValue(w uint64) int64 { return int64(w) >> h.smiShift }

// IsHeapObject reports whether w is a strong pointer to a heap object
// (weak references carry another tag and are not).
func (h *Heap) IsHeapObject(w uint64) bool { return w&h.hoTagMask == h.hoTag }

// IsWeak reports whether w is a weak heap-object reference (tag 3): the
// pointer is w with the weak bit cleared (Strong).
func (h *Heap) IsWeak(w uint64) bool { return w&h.hoTagMask == 3 && w != 3 }

// Strong returns the strong form of a weak reference.
func (h *Heap) Strong(w uint64) uint64 { return w &^ 2 }

// Untag returns the address of the heap object w points to.
func (h *Heap) Untag(w uint64) uint64 { return w - h.hoTag }

// Tag returns the tagged pointer to the object at address a.
func (h *Heap) Tag(a uint64) uint64 { return a + h.hoTag }

// Word reads the word at byte offset off of the object at address obj.
func (h *Heap) Word(obj uint64, off int64) (uint64, error) {
	return h.p.ReadWord(obj + uint64(off))
}

// MapOf returns the address of the map of the object at address obj.
func (h *Heap) MapOf(obj uint64) (uint64, error) {
	w, err := h.p.ReadWord(obj + uint64(h.OffMap))
	if err != nil {
		return 0, err
	}
	if !h.IsHeapObject(w) {
		return 0, fmt.Errorf("object at 0x%x: its map word 0x%x is not a heap pointer", obj, w)
	}
	return h.Untag(w), nil
}

// MapType returns the instance type a map (by address) describes.
func (h *Heap) MapInstanceType(m uint64) (uint16, error) {
	b, err := h.p.ReadBytes(m+uint64(h.OffInstanceType), 2)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint16(b), nil
}

// InstanceType returns the instance type of the object at address obj.
func (h *Heap) InstanceType(obj uint64) (uint16, error) {
	m, err := h.MapOf(obj)
	if err != nil {
		return 0, err
	}
	return h.MapInstanceType(m)
}

// IsMetaMap reports whether the object at address m is a meta map: its
// own map, of MAP_TYPE. V8 has one per native context plus the read-only
// one; every valid map's map is one of them.
func (h *Heap) IsMetaMap(m uint64) bool {
	h.mu.Lock()
	ok := h.metaMaps[m]
	h.mu.Unlock()
	if ok {
		return true
	}
	w, err := h.p.ReadWord(m + uint64(h.OffMap))
	if err != nil || w != h.Tag(m) {
		return false
	}
	if t, err := h.MapInstanceType(m); err != nil || t != h.MapType {
		return false
	}
	h.mu.Lock()
	h.metaMaps[m] = true
	h.mu.Unlock()
	return true
}

// IsMap reports whether the object at address m is a map: its map is a
// meta map. This is the validation that keeps random words from being
// taken for objects.
func (h *Heap) IsMap(m uint64) bool {
	mm, err := h.MapOf(m)
	return err == nil && h.IsMetaMap(mm)
}

// TypeName returns V8's name of an instance type ("JS_OBJECT_TYPE"), or
// "type <n>" when the metadata does not name it.
func (h *Heap) TypeName(t uint16) string {
	if n := h.p.Meta.TypeName(t); n != "" {
		return n
	}
	return fmt.Sprintf("type %d", t)
}

// IsString reports whether an instance type is a string's.
func (h *Heap) IsString(t uint16) bool { return t < h.FirstNonstringType }

// StringRepresentation names a string type's representation: "seq",
// "cons", "external", "sliced", "thin" (or "" for a non-string).
func (h *Heap) StringRepresentation(t uint16) string {
	if !h.IsString(t) {
		return ""
	}
	switch t & h.strReprMask {
	case h.seqTag:
		return "seq"
	case h.consTag:
		return "cons"
	case h.externalTag:
		return "external"
	case h.slicedTag:
		return "sliced"
	case h.thinTag:
		return "thin"
	}
	return ""
}

// StringLength returns the length in UTF-16 units of the string at obj.
func (h *Heap) StringLength(obj uint64) (int, error) {
	b, err := h.p.ReadBytes(obj+uint64(h.offStrLength), 4)
	if err != nil {
		return 0, err
	}
	return int(int32(binary.LittleEndian.Uint32(b))), nil
}

// Number returns the value of the HeapNumber at address obj.
func (h *Heap) Number(obj uint64) (float64, error) {
	b, err := h.p.ReadBytes(obj+uint64(h.offNumberValue), 8)
	if err != nil {
		return 0, err
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b)), nil
}

// StringOneByte reports whether a string type holds one-byte (Latin-1)
// characters.
func (h *Heap) StringOneByte(t uint16) bool { return t&h.strEncMask == h.oneByteTag }

// String decodes the string at address obj, at most max UTF-16 units
// (max < 0: all); truncated reports that it was cut. Cons strings are
// flattened, sliced and thin ones followed, external ones read through
// Node's resource layout (nodedbg_offset_ExternalString__data__uintptr_t).
func (h *Heap) String(obj uint64, max int) (s string, truncated bool, err error) {
	var sb strings.Builder
	n, err := h.StringLength(obj)
	if err != nil {
		return "", false, err
	}
	want := n
	if max >= 0 && max < n {
		want = max
	}
	if err := h.appendString(&sb, obj, 0, want, 0); err != nil {
		return "", false, err
	}
	return sb.String(), want < n, nil
}

// appendString appends units [from, from+n) of the string at obj.
func (h *Heap) appendString(sb *strings.Builder, obj uint64, from, n, depth int) error {
	if n <= 0 {
		return nil
	}
	if depth > 10000 {
		return fmt.Errorf("string at 0x%x: representation nested too deep", obj)
	}
	t, err := h.InstanceType(obj)
	if err != nil {
		return err
	}
	if !h.IsString(t) {
		return fmt.Errorf("object at 0x%x is a %s, not a string", obj, h.TypeName(t))
	}
	length, err := h.StringLength(obj)
	if err != nil {
		return err
	}
	if from < 0 || length < 0 || from+n > length {
		return fmt.Errorf("string at 0x%x: units %d..%d past its length %d", obj, from, from+n, length)
	}
	ptr := func(off int64) (uint64, error) {
		w, err := h.Word(obj, off)
		if err != nil {
			return 0, err
		}
		if !h.IsHeapObject(w) {
			return 0, fmt.Errorf("string at 0x%x: field at +%d is not a pointer", obj, off)
		}
		return h.Untag(w), nil
	}
	switch t & h.strReprMask {
	case h.seqTag:
		return h.appendChars(sb, obj+uint64(h.offSeqChars), from, n, h.StringOneByte(t))
	case h.consTag:
		first, err := ptr(h.offConsFirst)
		if err != nil {
			return err
		}
		fl, err := h.StringLength(first)
		if err != nil {
			return err
		}
		if from < fl {
			k := min(n, fl-from)
			if err := h.appendString(sb, first, from, k, depth+1); err != nil {
				return err
			}
			from, n = fl, n-k
		}
		if n == 0 {
			return nil
		}
		second, err := ptr(h.offConsSnd)
		if err != nil {
			return err
		}
		return h.appendString(sb, second, from-fl, n, depth+1)
	case h.slicedTag:
		parent, err := ptr(h.offSlicedParent)
		if err != nil {
			return err
		}
		w, err := h.Word(obj, h.offSlicedOffset)
		if err != nil {
			return err
		}
		return h.appendString(sb, parent, from+int(h.SmiValue(w)), n, depth+1)
	case h.thinTag:
		actual, err := ptr(h.offThinActual)
		if err != nil {
			return err
		}
		return h.appendString(sb, actual, from, n, depth+1)
	case h.externalTag:
		data, err := h.externalData(obj, length)
		if err != nil {
			return err
		}
		return h.appendChars(sb, data, from, n, h.StringOneByte(t))
	}
	return fmt.Errorf("string at 0x%x: unknown representation in type %d", obj, t)
}

// externalData finds the characters of the external string at obj, of
// length units. The resource is a C++ object of Node's: its ExternalString
// keeps the data pointer at nodedbg_offset_ExternalString__data__uintptr_t,
// and the resources of Node's built-in module sources (static, non-owning
// ones) keep a (data, length) pair after their vtable (Node 20 to 24) or
// the data pointer alone (Node 18); the pair whose length matches is
// taken first.
func (h *Heap) externalData(obj uint64, length int) (uint64, error) {
	res, err := h.Word(obj, h.offExtResource)
	if err != nil {
		return 0, err
	}
	words, err := h.p.ReadBytes(res, 48)
	if err != nil {
		return 0, fmt.Errorf("external string at 0x%x: its resource 0x%x is not in the core", obj, res)
	}
	for j := 1; j+1 < 6; j++ {
		d, l := binary.LittleEndian.Uint64(words[8*j:]), binary.LittleEndian.Uint64(words[8*j+8:])
		if l == uint64(length) && d != 0 && h.p.Mapped(d, 1) {
			return d, nil
		}
	}
	if off := h.offNodeExtData; off >= 0 && off+8 <= 48 {
		if d := binary.LittleEndian.Uint64(words[off:]); d != 0 && h.p.Mapped(d, 1) {
			return d, nil
		}
	}
	// Node 18's static resources keep the data pointer alone (word 2):
	// the first word where all the characters are readable.
	for j := 1; j < 4; j++ {
		if d := binary.LittleEndian.Uint64(words[8*j:]); d != 0 && h.p.Mapped(d, length) {
			return d, nil
		}
	}
	return 0, fmt.Errorf("external string at 0x%x: its resource 0x%x holds no data pointer heapx knows", obj, res)
}

// appendChars appends n characters from from of a flat buffer at addr.
func (h *Heap) appendChars(sb *strings.Builder, addr uint64, from, n int, oneByte bool) error {
	if oneByte {
		b, err := h.p.ReadBytes(addr+uint64(from), n)
		if err != nil {
			return err
		}
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
		return nil
	}
	b, err := h.p.ReadBytes(addr+2*uint64(from), 2*n)
	if err != nil {
		return err
	}
	u := make([]uint16, n)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	sb.WriteString(string(utf16.Decode(u)))
	return nil
}
