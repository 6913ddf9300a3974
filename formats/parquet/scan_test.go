package parquet_test

import (
	"os"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/heapx/heapx/formats/parquet"
)

// TestScanMixedVersions: a directory whose partitions are of two versions
// of the form is refused, naming a partition of each, and so is one
// partition of a version this heapx does not read.
func TestScanMixedVersions(t *testing.T) {
	dir := t.TempDir()
	g := readDump(t, "../../testdata/sqlite/tiny.heapsnapshot")
	d, _ := partitionOf(t, g, "0123456789abcdef")
	if _, err := parquet.WritePartition(dir, d); err != nil {
		t.Fatal(err)
	}
	d.Info.DumpID = "fedcba9876543210"
	newer, err := parquet.WritePartition(dir, d)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := parquet.Scan(dir)
	if err != nil || len(parts) != 2 || parts[0].ID != "0123456789abcdef" || parts[1].Version != parquet.FormatVersion {
		t.Fatalf("Scan: %+v, %v", parts, err)
	}
	// A later heapx's partition: format_version 2.
	row, err := readRows[parquet.DumpRow](parquet.TableFile(newer, parquet.TableDumps))
	if err != nil {
		t.Fatal(err)
	}
	row[0].FormatVersion = 2
	f, err := os.Create(parquet.TableFile(newer, parquet.TableDumps))
	if err != nil {
		t.Fatal(err)
	}
	w := pq.NewGenericWriter[parquet.DumpRow](f)
	if _, err := w.Write(row); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = parquet.Scan(dir)
	if err == nil || !strings.Contains(err.Error(), "mixed format versions") || !strings.Contains(err.Error(), "dump=0123456789abcdef is version 1") ||
		!strings.Contains(err.Error(), "dump=fedcba9876543210 version 2") {
		t.Fatalf("Scan of a mixed directory: %v", err)
	}
	if _, err := parquet.Prepare(dir); err == nil {
		t.Fatal("Prepare (an export) accepted a mixed directory")
	}
	// Reading the newer partition says what it is.
	_, _, err = parquet.ReadDump(newer, parquet.ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "format_version is 2; this heapx reads version 1") {
		t.Fatalf("ReadDump of a version-2 partition: %v", err)
	}
	// Alone, a version-2 directory is refused too.
	os.RemoveAll(parts[0].Path)
	if _, err := parquet.Scan(dir); err == nil || !strings.Contains(err.Error(), "version 2; this heapx reads and writes version 1") {
		t.Fatalf("Scan of a version-2 directory: %v", err)
	}
}

// TestWritePartitionAtomic: a write that fails leaves neither the
// partition nor its temporary directory, and a partition is never
// rewritten.
func TestWritePartitionAtomic(t *testing.T) {
	dir := t.TempDir()
	g := readDump(t, "../../testdata/sqlite/tiny.heapsnapshot")
	d, _ := partitionOf(t, g, "0123456789abcdef")
	d.ClassOf = d.ClassOf[:1] // the objects table cannot be written
	if _, err := parquet.WritePartition(dir, d); err == nil {
		t.Fatal("wrote a partition with a class for one node")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("a failed write left %v", ents[0].Name())
	}
	d, _ = partitionOf(t, g, "0123456789abcdef")
	if _, err := parquet.WritePartition(dir, d); err != nil {
		t.Fatal(err)
	}
	if _, err := parquet.WritePartition(dir, d); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Fatalf("second write of one partition: %v", err)
	}
}
