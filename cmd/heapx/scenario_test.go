package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/report"
)

// These tests run heapx scenario as a user does, in real headless
// Chromium, on the leak shapes of capture/testdata/scenario served by the
// test: each leak is found with what holds it named, and a page that
// cleans up passes the CI gates. They skip without Chromium, and fail
// under CI (.ci/run installs it).

// scenarioPages serves the scenario pages and returns their base URL.
func scenarioPages(t *testing.T) string {
	t.Helper()
	if _, err := capture.FindBrowser(); err != nil {
		testfixtures.Missing(t, "%v", err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir("../../capture/testdata/scenario")))
	t.Cleanup(srv.Close)
	return srv.URL
}

// docSection returns the section of the report part key whose heading
// starts with heading.
func docSection(t *testing.T, d *report.Doc, key, heading string) []map[string]any {
	t.Helper()
	for _, p := range d.Parts {
		if p.Key != key {
			continue
		}
		for _, s := range p.Result.Sections {
			if strings.HasPrefix(s.Heading, heading) {
				return s.Rows
			}
		}
	}
	t.Fatalf("the report's %q part has no section %q", key, heading)
	return nil
}

// pathHas reports whether a retainer path's rows have a step with edge
// and an object starting with object ("" for any).
func pathHas(rows []map[string]any, edge, object string) bool {
	for _, r := range rows {
		if (edge == "" || r["edge"] == edge) && strings.HasPrefix(fmt.Sprint(r["object"]), object) {
			return true
		}
	}
	return false
}

// A detached subtree kept in an array: memlab's leak is the closed panel
// held by the closure variable closedPanels, the array grows by one panel
// a repetition, the detached trees are held by its slots, and
// --fail-leaks fails the run (exit 1) after printing the report. -o keeps
// the three snapshots with their scripts side files.
func TestScenarioDetachedSubtree(t *testing.T) {
	base := scenarioPages(t)
	out := filepath.Join(t.TempDir(), "snaps")
	r := heapx(t, "scenario", "--url", base+"/detached.html", "--action", "click #open", "--back", "click #close", "-o", out, "--json", "--fail-leaks", "1")
	if r.code != 1 || !strings.Contains(r.stderr, "heapx: report gate failed: 1 leak(s) found, at or over the --fail-leaks limit 1") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var d report.Doc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	leaks := reportPart(t, &d, "leaks")
	if len(leaks) != 1 || !strings.Contains(fmt.Sprint(leaks[0]["classes"]), "Detached <section> 1, Detached <div> 40") {
		t.Errorf("leaks %v, want one: the panel and its 40 rows", leaks)
	}
	if path := docSection(t, &d, "leaks", "Leak 1:"); !pathHas(path, "->closedPanels", "Array @") || !pathHas(path, "[1]", "Detached <section class=\"panel\">") {
		t.Errorf("leak path %v, want closedPanels[1], the panel", path)
	}
	counts := docSection(t, &d, "page", "DOM and JavaScript heap")
	if len(counts) != 5 || counts[4]["nodes"].(float64)-counts[0]["nodes"].(float64) != 3*81 {
		t.Errorf("counts %v, want 81 more DOM nodes a repetition", counts)
	}
	cs := docSection(t, &d, "page", "Collections that grew")
	if len(cs) != 1 || cs[0]["type"] != "Array" || cs[0]["held_by"] != "->closedPanels" || cs[0]["per_repetition"] != "+1" {
		t.Errorf("collections %v, want closedPanels growing by one", cs)
	}
	detached := reportPart(t, &d, "detached")
	slots := map[string]bool{}
	for _, tr := range detached {
		held := fmt.Sprint(tr["held_by"])
		slots[held[strings.LastIndex(held, " ")+1:]] = true
	}
	if len(detached) != 4 || !slots["[0]"] || !slots["[1]"] || !slots["[2]"] || !slots["[3]"] {
		t.Errorf("detached trees %v, want 4 held by the array's slots", detached)
	}
	for _, name := range []string{"baseline", "target", "final"} {
		for _, f := range []string{name + ".heapsnapshot", name + ".heapsnapshot.scripts.jsonl"} {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Error(err)
			}
		}
	}
}

// Listeners on window added at each open: the page part names the resize
// listener, one more a repetition, with where its function is; memlab's
// leak path goes through the window's listener to the closure and the
// Dialog it holds.
func TestScenarioWindowListeners(t *testing.T) {
	base := scenarioPages(t)
	r := heapx(t, "scenario", "--url", base+"/listeners.html", "--action", "click #open", "--back", "click .dialog .close")
	if r.code != 0 || !strings.Contains(r.stderr, "heapx: back 3/3: click .dialog .close\n") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	text := r.stdout
	for _, want := range []string{
		"Page:                  " + base + "/listeners.html",
		"Scenario:              action 1 step, back 1 step; 1 warm-up, 3 repetition(s)",
		"Snapshots:             not kept (-o DIR keeps them)",
		"JS event listeners grew at every repetition: ",
		"window  resize         1      4  +1              () => {  /listeners.html:15:21",
		"EventListener @", "V8EventListener @",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the report lacks %q:\n%s", want, text)
		}
	}
	// The path's edge column is as wide as its widest edge, which the
	// browser's version changes.
	if !regexp.MustCompile(`\n->this +Dialog @`).MatchString(text) {
		t.Errorf("the leak path does not end at ->this Dialog:\n%s", text)
	}
}

// A cache of component objects, run from a scenario file: the leak is a
// CardComponent in the Map held by componentCache, the Map grows by one a
// repetition, and nothing grows in the DOM.
func TestScenarioComponentCache(t *testing.T) {
	base := scenarioPages(t)
	file := filepath.Join(t.TempDir(), "cache.scenario")
	scenario := "# a card shown and hidden\nurl " + base + "/cache.html\nrepeat 4\naction:\n  click #open\n  wait article.card\nback:\n  click #hide\n"
	if err := os.WriteFile(file, []byte(scenario), 0o666); err != nil {
		t.Fatal(err)
	}
	r := heapx(t, "scenario", file, "--json")
	if r.code != 0 || !strings.Contains(r.stderr, "heapx: action 4/4: wait article.card\n") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var d report.Doc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	leaks := reportPart(t, &d, "leaks")
	if len(leaks) != 1 || !strings.Contains(fmt.Sprint(leaks[0]["classes"]), "CardComponent 1") {
		t.Errorf("leaks %v, want one, a CardComponent (the browser's timing entries are not)", leaks)
	}
	if path := docSection(t, &d, "leaks", "Leak 1:"); !pathHas(path, "->componentCache", "Map @") || !pathHas(path, "", "CardComponent @") {
		t.Errorf("leak path %v, want componentCache's Map, then the CardComponent", path)
	}
	cs := docSection(t, &d, "page", "Collections that grew")
	if len(cs) != 1 || cs[0]["type"] != "Map" || cs[0]["held_by"] != "->componentCache" || cs[0]["after"].(float64)-cs[0]["before"].(float64) != 4 {
		t.Errorf("collections %v, want componentCache growing by 4", cs)
	}
	if ls := docSection(t, &d, "page", "Event listeners added"); len(ls) != 0 {
		t.Errorf("listeners %v, want none", ls)
	}
}

// A single-page app (ES modules, history routes, a modal closed by
// history.back()) whose profile modal subscribes to a store and never
// unsubscribes: the leak's path goes through the store's subscribers Set
// to the ProfileModal, the Set grows by one a repetition, the suspect is
// the store, and no new document was loaded. The four modals retain 9-10%
// of the page's heap (1.2 MB in Chromium 156, 1.1 MB in 148), so the
// suspects' threshold is 5%.
func TestScenarioSinglePageApp(t *testing.T) {
	base := scenarioPages(t)
	r := heapx(t, "scenario", "--url", base+"/spa/", "--setup", "click nav a[href=\"/spa/people\"]\nwait li a",
		"--action", "click a[href=\"/spa/people/3\"]\nwait .modal h2", "--back", "click .close-modal", "--json", "--threshold", "5")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var d report.Doc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Warnings) != 0 {
		t.Errorf("warnings %+v", d.Warnings)
	}
	if leaks := reportPart(t, &d, "leaks"); len(leaks) != 1 {
		t.Errorf("leaks %v, want one", leaks)
	}
	if path := docSection(t, &d, "leaks", "Leak 1:"); !pathHas(path, "->subscribers", "Set @") || !pathHas(path, "->this", "ProfileModal @") {
		t.Errorf("leak path %v, want the store's subscribers, then the ProfileModal", path)
	}
	cs := docSection(t, &d, "page", "Collections that grew")
	if len(cs) != 1 || cs[0]["type"] != "Set" || cs[0]["held_by"] != "->subscribers" || cs[0]["per_repetition"] != "+1" {
		t.Errorf("collections %v, want the subscribers Set growing by one", cs)
	}
	suspects := reportPart(t, &d, "suspects")
	if len(suspects) == 0 || !strings.Contains(fmt.Sprint(suspects[0]["held_by"]), "subscribers") || !strings.Contains(fmt.Sprint(suspects[0]["classes"]), "ProfileModal") {
		t.Errorf("suspects %v, want the subscribers holding the ProfileModals", suspects)
	}
}

// A page that removes its listener and its dialog passes the CI gates:
// no leak, no listener left, no collection grown, and the HTML report is
// written. Its click is slow (150 ms), so the browser keeps timing
// entries of its own from the action: they are no leak. The page is given
// as a file, which the browser opens as a file: URL.
func TestScenarioLeakFree(t *testing.T) {
	scenarioPages(t)
	html := filepath.Join(t.TempDir(), "report.html")
	r := heapx(t, "scenario", "--url", "../../capture/testdata/scenario/clean.html", "--action", "click #open\nwait .dialog", "--back", "click .dialog .close",
		"--fail-leaks", "1", "--fail-over", "50kB", "--html", html)
	if r.code != 0 || r.stdout != "wrote "+html+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", r.code, r.stdout, r.stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs("../../capture/testdata/scenario/clean.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"file://" + abs, "The page, repetition by repetition", "No event listener on the window, the document or its elements was left behind.",
		"No collection of the page grew by a multiple of the repetitions.", "DOM nodes, event listeners and documents are back to the baseline"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}
}

// Mistakes in the command line are errors that say what to give, before
// any browser starts.
func TestScenarioUsage(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "bad.scenario")
	if err := os.WriteFile(bad, []byte("url http://x/\naction:\n  hover #x\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--action", "click #a", "--back", "click #b"}, "a scenario needs the URL of the page to open (see heapx scenario --help)"},
		{[]string{"--url", "http://x/", "--back", "click #b"}, "a scenario needs the action to repeat"},
		{[]string{"--url", "http://x/", "--action", "click #a"}, "a scenario needs the steps that undo the action"},
		{[]string{"--url", "http://x/", "--action", "hover #a", "--back", "click #b"}, `--action: "hover #a" is not a step`},
		{[]string{"--url", "http://x/", "--action", "click #a", "--back", "click #b", "--repeat", "0"}, "--repeat must be 1 or more, not 0"},
		{[]string{"--url", "http://x/", "--action", "click #a", "--back", "click #b", "--browser", "/x", "--inspect", "localhost:9222"}, "give one"},
		{[]string{bad}, bad + `:3: "hover #x" is not a step`},
		{[]string{"--url", "http://x/", "--action", "click #a", "--back", "click #b", "--browser", "/no/such/chromium"}, "scenario: starting /no/such/chromium:"},
	} {
		r := heapx(t, append([]string{"scenario"}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("heapx scenario %q: exit %d, stdout %q, stderr %q; want %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}

// Ctrl-C (SIGINT) while the scenario runs ends it at once: heapx exits 1
// saying so, and the browser it started is gone with its profile, as are
// the snapshots' temporary directory and files.
func TestScenarioInterrupted(t *testing.T) {
	base := scenarioPages(t)
	// A short TMPDIR, for Chromium's to be in the browser's own directory
	// (a Unix socket's path is short).
	tmp, err := os.MkdirTemp("", "hx-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	// busy.html never comes to rest: heapx waits for it up to --settle.
	cmd := heapxCommand(t, "scenario", "--url", base+"/busy.html", "--action", "eval 1", "--back", "eval 2", "--settle", "60s")
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var said strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "heapx: open ") {
			time.Sleep(time.Second)
			cmd.Process.Signal(os.Interrupt)
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.HasSuffix(said.String(), "heapx: scenario: interrupted (SIGINT)\n") {
		t.Fatalf("%v, stderr:\n%s", err, said.String())
	}
	if left := dirFiles(t, tmp); len(left) != 0 {
		t.Errorf("left in TMPDIR: %q", left)
	}
}
