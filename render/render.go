// Package render writes a query.Result in each of heapx's output forms:
// aligned text tables for a terminal, CSV with raw values, the JSON
// document (`--json`, a contract) and an HTML fragment for pages. Every
// front end (the command line, the report, a web UI, an MCP server) goes
// through Write, so a result reads the same wherever it is shown; pprof's
// internal/report, one switch over output formats, is the model.
//
// Beside Write it has the pieces a document composed of several results
// (the report) needs to render itself in the same forms: TextTable,
// WriteWarnings, CSVWriter, NewDocument and WriteJSON.
package render

import (
	"fmt"
	"io"
	"slices"

	"github.com/heapx/heapx/query"
)

// Format names an output form.
type Format uint8

// Output forms.
const (
	// Text is for people at a terminal: header lines, then each section
	// as a heading, an aligned table (a tree indented by depth) and notes.
	// Sizes are human-readable, and a dump's strings are shown with what a
	// terminal would act on escaped (internal/termtext).
	Text Format = iota
	// CSV is for spreadsheets: raw values (bytes as integers), a header
	// row of column keys, a leading "section" column when the result has
	// several sections and a "depth" column for a tree.
	CSV
	// JSON is for programs: the result's own JSON form (Result.JSON) or
	// the generic Document, indented, one document per output.
	JSON
	// HTML is a fragment for a page, the body of one result (header and
	// notes as <p class="note">, each section as an <h3>, an inline SVG
	// bar chart of class "chart" and a <table> with numeric cells of class
	// "n"); the page brings the style. Everything from the dump is
	// escaped.
	HTML
)

var formatNames = [...]string{"text", "csv", "json", "html"}

// String returns the form's name ("csv").
func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", f)
}

// Options tune Write.
type Options struct {
	// Inputs are the paths of the snapshots the result was computed
	// from, in the order given: the generic JSON document's "inputs".
	Inputs []string
}

// Write writes r to w in form f.
func Write(w io.Writer, r *query.Result, f Format, opt Options) error {
	switch f {
	case Text:
		return writeText(w, r)
	case CSV:
		return writeCSV(w, r)
	case JSON:
		return WriteJSON(w, JSONValue(r, opt.Inputs))
	case HTML:
		return writeHTML(w, r)
	}
	return fmt.Errorf("render: unknown output form %v", f)
}

// JSONValue is what the JSON form writes: the query's own document
// (Result.JSON) when it has one, else the generic document of its
// sections, for a caller that embeds it in a larger JSON answer.
func JSONValue(r *query.Result, inputs []string) any {
	if r.JSON != nil {
		return r.JSON
	}
	return NewDocument(r, inputs)
}

// columns returns a section's columns and the indexes of those shown to
// people (Text and HTML): a table's text columns empty in every row (a
// suspects table's Shape on a heap without generic objects) are left out;
// a tree shows all. CSV and JSON keep every column, as their contract
// says.
func columns(s *query.Section) (cols []query.Column, shown []int) {
	switch {
	case s.Table != nil:
		return s.Table.Columns, ShownColumns(s.Table)
	case s.Tree != nil:
		cols = s.Tree.Columns
		for i := range cols {
			shown = append(shown, i)
		}
	}
	return cols, shown
}

// ShownColumns returns the indexes of the table's columns that Text and
// HTML show: all but its text columns empty in every row.
func ShownColumns(t *query.Table) []int {
	var shown []int
	for i, c := range t.Columns {
		if c.Kind == query.Text && len(t.Rows) > 0 && !slices.ContainsFunc(t.Rows, func(r []any) bool {
			return i < len(r) && query.FormatValue(c.Kind, r[i]) != ""
		}) {
			continue
		}
		shown = append(shown, i)
	}
	return shown
}

// isNumeric says whether a column of kind k holds numbers, drawn
// right-aligned.
func isNumeric(k query.Kind) bool { return k != query.Text }

// eachRow calls f for every row of a section in reading order: a
// table's rows at depth 0, a tree's nodes depth first with their depth. It
// stops at f's first error.
func eachRow(s *query.Section, f func(vals []any, depth int) error) error {
	if s.Table != nil {
		for _, row := range s.Table.Rows {
			if err := f(row, 0); err != nil {
				return err
			}
		}
	}
	if s.Tree != nil {
		return walkTree(s.Tree.Roots, 0, f)
	}
	return nil
}

func walkTree(nodes []*query.TreeNode, depth int, f func(vals []any, depth int) error) error {
	for _, n := range nodes {
		if err := f(n.Values, depth); err != nil {
			return err
		}
		if err := walkTree(n.Children, depth+1, f); err != nil {
			return err
		}
	}
	return nil
}
