package parquet_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestHostilePartitions reads the crafted partitions of
// hostile.ParquetCases (bench/hostile.sh runs heapx on the same): each is
// refused with one line naming the file and what was wrong, and the read
// allocates little, whatever the sizes and counts the file declares.
func TestHostilePartitions(t *testing.T) {
	g := readDump(t, filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"))
	src, _ := write(t, g, "0123456789abcdef")
	cases, err := hostile.ParquetCases(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			part := filepath.Join(t.TempDir(), "dump=0123456789abcdef")
			if err := hostile.WriteParquetCase(src, part, c); err != nil {
				t.Fatal(err)
			}
			var err error
			alloc := hostile.Allocated(func() {
				var res model.Results
				_, _, err = parquet.ReadDump(part, parquet.ReadOptions{Results: &res})
			})
			if err == nil {
				t.Fatal("read without error")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.Want) || !strings.HasPrefix(msg, part) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the partition's file and saying %q", msg, c.Want)
			}
			if alloc > 64<<20 {
				t.Errorf("the read allocated %d MB", alloc>>20)
			}
		})
	}
}
