package render

import (
	"encoding/json"
	"io"

	"github.com/heapx/heapx/query"
)

// SchemaVersion is the version of the generic JSON form (Document). It
// changes only when a released field changes meaning or disappears.
const SchemaVersion = 1

// Document is the generic JSON form of a query.Result: what JSON writes
// for a result without a JSON form of its own, and how the report embeds
// every result.
type Document struct {
	SchemaVersion int           `json:"schema_version"`
	Query         string        `json:"query"`
	Inputs        []string      `json:"inputs"`
	Header        []string      `json:"header,omitempty"`
	Sections      []SectionJSON `json:"sections"`
	Notes         []string      `json:"notes,omitempty"`
	Failed        string        `json:"failed,omitempty"`
	// Warnings is always present, empty when there is nothing to warn
	// about, so scripts can test it.
	Warnings []query.Warning `json:"warnings"`
}

// SectionJSON is one section: its columns, then rows (a table) or tree
// nodes (a tree); every row is an object keyed by column key.
type SectionJSON struct {
	Heading string           `json:"heading,omitempty"`
	Columns []ColumnJSON     `json:"columns"`
	Rows    []map[string]any `json:"rows,omitempty"`
	Tree    []map[string]any `json:"tree,omitempty"`
	Chart   *query.Chart     `json:"chart,omitempty"`
	Notes   []string         `json:"notes,omitempty"`
}

// ColumnJSON describes a column in the generic JSON form.
type ColumnJSON struct {
	Key   string `json:"key"`
	Title string `json:"title"`
	Kind  string `json:"kind"`
}

// NewDocument returns the generic JSON form of r, whatever r.JSON is.
// inputs are the paths of the snapshots r was computed from.
func NewDocument(r *query.Result, inputs []string) *Document {
	d := &Document{SchemaVersion: SchemaVersion, Query: r.Query, Inputs: inputs, Header: r.Header,
		Notes: r.Notes, Failed: r.Failed, Sections: []SectionJSON{}, Warnings: append([]query.Warning{}, r.Warnings...)}
	for _, s := range r.Sections {
		sj := SectionJSON{Heading: s.Heading, Chart: s.Chart, Notes: s.Notes}
		switch {
		case s.Table != nil:
			sj.Columns = columnsJSON(s.Table.Columns)
			sj.Rows = make([]map[string]any, 0, len(s.Table.Rows))
			for _, row := range s.Table.Rows {
				sj.Rows = append(sj.Rows, rowJSON(s.Table.Columns, row))
			}
		case s.Tree != nil:
			sj.Columns = columnsJSON(s.Tree.Columns)
			sj.Tree = treeJSON(s.Tree.Columns, s.Tree.Roots)
		}
		d.Sections = append(d.Sections, sj)
	}
	return d
}

func columnsJSON(cols []query.Column) []ColumnJSON {
	out := make([]ColumnJSON, len(cols))
	for i, c := range cols {
		out[i] = ColumnJSON{Key: c.Key, Title: c.Title, Kind: c.Kind.String()}
	}
	return out
}

func rowJSON(cols []query.Column, row []any) map[string]any {
	m := make(map[string]any, len(cols))
	for i, c := range cols {
		if i < len(row) {
			m[c.Key] = row[i]
		}
	}
	return m
}

func treeJSON(cols []query.Column, nodes []*query.TreeNode) []map[string]any {
	out := make([]map[string]any, 0, len(nodes))
	for _, n := range nodes {
		m := rowJSON(cols, n.Values)
		if len(n.Children) > 0 {
			m["children"] = treeJSON(cols, n.Children)
		}
		out = append(out, m)
	}
	return out
}

// WriteJSON writes v as indented JSON followed by a newline, the form of
// every heapx JSON document. A query.JSONStreamer (paths through a list
// of millions) writes itself a piece at a time instead of being built in
// memory first.
func WriteJSON(w io.Writer, v any) error {
	if s, ok := v.(query.JSONStreamer); ok {
		return s.StreamJSON(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
