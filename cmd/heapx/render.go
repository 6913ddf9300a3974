package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/heapx/heapx/internal/termtext"
	"github.com/heapx/heapx/query"
)

// writeText renders a query result for people: its warnings, header
// lines, then each section (heading, table or indented tree, notes), then
// the result's notes, each block after a blank line.
func writeText(w io.Writer, r *query.Result) error {
	var b strings.Builder
	for _, h := range r.Header {
		b.WriteString(termtext.Clean(h) + "\n")
	}
	for i, s := range r.Sections {
		if s.Heading != "" || i > 0 {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			if s.Heading != "" {
				b.WriteString(termtext.Clean(s.Heading) + "\n")
			}
		}
		// A table without rows is left out: its notes say why.
		if s.Table == nil || len(s.Table.Rows) > 0 {
			if err := sectionTable(s).write(&b); err != nil {
				return err
			}
		}
		writeNotes(&b, s.Notes)
	}
	writeNotes(&b, r.Notes)
	_, err := io.WriteString(w, warningsText(r.Warnings)+b.String())
	return err
}

// warningsText is the text that goes before everything else: each
// warning a paragraph of its own that starts with WARNING, so nobody reads
// the tables without them.
func warningsText(ws []query.Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("WARNING: " + w.Message + "\n\n")
	}
	return b.String()
}

// warnOnStderr repeats warnings on stderr for output that has no room for
// them (CSV) or is read by a program (JSON, which also has them in its
// "warnings" field), so the person running the command still sees them.
func warnOnStderr(stderr io.Writer, ws []query.Warning) {
	for _, w := range ws {
		fmt.Fprintf(stderr, "heapx: warning: %s\n", w.Message)
	}
}

func writeNotes(b *strings.Builder, notes []string) {
	if len(notes) == 0 {
		return
	}
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	for _, n := range notes {
		b.WriteString(termtext.Clean(n) + "\n")
	}
}

// sectionTable lays a section out as a text table; a tree becomes a table
// whose first column is indented by depth.
func sectionTable(s *query.Section) *table {
	var cols []query.Column
	var shown []int
	switch {
	case s.Table != nil:
		cols, shown = s.Table.Columns, s.Table.Shown()
	case s.Tree != nil:
		cols = s.Tree.Columns
		for i := range cols {
			shown = append(shown, i)
		}
	}
	header := make([]string, len(shown))
	for j, i := range shown {
		c := cols[i]
		header[j] = c.Title
		if isNumeric(c.Kind) {
			header[j] = ">" + c.Title
		}
	}
	t := newTable(header...)
	cells := func(prefix string, vals []any) []string {
		out := make([]string, len(shown))
		for j, i := range shown {
			if i < len(vals) {
				out[j] = query.FormatValue(cols[i].Kind, vals[i])
			}
		}
		if len(out) > 0 {
			out[0] = prefix + out[0]
		}
		return out
	}
	if s.Table != nil {
		for _, row := range s.Table.Rows {
			t.add(cells("", row)...)
		}
	}
	if s.Tree != nil {
		var walk func(nodes []*query.TreeNode, depth int)
		walk = func(nodes []*query.TreeNode, depth int) {
			for _, n := range nodes {
				t.add(cells(strings.Repeat("  ", depth), n.Values)...)
				walk(n.Children, depth+1)
			}
		}
		walk(s.Tree.Roots, 0)
	}
	return t
}

func isNumeric(k query.Kind) bool { return k != query.Text }

// writeCSV renders a result as CSV with raw values (bytes as integers),
// one header row of column keys. A result with several sections gets a
// leading "section" column; a tree gets a "depth" column.
func writeCSV(w io.Writer, r *query.Result) error {
	c := newCSVTables(w)
	for _, s := range r.Sections {
		var lead []csvCell
		if len(r.Sections) > 1 {
			lead = []csvCell{{"section", s.Heading}}
		}
		if err := c.section(lead, s); err != nil {
			return err
		}
	}
	return c.flush()
}

// csvCell is a leading column of CSV rows: its key and value.
type csvCell struct{ key, value string }

// csvTables writes sections as one CSV stream: each row is the section's
// leading cells, then its raw values; a header row of keys comes first and
// again whenever the columns change.
type csvTables struct {
	cw         *csv.Writer
	lastHeader string
}

func newCSVTables(w io.Writer) *csvTables { return &csvTables{cw: csv.NewWriter(w)} }

func (c *csvTables) flush() error {
	c.cw.Flush()
	return c.cw.Error()
}

// section writes the rows of s (a tree with a "depth" column after the
// leading ones).
func (c *csvTables) section(lead []csvCell, s *query.Section) error {
	var cols []query.Column
	if s.Table != nil {
		cols = s.Table.Columns
	} else if s.Tree != nil {
		cols = s.Tree.Columns
	}
	var head []string
	for _, l := range lead {
		head = append(head, l.key)
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
	record := func(depth int, vals []any) error {
		var rec []string
		for _, l := range lead {
			rec = append(rec, l.value)
		}
		if s.Tree != nil {
			rec = append(rec, strconv.Itoa(depth))
		}
		for i := range cols {
			cell := ""
			if i < len(vals) && vals[i] != nil {
				cell = fmt.Sprint(vals[i])
			}
			rec = append(rec, cell)
		}
		return c.cw.Write(rec)
	}
	if s.Table != nil {
		for _, row := range s.Table.Rows {
			if err := record(0, row); err != nil {
				return err
			}
		}
	}
	if s.Tree != nil {
		var walk func(nodes []*query.TreeNode, depth int) error
		walk = func(nodes []*query.TreeNode, depth int) error {
			for _, n := range nodes {
				if err := record(depth, n.Values); err != nil {
					return err
				}
				if err := walk(n.Children, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		return walk(s.Tree.Roots, 0)
	}
	return nil
}
