package report_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// input reads and analyses one dump of testdata/ (path relative to it).
func input(t *testing.T, rel string) report.Input {
	t.Helper()
	path := filepath.Join(testfixtures.Dir(), rel)
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

// build reports on one dump of testdata/.
func build(t *testing.T, rel string) *report.Report {
	t.Helper()
	r, err := report.Build(input(t, rel), nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// part returns the report's part keyed key, or nil.
func part(r *report.Report, key string) *query.Result {
	for _, p := range r.Parts {
		if p.Key == key {
			return p.Result
		}
	}
	return nil
}

// The report says only what the dump can tell: no Detached DOM part for a
// Node.js or Java heap (no DOM; Node's binding objects V8 marks detached
// are not DOM), one line instead of an empty duplicates table for Firefox
// (no string contents), and Firefox's detached <section> trees, held in
// one array, under one path with the index range.
func TestReportPartsThatApply(t *testing.T) {
	for _, rel := range []string{"node-leak-3.heapsnapshot.gz", "hprof/java-leakdemo-small.hprof.gz"} {
		r := build(t, rel)
		if p := part(r, "detached"); p != nil {
			t.Errorf("%s: a Detached DOM part: %+v", rel, p)
		}
		if p := part(r, "duplicates"); p == nil || len(p.Sections) != 1 || len(p.Sections[0].Table.Rows) == 0 {
			t.Errorf("%s: duplicates %+v", rel, p)
		}
	}
	r := build(t, "spidermonkey/ff-medium-page.fxsnapshot")
	dup := part(r, "duplicates")
	if dup == nil || len(dup.Sections) != 0 || len(dup.Notes) != 1 || !strings.Contains(dup.Notes[0], "does not record string contents") {
		t.Errorf("Firefox duplicates: %+v", dup)
	}
	det := part(r, "detached")
	if det == nil || len(det.Sections) != 2 || len(det.Sections[0].Table.Rows) != 15 {
		t.Fatalf("Firefox detached: %+v", det)
	}
	if h := det.Sections[1].Heading; h != "Trees 1-15: 15 trees like SECTION, retaining 940 kB" {
		t.Errorf("Firefox detached path heading %q", h)
	}
	var html bytes.Buffer
	if err := r.Write(&html, render.HTML); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	for _, want := range []string{"does not record string contents", ".objectElements[0…14]", "Trees 1-15"} {
		if !strings.Contains(page, want) {
			t.Errorf("Firefox HTML report lacks %q", want)
		}
	}
}

// The report's comparison leaves out classes whose objects were only
// replaced: on the bundled leak series, Node's embedder objects (new ids
// in every snapshot: "Node / IsolateData" 1 new, 1 deleted) filled half
// its rows. heapx diff keeps DevTools' full view.
func TestReportComparisonShowsChanges(t *testing.T) {
	base, target := input(t, "node-leak-2.heapsnapshot.gz"), input(t, "node-leak-3.heapsnapshot.gz")
	r, err := report.Build(target, []report.Input{base}, report.Options{Rows: 100})
	if err != nil {
		t.Fatal(err)
	}
	p := part(r, "diff")
	if p == nil {
		t.Fatal("no comparison")
	}
	classes := map[string]bool{}
	for _, row := range p.Sections[0].Table.Rows {
		classes[row[0].(string)] = true
		if row[3].(int) == 0 && row[6].(int64) == 0 {
			t.Errorf("unchanged class shown: %v", row)
		}
	}
	if !classes["LeakedItem"] || classes["Node / IsolateData"] || !strings.Contains(strings.Join(p.Notes, " "), "only replaced") {
		t.Errorf("comparison rows %v, notes %q", classes, p.Notes)
	}
	full, err := query.DiffResult(query.Snapshot{Path: base.Path, Analysis: base.A}, query.Snapshot{Path: target.Path, Analysis: target.A}, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(full.Sections[0].Table.Rows); n != 34 {
		t.Errorf("heapx diff: %d classes, want DevTools' 34", n)
	}
}

// --fail-over without baselines compares the largest suspect's size: for
// objects several structures share (jshell's 50,000 Points, held by pts
// and byDist), what they retain, not what the first structure retains
// without them.
func TestReportLeakedSizeSharedSuspect(t *testing.T) {
	r := build(t, "hprof/java-jshell-agent.hprof.gz")
	if r.LeakedSize != 1_200_000 {
		t.Errorf("leaked size %d (%s), want the 50,000 Points' 1.2 MB", r.LeakedSize, r.LeakedSizeBasis)
	}
}
