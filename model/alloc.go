package model

import (
	"sync/atomic"
	"unsafe"
)

// hugeThreshold is the size from which Alloc asks for huge pages. Below it
// the page-fault savings do not matter.
const hugeThreshold = 4 << 20

// hugePages says whether Alloc asks for huge pages (SetHugePages).
var hugePages atomic.Bool

// SetHugePages says whether Alloc advises the kernel to back large columns
// with transparent huge pages (madvise MADV_HUGEPAGE; off by default). What
// pays depends on the host: with 2 MB pages first-touch faults are 512
// times fewer, but where the kernel compacts memory to find them
// (transparent_hugepage/defrag "madvise", the Debian default) a fault can
// stall on compaction, which made reading and analysing a 1 GB snapshot
// slower here (docs/benchmarks.md, issue 16). heapx's command sets it from
// the environment variable HEAPX_HUGEPAGES.
func SetHugePages(on bool) { hugePages.Store(on) }

// Alloc returns a zeroed slice of n elements for a large column. On Linux,
// with SetHugePages(true), memory of hugeThreshold or more is advised to
// use transparent huge pages: a column is written once front to back, and
// first-touch page faults are a large part of reading a 1 GB snapshot on
// a VM. The make is not fused with a copy by callers, so fresh memory is
// not cleared twice.
func Alloc[T any](n int) []T {
	s := make([]T, n)
	if n > 0 && hugePages.Load() {
		var zero T
		if bytes := uintptr(n) * unsafe.Sizeof(zero); bytes >= hugeThreshold {
			adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), bytes)
		}
	}
	return s
}

// Grow returns s with room for at least n more elements, reallocating with
// Alloc (doubling) when needed.
func Grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	c := 2 * cap(s)
	if c < len(s)+n {
		c = len(s) + n
	}
	if c < 256 {
		c = 256
	}
	t := Alloc[T](c)
	copy(t, s)
	return t[:len(s)]
}
