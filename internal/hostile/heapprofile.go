package hostile

import (
	"bufio"
	"fmt"
	"io"
)

// HeapProfileDeep writes a sampling heap profile whose call tree nests
// levels deep and never closes: what a reader that recurses once per level
// meets (a million levels is 26 MB of JSON, 2.6 MB gzip-compressed).
func HeapProfileDeep(w io.Writer, levels int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(`{"head":`)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(bw, `{"id":%d,"children":[`, i)
	}
	return bw.Flush()
}

// HeapProfileChain writes a valid sampling heap profile whose call tree is
// one chain of levels frames under the root, each a different function
// allocating 8 bytes, and under the deepest leaves more functions
// allocating 8 bytes each; every allocating frame has one sample. Each
// frame's stack is as deep as its level, so the stacks together hold
// about (levels/2 + leaves) × levels frames for a view that expands each
// one (5 million for 1,000 levels and 4,500 leaves, from a 1 MB file).
func HeapProfileChain(w io.Writer, levels, leaves int) error {
	return heapProfileChain(w, levels, leaves, false)
}

// HeapProfileRecursion is HeapProfileChain with one function recursing
// levels deep and one leaf function called leaves times at its bottom:
// a cycle of the call graph, which a view must count once per stack (the
// recursing function's total is every byte under it, not levels times
// that), and whose bottom-up inversion keeps every stack in one row per
// level: levels × leaves frames to walk (50 million from 9 MB).
func HeapProfileRecursion(w io.Writer, levels, leaves int) error {
	return heapProfileChain(w, levels, leaves, true)
}

func heapProfileChain(w io.Writer, levels, leaves int, recursive bool) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	frame := func(id int) {
		name, line := fmt.Sprintf("f%d", id), id
		switch {
		case recursive && id <= levels+1:
			name, line = "recurse", 1
		case recursive:
			name, line = "leaf", 2
		}
		fmt.Fprintf(bw, `{"callFrame":{"functionName":"%s","scriptId":"1","url":"chain.js","lineNumber":%d,"columnNumber":0},"selfSize":8,"id":%d,"children":[`, name, line, id)
	}
	bw.WriteString(`{"head":{"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1,"children":[`)
	last := levels + leaves + 1
	for id := 2; id <= levels+1; id++ {
		frame(id)
	}
	for id := levels + 2; id <= last; id++ {
		if id > levels+2 {
			bw.WriteByte(',')
		}
		frame(id)
		bw.WriteString("]}")
	}
	for range levels + 1 {
		bw.WriteString("]}")
	}
	bw.WriteString(`,"samples":[`)
	for id := 2; id <= last; id++ {
		if id > 2 {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, `{"size":8,"nodeId":%d,"ordinal":%d}`, id, id)
	}
	bw.WriteString("]}")
	return bw.Flush()
}
