package render

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/heapx/heapx/internal/termtext"
)

// TextTable is a plain-text table: left-aligned text columns,
// right-aligned number columns, two spaces between columns. Text draws
// every section with it, and the command line its own tables (info, list,
// sql). text/tabwriter can only align every column the same way, and a
// table library is not worth a dependency for this.
type TextTable struct {
	// Header holds the column titles.
	Header []string
	// Right right-aligns column i (a number column); missing entries are
	// false.
	Right []bool
	rows  [][]string
}

// NewTextTable returns a table with the given column titles; a title that
// starts with '>' names a right-aligned (numeric) column, the '>' left
// out.
func NewTextTable(header ...string) *TextTable {
	t := &TextTable{}
	for _, h := range header {
		t.Header = append(t.Header, strings.TrimPrefix(h, ">"))
		t.Right = append(t.Right, strings.HasPrefix(h, ">"))
	}
	return t
}

// Add appends a row; it must have one cell per column.
func (t *TextTable) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Write renders the table to w. Every header and cell is shown with what a
// terminal would act on escaped (termtext.Clean): they hold a dump's names
// and, in heapx sql, its strings and the query's column names.
func (t *TextTable) Write(w io.Writer) error { return t.write(w, true) }

// WriteRows renders the table without its header line, for key/value
// blocks.
func (t *TextTable) WriteRows(w io.Writer) error { return t.write(w, false) }

func (t *TextTable) write(w io.Writer, header bool) error {
	rows := t.rows
	if header {
		rows = append([][]string{t.Header}, rows...)
	}
	var width []int
	for _, row := range rows {
		for i, c := range row {
			row[i] = termtext.Clean(c) // in place: sql's tables can be large
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(row[i]))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch {
			case i < len(t.Right) && t.Right[i]:
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
	_, err := io.WriteString(w, b.String())
	return err
}
