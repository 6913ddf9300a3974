package model

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// adviseHuge marks the 2 MB-aligned part of [p, p+n) for transparent huge
// pages. It is advice: errors (no THP support) are ignored.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	start := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	end := (uintptr(p) + n) &^ (hugePage - 1)
	if end <= start {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start)
	_ = syscall.Madvise(b, 14 /* MADV_HUGEPAGE */)
}
