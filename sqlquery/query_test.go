package sqlquery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/heapx/heapx/sqlquery"
)

// TestQueryRebuildsDamagedCopy: Query over a copy damaged since it was
// made says so, rebuilds it and answers.
func TestQueryRebuildsDamagedCopy(t *testing.T) {
	t.Parallel()
	var b builder
	db := damagedCopy(t, &b)
	var out bytes.Buffer
	var damaged error
	jsonRows := func(w io.Writer) sqlquery.RowWriter { return &sqlquery.JSONRows{W: w} }
	err := db.Query(context.Background(), "SELECT count(*) AS n FROM edges_full", &out, jsonRows, b.Builder(nil), func(err error) { damaged = err })
	var got []struct{ N int }
	if err != nil || json.Unmarshal(out.Bytes(), &got) != nil || len(got) != 1 || got[0].N != 221573 {
		t.Fatalf("query of a damaged copy: %v, %s", err, out.String())
	}
	if !sqlquery.IsCorrupt(damaged) || b.loads != 2 {
		t.Errorf("damaged told %v, %d loads", damaged, b.loads)
	}
}

// cutRows is rows that reads only the start of each value.
type cutRows struct{ rows }

func (*cutRows) CellBytes() int { return 4 }

// TestQueryCellLimit: a CellLimit writer gets only the start of a long
// value, another writer all of it.
func TestQueryCellLimit(t *testing.T) {
	t.Parallel()
	db := &sqlquery.DB{Path: leakDB(t)}
	stmt := "SELECT 'abcdefgh'"
	var cut cutRows
	var whole rows
	for _, w := range []sqlquery.RowWriter{&cut, &whole} {
		err := db.Query(context.Background(), stmt, io.Discard, func(io.Writer) sqlquery.RowWriter { return w }, sqlquery.Builder{}, nil)
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := cut.rows.rows[0][0]; !strings.HasPrefix(got, "abcd") || strings.Contains(got, "efgh") {
		t.Errorf("cut value %q", got)
	}
	if got := whole.rows[0][0]; got != "abcdefgh" {
		t.Errorf("whole value %q", got)
	}
}
