package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// leakInput reads and analyses testdata/node-leak-N under the path
// testdata/make.sh gave heapx, which the report prints.
func leakInput(t *testing.T, n string) report.Input {
	t.Helper()
	path := "../testdata/node-leak-" + n + ".heapsnapshot.gz"
	g, f, err := formats.Open(path, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return report.Input{Path: path, Format: f.Name, A: a}
}

// Every form of the report is what heapx report printed before rendering
// moved into package render (testdata/make.sh): the overview, each part
// under its title, the failed gate (series.*) and the warnings of
// snapshots given out of order (reversed.*).
func TestWriteGoldens(t *testing.T) {
	one, two, three := leakInput(t, "1"), leakInput(t, "2"), leakInput(t, "3")
	// The gate named as heapx report names it (testdata/make.sh).
	series, err := report.Build(three, []report.Input{one, two}, report.Options{Rows: 3, FailOver: 1000, FailOverName: "--fail-over"})
	if err != nil {
		t.Fatal(err)
	}
	reversed, err := report.Build(one, []report.Input{three, two}, report.Options{Rows: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(series.Failures) != 1 || len(reversed.Warnings) != 1 {
		t.Fatalf("failures %q, warnings %+v", series.Failures, reversed.Warnings)
	}
	for _, c := range []struct {
		r    *report.Report
		name string
	}{{series, "series"}, {reversed, "reversed"}} {
		for f, ext := range map[render.Format]string{render.Text: "txt", render.CSV: "csv", render.JSON: "json", render.HTML: "html"} {
			golden := filepath.Join("testdata", c.name+"."+ext)
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err) // a missing golden is a failure, not a skip
			}
			var got bytes.Buffer
			if err := c.r.Write(&got, f); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s: the report as %v differs from the golden:\n%s\nwant:\n%s", golden, f, got.Bytes(), want)
			}
		}
	}
	if err := series.Write(&bytes.Buffer{}, render.Format(9)); err == nil {
		t.Error("an unknown form was written")
	}
}

// TestWriteFile checks that the page written to a file is the page Write
// writes, whole, and that a failed write leaves no file.
func TestWriteFile(t *testing.T) {
	r := build(t, "node-leak-1.heapsnapshot.gz")
	var want bytes.Buffer
	if err := r.Write(&want, render.HTML); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	if err := r.WriteFile(page, render.HTML); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) || !bytes.HasPrefix(got, []byte("<!DOCTYPE html>")) {
		t.Errorf("the file (%d bytes, %.20q) is not the page (%d bytes)", len(got), got, want.Len())
	}
	if err := r.WriteFile(filepath.Join(dir, "x.html"), render.Format(99)); err == nil {
		t.Error("an unknown form was written")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("a failed write left files: %v", ents)
	}
}
