package render

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/heapx/heapx/query"
)

// writeCSV renders a result as CSV with raw values (bytes as integers,
// addresses in 0x hex as --id reads them), one header row of column keys.
// A result with several sections gets a leading "section" column; a tree
// gets a "depth" column.
func writeCSV(w io.Writer, r *query.Result) error {
	c := NewCSVWriter(w)
	for _, s := range r.Sections {
		var lead []CSVCell
		if len(r.Sections) > 1 {
			lead = []CSVCell{{"section", s.Heading}}
		}
		if err := c.Section(lead, s); err != nil {
			return err
		}
	}
	return c.Flush()
}

// CSVCell is a leading column of CSV rows: its key and value (the
// report's "part" and "section").
type CSVCell struct{ Key, Value string }

// CSVWriter writes sections, of one result or of several, as one CSV
// stream: each row is the section's leading cells, then its raw values; a
// header row of keys comes first and again whenever the columns change.
type CSVWriter struct {
	cw         *csv.Writer
	lastHeader string
}

// NewCSVWriter returns a CSVWriter writing to w; Flush ends the stream.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{cw: csv.NewWriter(w)} }

// Flush writes what is buffered and returns the first error of the
// stream.
func (c *CSVWriter) Flush() error {
	c.cw.Flush()
	return c.cw.Error()
}

// Section writes the rows of s, each led by the cells of lead (a tree
// with a "depth" column after them).
func (c *CSVWriter) Section(lead []CSVCell, s *query.Section) error {
	var cols []query.Column
	if s.Table != nil {
		cols = s.Table.Columns
	} else if s.Tree != nil {
		cols = s.Tree.Columns
	}
	var head []string
	for _, l := range lead {
		head = append(head, l.Key)
	}
	if s.Tree != nil {
		head = append(head, "depth")
	}
	for _, col := range cols {
		head = append(head, col.Key)
	}
	if h := strings.Join(head, "\x00"); h != c.lastHeader {
		if err := c.cw.Write(head); err != nil {
			return err
		}
		c.lastHeader = h
	}
	return eachRow(s, func(vals []any, depth int) error {
		var rec []string
		for _, l := range lead {
			rec = append(rec, l.Value)
		}
		if s.Tree != nil {
			rec = append(rec, strconv.Itoa(depth))
		}
		for i := range cols {
			var v any
			if i < len(vals) {
				v = vals[i]
			}
			cell := ""
			if f, ok := v.(float64); ok {
				cell = strconv.FormatFloat(f, 'f', -1, 64) // never 1e+06, which a spreadsheet reads as text
			} else if v != nil {
				cell = fmt.Sprint(v)
			}
			rec = append(rec, cell)
		}
		return c.cw.Write(rec)
	})
}
