package capture

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/formats/sourcemap"
	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// These tests run scenarios in real headless Chromium on the pages of
// testdata/scenario, served by the test. They skip where no Chromium is
// installed, but fail under CI=true (.ci/run installs it).
// cmd/heapx/scenario_test.go runs the leak shapes through heapx scenario
// and its report.

// needBrowser returns the Chromium the tests drive.
func needBrowser(t *testing.T) string {
	t.Helper()
	return testfixtures.NeedTool(t, browserNames...)
}

// pageServer serves testdata/scenario, records what the pages log
// (/log?K=V) and never answers /hang.
type pageServer struct {
	*httptest.Server
	mu     sync.Mutex
	logged []string
}

func newPageServer(t *testing.T) *pageServer {
	s := &pageServer{}
	hang := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata/scenario")))
	mux.HandleFunc("/log", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.logged = append(s.logged, r.URL.RawQuery)
		s.mu.Unlock()
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(func() {
		close(hang)
		s.Close()
	})
	return s
}

func (s *pageServer) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.logged...)
}

// steps parses step texts for a test.
func steps(t *testing.T, texts ...string) []Step {
	t.Helper()
	st, err := ParseSteps(texts, "test")
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Every kind of step acts on the page as a person's would: goto loads a
// page relative to the one open, eval awaits its promise, type types
// each character (one no key types too) into the element, press sends
// Enter, Escape and a shortcut the page's keydown handlers see, wait
// waits for an element the page shows later. The three snapshots are
// written with their scripts side files and the page's source maps, and
// the counts say the page
// went back to its baseline.
func TestScenarioSteps(t *testing.T) {
	browser := needBrowser(t)
	srv := newPageServer(t)
	dir := t.TempDir()
	var said []string
	var wrote []string
	res, err := RunScenario(context.Background(), ScenarioOptions{
		Scenario: Scenario{
			URL:    srv.URL + "/clean.html",
			Setup:  steps(t, "goto form.html", "eval await new Promise(r => setTimeout(r, 50)); window.ready = 1", "press Control+b", "wait #shortcut"),
			Action: steps(t, "type #q héllo wörld", "press Enter", "wait li.done"),
			Back:   steps(t, "press Escape", "wait 50"),
			Repeat: 2,
		},
		Browser: browser, Dir: dir, Warmup: 1,
		Said:  func(s string) { said = append(said, s) },
		Wrote: func(f File) { wrote = append(wrote, filepath.Base(f.Path)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if typed := srv.log(); len(typed) != 3 || typed[0] != "typed=h%C3%A9llo%20w%C3%B6rld" {
		t.Errorf("the page was sent %q, want 3 times héllo wörld (warm-up and 2 repetitions)", typed)
	}
	if got := strings.Join(wrote, " "); got != "baseline.heapsnapshot target.heapsnapshot final.heapsnapshot" {
		t.Errorf("wrote %s", got)
	}
	for _, f := range res.Files {
		scripts, err := os.Open(v8.ScriptsPath(f.Path))
		if err != nil {
			t.Fatal(err)
		}
		list, err := v8.ReadScripts(scripts, scripts.Name())
		scripts.Close()
		found := false
		for _, s := range list {
			found = found || strings.HasSuffix(s.URL, "/form.html")
		}
		if err != nil || !found || f.Size < 100_000 {
			t.Errorf("%s (%d bytes): scripts %+v, %v", f.Path, f.Size, list, err)
		}
		// The page's source map is saved beside each snapshot, with its
		// script.
		maps, err := sourcemap.ReadSaved(f.Path, func(uint32, string) bool { return true })
		if err != nil || len(maps) != 1 || maps[0].MapURL != srv.URL+"/helper.js.map" || maps[0].Error != "" ||
			!strings.Contains(string(maps[0].Map), `"helper.ts"`) || !strings.Contains(maps[0].Source, "window.helper") {
			t.Errorf("%s: saved maps %+v, %v", f.Path, maps, err)
		}
	}
	wantSaid := "open " + srv.URL + "/clean.html|setup: goto form.html|setup: eval await new Promise(r => setTimeout(r, 50)); window.ready = 1|setup: press Control+b|setup: wait #shortcut|" +
		"warm-up action: type #q héllo wörld|warm-up action: press Enter|warm-up action: wait li.done|warm-up back: press Escape|warm-up back: wait 50|" +
		"snapshot " + filepath.Join(dir, "baseline.heapsnapshot") + "|action 1/2: type #q héllo wörld|action 1/2: press Enter|action 1/2: wait li.done|snapshot " + filepath.Join(dir, "target.heapsnapshot") +
		"|back 1/2: press Escape|back 1/2: wait 50|action 2/2: type #q héllo wörld|action 2/2: press Enter|action 2/2: wait li.done|back 2/2: press Escape|back 2/2: wait 50|snapshot " + filepath.Join(dir, "final.heapsnapshot")
	if got := strings.Join(said, "|"); got != wantSaid {
		t.Errorf("said:\n%s\nwant:\n%s", got, wantSaid)
	}
	var at []string
	for _, c := range res.Counts {
		at = append(at, c.At)
	}
	// The action adds an li and its text; back removes them. Blink keeps
	// one node of each typing (the input's editing state, it seems): at
	// most one node a repetition stays.
	if strings.Join(at, ",") != "baseline,target,repetition 1,repetition 2" || res.Counts[1].Nodes < res.Counts[0].Nodes+2 ||
		res.Counts[3].Nodes > res.Counts[0].Nodes+2 || res.Counts[3].Nodes >= res.Counts[1].Nodes || res.Counts[0].Documents != 1 || res.Counts[0].HeapUsed < 100_000 {
		t.Errorf("counts %+v", res.Counts)
	}
	if len(res.Listeners) != 0 || len(res.Collections) != 0 || len(res.Warnings) != 0 || !strings.HasPrefix(res.Browser, "Chrome/") {
		t.Errorf("listeners %+v, collections %+v, warnings %+v, browser %q", res.Listeners, res.Collections, res.Warnings, res.Browser)
	}
}

// The page's own measures find each leak shape of testdata/scenario: the
// DOM nodes a detached subtree keeps, the window listener added at each
// open (with its function's place), the collections that grow by one at
// each repetition (with their ids in the snapshots); and nothing on a
// page that cleans up.
func TestScenarioPageMeasures(t *testing.T) {
	browser := needBrowser(t)
	srv := newPageServer(t)
	for _, c := range []struct {
		page, action, back string
		nodes              int    // DOM nodes kept per repetition
		listener           string // the window listener kept, as "type line"
		collection         string // the type of the collection that grows
	}{
		{"detached.html", "click #open", "click #close", 81, "", "Array"},
		{"listeners.html", "click #open", "click .dialog .close", 5, "resize 15", ""},
		{"cache.html", "click #open", "click #hide", 0, "", "Map"},
		{"clean.html", "click #open", "click .dialog .close", 0, "", ""},
	} {
		t.Run(c.page, func(t *testing.T) {
			res, err := RunScenario(context.Background(), ScenarioOptions{
				Scenario: Scenario{URL: srv.URL + "/" + c.page, Action: steps(t, c.action), Back: steps(t, c.back), Repeat: 3},
				Browser:  browser, Dir: t.TempDir(), Warmup: 1,
			})
			if err != nil {
				t.Fatal(err)
			}
			base := res.Counts[0].Nodes
			for i, rep := range res.Counts[2:] {
				if want := base + (i+1)*c.nodes; rep.Nodes != want {
					t.Errorf("%s: %d DOM nodes, want %d", rep.At, rep.Nodes, want)
				}
			}
			var listeners []string
			for _, l := range res.Listeners {
				if l.Target == "window" && l.After-l.Before == 3 && strings.HasSuffix(l.Script, "/"+c.page) {
					listeners = append(listeners, l.Type+" "+strconv.Itoa(l.Line))
				}
			}
			if got := strings.Join(listeners, ","); got != c.listener || (c.listener == "" && len(res.Listeners) > 0) {
				t.Errorf("listeners %+v, want %q", res.Listeners, c.listener)
			}
			var grown []string
			for _, g := range res.Collections {
				if g.After-g.Before == 3 && g.HeapID != 0 {
					grown = append(grown, g.Type)
				}
			}
			if got := strings.Join(grown, ","); got != c.collection || len(grown) != len(res.Collections) {
				t.Errorf("collections %+v, want one %q", res.Collections, c.collection)
			}
		})
	}
}

// A step that cannot be done fails the scenario with the step, where it
// was written and why; the snapshots taken by then are kept and the
// browser is gone.
func TestScenarioStepFails(t *testing.T) {
	browser := needBrowser(t)
	srv := newPageServer(t)
	closed := closedURL(t)
	for _, c := range []struct {
		action, back string
		snapshots    int
		want         string
	}{
		{"click #nowhere", "click #close", 0, `warm-up action: click #nowhere (test): no element matches "#nowhere" after 1s`},
		{"click #open", "eval throw new TypeError('no way back')", 2, `back: eval throw new TypeError('no way back') (test): TypeError: no way back`},
		{"click #open", "click div[", 2, `back: click div[ (test): "div[" is not a CSS selector`},
		{"goto " + closed, "click #close", 0, "loading " + closed + ": net::ERR_CONNECTION_REFUSED"},
	} {
		warmup := 1
		if c.snapshots > 0 {
			warmup = 0
		}
		res, err := RunScenario(context.Background(), ScenarioOptions{
			Scenario: Scenario{URL: srv.URL + "/detached.html", Action: steps(t, c.action), Back: steps(t, c.back), Repeat: 1},
			Browser:  browser, Dir: t.TempDir(), Warmup: warmup, Timeout: time.Second,
		})
		if err == nil || !strings.Contains(err.Error(), c.want) || len(res.Files) != c.snapshots {
			t.Errorf("%s / %s: %v (%d snapshots); want %q and %d snapshots", c.action, c.back, err, len(res.Files), c.want, c.snapshots)
		}
	}
}

// closedURL is the URL of a port of this machine nothing listens on.
func closedURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	return "http://" + l.Addr().String() + "/"
}

// A page that never comes to rest (a clock in the DOM, a request never
// answered) is measured all the same, with a warning that says what kept
// it busy; a back step that loads a new document is warned about.
func TestScenarioWarnings(t *testing.T) {
	browser := needBrowser(t)
	srv := newPageServer(t)
	start := time.Now()
	res, err := RunScenario(context.Background(), ScenarioOptions{
		Scenario: Scenario{URL: srv.URL + "/busy.html", Action: steps(t, "eval 1"), Back: steps(t, "goto busy.html"), Repeat: 1},
		Browser:  browser, Dir: t.TempDir(), Settle: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 2 || res.Warnings[0].Code != WarnPageBusy || res.Warnings[1].Code != WarnNewDocument ||
		!strings.Contains(res.Warnings[0].Message, "the page did not come to rest within 1s: the DOM kept changing, 1 request(s) stayed in flight ("+srv.URL+"/hang)") ||
		!strings.Contains(res.Warnings[0].Message, "(so it was 3 times in all)") {
		t.Errorf("warnings %+v", res.Warnings)
	}
	if len(res.Files) != 3 || time.Since(start) > 30*time.Second {
		t.Errorf("%d snapshots in %v", len(res.Files), time.Since(start))
	}
}

// With --inspect a scenario opens a tab of its own in a running Chrome,
// and closes it at the end, leaving the Chrome's other pages alone.
func TestScenarioInRunningBrowser(t *testing.T) {
	browser := needBrowser(t)
	srv := newPageServer(t)
	b, err := StartBrowser(context.Background(), browser)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		b.Close()
		if _, err := os.Stat(b.dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the profile %s is left: %v", b.dir, err)
		}
	}()
	res, err := RunScenario(context.Background(), ScenarioOptions{
		Scenario: Scenario{URL: srv.URL + "/detached.html", Action: steps(t, "click #open"), Back: steps(t, "click #close")},
		Endpoint: b.Endpoint, Dir: t.TempDir(),
	})
	if err != nil || len(res.Files) != 3 || len(res.Collections) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	// Only pages count: Chromium 156 also lists its own browser_ui
	// targets (the omnibox popup), which no scenario opens.
	ts, err := cdp.ListTargets(context.Background(), b.Endpoint)
	var pages []cdp.Target
	for _, tg := range ts {
		if tg.Type == "page" {
			pages = append(pages, tg)
		}
	}
	if err != nil || len(pages) != 1 || pages[0].URL != "about:blank" {
		t.Errorf("pages left: %+v, %v", ts, err)
	}
}
