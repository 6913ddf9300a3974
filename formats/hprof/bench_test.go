package hprof

import (
	"bytes"
	"os"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// BenchmarkRead reads the dump named by HEAPX_BENCH_HPROF (for example
// java-leakdemo-large.hprof, regenerated as ../shared/corpus/MANIFEST.md
// section 2 says), or else the largest fixture from memory. Bytes are
// uncompressed bytes; the target is >= 100 MB/s.
func BenchmarkRead(b *testing.B) {
	if path := os.Getenv("HEAPX_BENCH_HPROF"); path != "" {
		st, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(st.Size())
		for b.Loop() {
			if _, err := ReadFile(path, ReadOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	data := testfixtures.Gunzip(b, fixture("java-leakdemo-small.hprof.gz"))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), "bench", ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
