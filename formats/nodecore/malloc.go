package nodecore

import (
	"encoding/binary"
	"path/filepath"
	"sort"
	"strings"
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
	var heaps []mallocHeap
	for _, s := range h.p.Segments() {
		if !s.Writable || s.FileSize == 0 || inPage(s.Addr) {
			continue
		}
		data, err := h.p.ReadBytes(s.Addr, int(s.FileSize))
		if err != nil {
			continue
		}
		if r, ok := h.stackRange(s, data); ok {
			out = append(out, r)
		} else if mh, ok := mallocChunks(s.Addr, data); ok {
			out = append(out, mh.inUse...)
			heaps = append(heaps, mh)
		} else {
			out = append(out, liveRange{s.Addr, s.Addr + uint64(len(data))})
		}
		h.p.Release(s.Addr, int(s.FileSize))
	}
	free := map[uint64]bool{}
	for _, r := range out {
		if r.hi-r.lo == tcacheChunkSize-16 {
			h.tcacheFree(r.lo, free)
		}
	}
	for _, a := range h.arenas(heaps) {
		h.fastbinFree(a, free)
	}
	live := out[:0]
	for _, r := range out {
		if !free[r.lo] {
			live = append(live, r)
		}
	}
	h.trimHandleBlock(live)
	return live
}

// stackRange returns the live part of a thread's stack: from the stack
// pointer (less the red zone) up.
func (h *Heap) stackRange(s Segment, data []byte) (liveRange, bool) {
	for _, t := range h.p.Threads {
		if sp := t.RSP(); sp >= s.Addr && sp < s.End() {
			return liveRange{max(sp-redZone, s.Addr), s.Addr + uint64(len(data))}, true
		}
	}
	return liveRange{}, false
}

// mallocHeap is one glibc heap: the user bytes of its chunks in use, the
// address of its top chunk, and for a thread arena's heap, its
// heap_info's arena pointer.
type mallocHeap struct {
	inUse []liveRange
	top   uint64
	arena uint64 // 0 for the main arena's brk heap
}

// mallocChunks walks the glibc heap starting at addr, ok false when data
// is not one: the main arena's brk heap walks from its first byte to its
// end; a thread arena's heap (64 MB-aligned) walks from after its
// heap_info (and its malloc_state, for an arena's first heap), to the
// heap_info's size.
func mallocChunks(addr uint64, data []byte) (mallocHeap, bool) {
	if len(data) < 4096 {
		return mallocHeap{}, false
	}
	if mh, ok := walkChunks(addr, data, 0, uint64(len(data))); ok {
		return mh, true
	}
	if addr%arenaHeapAlign != 0 {
		return mallocHeap{}, false
	}
	le := binary.LittleEndian
	size := le.Uint64(data[16:])
	if size < heapInfoSize || size > uint64(len(data)) {
		return mallocHeap{}, false
	}
	// The first chunk follows the heap_info, or the arena's malloc_state
	// (whose size changes between glibc versions) aligned to 16 bytes:
	// the offset whose walk lands exactly on the heap's end.
	for off := uint64(heapInfoSize); off < 4096 && off < size; off += 16 {
		if mh, ok := walkChunks(addr, data, off, size); ok {
			mh.arena = le.Uint64(data)
			return mh, true
		}
	}
	return mallocHeap{}, false
}

// walkChunks walks chunks from byte from to byte end of data; ok false
// unless the walk ends exactly at end with at least two chunks (the last,
// the top chunk, is free space). The arena bit is not checked: glibc
// keeps it on chunks in use only.
func walkChunks(addr uint64, data []byte, from, end uint64) (mallocHeap, bool) {
	le := binary.LittleEndian
	var mh mallocHeap
	n := 0
	for off := from; ; {
		if off == end {
			return mh, n >= 2
		}
		if off+16 > end {
			return mallocHeap{}, false
		}
		sz := le.Uint64(data[off+8:])
		if sz&chunkIsMmapped != 0 {
			return mallocHeap{}, false
		}
		size := sz &^ chunkFlags
		if size < chunkMinSize || size%16 != 0 || size > end-off {
			return mallocHeap{}, false
		}
		next := off + size
		// The chunk is in use when the next one says so; the last chunk
		// (top) is free.
		if next+16 <= end && le.Uint64(data[next+8:])&chunkPrevInUse != 0 {
			mh.inUse = append(mh.inUse, liveRange{addr + off + 16, addr + next})
		}
		mh.top = addr + off
		n++
		off = next
	}
}

// chunkSizeIs reports whether the chunk whose user bytes start at user
// has size size.
func (h *Heap) chunkSizeIs(user, size uint64) bool {
	w, err := h.p.ReadWord(user - 8)
	return err == nil && w&^chunkFlags == size
}

// nextFree follows the link of a free chunk of size size stored at
// address at (a tcache entry's first word, which links user bytes to user
// bytes; a fastbin chunk's fd, which links chunk headers, user false): 0
// at the list's end, ok false when the link leads nowhere. From glibc
// 2.32 a link is stored xor its own address shifted by 12; the reading
// that lands on a chunk of the right size is taken.
func (h *Heap) nextFree(at, size uint64, user bool) (next uint64, ok bool) {
	w, err := h.p.ReadWord(at)
	if err != nil {
		return 0, false
	}
	for _, next := range []uint64{w ^ at>>12, w} {
		u := next
		if !user {
			u += 16
		}
		if next == 0 || (next%16 == 0 && h.chunkSizeIs(u, size)) {
			return next, true
		}
	}
	return 0, false
}

// tcacheFree adds to free the user addresses of the chunks the tcache
// whose user bytes start at tc holds, when tc is one: 64 counts, then 64
// list heads, each empty or the user bytes of a chunk of its bin's size
// (32 + 16*bin).
func (h *Heap) tcacheFree(tc uint64, free map[uint64]bool) {
	b, err := h.p.ReadBytes(tc, tcacheChunkSize-16)
	if err != nil {
		return
	}
	le := binary.LittleEndian
	for i := range tcacheBins {
		c, e := le.Uint16(b[2*i:]), le.Uint64(b[2*tcacheBins+8*i:])
		if (c == 0) != (e == 0) || (e != 0 && (e%16 != 0 || !h.chunkSizeIs(e, uint64(32+16*i)))) {
			return
		}
	}
	for i := range tcacheBins {
		e := le.Uint64(b[2*tcacheBins+8*i:])
		for k := 0; k < int(le.Uint16(b[2*i:])) && e != 0; k++ {
			free[e] = true
			next, ok := h.nextFree(e, uint64(32+16*i), true)
			if !ok {
				break
			}
			e = next
		}
	}
}

// malloc_state (glibc 2.27 on): a lock, flags and have_fastchunks (4
// bytes each, padded), then fastbinsY[10], then top.
const (
	arenaFastbins = 16
	arenaTop      = 96
	fastbinCount  = 10
	maxFreeList   = 1 << 20
)

// arenas returns the addresses of the malloc_states of the heaps: a
// thread arena's from its heap_info, the main arena's by its top pointer
// (the brk heap's top chunk) in libc's data.
func (h *Heap) arenas(heaps []mallocHeap) []uint64 {
	var out []uint64
	tops := map[uint64]bool{}
	for _, mh := range heaps {
		if mh.arena != 0 {
			if w, err := h.p.ReadWord(mh.arena + arenaTop); err == nil && w == mh.top {
				out = append(out, mh.arena)
			}
		} else {
			tops[mh.top] = true
		}
	}
	if len(tops) == 0 {
		return out
	}
	for _, f := range h.p.Files {
		if !strings.HasPrefix(filepath.Base(f.Path), "libc.so") && !strings.HasPrefix(filepath.Base(f.Path), "libc-") {
			continue
		}
		s := h.p.Segment(f.Start)
		if s == nil || !s.Writable || s.FileSize == 0 {
			continue
		}
		data, err := h.p.ReadBytes(s.Addr, int(s.FileSize))
		if err != nil {
			continue
		}
		for off := arenaTop; off+8 <= len(data); off += 8 {
			if tops[binary.LittleEndian.Uint64(data[off:])] {
				out = append(out, s.Addr+uint64(off-arenaTop))
			}
		}
	}
	return out
}

// fastbinFree adds to free the user addresses of the chunks in the
// fastbins of the malloc_state at arena, when every list head is empty or
// a chunk of its bin's size.
func (h *Heap) fastbinFree(arena uint64, free map[uint64]bool) {
	b, err := h.p.ReadBytes(arena+arenaFastbins, 8*fastbinCount)
	if err != nil {
		return
	}
	le := binary.LittleEndian
	for i := range fastbinCount {
		if c := le.Uint64(b[8*i:]); c != 0 && (c%16 != 0 || !h.chunkSizeIs(c+16, uint64(32+16*i))) {
			return
		}
	}
	for i := range fastbinCount {
		c := le.Uint64(b[8*i:])
		for k := 0; k < maxFreeList && c != 0; k++ {
			free[c+16] = true
			next, ok := h.nextFree(c+16, uint64(32+16*i), false)
			if !ok {
				break
			}
			c = next
		}
	}
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
