//go:build !linux

package model

import "unsafe"

// adviseHuge is a no-op where transparent huge pages are not available.
func adviseHuge(unsafe.Pointer, uintptr) {}
