//go:build !linux

package analysis

import "unsafe"

// populate is not available here; callers then let page faults happen
// where the memory is first used.
func populate(p unsafe.Pointer, size uintptr) bool { return false }

// release cannot give pages back here: they stay resident until the
// array they are part of is freed.
func release(p unsafe.Pointer, size uintptr) {}

// newChunk cannot map memory here: the caller allocates instead.
func newChunk(n int) []int32 { return nil }

// freeChunk is never called here.
func freeChunk(c []int32) {}
