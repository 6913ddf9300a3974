package parquet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// fuzzTables are the tables FuzzReadDump replaces, by the input's first
// argument.
var fuzzTables = []string{parquet.TableDumps, parquet.TableObjects, parquet.TableReferences, parquet.TableStrings, parquet.TableLocations}

// FuzzReadDump replaces one table file of a partition with arbitrary
// bytes and reads the partition: it must return a graph that validates
// (with results that fit it) or a FormatError, and never panic. The seeds
// are the table files written from testdata/sqlite/tiny.heapsnapshot (a
// V8 snapshot with a location), so mutations land in real Parquet pages,
// dictionaries and footers.
func FuzzReadDump(f *testing.F) {
	g := readDump(f, "../../testdata/sqlite/tiny.heapsnapshot")
	src, _ := write(f, g, "0123456789abcdef")
	for i, table := range fuzzTables {
		b, err := os.ReadFile(parquet.TableFile(src, table))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		part := filepath.Join(t.TempDir(), filepath.Base(src))
		if err := os.Mkdir(part, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, table := range fuzzTables {
			b, err := os.ReadFile(parquet.TableFile(src, table))
			if err != nil {
				t.Fatal(err)
			}
			if table == fuzzTables[int(which)%len(fuzzTables)] {
				b = data
			}
			if err := os.WriteFile(parquet.TableFile(part, table), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var res model.Results
		g, _, err := parquet.ReadDump(part, parquet.ReadOptions{Results: &res})
		if !testfixtures.CheckRead(t, g, err) {
			return
		}
		if err := res.Check(g); err != nil {
			t.Fatalf("results returned without error do not fit: %v", err)
		}
	})
}
