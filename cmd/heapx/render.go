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

// writeText renders a query result for people: header lines, then each
// section (heading, table or indented tree, notes), then the result's
// notes, each block after a blank line.
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
		if err := sectionTable(s).write(&b); err != nil {
			return err
		}
		writeNotes(&b, s.Notes)
	}
	writeNotes(&b, r.Notes)
	_, err := io.WriteString(w, b.String())
	return err
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
	switch {
	case s.Table != nil:
		cols = s.Table.Columns
	case s.Tree != nil:
		cols = s.Tree.Columns
	}
	header := make([]string, len(cols))
	for i, c := range cols {
		header[i] = c.Title
		if isNumeric(c.Kind) {
			header[i] = ">" + c.Title
		}
	}
	t := newTable(header...)
	cells := func(prefix string, vals []any) []string {
		out := make([]string, len(cols))
		for i, c := range cols {
			if i < len(vals) {
				out[i] = query.FormatValue(c.Kind, vals[i])
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
	cw := csv.NewWriter(w)
	multi := len(r.Sections) > 1
	lastHeader := ""
	for _, s := range r.Sections {
		var cols []query.Column
		if s.Table != nil {
			cols = s.Table.Columns
		} else if s.Tree != nil {
			cols = s.Tree.Columns
		}
		var head []string
		if multi {
			head = append(head, "section")
		}
		if s.Tree != nil {
			head = append(head, "depth")
		}
		for _, c := range cols {
			head = append(head, c.Key)
		}
		if h := strings.Join(head, "\x00"); h != lastHeader {
			if err := cw.Write(head); err != nil {
				return err
			}
			lastHeader = h
		}
		record := func(depth int, vals []any) error {
			var rec []string
			if multi {
				rec = append(rec, s.Heading)
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
			return cw.Write(rec)
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
			if err := walk(s.Tree.Roots, 0); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
