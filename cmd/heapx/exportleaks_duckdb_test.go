//go:build duckdb

package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/formats/parquet"
)

// TestExportLeaksSQL queries the leaks table of an export --leaks on
// DuckDB (heapx sql): the rows are the table's, and they join the dumps
// table on the series' dump ids.
func TestExportLeaksSQL(t *testing.T) {
	dir := t.TempDir()
	series := []string{"../../testdata/node-leak-1.heapsnapshot.gz", "../../testdata/node-leak-2.heapsnapshot.gz", "../../testdata/node-leak-3.heapsnapshot.gz"}
	m := partitionLine.FindAllStringSubmatch(ok(t, append([]string{"export", "--parquet", dir, "--leaks"}, series...)...), -1)
	if len(m) != 3 {
		t.Fatalf("export --leaks wrote %d partitions", len(m))
	}
	want, err := parquet.ReadTable[parquet.LeakRow](m[2][1], parquet.TableLeaks, true)
	if err != nil || len(want) == 0 {
		t.Fatalf("%d leaks, %v", len(want), err)
	}
	rows := sqlRows(t, dir, `SELECT l.rank, l.class, l.objects, l.retained_size, l.representative_id, l.path, b.file AS baseline, f.file AS final
		FROM leaks l JOIN dumps b ON b.dump_id = l.baseline_dump_id JOIN dumps f ON f.dump_id = l.dump_id ORDER BY l.rank`)
	if len(rows) != len(want) {
		t.Fatalf("DuckDB reads %d leaks, the table has %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		num := func(k string) string { return r[k].(json.Number).String() }
		b, _ := filepath.Abs(series[0])
		f, _ := filepath.Abs(series[2])
		if num("rank") != fmt.Sprint(w.Rank) || r["class"] != w.Class || num("objects") != fmt.Sprint(w.Objects) ||
			num("retained_size") != fmt.Sprint(w.RetainedSize) || num("representative_id") != fmt.Sprint(w.RepresentativeID) ||
			r["path"] != w.Path || r["baseline"] != b || r["final"] != f {
			t.Errorf("leak %d: DuckDB %v, table %+v", i+1, r, w)
		}
	}
}
