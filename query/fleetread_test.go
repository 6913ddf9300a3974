package query

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/heapx/heapx/formats/parquet"
)

// writePartition writes a partition of dump id into dir with the small
// tables the fleet views read: its dumps row, and the classes and
// suspects rows given.
func writePartition(t *testing.T, dir, id string, version int32, classes []parquet.ClassRow, suspects []parquet.SuspectRow) string {
	t.Helper()
	part := parquet.PartitionDir(dir, id)
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	dumps := []parquet.DumpRow{{DumpID: id, FormatVersion: version, Labels: []parquet.Label{{Key: "pod", Value: id}}}}
	if err := pq.WriteFile(parquet.TableFile(part, parquet.TableDumps), dumps); err != nil {
		t.Fatal(err)
	}
	if err := pq.WriteFile(parquet.TableFile(part, parquet.TableClasses), classes); err != nil {
		t.Fatal(err)
	}
	if err := pq.WriteFile(parquet.TableFile(part, parquet.TableSuspects), suspects); err != nil {
		t.Fatal(err)
	}
	return part
}

// TestReadFleet reads a directory of two partitions, and one partition
// alone, with their rows; and refuses a file, a directory with no
// partition, a partition of another format version, and a table holding
// another dump's rows.
func TestReadFleet(t *testing.T) {
	dir := t.TempDir()
	writePartition(t, dir, "a", parquet.FormatVersion,
		[]parquet.ClassRow{{DumpID: "a", Class: "Leak", Count: 10, RetainedSize: 100}, {DumpID: "a", Class: "Map", Count: 1, RetainedSize: 50}},
		[]parquet.SuspectRow{{DumpID: "a"}})
	b := writePartition(t, dir, "b", parquet.FormatVersion, []parquet.ClassRow{{DumpID: "b", Class: "Leak", Count: 20, RetainedSize: 200}}, nil)
	f, err := ReadFleet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Dumps) != 2 || f.Dumps[0].DumpID != "a" || f.Dumps[1].DumpID != "b" || f.Dumps[1].Labels[0].Value != "b" {
		t.Errorf("dumps %+v", f.Dumps)
	}
	if len(f.Classes) != 3 || f.Classes[2].DumpID != "b" || f.Classes[2].RetainedSize != 200 || len(f.Suspects) != 1 {
		t.Errorf("classes %+v, suspects %+v", f.Classes, f.Suspects)
	}
	if one, err := ReadFleet(b); err != nil || len(one.Dumps) != 1 || one.Dumps[0].DumpID != "b" || len(one.Classes) != 1 {
		t.Errorf("a partition alone: %+v, %v", one, err)
	}

	wrong := t.TempDir()
	writePartition(t, wrong, "c", parquet.FormatVersion, []parquet.ClassRow{{DumpID: "c"}, {DumpID: "d"}}, nil)
	old := writePartition(t, t.TempDir(), "e", parquet.FormatVersion+1, nil, nil)
	for _, c := range []struct{ dir, want string }{
		{old, "format_version is " + strconv.Itoa(parquet.FormatVersion+1)},
		{parquet.TableFile(b, parquet.TableDumps), "is not a directory: heapx fleet reads a directory that heapx export --parquet wrote"},
		{t.TempDir(), "no dump=<id> directory in it"},
		{wrong, filepath.Join("dump=c", "classes.parquet") + ": row 1 is of dump d, not of the partition's c"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		if _, err := ReadFleet(c.dir); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.dir, err, c.want)
		}
	}
}
