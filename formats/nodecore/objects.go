package nodecore

import (
	"encoding/binary"
	"sort"

	"github.com/heapx/heapx/model"
)

// Page is one V8 memory chunk found in the core: objects live in
// [AreaStart, AreaEnd).
type Page struct {
	Addr, AreaStart, AreaEnd uint64
	Flags                    uint64
}

// V8's page (MemoryChunk) flags the reader uses; the low bits have kept
// their values from V8 10 to 13.
const (
	pageFromPage = 1 << 3 // a semispace page holding the dead side of a scavenge
)

// pageAlign is V8's chunk alignment (kPageSize, 256 KB on x64 for V8 10
// to 13): every page and large-object chunk starts at a multiple.
const pageAlign = 256 << 10

// probeRelease is the span Pages releases either side of each chunk it
// probes: the largest block the kernel maps for one read of a file
// mapping (a PMD-sized folio, aligned in the file, not in the process).
const probeRelease = 2 << 20

// Pages finds V8's own memory chunks: 256 KB-aligned addresses whose
// header is a MemoryChunk's. The header is not in the postmortem
// metadata; three layouts are known (docs/nodecore.md):
//
//   - V8 10 and 11 (Node 18, 20): size, flags, heap, area_start,
//     area_end inline in the header;
//   - V8 12 (Node 22): flags, the chunk's own address, size, heap,
//     area_start, area_end;
//   - V8 13 (Node 24): flags, then a pointer to the chunk's out-of-line
//     metadata, which holds the chunk's address, size, area_end (word 7)
//     and area_start (word 9).
//
// A candidate counts only if its area lies within it and the first
// object there has a valid map, so malloc memory (glibc arenas, the brk
// heap), where stale copies of objects sit, is never scanned: those are
// the "ghost objects" of scanners that read every writable segment.
// Semispace pages flagged FROM_PAGE hold the dead copies of the last
// scavenge: they are returned (the scan for native references must not
// read them either) but not Live, and Scan leaves them out.
func (h *Heap) Pages() []Page {
	var pages []Page
	for _, s := range h.p.Segments() {
		// Only the part of a segment the core holds: the rest reads as
		// zeros, where no chunk header is (and a segment's memory size
		// is whatever its header says: 2^63 would be a probe forever).
		end := s.Addr + s.FileSize
		for a := (s.Addr + pageAlign - 1) &^ (pageAlign - 1); a+64 <= end && a >= s.Addr; a += pageAlign {
			if pg, ok := h.page(a); ok {
				pages = append(pages, pg)
				// A large-object chunk spans several alignment units.
				if end := (pg.AreaEnd + pageAlign - 1) &^ (pageAlign - 1); end > a+pageAlign {
					a = end - pageAlign
				}
			}
			// Reading a chunk header maps in the core's pages around it
			// (the kernel maps a whole 2 MB folio of a cached file at
			// once): let them go, or the probe alone keeps most of the
			// core resident.
			lo := s.Addr
			if a-s.Addr > probeRelease {
				lo = a - probeRelease
			}
			h.p.Release(lo, int(a+probeRelease-lo))
		}
	}
	return pages
}

// page checks the chunk header at a (see Pages).
func (h *Heap) page(a uint64) (Page, bool) {
	hdr, err := h.p.ReadBytes(a, 48)
	if err != nil {
		return Page{}, false
	}
	w := func(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	var pg Page
	switch {
	case w(hdr, 1) == a:
		// V8 12: flags, the chunk's own address, size, heap,
		// area_start, area_end.
		pg = Page{Addr: a, Flags: w(hdr, 0), AreaStart: w(hdr, 4), AreaEnd: w(hdr, 5)}
		if size := w(hdr, 2); size == 0 || pg.AreaEnd > a+size {
			return Page{}, false
		}
	case h.p.V8[0] <= 11:
		size := w(hdr, 0)
		pg = Page{Addr: a, Flags: w(hdr, 1), AreaStart: w(hdr, 3), AreaEnd: w(hdr, 4)}
		if size == 0 || size%4096 != 0 || pg.AreaEnd > a+size {
			return Page{}, false
		}
	default:
		md := w(hdr, 1)
		m, err := h.p.ReadBytes(md, 80)
		if err != nil {
			return Page{}, false
		}
		if chunk := w(m, 1); chunk != a && chunk != 0 {
			return Page{}, false
		}
		pg = Page{Addr: a, Flags: w(hdr, 0), AreaStart: w(m, 9), AreaEnd: w(m, 7)}
	}
	if pg.AreaStart <= a || pg.AreaStart-a > 0x4000 || pg.AreaEnd <= pg.AreaStart || pg.AreaEnd-a > 1<<36 {
		return Page{}, false
	}
	// The area must be in the core's file: checked without reading it,
	// since a header can claim 64 GB (the zeros past a segment's file
	// bytes would be allocated to be read).
	if s := h.p.Segment(pg.AreaStart); s == nil || pg.AreaEnd > s.Addr+s.FileSize {
		return Page{}, false
	}
	first, err := h.p.ReadWord(pg.AreaStart)
	if err != nil || !h.IsHeapObject(first) || !h.IsMap(h.Untag(first)) {
		return Page{}, false
	}
	return pg, true
}

// Live reports whether the page holds live objects: not the dead half of
// a semispace.
func (pg Page) Live() bool { return pg.Flags&pageFromPage == 0 }

// Objects is every heap object found on V8's pages, in address order, as
// columns: Addr[i] is the object's (untagged) address, Map[i] its map's,
// Type[i] its instance type and Size[i] its size in bytes as V8 computes
// it (HeapObject::SizeFromMap), or 0 where the reader cannot compute it.
type Objects struct {
	Addr []uint64
	Map  []uint64
	Type []uint16
	Size []uint32
}

// Len is the number of objects.
func (o *Objects) Len() int { return len(o.Addr) }

// Index returns the position of the object at address a, or -1.
func (o *Objects) Index(a uint64) int {
	i := sort.Search(len(o.Addr), func(i int) bool { return o.Addr[i] >= a })
	if i < len(o.Addr) && o.Addr[i] == a {
		return i
	}
	return -1
}

// mapInfo is what the scan caches per map.
type mapInfo struct {
	typ   uint16
	words uint8 // instance_size_in_words, 0 for variable-sized objects
	valid bool
}

// Scan enumerates the objects of pages. It walks each page's area as V8's
// heap iterator does, object after object by size; where an object's
// size is not computable from the metadata it steps one word at a time to
// the next word that is a valid map pointer (validated through the meta
// map). Free space and fillers are skipped and not returned, and so are
// pages that are not Live.
func (h *Heap) Scan(pages []Page) (*Objects, error) {
	maps := map[uint64]mapInfo{}
	info := func(m uint64) mapInfo {
		if mi, ok := maps[m]; ok {
			return mi
		}
		var mi mapInfo
		if h.IsMap(m) {
			t, err := h.MapInstanceType(m)
			if err == nil {
				b, err := h.p.ReadBytes(m+uint64(h.OffInstanceSizeWords), 1)
				if err == nil {
					mi = mapInfo{typ: t, words: b[0], valid: true}
				}
			}
		}
		maps[m] = mi
		return mi
	}
	k := h.kinds()
	// Columns sized for an average object of 40 bytes, so that appends
	// rarely copy them.
	var area uint64
	for _, pg := range pages {
		if pg.Live() {
			area += pg.AreaEnd - pg.AreaStart
		}
	}
	est := int(area/40) + 16
	o := &Objects{Addr: model.Alloc[uint64](est)[:0], Map: model.Alloc[uint64](est)[:0],
		Type: model.Alloc[uint16](est)[:0], Size: model.Alloc[uint32](est)[:0]}
	for _, pg := range pages {
		if !pg.Live() {
			continue
		}
		data, err := h.p.ReadBytes(pg.AreaStart, int(pg.AreaEnd-pg.AreaStart))
		if err != nil {
			return nil, err
		}
		for off := 0; off+8 <= len(data); {
			w := binary.LittleEndian.Uint64(data[off:])
			if !h.IsHeapObject(w) {
				off += 8
				continue
			}
			mi := info(h.Untag(w))
			if !mi.valid {
				off += 8
				continue
			}
			addr := pg.AreaStart + uint64(off)
			size := uint64(mi.words) * 8
			free := false
			if size == 0 && k.kind[mi.typ] == kindUnknown {
				if c, ok := h.freeSpaceSize(w, data[off:]); ok && h.confirmed(data, uint64(off)+c, false, info) {
					size, free = c, true
				}
			}
			if size == 0 {
				// A variable-sized object: its size is one of the
				// layouts' formulas, confirmed by the next object's map
				// (or the area's end) where the size lands.
				cands, known := h.variableSizes(mi.typ, data[off:], k)
				for _, c := range cands {
					if c != 0 && h.confirmed(data, uint64(off)+c, known, info) {
						size = c
						break
					}
				}
			}
			if size > uint64(len(data)-off) {
				size = 0
			}
			if kd := k.kind[mi.typ]; kd != kindFiller && kd != kindFreeSpace && !free {
				o.Addr = append(o.Addr, addr)
				o.Map = append(o.Map, h.Untag(w))
				o.Type = append(o.Type, mi.typ)
				o.Size = append(o.Size, uint32(size))
			}
			if size == 0 {
				off += 8
			} else {
				off += int(size)
			}
		}
		// The walk reads the page again in address order; until then
		// its mapped core pages need not stay resident.
		h.p.Release(pg.AreaStart, len(data))
	}
	return o, nil
}

// confirmed reports whether an object may end at byte end of a page's
// area data: at the area's end, or where the next object has a valid map.
// A size guessed for a type the reader does not know (known false) needs
// the object after that to be valid too: one in a few heap words is a map
// pointer, so a single valid header after a wrong guess is not rare.
func (h *Heap) confirmed(data []byte, end uint64, known bool, info func(uint64) mapInfo) bool {
	for range 3 {
		if end > uint64(len(data)) {
			return false
		}
		if end+8 > uint64(len(data)) {
			return true
		}
		nw := binary.LittleEndian.Uint64(data[end:])
		if !h.IsHeapObject(nw) {
			return false
		}
		mi := info(h.Untag(nw))
		if !mi.valid {
			return false
		}
		if known || mi.words == 0 {
			return true
		}
		end += uint64(mi.words) * 8
	}
	return true
}

// freeSpaceSize returns the size of a free-list block of a type the
// metadata does not name (FREE_SPACE_TYPE is not in Node 24's): its size
// word is a Smi counting tagged words (V8 12.5 on), its next word the
// list's next block, of the same map, or 0. The block must be confirmed
// by the objects after it, like a guessed size; a misjudged one would
// swallow the objects it covers.
func (h *Heap) freeSpaceSize(mapWord uint64, obj []byte) (uint64, bool) {
	if len(obj) < 24 {
		return 0, false
	}
	le := binary.LittleEndian
	sw, next := le.Uint64(obj[8:]), le.Uint64(obj[16:])
	if !h.IsSmi(sw) || h.SmiValue(sw) < 3 || h.SmiValue(sw) > int64(len(obj)/8) {
		return 0, false
	}
	if next != 0 {
		if !h.IsHeapObject(next) {
			return 0, false
		}
		if w, err := h.p.ReadWord(h.Untag(next)); err != nil || w != mapWord {
			return 0, false
		}
	}
	return 8 * uint64(h.SmiValue(sw)), true
}

// variableSizes returns the sizes an object of variable size (its map
// says kVariableSizeSentinel) may have, by its type's layout, most likely
// first; known says the layout is the type's own. The caller keeps the
// first size the next objects confirm. Types the metadata does not name
// get the common layouts: a FixedArray's (length Smi, tagged elements)
// and a capacity-first array's. obj holds the object's bytes up to the
// end of its page's area.
func (h *Heap) variableSizes(t uint16, obj []byte, k *kinds) (sizes []uint64, known bool) {
	if len(obj) < 24 {
		return nil, false
	}
	var n int64 = -1
	if w := binary.LittleEndian.Uint64(obj[8:]); h.IsSmi(w) {
		n = h.SmiValue(w)
	}
	round := func(n int64) uint64 { return uint64((n + 7) &^ 7) }
	switch k.kind[t] {
	case kindString:
		if h.StringRepresentation(t) != "seq" {
			return nil, false
		}
		l := int64(int32(binary.LittleEndian.Uint32(obj[h.offStrLength:])))
		if l < 0 {
			return nil, false
		}
		if !h.StringOneByte(t) {
			l *= 2
		}
		return []uint64{round(h.offSeqChars + l)}, true
	case kindDescriptorArray:
		d := int64(binary.LittleEndian.Uint16(obj[8:]))
		return []uint64{uint64(h.descHeader + d*h.descStride*8)}, true
	}
	if n < 0 || n > 1<<31 {
		return nil, false
	}
	switch k.kind[t] {
	case kindFixedArray, kindContext, kindFixedDoubleArray:
		return []uint64{uint64(16 + 8*n)}, true
	case kindHashTable:
		return []uint64{uint64(16 + 8*n), uint64(24 + 8*n)}, true
	case kindByteArray:
		return []uint64{round(16 + n)}, true
	case kindFreeSpace:
		return []uint64{uint64(n)}, true
	case kindWeakArrayList:
		return []uint64{uint64(24 + 8*n)}, true
	case kindPropertyArray:
		return []uint64{uint64(16 + 8*(n&0x3ff))}, true // length_and_hash: length in the low 10 bits
	case kindUnknown:
		if n < 1<<20 {
			return []uint64{uint64(16 + 8*n), uint64(24 + 8*n)}, false
		}
		// A larger one is taken only where it fills the rest of its page
		// exactly: a large-object page holds one object (a Map's or a
		// Set's OrderedHashTable of hundreds of thousands of entries,
		// whose type the metadata does not name).
		for _, c := range []uint64{uint64(16 + 8*n), uint64(24 + 8*n)} {
			if c == uint64(len(obj)) {
				return []uint64{c}, true
			}
		}
	}
	return nil, false
}
