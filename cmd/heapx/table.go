package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
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

// write renders the table to w.
func (t *table) write(w io.Writer) error {
	width := make([]int, len(t.header))
	for _, row := range append([][]string{t.header}, t.rows...) {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
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
	if !t.noHeader {
		line(t.header)
	}
	for _, r := range t.rows {
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

// humanSize formats a byte count the way the DevTools Memory panel does
// (i18n.ByteUtilities.bytesToString: decimal units, one decimal below 100),
// so numbers can be compared with the browser at a glance.
func humanSize(n uint64) string {
	if n < 1000 {
		return strconv.FormatUint(n, 10) + " B"
	}
	units := []string{"kB", "MB", "GB", "TB"}
	v, u := float64(n)/1000, 0
	for v >= 1000 && u < len(units)-1 {
		v /= 1000
		u++
	}
	if v < 100 {
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}

// count formats a count with thousands separators, for numbers people read.
func count(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// percent formats part/total as a percentage with one decimal.
func percent(part, total uint64) string {
	if total == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(total))
}
