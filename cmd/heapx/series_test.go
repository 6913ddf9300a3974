package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/formats/parquet"
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
	if r.code != 0 || !strings.HasPrefix(r.stderr, "heapx: warning: node-basic.heapsnapshot.gz and node-leak-1.heapsnapshot.gz are not snapshots of one process taken in one inspector session: 84.9% of the ids") {
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

// sessionFixture is testdata/sessions/chromium-KIND-N.heapsnapshot.gz:
// one Chromium page captured in separate inspector sessions ("separate")
// or in one ("session"); see testdata/gen/chromium-sessions.sh.
func sessionFixture(kind string, n int) string {
	return fmt.Sprintf("../../testdata/sessions/chromium-%s-%d.heapsnapshot.gz", kind, n)
}

// Three heapx capture --inspect runs against one Chromium page: V8
// reused its ids in each session, and leaks took 74.6% and 49.4% of
// same-named objects for one process (it reported wrong objects as new).
// Every command that compares by id now warns not_one_process, says why,
// and compares classes: leaks, diff, report, serve and the Parquet leaks
// table. One session of the same page warns of nothing.
func TestSeriesInspectorSessions(t *testing.T) {
	t.Parallel()
	s1, s2, s3 := sessionFixture("separate", 1), sessionFixture("separate", 2), sessionFixture("separate", 3)
	text := ok(t, "leaks", s1, s2, s3)
	for _, w := range []string{
		"WARNING: chromium-separate-1.heapsnapshot.gz and chromium-separate-2.heapsnapshot.gz are not snapshots of one process taken in one inspector session: 25.4% of the ids of chromium-separate-1.heapsnapshot.gz found in chromium-separate-2.heapsnapshot.gz name another object there.",
		"WARNING: chromium-separate-2.heapsnapshot.gz and chromium-separate-3.heapsnapshot.gz are not snapshots of one process taken in one inspector session: 50.6% of the ids",
		"take the snapshots of one process in one session (heapx capture --every or --count)",
		"Record        1,100    26.4 kB             950         2,050        3,100  Record @",
		"Classes compared by count and size: V8 numbered the snapshots' objects afresh, in separate sessions or processes, so an id names another object in each (25.4% of the ids found again do)",
	} {
		if !strings.Contains(text, w) {
			t.Errorf("leaks of three sessions lacks %q:\n%s", w, text)
		}
	}
	notOne := []string{query.WarnNotOneProcess, query.WarnNotOneProcess}
	d, _ := warned(t, "leaks", s1, s2, s3)
	if got := warningCodes(d.Warnings); !slices.Equal(got, notOne) {
		t.Errorf("leaks --json warnings %v", d.Warnings)
	}
	d, _ = warned(t, "diff", s1, s2)
	if got := warningCodes(d.Warnings); !slices.Equal(got, notOne[:1]) || !strings.Contains(d.Notes[0], "V8 numbered the snapshots' objects afresh") ||
		d.Sections[0].Rows[0]["new"] != 0.0 || d.Sections[0].Rows[0]["delta"] != 1100.0 {
		t.Errorf("diff: %v, notes %v, first row %v", d.Warnings, d.Notes, d.Sections[0].Rows[0])
	}
	var rep report.Doc
	r := heapx(t, "report", "--json", s3, s1, s2)
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 || !slices.Equal(warningCodes(rep.Warnings), notOne) {
		t.Errorf("report --json: exit %d, %v, warnings %v", r.code, err, rep.Warnings)
	}

	// serve: the warnings on stderr, in the session and in the Comparison.
	url, stderr, stop := serving(t, s3, s1, s2, "--no-browser")
	defer stop()
	if !stderr.has("heapx: warning: chromium-separate-1.heapsnapshot.gz and chromium-separate-2.heapsnapshot.gz are not snapshots of one process") {
		t.Errorf("serve's stderr:\n%s", stderr)
	}
	var info, diff struct {
		Warnings []query.Warning `json:"warnings"`
		Matching string          `json:"matching"`
	}
	for path, v := range map[string]any{"api/v1/session": &info, "api/v1/diff": &diff} {
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(v)
		res.Body.Close()
	}
	if !slices.Equal(warningCodes(info.Warnings), notOne) || !slices.Equal(warningCodes(diff.Warnings), notOne[:1]) || diff.Matching != "class" {
		t.Errorf("serve: session warnings %v, diff warnings %v, matching %q", info.Warnings, diff.Warnings, diff.Matching)
	}

	// The Parquet leaks table holds the classes, as leaks lists them.
	dir := t.TempDir()
	out := heapx(t, "export", "--parquet", dir, "--leaks", s1, s2, s3)
	m := partitionLine.FindAllStringSubmatch(out.stdout, -1)
	if out.code != 0 || len(m) != 3 || !strings.Contains(out.stderr, "heapx: warning: chromium-separate-1.heapsnapshot.gz and chromium-separate-2.heapsnapshot.gz are not snapshots of one process") {
		t.Fatalf("export --leaks: exit %d\n%s\n%s", out.code, out.stdout, out.stderr)
	}
	rows, err := parquet.ReadTable[parquet.LeakRow](m[2][1], parquet.TableLeaks, true)
	if err != nil {
		t.Fatal(err)
	}
	var record *parquet.LeakRow
	for i := range rows {
		if rows[i].Matching != "class" || rows[i].BaselineCount == nil || int(rows[i].Rank) != i+1 {
			t.Errorf("row %d: %+v", i, rows[i])
		}
		if rows[i].Class == "Record" {
			record = &rows[i]
		}
	}
	if record == nil || record.Count != 1100 || record.RetainedSize != 26400 || *record.BaselineCount != 950 || *record.TargetCount != 2050 ||
		*record.FinalCount != 3100 || !strings.HasPrefix(record.Path, "(root) @1 → .2 system / NativeContext / file:// @") ||
		!strings.HasSuffix(record.Path, fmt.Sprintf("Record @%d", record.RepresentativeID)) {
		t.Errorf("Record row %+v", record)
	}

	// One session of the same page: no warning, and leaks finds the 1,000
	// Records kept between the first two snapshots, matched by id.
	var lj struct {
		Warnings []query.Warning `json:"warnings"`
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	okJSON(t, &lj, "leaks", "--json", sessionFixture("session", 1), sessionFixture("session", 2), sessionFixture("session", 3))
	if len(lj.Warnings) != 0 || len(lj.Sections[0].Rows) != 1 || lj.Sections[0].Rows[0]["classes"] != "Record 1,000, Array 1,000" {
		t.Errorf("leaks of one session: warnings %v, rows %v", lj.Warnings, lj.Sections[0].Rows)
	}
}

// TestCaptureSessionsChromium takes the sessions fixtures' snapshots at
// test time: three heapx capture --inspect runs against one headless
// Chromium page warn not_one_process in leaks and compare classes (the
// page keeps Records, found by count); a series of one run (--every)
// warns of nothing and finds the Records it kept by id.
func TestCaptureSessionsChromium(t *testing.T) {
	port := startChromium(t, "../../testdata/capture/sessions.html")
	dir := t.TempDir()
	endpoint := "127.0.0.1:" + port
	var separate []string
	for k := 1; k <= 3; k++ {
		time.Sleep(time.Second)
		path := filepath.Join(dir, fmt.Sprintf("separate-%d.heapsnapshot", k))
		ok(t, "capture", "--inspect", endpoint, "--url", "sessions.html", "-o", path)
		separate = append(separate, path)
	}
	ok(t, "capture", "--inspect", endpoint, "--url", "sessions.html", "--every", "1s", "--count", "3", "-o", filepath.Join(dir, "session.heapsnapshot"))

	d, _ := warned(t, append([]string{"leaks", "-n", "0"}, separate...)...)
	kept := 0.0
	for _, row := range d.Sections[0].Rows {
		if row["constructor"] == "Record" {
			kept, _ = row["kept"].(float64)
		}
	}
	if !slices.Equal(warningCodes(d.Warnings), []string{query.WarnNotOneProcess, query.WarnNotOneProcess}) || kept < 50 {
		t.Errorf("leaks of three sessions: warnings %v, %v Records kept", d.Warnings, kept)
	}
	d, _ = warned(t, "leaks", "-n", "0", filepath.Join(dir, "session-1.heapsnapshot"), filepath.Join(dir, "session-2.heapsnapshot"),
		filepath.Join(dir, "session-3.heapsnapshot"))
	records := false
	for _, row := range d.Sections[0].Rows {
		records = records || strings.HasPrefix(fmt.Sprint(row["classes"]), "Record ")
	}
	if len(d.Warnings) != 0 || !records {
		t.Errorf("leaks of one session: warnings %v, rows %v", d.Warnings, d.Sections[0].Rows)
	}
}
