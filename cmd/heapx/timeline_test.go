package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// These tests run the time-varying analyses as a user would: on the
// bundled timeline with exact numbers, and on real Node.js programs heapx
// captures, where the program's own counts and lines are the answer.

// phasesJS keeps 4,000 then 6,000 objects, a second apart.
var phasesJS, _ = filepath.Abs("../../testdata/capture/timeline-phases.js")

// timelineFixture is the bundled heap timeline.
var timelineFixture = filepath.Join("..", "..", "testdata", "node-timeline.heaptimeline.gz")

// rowInt reads a JSON number of a row.
func rowInt(row map[string]any, key string) int {
	f, _ := row[key].(float64)
	return int(f)
}

// TestTimelineBundled runs heapx timeline on the bundled timeline: the
// two kept batches recorded after the first sample are the buckets of
// 1,746 and 1,745 live objects (testdata/gen/README.md; the analysis test
// compares every bucket with DevTools), TimelineItem's constructor their
// top site, and the ages add up to the live objects.
func TestTimelineBundled(t *testing.T) {
	var doc sitesDoc
	okJSON(t, &doc, "timeline", "--json", timelineFixture)
	if doc.Query != "timeline" || len(doc.Sections) != 3 {
		t.Fatalf("query %q, %d sections", doc.Query, len(doc.Sections))
	}
	var counts []int
	for _, r := range doc.Sections[0].Rows {
		counts = append(counts, rowInt(r, "count"))
	}
	if got := fmt.Sprint(counts); got != "[0 71 0 1746 0 1745 0 9 17 3]" {
		t.Errorf("bucket counts %s", got)
	}
	b3 := doc.Sections[0].Rows[3]
	if rowInt(b3, "start_ms") != 251 || rowInt(b3, "end_ms") != 335 || rowInt(b3, "surviving") != 44308+71+1746 ||
		!strings.HasPrefix(b3["sites"].(string), "TimelineItem (make-fixtures.js:172:16) 1,490, ") {
		t.Errorf("bucket 3: %v", b3)
	}
	if r := doc.Sections[1].Rows[5]; rowInt(r, "total") != 1745 || rowInt(r, "site_1") != 1490 {
		t.Errorf("sites over time, row 5: %v", r)
	}
	ages := 0
	for _, r := range doc.Sections[2].Rows {
		ages += rowInt(r, "count")
	}
	if ages != 44308+3591 {
		t.Errorf("the age histogram counts %d objects", ages)
	}
	out := ok(t, "timeline", "--bucket", "100ms", "--sites", "1", timelineFixture)
	if !strings.Contains(out, "allocation timeline of 839 ms, 18 samples; 3,591 live objects allocated while tracked, 44,308 from before the first sample") ||
		!strings.Contains(out, "200 ms – 300 ms") || strings.Contains(out, "TimelineBatch") {
		t.Errorf("--bucket 100ms --sites 1:\n%s", out)
	}
	// A sampling profile cannot say what was collected, and heapx says
	// so.
	r := heapx(t, "sites", "--churn", filepath.Join("..", "..", "testdata", "node-sites.heapprofile"))
	if r.code != 1 || !strings.Contains(r.stderr, "does not say which were collected") {
		t.Errorf("--churn on a profile: exit %d, %s", r.code, r.stderr)
	}
	for _, bad := range []struct{ args, want string }{
		{"--bucket soon", "--bucket \"soon\": want a duration of a microsecond or more"},
		{"--bucket 2ns", "--bucket \"2ns\": want a duration"},
		{"--buckets 0", "--buckets must be 1 or more"},
		{"--buckets 200000", "200000 buckets of 5 µs for a timeline of 839760 µs: at most 100000"},
	} {
		args := append(append([]string{"timeline"}, strings.Fields(bad.args)...), timelineFixture)
		if r := heapx(t, args...); r.code != 1 || !strings.Contains(r.stderr, bad.want) {
			t.Errorf("heapx %v: exit %d, %s", args, r.code, r.stderr)
		}
	}
	if r := heapx(t, "timeline", filepath.Join("..", "..", "testdata", "node-trace.heapsnapshot.gz")); r.code != 1 || !strings.Contains(r.stderr, "no timeline samples: record one with heapx capture --timeline") {
		t.Errorf("a snapshot without samples: exit %d, %s", r.code, r.stderr)
	}
}

// TestTimelineReportChart: the report of a timeline has the timeline part
// with the bars of its buckets and the lines of its top sites, as inline
// SVG.
func TestTimelineReportChart(t *testing.T) {
	out := ok(t, "report", "--html", "-", timelineFixture)
	i := strings.Index(out, `<section class="part" id="timeline">`)
	if i < 0 {
		t.Fatal("no timeline part in the report")
	}
	part := out[i:]
	part = part[:strings.Index(part, "</section>")]
	if strings.Count(part, "<polyline") != 6 || !strings.Contains(part, "<title>TimelineItem (make-fixtures.js:172:16)</title>") ||
		!strings.Contains(part, `aria-label="Still alive by Allocated"`) || strings.Contains(part, "<script") {
		t.Errorf("timeline part:\n%s", part)
	}
}

// TestTimelineOfCapture records a timeline of a program that keeps 4,000
// objects, then 6,000 a second later, churning objects meanwhile, and
// stops: heapx timeline has two bursts of surviving objects, of those
// sizes, a second apart, whose sites are the lines that allocated them;
// heapx sites --churn ranks first the function whose allocations are
// gone (churn(), or the interval's callback once churn() is inlined into
// it) and shows churn() with almost nothing alive. The bursts are found
// in the data, not at fixed times, so a slow machine only moves them; the
// capture is long enough for one that takes seconds to start the program.
func TestTimelineOfCapture(t *testing.T) {
	needNode(t)
	path := filepath.Join(t.TempDir(), "p.heaptimeline")
	captured := heapx(t, "capture", "--timeline", "8s", "-o", path, "--", "node", phasesJS)
	if captured.code != 0 {
		t.Fatalf("capture: exit %d: %s", captured.code, captured.stderr)
	}
	var doc sitesDoc
	okJSON(t, &doc, "timeline", "--json", "--bucket", "100ms", "--sites", "5", path)
	// A burst is a run of buckets of 50 or more objects: the program
	// start, the phases, perhaps churn not yet collected (hundreds); the
	// phases are the two of a thousand or more. A phase split over two
	// buckets with under 50 in one loses those few to the margin.
	type burst struct {
		start, count int
		sites        string
	}
	var bursts []burst
	inBurst := false
	// The last bucket is left out: it ends with the snapshot, which V8
	// can take in the middle of a churn callback (Node runs a debugger's
	// command between two statements), whose objects are then alive.
	rows := doc.Sections[0].Rows
	for _, r := range rows[:len(rows)-1] {
		if rowInt(r, "count") < 50 {
			inBurst = false
			continue
		}
		if !inBurst {
			bursts = append(bursts, burst{start: rowInt(r, "start_ms")})
			inBurst = true
		}
		b := &bursts[len(bursts)-1]
		b.count += rowInt(r, "count")
		b.sites += r["sites"].(string) + ", "
	}
	var phases []burst
	for _, b := range bursts {
		if b.count >= 1000 {
			phases = append(phases, b)
		}
	}
	if len(phases) != 2 {
		t.Fatalf("bursts %+v; capture said:\n%s", bursts, captured.stderr)
	}
	one, two := phases[0], phases[1]
	// Each phase keeps its objects and the array that holds them (a
	// JSArray and its elements); the program's timers add a few.
	if one.count < 4000 || one.count > 4100 || two.count < 6000 || two.count > 6100 || two.start-one.start < 700 {
		t.Errorf("phases: %d objects at %d ms, %d at %d ms; want 4,000 then 6,000 a second later (bursts %+v)", one.count, one.start, two.count, two.start, bursts)
	}
	// The live heap from V8's heap statistics (kept beside the timeline)
	// rises by the phases' objects in their buckets and stays up: the
	// churn is garbage at each update (V8 collects before counting).
	// Margins: the program's timers and the arrays holding the phases.
	liveAt := func(startMS int) (before, after int) {
		for i, r := range rows {
			if rowInt(r, "start_ms") == startMS {
				return rowInt(rows[max(i-1, 0)], "live_count"), rowInt(r, "live_count")
			}
		}
		return 0, 0
	}
	b1, a1 := liveAt(one.start)
	b2, a2 := liveAt(two.start)
	end := rowInt(rows[len(rows)-2], "live_count") // not the snapshot's update (above)
	if b1 < 10000 || a1-b1 < 3900 || a1-b1 > 4300 || b2-a1 < -300 || b2-a1 > 300 || a2-b2 < 5900 || a2-b2 > 6300 || end-a2 < -300 || end-a2 > 300 {
		t.Errorf("live objects around phase one (%d ms) %d -> %d, around phase two (%d ms) %d -> %d, at the end %d; want +4,000 then +6,000",
			one.start, b1, a1, two.start, b2, a2, end)
	}
	if out := ok(t, "timeline", path); !strings.Contains(out, "Live then") || !strings.Contains(out, "heap statistics updates ("+path+".stats.jsonl)") {
		t.Errorf("heapx timeline does not show the live heap:\n%s", out)
	}

	// V8 names the constructor, or the arrow function it was inlined
	// into, on the line marked for the phase.
	site := func(b burst, lines ...int) bool {
		for _, l := range lines {
			if strings.Contains(b.sites, fmt.Sprintf("timeline-phases.js:%d:", l)) {
				return true
			}
		}
		return false
	}
	if !site(one, lineIn(t, phasesJS, "keep(4000"), lineIn(t, phasesJS, "constructor(i) { this.i = i; }")) ||
		!site(two, lineIn(t, phasesJS, "keep(6000"), lineIn(t, phasesJS, "constructor(i) { this.i = i; this.j")) {
		t.Errorf("sites of the phases: %q, %q", one.sites, two.sites)
	}

	var churn sitesDoc
	okJSON(t, &churn, "sites", "--churn", "--json", "-n", "0", path)
	rows = churn.Sections[0].Rows
	churnAt := fmt.Sprintf("%s:%d:", phasesJS, lineIn(t, phasesJS, "function churn("))
	callbackAt := fmt.Sprintf("%s:%d:", phasesJS, lineIn(t, phasesJS, "setInterval(() => { churned"))
	if loc, _ := rows[0]["location"].(string); !strings.HasPrefix(loc, churnAt) && !strings.HasPrefix(loc, callbackAt) {
		t.Errorf("top churn site %v, want churn() at %s or the callback at %s", rows[0], churnAt, callbackAt)
	}
	// Under load V8 loses the stacks of some objects a GC moves, which
	// lowers what is alive, never raises it: churn()'s share is the
	// robust one to check.
	for _, r := range rows {
		if loc, _ := r["location"].(string); strings.HasPrefix(loc, churnAt) && (rowInt(r, "allocated") < 1000 || r["survival_percent"].(float64) > 5) {
			t.Errorf("churn(): %v; want thousands allocated, under 5%% alive", r)
		}
	}
}

// TestSiteGrowthOfCapture takes three snapshots with allocation stacks of
// the program leaking through a listener (node --track-heap-objects) and
// asks heapx sites for the growing sites: the leak's sites grow at every
// step, named at their lines (handle() and LeakedRequest's constructor),
// the churning function's hardly; the report of the series has the same
// part. V8 attributes an allocation to the function it was inlined into
// once it optimises the caller, which moves a site's objects to another
// site in the middle of a series, at a time that depends on the load:
// --no-turbo-inlining keeps the sites where the source has them.
func TestSiteGrowthOfCapture(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	if r := heapx(t, "capture", "--every", "1s", "--count", "3", "-o", filepath.Join(dir, "s.heapsnapshot"), "--", "node", "--track-heap-objects", "--no-turbo-inlining", leakJS); r.code != 0 {
		t.Fatalf("capture: exit %d: %s", r.code, r.stderr)
	}
	s := []string{filepath.Join(dir, "s-1.heapsnapshot"), filepath.Join(dir, "s-2.heapsnapshot"), filepath.Join(dir, "s-3.heapsnapshot")}
	var doc sitesDoc
	okJSON(t, &doc, append([]string{"sites", "--json", "-n", "0"}, s...)...)
	leakLines := map[int]bool{lineOf(t, "function handle("): true, lineOf(t, "constructor(id)"): true}
	churnAt := fmt.Sprintf("%s:%d:", leakJS, lineOf(t, "function churn("))
	var leak, churn map[string]any
	for _, r := range doc.Sections[0].Rows {
		loc, _ := r["location"].(string)
		if strings.HasPrefix(loc, churnAt) {
			churn = r
		}
		var line int
		if n, _ := fmt.Sscanf(strings.TrimPrefix(loc, leakJS+":"), "%d", &line); n == 1 && strings.HasPrefix(loc, leakJS+":") && leakLines[line] && leak == nil {
			leak = r
		}
	}
	// 2,000 requests a second, each a LeakedRequest, its body and a
	// listener: thousands more every step (fewer under load, when the
	// program runs less and V8 loses the stacks of some objects a GC
	// moves). churn()'s objects die at once; what V8 keeps of the
	// function itself (a few dozen objects) may grow a little.
	if leak == nil || doc.Query != "site-growth" || rowInt(leak, "count_growth") < 100 {
		t.Fatalf("no growing site of the leak at %s lines %v: %+v", leakJS, leakLines, doc.Sections[0].Rows)
	}
	if churn != nil && rowInt(churn, "count_growth")*10 > rowInt(leak, "count_growth") {
		t.Errorf("the churning function grows with the leak: %v, the leak %v", churn, leak)
	}
	var rep struct {
		Parts []struct {
			Key string `json:"key"`
		} `json:"parts"`
	}
	okJSON(t, &rep, "report", "--json", s[2], s[0], s[1])
	found := false
	for _, p := range rep.Parts {
		found = found || p.Key == "site-growth"
	}
	if !found {
		t.Errorf("the report of the series has no site-growth part: %+v", rep.Parts)
	}
}
