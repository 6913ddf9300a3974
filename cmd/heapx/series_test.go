package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

const (
	leak1   = "../../testdata/node-leak-1.heapsnapshot.gz"
	leak2   = "../../testdata/node-leak-2.heapsnapshot.gz"
	leak3   = "../../testdata/node-leak-3.heapsnapshot.gz"
	basic   = "../../testdata/node-basic.heapsnapshot.gz"
	javaA   = "../../testdata/hprof/java-leakdemo-small.hprof.gz"
	javaB   = "../../testdata/hprof/java-leakdemo-small-gz.hprof.gz"
	jshell  = "../../testdata/hprof/java-jshell-agent.hprof.gz"
	ticket1 = "../../testdata/hprof/java-ticketleak-1.hprof.gz"
	ticket2 = "../../testdata/hprof/java-ticketleak-2.hprof.gz"
	ticket3 = "../../testdata/hprof/java-ticketleak-3.hprof.gz"
)

// warned runs heapx with --json, which must succeed and repeat its
// warnings on stderr, and returns the generic document.
func warned(t *testing.T, args ...string) (*render.Document, string) {
	t.Helper()
	r := heapx(t, append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("heapx %v: exit %d: %s", args, r.code, r.stderr)
	}
	var d render.Document
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("heapx %v: %v", args, err)
	}
	for _, w := range d.Warnings {
		if !strings.Contains(r.stderr, "heapx: warning: "+w.Message) {
			t.Errorf("heapx %v: stderr lacks warning %q:\n%s", args, w.Message, r.stderr)
		}
	}
	return &d, r.stderr
}

func warningCodes(ws []query.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Code)
	}
	return out
}

// Snapshots of one process in the right order warn about nothing, and
// "warnings" is there, empty.
func TestSeriesInOrder(t *testing.T) {
	t.Parallel()
	out := ok(t, "leaks", "--json", leak1, leak2, leak3)
	if !strings.Contains(out, `"warnings": []`) {
		t.Errorf("leaks --json has no empty warnings:\n%s", out[:min(len(out), 400)])
	}
	d := reportJSON(t, leak3, leak1, leak2)
	if d.Warnings == nil || len(d.Warnings) != 0 {
		t.Errorf("report warnings %v", d.Warnings)
	}
	if text := ok(t, "growth", leak1, leak2, leak3); strings.Contains(text, "WARNING") {
		t.Errorf("growth warns:\n%s", text)
	}
}

// Snapshots given backwards used to print an empty table and succeed:
// now the output starts with a warning that says which one is newer, what
// order is expected and the command in the order they were taken.
func TestSeriesReversed(t *testing.T) {
	t.Parallel()
	text := ok(t, "leaks", leak3, leak2, leak1)
	if !strings.HasPrefix(text, "WARNING: The snapshots look out of order: node-leak-3.heapsnapshot.gz holds 3,504 objects V8 created after everything in node-leak-2.heapsnapshot.gz") ||
		!strings.Contains(text, "heapx leaks expects BASELINE, TARGET, FINAL, oldest first") ||
		!strings.Contains(text, "In the order they were taken: heapx leaks "+leak1+" "+leak2+" "+leak3+".") {
		t.Errorf("leaks reversed:\n%s", text)
	}
	// The heading names the files, not BASELINE, TARGET and FINAL.
	if !strings.Contains(text, "Leaks (objects allocated between node-leak-3.heapsnapshot.gz and node-leak-2.heapsnapshot.gz, alive in node-leak-1.heapsnapshot.gz)") {
		t.Errorf("leaks heading:\n%s", text)
	}
	d, _ := warned(t, "leaks", leak3, leak2, leak1)
	if got := warningCodes(d.Warnings); len(got) != 1 || got[0] != query.WarnOrderReversed {
		t.Errorf("leaks --json warnings %v", d.Warnings)
	}
	d, _ = warned(t, "diff", leak2, leak1)
	if got := warningCodes(d.Warnings); len(got) != 1 || got[0] != query.WarnOrderReversed {
		t.Errorf("diff --json warnings %v", d.Warnings)
	}

	// The report with the oldest file first: FILE must be the newest.
	r := heapx(t, "report", leak1, leak2, leak3)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "WARNING: The snapshots look out of order") ||
		!strings.Contains(r.stdout, "heapx report expects FILE, the newest snapshot, then the BASELINEs oldest first") ||
		!strings.Contains(r.stdout, "In the order they were taken: heapx report "+leak3+" "+leak1+" "+leak2+".") {
		t.Errorf("report oldest first: exit %d\n%s", r.code, r.stdout[:min(len(r.stdout), 1200)])
	}
	r = heapx(t, "report", "--json", leak1, leak2, leak3)
	var doc report.Doc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if got := warningCodes(doc.Warnings); r.code != 0 || len(got) != 1 || got[0] != query.WarnOrderReversed || !strings.Contains(r.stderr, "heapx: warning: ") {
		t.Errorf("report --json: exit %d, warnings %v, stderr %q", r.code, doc.Warnings, r.stderr)
	}
	page := heapx(t, "report", "--html", "-", leak1, leak2, leak3).stdout
	if !strings.Contains(page, `<section class="part fail" id="warnings"><h2>Warnings</h2><p>The snapshots look out of order`) {
		t.Errorf("report --html has no warnings section")
	}
}

// Snapshots of different processes: three JVM runs gave "no leaks";
// now each pair is named and the result says it compared class counts.
func TestSeriesNotOneProcess(t *testing.T) {
	t.Parallel()
	text := ok(t, "leaks", javaA, javaB, jshell)
	for _, w := range []string{
		"WARNING: java-leakdemo-small.hprof.gz and java-leakdemo-small-gz.hprof.gz do not look like snapshots of one process",
		"WARNING: java-leakdemo-small-gz.hprof.gz and java-jshell-agent.hprof.gz do not look like snapshots of one process",
		"so heapx compared class counts and sizes instead",
		"Classes with more instances in java-leakdemo-small-gz.hprof.gz and java-jshell-agent.hprof.gz than in java-leakdemo-small.hprof.gz (class counts: objects cannot be matched)",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("leaks of three JVM runs lacks %q:\n%s", w, text)
		}
	}
	d, _ := warned(t, "leaks", javaA, javaB, jshell)
	if got := warningCodes(d.Warnings); len(got) != 2 || got[0] != query.WarnNotOneProcess || got[1] != query.WarnNotOneProcess {
		t.Errorf("leaks --json warnings %v", d.Warnings)
	}
	// Two Node processes started alike share 98% of their ids, but not
	// the objects: the diff used to match them as one process.
	d, _ = warned(t, "diff", basic, leak1)
	if got := warningCodes(d.Warnings); len(got) != 1 || got[0] != query.WarnNotOneProcess || !strings.Contains(d.Notes[0], "Classes compared by count and size") {
		t.Errorf("diff of two Node processes: %v, notes %v", d.Warnings, d.Notes)
	}
	// CSV has no room for them: stderr has.
	r := heapx(t, "growth", "--csv", basic, leak1)
	if r.code != 0 || !strings.HasPrefix(r.stderr, "heapx: warning: node-basic.heapsnapshot.gz and node-leak-1.heapsnapshot.gz do not look like snapshots of one process") {
		t.Errorf("growth --csv: exit %d, stderr %q", r.code, r.stderr)
	}
}

// One JVM: no warning, and classes compared by count (the collector moves
// objects, so addresses do not follow them); the leak is the first class,
// with the path of an instance.
func TestSeriesOneJVM(t *testing.T) {
	t.Parallel()
	text := ok(t, "leaks", ticket1, ticket2, ticket3)
	if strings.Contains(text, "WARNING") || !strings.Contains(text, "TicketLeak$Ticket   2,000    48.0 kB           2,000         4,000        6,000") ||
		!strings.Contains(text, ".OPEN           java.util.ArrayList @0xfc016548") || !strings.Contains(text, "this runtime's ids are addresses") {
		t.Errorf("leaks of one JVM:\n%s", text)
	}
	// The report's --fail-over gate counts what the classes kept: the
	// 2,000 Tickets' shallow size, not 0 for want of matched objects.
	var rep struct {
		LeakedSize      uint64 `json:"leaked_size"`
		LeakedSizeBasis string `json:"leaked_size_basis"`
	}
	okJSON(t, &rep, "report", "--json", ticket3, ticket1, ticket2)
	if rep.LeakedSize < 2000*48 || !strings.Contains(rep.LeakedSizeBasis, "not matched by id") {
		t.Errorf("report of one JVM: leaked size %d (%s)", rep.LeakedSize, rep.LeakedSizeBasis)
	}
	if r := heapx(t, "report", "--fail-over", "100kB", ticket3, ticket1, ticket2); r.code != 1 || !strings.Contains(r.stderr, "--fail-over") {
		t.Errorf("report --fail-over 100kB of one JVM: exit %d, %s", r.code, r.stderr)
	}
}

// Snapshots of different runtimes cannot be compared: exit 1, saying
// which is which and what is expected.
func TestSeriesDifferentRuntimes(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"diff", javaA, basic},
		{"leaks", leak1, leak2, "../../testdata/spidermonkey/ff-small-page.fxsnapshot"},
		{"growth", leak1, javaA},
		{"report", leak3, javaA},
		{"report", "--json", leak3, leak1, javaA},
	} {
		r := heapx(t, args...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "heapx: ") ||
			!strings.Contains(r.stderr, "snapshots of different runtimes cannot be compared") {
			t.Errorf("heapx %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	r := heapx(t, "diff", javaA, basic)
	if want := "heapx: java-leakdemo-small.hprof.gz is a Java heap dump (HPROF) but node-basic.heapsnapshot.gz is a V8 heap snapshot (Node.js, Chrome): snapshots of different runtimes cannot be compared (give BASE, then TARGET taken after it, all of one program)\n"; r.stderr != want {
		t.Errorf("diff stderr %q", r.stderr)
	}
}
