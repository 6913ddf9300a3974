package nodecore

import (
	"encoding/binary"
	"testing"
)

// TestMallocChunks walks a glibc heap made by hand: chunks in use are
// live, a free chunk (its successor's PREV_INUSE bit clear) and the top
// chunk are not; bytes that are not a heap are not taken for one.
func TestMallocChunks(t *testing.T) {
	const base = 0x10000
	data := make([]byte, 8192)
	put := func(off, size uint64) { binary.LittleEndian.PutUint64(data[off+8:], size) }
	// A (64 bytes, in use), B (96, free: C's PREV_INUSE is clear),
	// C (32, in use: top's PREV_INUSE is set), top to the end.
	put(0, 64|chunkPrevInUse)
	put(64, 96|chunkPrevInUse)
	put(160, 32)
	put(192, (8192-192)|chunkPrevInUse)
	mh, ok := mallocChunks(base, data)
	if !ok {
		t.Fatal("the heap was not recognised")
	}
	want := []liveRange{{base + 16, base + 64}, {base + 176, base + 192}}
	if len(mh.inUse) != len(want) || mh.inUse[0] != want[0] || mh.inUse[1] != want[1] || mh.top != base+192 {
		t.Errorf("in use %x, top %x; want %x, top %x", mh.inUse, mh.top, want, base+192)
	}
	// A size that runs past the end is no heap.
	put(192, 16384|chunkPrevInUse)
	if _, ok := mallocChunks(base, data); ok {
		t.Error("a chunk running past the segment was accepted")
	}
}

// TestLargeUnknownArray: an object of a type the metadata does not name
// with a length of 2,000,000 (a Map's OrderedHashMap of 600,000 entries)
// is sized when it fills its large-object page exactly, and not guessed
// otherwise.
func TestLargeUnknownArray(t *testing.T) {
	h := &Heap{smiTagMask: 1, smiTag: 0, smiShift: 32}
	k := &kinds{}
	const typ, n = 300, 2000000
	obj := make([]byte, 16+8*n)
	binary.LittleEndian.PutUint64(obj[8:], uint64(n)<<32)
	sizes, known := h.variableSizes(typ, obj, k)
	if len(sizes) != 1 || sizes[0] != 16+8*n || !known {
		t.Errorf("sizes %v (known %v), want [%d]", sizes, known, 16+8*n)
	}
	if sizes, _ := h.variableSizes(typ, obj[:len(obj)-8], k); len(sizes) != 0 {
		t.Errorf("sizes %v for an object that does not fill its page, want none", sizes)
	}
}
