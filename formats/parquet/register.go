package parquet

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

func init() {
	formats.Register(formats.Format{
		Name:        Name,
		Description: "heapx exchange format, Parquet form (a directory DIR/dump=<id>; docs/format.md section 10): written by heapx export, queried with DuckDB or Spark",
		DetectDir:   DetectDir,
		Read: func(path string, opt formats.ReadOptions) (*model.Graph, error) {
			g, _, err := ReadDump(path, ReadOptions{Progress: opt.Progress, Results: opt.Results})
			return g, err
		},
		Results: true,
	})
}

// DetectDir reports whether the directory at path is a partition of the
// Parquet form: named dump=<id> and holding a dumps table.
func DetectDir(path string) bool {
	if !strings.HasPrefix(filepath.Base(filepath.Clean(path)), PartitionPrefix) {
		return false
	}
	st, err := os.Stat(TableFile(path, TableDumps))
	return err == nil && st.Mode().IsRegular()
}
