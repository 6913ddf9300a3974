package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/sqlquery"
)

// writeRows hands w a result of two columns: a number column with a
// NULL, and a text column with an empty and a long value.
func writeRows(t *testing.T, w sqlquery.RowWriter) {
	t.Helper()
	long := strings.Repeat("x", 100)
	err := w.Begin([]string{"n", "s"})
	for _, r := range [][]sqlquery.Cell{{sqlquery.IntCell(7), sqlquery.TextCell("")}, {sqlquery.NullCell(), sqlquery.TextCell(long)},
		{sqlquery.FloatCell(1234.5), sqlquery.TextCell("a,\"b\"")}} {
		if err == nil {
			err = w.Row(r)
		}
	}
	if err == nil {
		err = w.End()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestSQLTable: numbers right-aligned, NULL spelled out, long text cut
// to 80 characters.
func TestSQLTable(t *testing.T) {
	var b bytes.Buffer
	writeRows(t, render.NewSQLTable(&b))
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	want := []string{"     n  s", "     7  ", "  NULL  " + strings.Repeat("x", 79) + "…", "1234.5  a,\"b\""}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("table:\n%s", b.String())
	}
	if got := render.NewSQLTable(&b).CellBytes(); got != 324 {
		t.Errorf("CellBytes() = %d", got)
	}
}

// TestSQLCSV: a header line, NULL as an empty field, quotes doubled.
func TestSQLCSV(t *testing.T) {
	var b bytes.Buffer
	writeRows(t, render.NewSQLCSV(&b))
	want := "n,s\n7,\n," + strings.Repeat("x", 100) + "\n1234.5,\"a,\"\"b\"\"\"\n"
	if b.String() != want {
		t.Errorf("CSV %q, want %q", b.String(), want)
	}
}

// TestNewSQLRows: each form gets its writer, which writes the rows in it.
func TestNewSQLRows(t *testing.T) {
	for f, want := range map[render.Format]string{
		render.Text: "     n  s\n     7  \n",
		render.CSV:  "n,s\n7,\n",
		render.JSON: "{\"n\":7,\"s\":\"\"}",
	} {
		var b bytes.Buffer
		writeRows(t, render.NewSQLRows(&b, f))
		if !strings.Contains(b.String(), want) {
			t.Errorf("form %v: %q, want it to hold %q", f, b.String(), want)
		}
	}
}
