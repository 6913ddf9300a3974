package main

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/heapx/heapx/internal/termtext"
)

// table is a plain-text table: left-aligned text columns, right-aligned
// number columns, two spaces between columns. text/tabwriter can only align
// every column the same way, and a table library is not worth a dependency
// for this.
type table struct {
	header []string
	right  []bool // right-align column i
	rows   [][]string
	// noHeader leaves the header line out (writeRows).
	noHeader bool
}

// newTable returns a table with the given column headers; a header that
// starts with '>' names a right-aligned (numeric) column.
func newTable(header ...string) *table {
	t := &table{}
	for _, h := range header {
		r := strings.HasPrefix(h, ">")
		t.header = append(t.header, strings.TrimPrefix(h, ">"))
		t.right = append(t.right, r)
	}
	return t
}

// add appends a row; it must have one cell per column.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write renders the table to w. Every header and cell is shown with what a
// terminal would act on escaped (termtext.Clean): they hold a dump's names
// and, in heapx sql, its strings and the query's column names.
func (t *table) write(w io.Writer) error {
	width := make([]int, len(t.header))
	rows := append([][]string{t.header}, t.rows...)
	for _, row := range rows {
		for i, c := range row {
			row[i] = termtext.Clean(c)
			width[i] = max(width[i], utf8.RuneCountInString(row[i]))
		}
	}
	var b strings.Builder
	line := func(row []string) {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case t.right[i]:
				b.WriteString(pad + c)
			case i == len(row)-1:
				b.WriteString(c) // no trailing blanks
			default:
				b.WriteString(c + pad)
			}
			if i < len(row)-1 {
				b.WriteString("  ")
			}
		}
		b.WriteByte('\n')
	}
	if t.noHeader {
		rows = rows[1:]
	}
	for _, r := range rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRows renders the table without its header line, for key/value
// blocks.
func (t *table) writeRows(w io.Writer) error {
	t.noHeader = true
	return t.write(w)
}
