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
