package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handlerTrace is a memory trace of a handler run four times from the
// event loop (analysis/lifetime's analyze_test.go writes it and says what
// the program was): a cache entry kept and never used per call (a leak),
// a table, a node and its range array made and dropped per call.
const handlerTrace = "../../analysis/lifetime/testdata/handler.memtrace"

func TestLifetimesCommand(t *testing.T) {
	out := ok(t, "lifetimes", handlerTrace)
	for _, want := range []string{
		"75 events, 18 objects from 6 allocation sites, 5 idle points, end at time 51",
		"Leak found: /app/handler.js:3:14",
		"/app/handler.js:3:14        4             4        102           4  leak, unused",
		"/app/handler.js:5:26        4             0          4           0  one alive at a time, non-escaping, inlinable into /app/handler.js:5:16",
		"Objects alive and stale over time",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("heapx lifetimes: no %q in\n%s", want, out)
		}
	}
	var doc struct {
		Sections []struct {
			Heading string           `json:"heading"`
			Rows    []map[string]any `json:"rows"`
			Chart   *struct {
				Kind string `json:"kind"`
			} `json:"chart"`
		} `json:"sections"`
	}
	okJSON(t, &doc, "lifetimes", handlerTrace, "--json")
	if len(doc.Sections) != 2 || doc.Sections[0].Rows[0]["site"] != "/app/handler.js:3:14" || doc.Sections[0].Rows[0]["staleness"] != 102.0 ||
		doc.Sections[1].Chart == nil || doc.Sections[1].Chart.Kind != "line" {
		t.Errorf("heapx lifetimes --json: %+v", doc)
	}
	if csv := ok(t, "lifetimes", handlerTrace, "--csv"); !strings.Contains(csv, `"Allocation sites with problems, by staleness",/app/handler.js:3:14,4,4,102,4,"leak, unused"`) {
		t.Errorf("heapx lifetimes --csv:\n%s", csv)
	}
}

func TestLifetimeQueries(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"trace-leaks"}, []string{"Leak found: /app/handler.js:3:14",
			"/app/handler.js:3:14        4          4             4      +3  1.00  module scope of /app/handler.js > variable cache > [3]  0 1 2 3"}},
		{[]string{"churn", "--one"}, []string{"/app/handler.js:4:17        4          1              7  yes"}},
		{[]string{"inlining"}, []string{"/app/handler.js:5:26        4  /app/handler.js:5:16"}},
		{[]string{"non-escaping"}, []string{"/app/handler.js:4:17", "/app/handler.js:5:16", "/app/handler.js:5:26"}},
		{[]string{"unused"}, []string{"/app/handler.js:3:14        4             4"}},
		{[]string{"stale-sites"}, []string{"/app/handler.js:3:14        4        102    25   42           4       43             4"}},
		{[]string{"call-tree", "--site", "handler.js:4"}, []string{"/app/handler.js:2:21        4"}},
		// At 40 the fourth call has not kept its entry yet: three are
		// held by the module's cache (the shortest path; the handler's
		// closure scope is the module scope too).
		{[]string{"access-paths", "--site", "handler.js:3:14", "--at", "40"}, []string{
			"Paths to the 3 objects of /app/handler.js:3:14 alive at time 40", "module scope of /app/handler.js        3",
			"  variable cache                       3"}},
		{[]string{"access-paths", "--site", "handler.js:3:14"}, []string{"Paths to the 4 objects of /app/handler.js:3:14 alive at time 51"}},
		{[]string{"object-lifetimes", "--site", "handler.js:4:17"}, []string{
			"   @11  /app/handler.js:4:17         11        17           18", "   @23  /app/handler.js:4:17         44        50           51"}},
	} {
		out := ok(t, append(c.args, handlerTrace)...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("heapx %v: no %q in\n%s", c.args, w, out)
			}
		}
	}
}

func TestReportOfTrace(t *testing.T) {
	page := ok(t, "report", handlerTrace, "--html", "-")
	for _, want := range []string{"memtrace (heapx trace)", "Leaks: stale objects that keep growing over the idle points", `<svg class="chart`, "/app/handler.js:3:14"} {
		if !strings.Contains(page, want) {
			t.Errorf("heapx report --html of a trace: no %q", want)
		}
	}
	var doc struct {
		Format string `json:"format"`
		Parts  []struct {
			Key string `json:"key"`
		} `json:"parts"`
	}
	okJSON(t, &doc, "report", handlerTrace, "--json")
	if doc.Format != "memtrace" || len(doc.Parts) != 7 || doc.Parts[1].Key != "trace_leaks" {
		t.Errorf("heapx report --json of a trace: %+v", doc)
	}
}

func TestLifetimesBadInput(t *testing.T) {
	data, err := os.ReadFile(handlerTrace)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.memtrace")
	if err := os.WriteFile(cut, data[:200], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lifetimes", "../../testdata/node-basic.heapsnapshot.gz"}, "not a heapx memory trace"},
		{[]string{"lifetimes", cut}, "cut.memtrace: byte 200: the trace is truncated"},
		{[]string{"call-tree", handlerTrace, "--site", "handler.js:99"}, `--site "handler.js:99": no allocation site there`},
		{[]string{"access-paths", handlerTrace, "--site", "handler.js:3", "--at", "99"}, "--at 99: the trace's times run from 1 to 51"},
	} {
		r := heapx(t, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("heapx %v: exit %d, stderr %q; want exit 1 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
