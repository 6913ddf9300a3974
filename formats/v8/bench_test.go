package v8

import (
	"bytes"
	"compress/gzip"
	"io"
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

// BenchmarkReadOneWorker reads HEAPX_BENCH_SNAPSHOT (else the Chromium
// fixture) from memory with one parsing goroutine: the reader's CPU cost
// (mostly parseColumns), without the page cache, the disk or a second
// core's scheduling in the measure.
func BenchmarkReadOneWorker(b *testing.B) {
	path := os.Getenv("HEAPX_BENCH_SNAPSHOT")
	if path == "" {
		path = fixture("chromium-small-page")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	if len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b {
		z, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if data, err = io.ReadAll(z); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), path, ReadOptions{Workers: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
