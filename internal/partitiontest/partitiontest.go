// Package partitiontest writes Parquet partitions (formats/parquet) for
// tests that open one as a dump: heapx export's output is a directory of
// partitions made at test time, not a fixture kept in testdata/ (it would
// be a second copy of the snapshot it is made from).
package partitiontest

import (
	"path/filepath"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/parquet"
)

// ID is the dump id of the partitions Write writes.
const ID = "0123456789abcdef"

// Write writes the dump at path, analysed, as the partition
// DIR/dump=<ID> of a new temporary directory (deleted when t ends), with
// its analysis's results and classes (the objects table heapx export
// writes, which the reader opens a partition from), and returns the
// partition's path.
func Write(t testing.TB, path string) string {
	t.Helper()
	d, err := heapx.Open(path, heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	pd := &parquet.Dump{Graph: d.Graph(), Results: a.Results(), ClassOf: a.Classes.Of, ClassNames: a.Classes.Names,
		Info: parquet.DumpRow{DumpID: ID, File: filepath.Base(path), TotalSize: int64(a.TotalSize())}}
	part, err := parquet.WritePartition(t.TempDir(), pd)
	if err != nil {
		t.Fatal(err)
	}
	return part
}
