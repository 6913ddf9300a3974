package heapprofile

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkRead reads node --heap-prof's profile of testdata/gen/sites.js
// from memory.
func BenchmarkRead(b *testing.B) {
	raw, err := os.ReadFile(fixture("node-sites.heapprofile"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(raw), "bench"); err != nil {
			b.Fatal(err)
		}
	}
}
