package main

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/query"
)

// The dumps with allocation stacks: --track-heap-objects snapshots and a
// heap timeline, each with DevTools' Allocation stack pane of a few of
// its objects in testdata/golden.
var stackFixtures = map[string]string{
	"node-sites":    "node-sites.heapsnapshot.gz",
	"node-trace":    "node-trace.heapsnapshot.gz",
	"node-timeline": "node-timeline.heaptimeline.gz",
}

// TestPathsAllocationStack: `heapx paths --id` shows the object's
// allocation stack as DevTools' Allocation stack pane does (all its
// frames but V8's "(root)"), in --json and as text; a dump without
// stacks prints none.
func TestPathsAllocationStack(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	for name, file := range stackFixtures {
		for _, want := range testfixtures.DevToolsAllocationStacks(t, name) {
			id := strconv.FormatUint(want.ID, 10)
			var doc struct {
				query.PathsJSON
				Stack []testfixtures.StackFrame `json:"allocation_stack"`
			}
			okJSON(t, &doc, "paths", filepath.Join(td, file), "--id", id, "-n", "1", "--json")
			if !reflect.DeepEqual(doc.Stack, want.Stack) {
				t.Errorf("%s @%s (%s): allocation stack\n%+v\nDevTools:\n%+v", name, id, want.Class, doc.Stack, want.Stack)
			}
		}
	}
	// A makeRecord object of testdata/gen/sites.js: the function at its
	// line, then the script's top level that called it.
	out := ok(t, "paths", filepath.Join(td, "node-sites.heapsnapshot.gz"), "--id", "49497", "-n", "1")
	if !strings.Contains(out, "Allocation stack (the allocating function first)\nFunction                Location\n"+
		"makeRecord              "+sitesScript+":4:20\n(anonymous)             "+sitesScript+":1:1\n") {
		t.Errorf("paths text has no allocation stack:\n%s", out)
	}
	basic := filepath.Join(td, "node-basic.heapsnapshot.gz")
	if out := ok(t, "paths", basic, "--id", "1", "--json"); strings.Contains(out, "allocation_stack") {
		t.Errorf("a dump without stacks has an allocation_stack:\n%.500s", out)
	}
}

// TestSummaryAllocationSites: on a dump with allocation stacks each
// class says where most of its objects were allocated; without, the
// summary has no such column nor field.
func TestSummaryAllocationSites(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	// The fixtures' stacks name testdata/gen/make-fixtures.js as it was
	// when they were made (commit 5353112 for node-trace): Customer
	// objects come from buildBasicWorkload (line 31, "function
	// buildBasicWorkload(" with V8's column at the parenthesis), each
	// Customer's three Orders from its constructor (line 41).
	const gen = "/work/main/testdata/gen/make-fixtures.js"
	for _, tc := range []struct {
		file, class string
		want        query.SiteJSON
	}{
		{"node-trace.heapsnapshot.gz", "Customer", query.SiteJSON{FrameJSON: query.FrameJSON{Function: "buildBasicWorkload", Script: gen, Line: 31, Column: 28}, Count: 300, Percent: 100}},
		{"node-trace.heapsnapshot.gz", "Order", query.SiteJSON{FrameJSON: query.FrameJSON{Function: "Customer", Script: gen, Line: 41, Column: 16}, Count: 900, Percent: 100}},
		{"node-sites.heapsnapshot.gz", "{label, payload}", query.SiteJSON{FrameJSON: query.FrameJSON{Function: "makeRecord", Script: sitesScript, Line: 4, Column: 20}, Count: 4001, Percent: 100}},
		// new Widget(i) allocates in the caller: V8 makes the object in
		// the construct stub of the script's top level.
		{"node-sites.heapsnapshot.gz", "Widget", query.SiteJSON{FrameJSON: query.FrameJSON{Function: "(anonymous)", Script: sitesScript, Line: 1, Column: 1}, Count: 3000, Percent: 100}},
		{"node-timeline.heaptimeline.gz", "TimelineItem", query.SiteJSON{FrameJSON: query.FrameJSON{Function: "allocateBatches", Script: gen, Line: 183, Column: 33}, Count: 750, Percent: 100}},
	} {
		var s query.SummaryJSON
		decodeStrict(t, ok(t, "summary", filepath.Join(td, tc.file), "--json", "-n", "0"), &s)
		var got query.SiteJSON
		for _, c := range s.Classes {
			if c.Constructor == tc.class {
				got = c.AllocationSite
			}
		}
		if got != tc.want {
			t.Errorf("%s: %s allocated in %+v, want %+v", tc.file, tc.class, got, tc.want)
		}
	}
	out := ok(t, "summary", filepath.Join(td, "node-trace.heapsnapshot.gz"), "-n", "0")
	if !strings.Contains(out, "Allocated in") || !strings.Contains(out, "buildBasicWorkload "+gen+":31:28 (100.0%)") {
		t.Errorf("summary text has no allocation sites:\n%.3000s", out)
	}
	basic := filepath.Join(td, "node-basic.heapsnapshot.gz")
	if out := ok(t, "summary", basic, "--json", "-n", "0"); strings.Contains(out, "allocation_site") {
		t.Errorf("a dump without stacks has allocation sites:\n%.500s", out)
	}
	if out := ok(t, "summary", basic); strings.Contains(out, "Allocated in") {
		t.Errorf("a dump without stacks has an Allocated in column:\n%s", out)
	}
}

// rowsOf returns the rows of the first section of a registered query's
// --json output.
func rowsOf(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	var doc struct {
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	okJSON(t, &doc, args...)
	if len(doc.Sections) == 0 {
		t.Fatalf("heapx %v: no sections", args)
	}
	return doc.Sections[0].Rows
}

// TestSuspectsAllocationSite: the suspect of testdata/gen/sites.js (the
// kept array of makeRecord's objects) names makeRecord at its line; a
// dump without stacks has no such column.
func TestSuspectsAllocationSite(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	rows := rowsOf(t, "suspects", filepath.Join(td, "node-sites.heapsnapshot.gz"), "--json")
	if len(rows) == 0 || rows[0]["class"] != "{label, payload}" || rows[0]["allocated_in"] != "makeRecord "+sitesScript+":4:20 (100.0%)" {
		t.Errorf("suspects of node-sites: %v", rows)
	}
	out := ok(t, "suspects", filepath.Join(td, "node-sites.heapsnapshot.gz"))
	if !strings.Contains(out, "4,000 of the 4,000 accumulated objects were allocated in makeRecord "+sitesScript+":4:20 (100.0%).") {
		t.Errorf("suspects text:\n%s", out)
	}
	for _, r := range rowsOf(t, "suspects", filepath.Join(td, "node-leak-3.heapsnapshot.gz"), "--json", "--threshold", "3") {
		if _, has := r["allocated_in"]; has {
			t.Errorf("a dump without stacks has allocated_in: %v", r)
		}
	}
}

// TestClosuresLocations: closures says where each function is defined,
// from the V8 snapshot's locations; Firefox and HPROF dumps have none
// and no such columns.
func TestClosuresLocations(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	by := func(file string) map[string]map[string]any {
		m := map[string]map[string]any{}
		for _, r := range rowsOf(t, "closures", filepath.Join(td, file), "--json", "-n", "0") {
			m[r["function"].(string)] = r
		}
		return m
	}
	sites := by("node-sites.heapsnapshot.gz")
	for fn, loc := range map[string]string{"makeRecord": ":4:20", "makeBuffer": ":7:20", "Widget": ":10:27"} {
		if r := sites[fn]; r == nil || r["location"] != sitesScript+loc || r["places"].(float64) != 1 {
			t.Errorf("node-sites: %s is %v, want defined at %s%s", fn, r, sitesScript, loc)
		}
	}
	// node-basic's ten increment closures, made by makeCounter at line
	// 75 of testdata/gen/make-fixtures.js as of commit 5353112.
	if r := by("node-basic.heapsnapshot.gz")["increment"]; r == nil || r["count"].(float64) != 10 ||
		r["location"] != "/work/main/testdata/gen/make-fixtures.js:75:30" || r["places"].(float64) != 1 {
		t.Errorf("node-basic: increment is %v", r)
	}
	out := ok(t, "closures", filepath.Join(td, "node-sites.heapsnapshot.gz"), "-n", "0")
	if !strings.Contains(out, "Defined at") || !strings.Contains(out, sitesScript+":4:20") {
		t.Errorf("closures text:\n%s", out)
	}
	for _, f := range []string{filepath.Join("spidermonkey", "ff-small-page.fxsnapshot"), filepath.Join("hprof", "java-leakdemo-small.hprof.gz")} {
		out := ok(t, "closures", filepath.Join(td, f), "--json", "-n", "0")
		if !strings.Contains(out, `"key": "function"`) || strings.Contains(out, `"location"`) || strings.Contains(out, `"places"`) {
			t.Errorf("%s: closures has locations:\n%.1000s", f, out)
		}
	}
}

// TestLeaksAllocationSite captures three snapshots of a program leaking
// through a listener under --track-heap-objects: the leak names the
// function that allocated the leaked objects, handle(), at its line.
func TestLeaksAllocationSite(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "leak.heapsnapshot.gz")
	if r := heapx(t, "capture", "--every", "1s", "--count", "3", "-o", out, "--", "node", "--track-heap-objects", "--no-turbo-inlining", leakJS); r.code != 0 {
		t.Fatalf("capture: exit %d:\n%s", r.code, r.stderr)
	}
	snaps := []string{filepath.Join(dir, "leak-1.heapsnapshot.gz"), filepath.Join(dir, "leak-2.heapsnapshot.gz"), filepath.Join(dir, "leak-3.heapsnapshot.gz")}
	rows := rowsOf(t, append([]string{"leaks", "--json"}, snaps...)...)
	if len(rows) == 0 || !strings.Contains(rows[0]["classes"].(string), "LeakedRequest") {
		t.Fatalf("the leaks do not name LeakedRequest: %v", rows)
	}
	// V8 puts a function's position at its parameter list: "function
	// handle(" is column 16. Once optimised, V8 would inline handle()
	// into the interval's callback, which would then allocate them
	// (--no-turbo-inlining keeps it a frame of its own).
	want := "handle " + leakJS + ":" + strconv.Itoa(lineOf(t, "function handle(")) + ":16 ("
	if site, _ := rows[0]["allocated_in"].(string); !strings.HasPrefix(site, want) {
		t.Errorf("the leak was allocated in %q, want %q...", site, want)
	}
}
