package parquet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/model"
)

// benchDump is the dump the benchmarks write and read: a Chromium page
// (173,737 nodes, 577,170 edges) from the shared corpus when it is there,
// else node-basic from testdata.
func benchDump(b *testing.B) string {
	if p := "/work/shared/corpus/chromium/chromium-small-page.heapsnapshot"; fileExists(p) {
		return p
	}
	return "../../testdata/node-basic.heapsnapshot.gz"
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// BenchmarkWritePartition measures writing one analysed dump's partition
// (every table, zstd, synced), without the analysis.
func BenchmarkWritePartition(b *testing.B) {
	g := readDump(b, benchDump(b))
	d, _ := partitionOf(b, g, "0123456789abcdef")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		dir := b.TempDir()
		if _, err := parquet.WritePartition(dir, d); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
	}
	b.ReportMetric(float64(g.NumNodes()+g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkReadDump measures reading a partition back into the model,
// with its analysis results.
func BenchmarkReadDump(b *testing.B) {
	g := readDump(b, benchDump(b))
	d, _ := partitionOf(b, g, "0123456789abcdef")
	part, err := parquet.WritePartition(b.TempDir(), d)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var res model.Results
		if _, _, err := parquet.ReadDump(filepath.Clean(part), parquet.ReadOptions{Results: &res}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.NumNodes()+g.NumEdges())*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
