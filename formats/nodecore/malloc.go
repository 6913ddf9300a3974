package nodecore

import (
	"encoding/binary"
	"sort"
)

// Live native memory: where the scan for native references looks.
//
// Memory outside V8's pages that points into the heap is mostly glibc
// malloc memory, and much of what points there is dead: freed chunks keep
// their bytes until reused (a heap snapshot's own tables, V8's marking
// worklists after a collection), and a handle block keeps the handles of
// scopes already closed past its current top. A scan of every word finds
// tens of thousands of such stale pointers, which keep garbage "alive"
// and cut real ownership (an object pointed to from a freed buffer is no
// longer dominated by its owner). liveNative leaves out what is dead:
//
//   - glibc's chunks not in use, the top chunk, and the chunks cached in
//     a thread's tcache, in the main arena (the brk heap) and in the
//     threads' arenas (64 MB-aligned heaps). Since glibc 2.26 a chunk is
//     (prev_size, size | flags) then the user's bytes, in use when the
//     next chunk's PREV_INUSE bit is set; a tcache (the first chunk of a
//     heap, 64 counts then 64 list heads) lists freed chunks glibc still
//     marks in use, linked through their first word (mangled with the
//     link's address from glibc 2.32).
//   - the handles past the top of V8's current handle block: the
//     isolate's HandleScopeData (next, limit, level, sealed level) is
//     found by its shape, a limit at the end of an in-use block of 1022
//     handles and a next inside it;
//   - the part of each thread's stack below its stack pointer.

// liveRange is [lo, hi) of process memory the native scan reads.
type liveRange struct{ lo, hi uint64 }

const (
	chunkPrevInUse = 1
	chunkIsMmapped = 2
	chunkFlags     = 7
	chunkMinSize   = 32
	// arenaHeapAlign is glibc's HEAP_MAX_SIZE on 64-bit: each heap of a
	// thread's arena is a mapping aligned to it, starting with a heap_info.
	arenaHeapAlign = 64 << 20
	heapInfoSize   = 32 // heap_info: ar_ptr, prev, size, mprotect_size (and a page size from glibc 2.35)
	redZone        = 128

	tcacheBins      = 64
	tcacheChunkSize = 16 + tcacheBins*2 + tcacheBins*8 // counts (uint16) then list heads
	tcacheMaxCount  = 65535

	handleBlockBytes = 1022 * 8 // V8's kHandleBlockSize handles
)

// liveNative returns the live ranges of the writable memory outside V8's
// pages (pages are every V8 chunk, dead semispaces too), sorted.
func (h *Heap) liveNative(pages []Page) []liveRange {
	inPage := func(a uint64) bool {
		i := sort.Search(len(pages), func(i int) bool { return pages[i].AreaEnd > a })
		return i < len(pages) && a >= pages[i].Addr
	}
	var out []liveRange
	var tcaches []uint64 // user addresses of tcache_perthread_structs
	for _, s := range h.p.Segments() {
		if !s.Writable || s.FileSize == 0 || inPage(s.Addr) {
			continue
		}
		data, err := h.p.ReadBytes(s.Addr, int(s.FileSize))
		if err != nil {
			continue
		}
		r, tc := h.segmentRanges(s, data)
		out = append(out, r...)
		tcaches = append(tcaches, tc...)
		h.p.Release(s.Addr, int(s.FileSize))
	}
	free := h.tcacheFree(tcaches)
	live := out[:0]
	for _, r := range out {
		if !free[r.lo] {
			live = append(live, r)
		}
	}
	h.trimHandleBlock(live)
	return live
}

// segmentRanges returns the live parts of segment s (writable, not a V8
// page): its in-use malloc chunks (and the tcaches among them) when it is
// a malloc heap, the part above the stack pointer when it is a thread's
// stack, else all of it. data is the segment's bytes in the core.
func (h *Heap) segmentRanges(s Segment, data []byte) ([]liveRange, []uint64) {
	for _, t := range h.p.Threads {
		if sp := t.RSP(); sp >= s.Addr && sp < s.End() {
			lo := max(sp-redZone, s.Addr)
			return []liveRange{{lo, s.Addr + uint64(len(data))}}, nil
		}
	}
	if r, ok := mallocChunks(s.Addr, data); ok {
		var tc []uint64
		if len(r) > 0 && r[0].hi-r[0].lo == tcacheChunkSize-16 {
			tc = append(tc, r[0].lo)
		}
		return r, tc
	}
	return []liveRange{{s.Addr, s.Addr + uint64(len(data))}}, nil
}

// mallocChunks returns the user bytes of the in-use chunks of a glibc
// heap starting at addr, ok false when data is not one: the main arena's
// brk heap walks from its first byte to its end; a thread arena's heap
// (64 MB-aligned) walks from after its heap_info (and its malloc_state,
// for an arena's first heap), to the heap_info's size.
func mallocChunks(addr uint64, data []byte) ([]liveRange, bool) {
	if len(data) < 4096 {
		return nil, false
	}
	if r, ok := walkChunks(addr, data, 0, uint64(len(data))); ok {
		return r, true
	}
	if addr%arenaHeapAlign != 0 {
		return nil, false
	}
	size := binary.LittleEndian.Uint64(data[16:])
	if size < heapInfoSize || size > uint64(len(data)) {
		return nil, false
	}
	// The first chunk follows the heap_info, or the arena's malloc_state
	// (whose size changes between glibc versions) aligned to 16 bytes:
	// the offset whose walk lands exactly on the heap's end.
	for off := uint64(heapInfoSize); off < 4096 && off < size; off += 16 {
		if r, ok := walkChunks(addr, data, off, size); ok {
			return r, true
		}
	}
	return nil, false
}

// walkChunks walks chunks from byte from to byte end of data and returns
// the user bytes of those in use; ok false unless the walk ends exactly
// at end with at least two chunks (the last, the top chunk, is free
// space). The arena bit is not checked: glibc keeps it on chunks in use
// only.
func walkChunks(addr uint64, data []byte, from, end uint64) ([]liveRange, bool) {
	le := binary.LittleEndian
	var out []liveRange
	n := 0
	for off := from; ; {
		if off == end {
			return out, n >= 2
		}
		if off+16 > end {
			return nil, false
		}
		sz := le.Uint64(data[off+8:])
		if sz&chunkIsMmapped != 0 {
			return nil, false
		}
		size := sz &^ chunkFlags
		if size < chunkMinSize || size%16 != 0 || size > end-off {
			return nil, false
		}
		next := off + size
		// The chunk is in use when the next one says so; the last chunk
		// (top) is free.
		if next+16 <= end && le.Uint64(data[next+8:])&chunkPrevInUse != 0 {
			out = append(out, liveRange{addr + off + 16, addr + next})
		}
		n++
		off = next
	}
}

// tcacheFree returns the user addresses of the chunks the tcaches at the
// given addresses hold. A candidate that is not a tcache (a count without
// a list head or the reverse, a link that leads nowhere) is left alone.
func (h *Heap) tcacheFree(tcaches []uint64) map[uint64]bool {
	free := map[uint64]bool{}
	le := binary.LittleEndian
	for _, tc := range tcaches {
		b, err := h.p.ReadBytes(tc, tcacheChunkSize-16)
		if err != nil {
			continue
		}
		ok := true
		for i := range tcacheBins {
			c, e := le.Uint16(b[2*i:]), le.Uint64(b[2*tcacheBins+8*i:])
			if (c == 0) != (e == 0) || e%16 != 0 {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for i := range tcacheBins {
			e := le.Uint64(b[2*tcacheBins+8*i:])
			for k := 0; k < int(le.Uint16(b[2*i:])) && e != 0 && e%16 == 0; k++ {
				free[e] = true
				w, err := h.p.ReadWord(e)
				if err != nil {
					break
				}
				// glibc 2.32+ stores next ^ (its own address >> 12).
				if m := w ^ e>>12; m%16 == 0 && (m == 0 || h.p.Mapped(m, 16)) {
					e = m
				} else {
					e = w
				}
			}
		}
	}
	return free
}

// trimHandleBlock cuts the live range of V8's current handle block at
// the block's top: handles past it belong to scopes already closed. The
// block is found through the HandleScopeData that points into it; with
// several candidates (a saved copy), the highest top is kept.
func (h *Heap) trimHandleBlock(live []liveRange) {
	blocks := map[uint64]int{} // end of an in-use block of handleBlockBytes -> index in live
	for i, r := range live {
		if r.hi-r.lo == handleBlockBytes {
			blocks[r.hi] = i
		}
	}
	if len(blocks) == 0 {
		return
	}
	top := map[int]uint64{}
	le := binary.LittleEndian
	for _, r := range live {
		if r.hi-r.lo < 24 {
			continue
		}
		b, err := h.p.ReadBytes(r.lo, int(r.hi-r.lo))
		if err != nil {
			continue
		}
		for off := 0; off+24 <= len(b); off += 8 {
			limit := le.Uint64(b[off+8:])
			i, ok := blocks[limit]
			if !ok {
				continue
			}
			next := le.Uint64(b[off:])
			level, sealed := int32(le.Uint32(b[off+16:])), int32(le.Uint32(b[off+20:]))
			if next < limit-handleBlockBytes || next > limit || next%8 != 0 || level < 0 || level > 1<<20 || sealed < 0 || sealed > level {
				continue
			}
			top[i] = max(top[i], next)
		}
		h.p.Release(r.lo, int(r.hi-r.lo))
	}
	for i, next := range top {
		live[i].hi = next
	}
}
