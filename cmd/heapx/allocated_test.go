package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// devtoolsAllocated is testdata/gen/devtools-allocated.mjs's output:
// DevTools' Summary of a snapshot with its filter "Objects allocated
// between Snapshot 1 and Snapshot 2".
type devtoolsAllocated struct {
	MaxIDs    []uint64 `json:"max_js_object_ids"`
	MinNodeID uint64   `json:"min_node_id"`
	MaxNodeID uint64   `json:"max_node_id"`
	Count     int      `json:"count"`
	Self      uint64   `json:"self_size"`
	Classes   []struct {
		Name     string `json:"name"`
		Key      string `json:"key"`
		Count    int    `json:"count"`
		Self     uint64 `json:"self_size"`
		Retained uint64 `json:"retained_size"`
		Distance int32  `json:"distance"`
	} `json:"classes"`
}

// TestSummaryAllocatedDevTools compares summary --between, --before and
// --after with DevTools' own worker's Summary under the same filter
// (testdata/golden/*.devtools-allocated.*.json, testdata/golden/README.md
// says how they were made): every class's count, shallow and retained
// size and distance, the bounds and the totals, on a Node series and on a
// Chromium page's (embedder nodes with ids of their own).
func TestSummaryAllocatedDevTools(t *testing.T) {
	t.Parallel()
	leak := func(k int) string { return fmt.Sprintf("../../testdata/node-leak-%d.heapsnapshot.gz", k) }
	for _, c := range []struct {
		golden, filter string
		files          []string
	}{
		{"node-leak.devtools-allocated.between-1-2-3.json", "between", []string{leak(1), leak(2), leak(3)}},
		{"node-leak.devtools-allocated.between-1-2.json", "between", []string{leak(1), leak(2)}},
		{"node-leak.devtools-allocated.before-1-3.json", "before", []string{leak(1), leak(3)}},
		{"node-leak.devtools-allocated.after-2-3.json", "after", []string{leak(2), leak(3)}},
		{"chromium-session.devtools-allocated.between-1-2-3.json", "between",
			[]string{sessionFixture("session", 1), sessionFixture("session", 2), sessionFixture("session", 3)}},
	} {
		b, err := os.ReadFile("../../testdata/golden/" + c.golden)
		if err != nil {
			t.Fatal(err)
		}
		var want devtoolsAllocated
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		var got query.SummaryJSON
		okJSON(t, &got, append([]string{"summary", "--json", "-n", "0", "--" + c.filter}, c.files...)...)
		a := got.Allocated
		if a == nil || a.Filter != c.filter || a.AfterID != want.MinNodeID || a.ThroughID != want.MaxNodeID ||
			a.Count != want.Count || a.ShallowSize != want.Self || got.ClassCount != len(want.Classes) {
			t.Errorf("%s: allocated %+v, %d classes; DevTools: ids (%d, %d], %d objects, %d bytes, %d classes",
				c.golden, a, got.ClassCount, want.MinNodeID, want.MaxNodeID, want.Count, want.Self, len(want.Classes))
			continue
		}
		rows := map[string]query.ClassJSON{}
		for _, r := range got.Classes {
			rows[r.Key] = r
		}
		for _, w := range want.Classes {
			r, ok := rows[w.Key]
			if !ok || r.Constructor != w.Name || r.Count != w.Count || r.ShallowSize != w.Self || r.RetainedSize != w.Retained || r.Distance != w.Distance {
				t.Errorf("%s: class %s: heapx %+v, DevTools %+v", c.golden, w.Key, r, w)
			}
		}
	}
}

// The leak series' 500 LeakedItems a step: --between the first two
// snapshots, as the third holds them, in text, with the filter said
// first; and the mistakes a user makes, each answered.
func TestSummaryAllocatedText(t *testing.T) {
	t.Parallel()
	out := ok(t, "summary", "-n", "1", "--between", leak1, leak2, leak3)
	for _, w := range []string{
		"Objects allocated between node-leak-1.heapsnapshot.gz and node-leak-2.heapsnapshot.gz (ids above @92149, up to @99171), alive in node-leak-3.heapsnapshot.gz: 3,004 objects, 145 kB\n",
		"LeakedItem     500         7       28.0 kB  0.8%         144 kB  4.0%",
		"1 of 8 classes; total size 3.6 MB",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("summary --between lacks %q:\n%s", w, out)
		}
	}
	if out := ok(t, "summary", "-n", "1", "--before", leak1, leak3); !strings.HasPrefix(out, "Objects allocated before node-leak-1.heapsnapshot.gz (ids up to @92149), alive in node-leak-3.heapsnapshot.gz: 42,456 objects") {
		t.Errorf("summary --before:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--between", leak1}, "--between needs the snapshots A B [FILE], oldest first"},
		{[]string{"--after", leak1, leak2, leak3}, "--after needs the snapshots A FILE, oldest first"},
		{[]string{leak1, leak2}, "summary takes one FILE, got 2"},
		{[]string{"--between", "--before", leak1, leak2}, "--between, --before and --after cannot be used together"},
		{[]string{"--between", leak2, leak1}, "summary --between needs V8 snapshots of one process taken in one inspector session, oldest first, as their ids tell: The snapshots look out of order"},
		{[]string{"--between", sessionFixture("separate", 1), sessionFixture("separate", 2)}, "summary --between needs V8 snapshots of one process taken in one inspector session, oldest first, as their ids tell: chromium-separate-1.heapsnapshot.gz and chromium-separate-2.heapsnapshot.gz are not snapshots of one process"},
		{[]string{"--after", ticket1, ticket2}, "summary --after needs V8 snapshots (Node.js, Chrome): the ids of java-ticketleak-1.hprof.gz are not numbers V8 gives objects"},
		{[]string{"--between", leak1, javaA}, "snapshots of different runtimes cannot be compared"},
	} {
		if r := heapx(t, append([]string{"summary"}, c.args...)...); r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("summary %v: exit %d, %s", c.args, r.code, r.stderr)
		}
	}
}
