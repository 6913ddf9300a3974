package spidermonkey

import (
	"bytes"
	"os"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// BenchmarkRead reads the medium Firefox dump (6.8 MB gzip, 65 MB of
// protobuf) from memory. Throughput is of the uncompressed input, the
// issue's measure (target: >= 100 MB/s).
func BenchmarkRead(b *testing.B) {
	path := fixture("ff-medium-page.fxsnapshot")
	in, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(testfixtures.Gunzip(b, path))))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(in), path, ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
