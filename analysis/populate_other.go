//go:build !linux

package analysis

import "unsafe"

// populate is not available here; callers then let page faults happen
// where the memory is first used.
func populate(p unsafe.Pointer, size uintptr) bool { return false }

// newChunk cannot map memory here: the caller allocates instead.
func newChunk(n int) []int32 { return nil }

// freeChunk is never called here.
func freeChunk(c []int32) {}
