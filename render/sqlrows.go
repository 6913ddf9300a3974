package render

import (
	"encoding/csv"
	"io"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/sqlquery"
)

// NewSQLRows returns the writer of an SQL result's rows to w in form f:
// a JSON array of objects (sqlquery.JSONRows), CSV with a header line
// (SQLCSV), else an aligned table (SQLTable), as heapx sql prints them.
func NewSQLRows(w io.Writer, f Format) sqlquery.RowWriter {
	switch f {
	case JSON:
		return &sqlquery.JSONRows{W: w}
	case CSV:
		return NewSQLCSV(w)
	}
	return NewSQLTable(w)
}

// sqlCellWidth caps a text cell of an SQL table: a concatenated
// string's value can be kilobytes long. CSV and JSON print it whole.
const sqlCellWidth = 80

// SQLTable prints an SQL result (a sqlquery.RowWriter) as an aligned
// table: numbers right-aligned, NULL as "NULL" so it differs from an
// empty string, long text cut. It holds the rows, since widths depend on
// all of them.
type SQLTable struct {
	w       io.Writer
	t       *TextTable
	numeric []bool // every non-NULL value of column i is a number
}

// NewSQLTable returns an SQLTable that prints to w.
func NewSQLTable(w io.Writer) *SQLTable { return &SQLTable{w: w} }

// CellBytes implements sqlquery.CellLimit: more than sqlCellWidth
// characters of UTF-8 (4 bytes at most each) and more than sqlCellWidth
// hex digits of a blob, so a longer value is still shown cut.
func (t *SQLTable) CellBytes() int { return 4*sqlCellWidth + 4 }

// Begin implements sqlquery.RowWriter.
func (t *SQLTable) Begin(columns []string) error {
	t.t = &TextTable{Header: columns, Right: make([]bool, len(columns))}
	t.numeric = make([]bool, len(columns))
	for i := range t.numeric {
		t.numeric[i] = true
	}
	return nil
}

// Row implements sqlquery.RowWriter.
func (t *SQLTable) Row(cells []sqlquery.Cell) error {
	r := make([]string, len(cells))
	for i, c := range cells {
		switch {
		case c.IsNull():
			r[i] = "NULL"
		case c.IsNumber():
			r[i] = c.Text()
		default:
			t.numeric[i] = false
			r[i] = query.Shorten(c.Text(), sqlCellWidth)
		}
	}
	t.t.Add(r...)
	return nil
}

// End implements sqlquery.RowWriter.
func (t *SQLTable) End() error {
	copy(t.t.Right, t.numeric)
	if len(t.t.Header) == 0 {
		return nil
	}
	return t.t.Write(t.w)
}

// SQLCSV prints an SQL result (a sqlquery.RowWriter) as RFC 4180 CSV
// with a header line; NULL is an empty field.
type SQLCSV struct {
	w   *csv.Writer
	rec []string
}

// NewSQLCSV returns an SQLCSV that prints to w.
func NewSQLCSV(w io.Writer) *SQLCSV { return &SQLCSV{w: csv.NewWriter(w)} }

// Begin implements sqlquery.RowWriter.
func (c *SQLCSV) Begin(columns []string) error {
	c.rec = make([]string, len(columns))
	return c.w.Write(columns)
}

// Row implements sqlquery.RowWriter.
func (c *SQLCSV) Row(cells []sqlquery.Cell) error {
	for i, x := range cells {
		c.rec[i] = x.Text()
	}
	return c.w.Write(c.rec)
}

// End implements sqlquery.RowWriter.
func (c *SQLCSV) End() error {
	c.w.Flush()
	return c.w.Error()
}
