package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// Write writes the report to w in form f: Text for a terminal, CSV every
// part's rows, JSON the versioned document (Doc), HTML a self-contained
// page. Each part is its result in that form (render.Write), so a part
// reads as the query's own command prints it.
func (r *Report) Write(w io.Writer, f render.Format) error {
	switch f {
	case render.Text:
		return r.writeText(w)
	case render.CSV:
		return r.writeCSV(w)
	case render.JSON:
		return render.WriteJSON(w, r.Doc())
	case render.HTML:
		return r.writeHTML(w)
	}
	return fmt.Errorf("report: unknown output form %v", f)
}

// WriteFile writes the report to the file at path in form f (the HTML
// page, say) atomically (formats.WriteStream): an interrupted or failed
// write leaves no page that looks complete, and the page is no more
// readable than the dumps it reports on, sources.
func (r *Report) WriteFile(path string, f render.Format, sources ...string) error {
	return formats.WriteStream(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		if err := r.Write(bw, f); err != nil {
			return err
		}
		return bw.Flush()
	}, sources...)
}

// writeText renders the report for a terminal: the overview, then each
// part under a banner.
func (r *Report) writeText(w io.Writer) error {
	t := render.NewTextTable("", "")
	for _, kv := range r.Overview {
		t.Add(kv[0]+":", kv[1])
	}
	if err := render.WriteWarnings(w, r.Warnings); err != nil {
		return err
	}
	if _, err := fmt.Fprint(w, "== heapx report\n"); err != nil {
		return err
	}
	if err := t.WriteRows(w); err != nil {
		return err
	}
	for _, p := range r.Parts {
		if _, err := fmt.Fprintf(w, "\n== %s\n\n", p.Title); err != nil {
			return err
		}
		if len(p.Result.Sections) == 0 && len(p.Result.Notes) == 0 {
			if _, err := fmt.Fprintln(w, "Nothing to show."); err != nil {
				return err
			}
			continue
		}
		if err := render.Write(w, p.Result, render.Text, render.Options{}); err != nil {
			return err
		}
	}
	for _, f := range r.Failures {
		if _, err := fmt.Fprintf(w, "\nFAILED: %s\n", f); err != nil {
			return err
		}
	}
	return nil
}

// writeCSV renders the report as one CSV stream in the form of the
// analyses' CSV: every row starts with its part ("warnings" and "overview"
// first, then the parts' keys as in JSON) and its section's heading, then
// the section's raw values; a header row of column keys comes first and
// again whenever the columns change. The overview has the top-level fields
// of JSON, one key and value a row.
func (r *Report) writeCSV(w io.Writer) error {
	c := render.NewCSVWriter(w)
	part := func(key string, s *query.Section) error {
		return c.Section([]render.CSVCell{{Key: "part", Value: key}, {Key: "section", Value: s.Heading}}, s)
	}
	if len(r.Warnings) > 0 {
		t := &query.Table{Columns: []query.Column{{Key: "code", Title: "Code"}, {Key: "message", Title: "Message"}}}
		for _, wn := range r.Warnings {
			t.Rows = append(t.Rows, []any{wn.Code, wn.Message})
		}
		if err := part("warnings", &query.Section{Table: t}); err != nil {
			return err
		}
	}
	// The overview as JSON has it: raw numbers under its keys.
	d := r.Doc()
	ov := &query.Table{Columns: []query.Column{{Key: "key", Title: "Key"}, {Key: "value", Title: "Value"}}}
	for _, kv := range [][2]any{{"file", d.File}, {"baselines", strings.Join(d.Baselines, " ")}, {"format", d.Format},
		{"nodes", d.Nodes}, {"edges", d.Edges}, {"total_size", d.TotalSize}, {"policy", d.Policy}, {"leaked_size", d.LeakedSize},
		{"leaked_size_basis", d.LeakedSizeBasis}, {"growth_percent", d.GrowthPercent}, {"failures", strings.Join(d.Failures, "; ")}} {
		ov.Rows = append(ov.Rows, []any{kv[0], kv[1]})
	}
	if err := part("overview", &query.Section{Table: ov}); err != nil {
		return err
	}
	for _, p := range r.Parts {
		for _, s := range p.Result.Sections {
			if err := part(p.Key, s); err != nil {
				return err
			}
		}
	}
	return c.Flush()
}
