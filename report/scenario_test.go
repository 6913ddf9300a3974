package report_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/report"
)

// A scenario's measures of the page join its report: the scenario in the
// overview, its warnings, and the page's part after the leaks, with the
// counts' growth said in a sentence, the listeners left behind with their
// place (the page's origin cut), and the collections that grew with what
// holds them in the final snapshot. The snapshots are the node-leak
// series, whose array `retained` (@80593) grows by 500 at every step.
func TestAddScenario(t *testing.T) {
	one, two, three := leakInput(t, "1"), leakInput(t, "2"), leakInput(t, "3")
	r, err := report.Build(three, []report.Input{one, two}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	action, err := capture.ParseSteps([]string{"click #open\nwait .modal"}, "--action")
	if err != nil {
		t.Fatal(err)
	}
	sc := capture.Scenario{URL: "http://127.0.0.1:8080/app", Action: action, Back: action[:1], Repeat: 2}
	res := &capture.ScenarioResult{
		Browser: "Chrome/148.0.7778.167",
		Counts: []capture.PageCounts{{At: "baseline", Documents: 1, Nodes: 100, Listeners: 3}, {At: "target", Documents: 1, Nodes: 130, Listeners: 5},
			{At: "repetition 1", Documents: 1, Nodes: 110, Listeners: 4}, {At: "repetition 2", Documents: 1, Nodes: 120, Listeners: 4}},
		Listeners: []capture.ListenerGrowth{{Target: "window", Type: "resize", Before: 1, After: 3, Handler: "() => {",
			Script: "http://127.0.0.1:8080/app.js", Line: 15, Column: 21}},
		Collections: []capture.CollectionGrowth{{Type: "Array", Before: 500, After: 1500, Preview: "[LeakedItem, ...]", HeapID: 80593}},
		Warnings:    []capture.ScenarioWarning{{Code: capture.WarnPageBusy, Message: "after action, the page did not come to rest"}},
	}
	if err := r.AddScenario(sc, 1, res, "snaps", 15); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(r.Overview[:4]); got != "[[Page http://127.0.0.1:8080/app] [Browser Chrome/148.0.7778.167] [Scenario action 2 steps, back 1 step; 1 warm-up, 2 repetition(s)] [Snapshots snaps]]" {
		t.Errorf("overview %s", got)
	}
	if n := len(r.Warnings); n == 0 || r.Warnings[n-1].Code != capture.WarnPageBusy {
		t.Errorf("warnings %+v", r.Warnings)
	}
	if r.Parts[0].Key != "leaks" || r.Parts[1].Key != "page" {
		t.Fatalf("parts %s, %s; want the page's after the leaks", r.Parts[0].Key, r.Parts[1].Key)
	}
	secs := r.Parts[1].Result.Sections
	if len(secs) != 4 {
		t.Fatalf("%d sections, want counts, listeners, collections and a collection's path", len(secs))
	}
	if notes := strings.Join(secs[0].Notes, " "); notes != "DOM nodes grew at every repetition: 100 at the baseline, 120 after 2 (+10 per repetition). JS event listeners grew from 3 at the baseline to 4 after 2 repetitions, not at every one." {
		t.Errorf("counts' notes %q", notes)
	}
	if row := fmt.Sprint(secs[1].Table.Rows); row != "[[window resize 1 3 +1 () => { /app.js:15:21]]" {
		t.Errorf("listeners %s", row)
	}
	if row := fmt.Sprint(secs[2].Table.Rows); row != "[[80593 Array 500 1500 +500 ->retained [LeakedItem, ...]]]" {
		t.Errorf("collections %s", row)
	}
	if p := secs[3]; !strings.HasPrefix(p.Heading, "Collection 1: Array @80593") || len(p.Table.Rows) < 3 {
		t.Errorf("the collection's path: %q, %d rows", p.Heading, len(p.Table.Rows))
	}
}

// BuildScenario reads a run's snapshots in the order they were taken and
// reports on the final one, the baseline and the target its baselines:
// memlab's leaks of the node-leak series, with the scenario's overview.
func TestBuildScenario(t *testing.T) {
	action, err := capture.ParseSteps([]string{"click #open"}, "--action")
	if err != nil {
		t.Fatal(err)
	}
	so := capture.ScenarioOptions{Scenario: capture.Scenario{URL: "file:///app.html", Action: action, Back: action, Repeat: 3}, Warmup: 1}
	res := &capture.ScenarioResult{Browser: "HeadlessChrome/148",
		Files:  []capture.File{{Path: "baseline"}, {Path: "target"}, {Path: "final"}},
		Counts: []capture.PageCounts{{At: "baseline"}, {At: "target"}, {At: "repetition 1"}, {At: "repetition 2"}, {At: "repetition 3"}}}
	series := map[string]string{"baseline": "1", "target": "2", "final": "3"}
	var read []string
	r, err := report.BuildScenario(so, res, func(path string) (report.Input, error) {
		read = append(read, path)
		return leakInput(t, series[path]), nil
	}, "kept in snaps", report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(read, " "); got != "baseline target final" {
		t.Errorf("read %s, want the order they were taken", got)
	}
	if !strings.HasSuffix(r.File.Path, "node-leak-3.heapsnapshot.gz") || len(r.Baselines) != 2 ||
		!strings.HasSuffix(r.Baselines[0].Path, "node-leak-1.heapsnapshot.gz") || !strings.HasSuffix(r.Baselines[1].Path, "node-leak-2.heapsnapshot.gz") {
		t.Errorf("reported on %s with baselines %v", r.File.Path, r.Baselines)
	}
	if got := fmt.Sprint(r.Overview[:4]); got != "[[Page file:///app.html] [Browser HeadlessChrome/148] [Scenario action 1 step, back 1 step; 1 warm-up, 3 repetition(s)] [Snapshots kept in snaps]]" {
		t.Errorf("overview %s", got)
	}
	if r.Parts[0].Key != "leaks" || r.Parts[1].Key != "page" || r.Leaks == 0 {
		t.Errorf("parts %s, %s, leaks %d; want memlab's leaks, then the page", r.Parts[0].Key, r.Parts[1].Key, r.Leaks)
	}

	res.Files = res.Files[:2]
	if _, err := report.BuildScenario(so, res, nil, "", report.Options{}); err == nil || !strings.Contains(err.Error(), "3 snapshots") {
		t.Errorf("a run of 2 snapshots: %v", err)
	}
}
