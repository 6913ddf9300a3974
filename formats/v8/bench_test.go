package v8

import (
	"os"
	"testing"
)

// BenchmarkReadFile reads the snapshot named by HEAPX_BENCH_SNAPSHOT (for
// example one made by bench/gen-snapshots.sh). Target for the 1.15 GB
// synthetic snapshot on 2 cores: <= 2 s and peak RSS <= 0.8x the file.
func BenchmarkReadFile(b *testing.B) {
	path := os.Getenv("HEAPX_BENCH_SNAPSHOT")
	if path == "" {
		b.Skip("set HEAPX_BENCH_SNAPSHOT to a .heapsnapshot file")
	}
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
}

// BenchmarkReadFixture reads the gzip-compressed Chromium fixture, so the
// benchmark always has something to measure.
func BenchmarkReadFixture(b *testing.B) {
	for b.Loop() {
		if _, err := ReadFile(fixture("chromium-small-page"), ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
