//go:build !linux

package analysis

import "unsafe"

// populate is not available here; callers then let page faults happen
// where the memory is first used.
func populate(p unsafe.Pointer, size uintptr) bool { return false }
