package query

import (
	"github.com/heapx/heapx/analysis/alloc"
)

// FrameText is a frame as one line of text, "function script:line:column"
// (the function "(anonymous)" when it has no name), as the "Allocated in"
// cells write it: for exports that store a site per object.
func FrameText(f alloc.Frame) string {
	t := functionName(f)
	if l := frameLocation(f); l != "" {
		t += " " + l
	}
	return t
}
