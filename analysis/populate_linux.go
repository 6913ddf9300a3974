package analysis

import (
	"syscall"
	"unsafe"
)

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14).
const madvPopulateWrite = 23

// populate asks the kernel to fault in [p, p+size) writable without
// touching its contents, and reports whether it could. Unlike writing to
// the pages, it is safe while other goroutines use the memory, so it can
// run on an idle core alongside them.
func populate(p unsafe.Pointer, size uintptr) bool {
	if size == 0 {
		return true
	}
	return syscall.Madvise(unsafe.Slice((*byte)(p), size), madvPopulateWrite) == nil
}

// release gives the whole pages of [p, p+size) back to the system
// (MADV_DONTNEED) while the memory stays allocated: for the dead part of a
// Go array whose other part is still in use, which the collector would
// return only with the whole array. The pages read as zeros if touched
// again.
func release(p unsafe.Pointer, size uintptr) {
	const page = 4096
	skip := -uintptr(p) & (page - 1) // to the first whole page
	if size <= skip {
		return
	}
	whole := (size - skip) &^ (page - 1)
	if whole == 0 {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, skip)), whole), syscall.MADV_DONTNEED)
}

// newChunk returns n int32s of memory mapped for the caller alone, which
// freeChunk unmaps: memory given back the moment it is freed, where a Go
// allocation stays resident until a collection and the scavenger, neither
// of which comes on a heap of gigabytes (the distances' queue). It
// returns nil if the mapping fails.
func newChunk(n int) []int32 {
	b, err := syscall.Mmap(-1, 0, n*4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
}

// freeChunk unmaps a chunk newChunk returned.
func freeChunk(c []int32) {
	c = c[:cap(c)]
	_ = syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), len(c)*4))
}
