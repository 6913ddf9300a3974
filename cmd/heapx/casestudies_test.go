package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/testfixtures"
)

// The programs of testdata/gen/lifetimes reproduce MemInsight's case
// studies and its exactness claim; each says what heapx must find.

// traceProgram runs heapx trace on a program of testdata/gen/lifetimes
// and returns the trace's path and what the program printed.
func traceProgram(t *testing.T, name string, nodeFlags ...string) (string, string) {
	t.Helper()
	testfixtures.NeedTool(t, "node")
	out := filepath.Join(t.TempDir(), name+".memtrace")
	args := append([]string{"trace", "-o", out, "--", "node"}, nodeFlags...)
	r := heapx(t, append(args, filepath.Join("..", "..", "testdata", "gen", "lifetimes", name))...)
	if r.code != 0 {
		t.Fatalf("heapx trace %s: exit %d\n%s", name, r.code, r.stderr)
	}
	return out, r.stdout
}

func analyzeFile(t *testing.T, path string) *lifetime.Result {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := memtrace.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lifetime.Analyze(r, path, lifetime.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sitesOn returns the sites of file:line, by column.
func sitesOn(res *lifetime.Result, file string, line int) []*lifetime.Site {
	var out []*lifetime.Site
	for i := range res.Sites {
		if p := res.Sites[i].Pos; p.Line == line && strings.HasSuffix(p.File, file) {
			out = append(out, &res.Sites[i])
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Pos.Column < out[j-1].Pos.Column; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func oneSiteOn(t *testing.T, res *lifetime.Result, file string, line int) *lifetime.Site {
	t.Helper()
	s := sitesOn(res, file, line)
	if len(s) != 1 {
		t.Fatalf("%s:%d: %d allocation sites, want 1", file, line, len(s))
	}
	return s[0]
}

func TestCaseStudyDragThroughClosure(t *testing.T) {
	path, _ := traceProgram(t, "drag.js")
	res := analyzeFile(t, path)
	for _, line := range []int{15, 16} { // the elements, the handlers
		s := oneSiteOn(t, res, "drag.js", line)
		if s.Count != 50 || s.AtEnd != 50 || !s.Leaking || !slicesEqual(s.StaleAtIdle, []int{0, 10, 20, 30, 40}) {
			t.Errorf("drag.js:%d: %+v, want 50 objects alive at the end, leaking, stale 0 10 20 30 40 at the idle points before the end", line, s)
		}
	}
	// The cache's 50 entries are one row, whatever -n (it cuts rows,
	// never the tree above the cache).
	out := ok(t, "access-paths", path, "--site", "drag.js:15", "-n", "2")
	for _, want := range []string{"variable handlers", "(closure scope)", "variable element"} {
		if !strings.Contains(out, want) {
			t.Errorf("access paths of the elements: no %q in\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`entries of handlers +50\n`).MatchString(out) || strings.Contains(out, "collection entry") {
		t.Errorf("access paths of the elements: the cache's entries are not one row of 50:\n%s", out)
	}
	if out := ok(t, "trace-leaks", path); !strings.Contains(out, "drag.js:16:") || !strings.Contains(out, "0 10 20 30 40") {
		t.Errorf("heapx trace-leaks does not flag drag.js:16:\n%s", out)
	}
}

func TestCaseStudyGameTreeStaleness(t *testing.T) {
	path, _ := traceProgram(t, "gametree.js")
	res := analyzeFile(t, path)
	sites := sitesOn(res, "gametree.js", 14) // the node, then its children array
	if len(sites) != 2 {
		t.Fatalf("gametree.js:14: %d sites, want the node and its children array", len(sites))
	}
	for _, s := range sites {
		if s.Count != 3*364 || s.MaxStale != 2*364 || s.AtEnd != 364 {
			t.Errorf("gametree.js:14:%d: %+v, want 1092 objects, a stale peak of 728, 364 alive at the end", s.Pos.Column, s)
		}
	}
	if out := ok(t, "stale-sites", path, "-n", "2"); !strings.Contains(out, "gametree.js:14:") {
		t.Errorf("heapx stale-sites does not put gametree.js:14 first:\n%s", out)
	}
}

func TestCaseStudyOneTableAtATime(t *testing.T) {
	path, _ := traceProgram(t, "table.js")
	res := analyzeFile(t, path)
	s := oneSiteOn(t, res, "table.js", 10)
	if s.Count != 200 || s.MaxAlive != 1 || !s.OneAliveAtATime() || !s.AllNonEscaping() {
		t.Errorf("table.js:10: %+v, want 200 objects, one alive at a time, all non-escaping", s)
	}
	if out := ok(t, "churn", path, "--one"); !strings.Contains(out, "table.js:10:") {
		t.Errorf("heapx churn --one does not flag table.js:10:\n%s", out)
	}
	// heapx trace --report prints heapx lifetimes when the program ends.
	r := heapx(t, "trace", "--report", "-o", filepath.Join(t.TempDir(), "t.hxtrace"), "--", "node", filepath.Join("..", "..", "testdata", "gen", "lifetimes", "table.js"))
	if r.code != 0 || !regexp.MustCompile(`table\.js:10:\d+ +200 +0 +\d+ +\d+  one alive at a time, non-escaping`).MatchString(r.stdout) {
		t.Errorf("heapx trace --report: exit %d, stdout:\n%s", r.code, r.stdout)
	}
}

func TestCaseStudyInlinableRanges(t *testing.T) {
	path, _ := traceProgram(t, "parser.js")
	res := analyzeFile(t, path)
	sites := sitesOn(res, "parser.js", 14) // the node, then its range
	if len(sites) != 2 {
		t.Fatalf("parser.js:14: %d sites, want the node and its range", len(sites))
	}
	node, rng := sites[0], sites[1]
	if rng.Count != 50 || !rng.Inlinable() || rng.OwnerSite != node.IID {
		t.Errorf("parser.js:14 ranges: %+v, want 50 inlinable into the nodes (%s)", rng, node.Pos)
	}
	if out := ok(t, "inlining", path); !strings.Contains(out, rng.Pos.String()) {
		t.Errorf("heapx inlining does not flag %s:\n%s", rng.Pos, out)
	}
}

func TestCaseStudyOverAllocatingCodegen(t *testing.T) {
	path, _ := traceProgram(t, "codegen.js")
	res := analyzeFile(t, path)
	leaves, ops := newSite(t, res, 20), newSite(t, res, 21)
	if leaves.Count != 640 || ops.Count != 630 || leaves.AtEnd != 0 || ops.AtEnd != 0 {
		t.Errorf("codegen.js: leaves %+v, operators %+v; want 640 and 630 objects, none alive at the end", leaves, ops)
	}
	var doc struct {
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	okJSON(t, &doc, "churn", path, "--json", "-n", "4")
	top := map[string]bool{}
	for _, r := range doc.Sections[0].Rows {
		top[r["site"].(string)] = true
	}
	if !top[leaves.Pos.String()] || !top[ops.Pos.String()] {
		t.Errorf("heapx churn's top sites %v lack %s or %s", top, leaves.Pos, ops.Pos)
	}
}

// newSite returns the site of the `new SourceNode` on line of codegen.js.
func newSite(t *testing.T, res *lifetime.Result, line int) *lifetime.Site {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gen", "lifetimes", "codegen.js"))
	if err != nil {
		t.Fatal(err)
	}
	col := strings.Index(strings.Split(string(src), "\n")[line-1], "new SourceNode") + 1
	for _, s := range sitesOn(res, "codegen.js", line) {
		if s.Pos.Column == col {
			return s
		}
	}
	t.Fatalf("codegen.js:%d:%d: no allocation site", line, col)
	return nil
}

// TestExactnessAgainstV8 compares the analysis with V8's garbage
// collector on exact.js: at every checkpoint each probed object is dead
// by the analysis exactly when V8 collected it.
func TestExactnessAgainstV8(t *testing.T) {
	path, stdout := traceProgram(t, "exact.js", "--expose-gc")
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gen", "lifetimes", "exact.js"))
	if err != nil {
		t.Fatal(err)
	}
	probeLine := map[string]int{}
	checkpointLine := 0
	for i, l := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`// probe:(\w+)`).FindStringSubmatch(l); m != nil {
			probeLine[m[1]] = i + 1
		}
		if strings.HasPrefix(l, "function checkpoint()") {
			checkpointLine = i + 1
		}
	}
	var truth []map[string]bool
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var cp struct {
			Alive map[string]bool `json:"alive"`
		}
		if err := json.Unmarshal(sc.Bytes(), &cp); err != nil {
			t.Fatalf("exact.js printed %q: %v", sc.Text(), err)
		}
		truth = append(truth, cp.Alive)
	}
	// The checkpoints' times: the calls of checkpoint().
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := memtrace.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var times []uint64
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if ev.Kind == memtrace.FunctionEnter && ev.Pos.Line == checkpointLine && strings.HasSuffix(ev.Pos.File, "exact.js") {
			times = append(times, ev.Time)
		}
	}
	if len(times) != 3 || len(truth) != 3 || len(probeLine) != 9 {
		t.Fatalf("%d checkpoint calls traced, %d printed, %d probes; want 3, 3, 9", len(times), len(truth), len(probeLine))
	}
	res := analyzeFile(t, path)
	for name, line := range probeLine {
		site := oneSiteOn(t, res, "exact.js", line)
		var rec *lifetime.Record
		for i := range res.Objects {
			if res.Objects[i].Site == res.SiteIndex(site.IID) {
				if rec != nil {
					t.Fatalf("%s (exact.js:%d): more than one object", name, line)
				}
				rec = &res.Objects[i]
			}
		}
		for k, tk := range times {
			dead := rec.Flags&lifetime.RecAtEnd == 0 && rec.Unreachable <= tk
			if dead == truth[k][name] {
				t.Errorf("%s (exact.js:%d) at checkpoint %d (time %d): analysis says unreachable at %d (alive at end: %v), V8 says alive=%v",
					name, line, k, tk, rec.Unreachable, rec.Flags&lifetime.RecAtEnd != 0, truth[k][name])
			}
		}
	}
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCaseStudyLeakInModule: a leak in an ES module that ends on its own
// is found although the program's exit, an idle point too, repeats the
// last round's stale count.
func TestCaseStudyLeakInModule(t *testing.T) {
	path, out := traceProgram(t, "sessions.mjs")
	if !strings.Contains(out, `"sessions":500`) {
		t.Fatalf("sessions.mjs printed %q", out)
	}
	res := analyzeFile(t, path)
	s := oneSiteOn(t, res, "sessions.mjs", 11)
	if s.Count != 500 || s.AtEnd != 500 || !s.Leaking {
		t.Errorf("sessions.mjs:11: %d objects, %d at the end, stale at idle points %v, leaking %v; want 500, 500, leaking",
			s.Count, s.AtEnd, s.StaleAtIdle, s.Leaking)
	}
	if tmp := oneSiteOn(t, res, "sessions.mjs", 13); tmp.Leaking || tmp.AtEnd != 0 {
		t.Errorf("sessions.mjs:13 (dies at once): leaking %v, %d at the end", tmp.Leaking, tmp.AtEnd)
	}
	if out := ok(t, "trace-leaks", path); !strings.Contains(out, "sessions.mjs:11:") {
		t.Errorf("heapx trace-leaks does not name sessions.mjs:11:\n%s", out)
	}
}
