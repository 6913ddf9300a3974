package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// BenchmarkInsert measures the bulk-insert machinery alone: rows of four
// integers into one table, in one transaction, through the batched
// prepared statements. It reports rows/s.
func BenchmarkInsert(b *testing.B) {
	const rows = 1_000_000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "bench.db")
		conn, err := openForWrite(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := exec(conn, "CREATE TABLE edge (seq INTEGER PRIMARY KEY, source INTEGER, dest INTEGER, label INTEGER)"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := exec(conn, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		in, err := newInserter(conn, "edge", rows, "seq", "source", "dest", "label")
		if err != nil {
			b.Fatal(err)
		}
		for r := int64(0); r < rows; r++ {
			in.Int(r)
			in.Int(r / 3)
			in.Int(r * 7919 % rows)
			in.Int(r % 1000)
			if err := in.End(); err != nil {
				b.Fatal(err)
			}
		}
		if err := in.Close(); err != nil {
			b.Fatal(err)
		}
		if err := exec(conn, "COMMIT"); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		conn.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkWriteRead writes the Chromium fixture (174K nodes, 577K
// edges) as a .db and reads it back, reporting rows/s for each way.
func BenchmarkWriteRead(b *testing.B) {
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "chromium-small-page.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	rows := float64(g.NumNodes() + g.NumEdges() + g.Strings.Len())
	b.Run("write", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := Save(filepath.Join(b.TempDir(), "w.db"), g, WriteOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	db := filepath.Join(b.TempDir(), "r.db")
	if err := Save(db, g, WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		var h *model.Graph
		for i := 0; i < b.N; i++ {
			if h, err = ReadFile(db, ReadOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		_ = h
	})
	// With results, as convert --analyze writes: heapx_packed is written,
	// and read instead of the rows.
	a, err := analysis.Analyze(g, analysis.Options{NoClasses: true})
	if err != nil {
		b.Fatal(err)
	}
	res := a.Results()
	b.Run("write-analysed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := Save(filepath.Join(b.TempDir(), "w.db"), g, WriteOptions{Results: res}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	adb := filepath.Join(b.TempDir(), "a.db")
	if err := Save(adb, g, WriteOptions{Results: res}); err != nil {
		b.Fatal(err)
	}
	b.Run("read-analysed", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var back model.Results
			if _, err := ReadFile(adb, ReadOptions{Results: &back}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(rows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}
