package render

import (
	"io"
	"strings"

	"github.com/heapx/heapx/internal/termtext"
	"github.com/heapx/heapx/query"
)

// writeText renders a result for people: its warnings, header lines, then
// each section (heading, table or indented tree, notes), then the result's
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
		// A table without rows is left out: its notes say why; so is a
		// section of notes alone.
		if s.Table == nil && s.Tree != nil || s.Table != nil && len(s.Table.Rows) > 0 {
			if err := sectionTable(s).Write(&b); err != nil {
				return err
			}
		}
		writeNotes(&b, s.Notes)
	}
	writeNotes(&b, r.Notes)
	_, err := io.WriteString(w, warningsText(r.Warnings)+b.String())
	return err
}

// WriteWarnings writes warnings as Text shows them before everything
// else: each a paragraph of its own that starts with WARNING, so nobody
// reads the tables without them. A document composed of several results
// writes its warnings with it.
func WriteWarnings(w io.Writer, ws []query.Warning) error {
	_, err := io.WriteString(w, warningsText(ws))
	return err
}

func warningsText(ws []query.Warning) string {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString("WARNING: " + w.Message + "\n\n")
	}
	return b.String()
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
func sectionTable(s *query.Section) *TextTable {
	cols, shown := columns(s)
	t := &TextTable{Header: make([]string, len(shown)), Right: make([]bool, len(shown))}
	for j, i := range shown {
		t.Header[j], t.Right[j] = cols[i].Title, isNumeric(cols[i].Kind)
	}
	eachRow(s, func(vals []any, depth int) error {
		cells := make([]string, len(shown))
		for j, i := range shown {
			if i < len(vals) {
				cells[j] = query.FormatValue(cols[i].Kind, vals[i])
			}
		}
		if len(cells) > 0 {
			cells[0] = strings.Repeat("  ", depth) + cells[0]
		}
		t.Add(cells...)
		return nil
	})
	return t
}
