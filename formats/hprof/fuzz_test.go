package hprof

import (
	"bytes"
	"testing"

	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
)

// FuzzRead feeds arbitrary bytes to the reader: it must return a graph
// that validates or a FormatError, and never panic. Seeds are the
// hand-made tiny dumps (8- and 4-byte ids, stated sizes) and the first
// 4 KB of a real JDK 17 dump (its header and name records), and the
// crafted dumps of issue 12 (internal/hostile): a superclass cycle, a
// chain, a layout that wrapped past 2^32 bytes, a class name with
// terminal escapes; and the crafted threads of threadsDump in JDK 17's
// and 19's layouts.
func FuzzRead(f *testing.F) {
	f.Add(tinyDump(8, 0))
	f.Add(tinyDump(4, 0))
	f.Add(tinyDump(8, 12))
	real := testfixtures.Gunzip(f, fixture("java-jshell-agent.hprof.gz"))
	f.Add(bytes.Clone(real[:4096]))
	f.Add(hostile.SuperclassCycle(20, 3))
	f.Add(hostile.SuperclassChain(50, 2))
	f.Add(hostile.WrappingFieldOffset())
	f.Add(hostile.HPROFEscapes())
	f.Add(threadsDump(8, false))
	f.Add(threadsDump(4, true))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data), "fuzz", ReadOptions{})
		if !testfixtures.CheckRead(t, g, err) {
			return
		}
	})
}
