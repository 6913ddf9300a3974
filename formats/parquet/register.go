package parquet

import (
	"fmt"
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
			if !isPartition(path) {
				return nil, wholeDirectory(path)
			}
			g, _, err := ReadDump(path, ReadOptions{Progress: opt.Progress, Results: opt.Results})
			return g, err
		},
		Results: true,
	})
}

// DetectDir reports whether the directory at path is in the Parquet form:
// a partition (named dump=<id>, holding a dumps table), or a directory of
// them, which the registry's Read refuses with a message that says what
// to pass instead.
func DetectDir(path string) bool {
	if isPartition(path) {
		return true
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if e.IsDir() && isPartition(filepath.Join(path, e.Name())) {
			return true
		}
	}
	return false
}

// isPartition reports whether the directory at path is a partition:
// named dump=<id> and holding a dumps table.
func isPartition(path string) bool {
	if !strings.HasPrefix(filepath.Base(filepath.Clean(path)), PartitionPrefix) {
		return false
	}
	st, err := os.Stat(TableFile(path, TableDumps))
	return err == nil && st.Mode().IsRegular()
}

// wholeDirectory is the error for a Parquet directory given where one
// dump is read.
func wholeDirectory(dir string) error {
	var ids []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() && isPartition(filepath.Join(dir, e.Name())) {
			ids = append(ids, e.Name())
		}
	}
	example := ""
	if len(ids) > 0 {
		example = ", such as " + filepath.Join(dir, ids[0])
	}
	return &formats.FormatError{File: dir, Offset: -1, Msg: fmt.Sprintf(
		"a Parquet directory of %d dumps (heapx export), not one dump: pass one partition%s, or ask all of them with heapx fleet or heapx sql",
		len(ids), example)}
}
