package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/formats/v8"
)

// ScenarioOptions say which scenario RunScenario runs, in which browser,
// and where the snapshots go.
type ScenarioOptions struct {
	Scenario Scenario
	// The browser: Endpoint, the HOST:PORT of a running Chrome's DevTools
	// (--remote-debugging-port), in which a new tab is opened for the
	// scenario and closed after; else the Chromium at Browser (FindBrowser
	// when empty), started headless with a throwaway profile.
	Endpoint, Browser string
	// Warmup is how many times the action and back run before the
	// baseline, unmeasured, as fuite does: what the page makes once, the
	// first time (its caches, the browser's lazily made objects, a
	// wrapper for an element it looks up), is then in the baseline and
	// not taken for a leak. 0 is memlab's order: the baseline right
	// after the setup.
	Warmup int
	// Dir is the existing directory the snapshots are written to, as
	// baseline.heapsnapshot, target.heapsnapshot and final.heapsnapshot,
	// each with its scripts side file (v8.ScriptsPath).
	Dir string
	// Timeout bounds each call, each step's wait for its element, and a
	// page's load; 0 means cdp.DefaultTimeout (30 s).
	Timeout time.Duration
	// Quiet is how long the page must be at rest (no request in flight,
	// no DOM mutation) to be settled; 0 means 500 ms. Settle bounds the
	// wait for it; 0 means 10 s.
	Quiet, Settle time.Duration
	// Progress, if set, hears the snapshots being built and written.
	Progress Progress
	// Said, if set, hears what the scenario is doing, a line at a time
	// ("action 1/5: click #open").
	Said func(string)
	// Wrote, if set, is told of each snapshot as soon as it is complete.
	Wrote func(File)
}

// ScenarioResult is what a scenario measured. Its snapshots are
// Files[0] (baseline), Files[1] (target) and Files[2] (final), those
// written by then when RunScenario failed.
type ScenarioResult struct {
	// Browser is the browser's name and version ("Chrome/148.0.7778.167").
	Browser string
	Files   []File
	// Counts are the page's DOM counts at the baseline, the target and
	// after each repetition.
	Counts []PageCounts
	// Listeners are the event listeners there were more of at the end
	// than at the baseline; Collections the collections that grew by a
	// multiple of the repetitions (fuite's rule).
	Listeners   []ListenerGrowth
	Collections []CollectionGrowth
	// Warnings say what may make the snapshots less telling: a page
	// that did not come to rest, a page that loaded a new document.
	Warnings []ScenarioWarning
}

// Paths are the snapshots' paths, in order.
func (r *ScenarioResult) Paths() []string {
	return Result{Files: r.Files}.Paths()
}

// ScenarioWarning is something a scenario saw that the reader of its
// report must know.
type ScenarioWarning struct {
	// Code is WarnPageBusy or WarnNewDocument, for scripts.
	Code    string
	Message string
}

// The codes of ScenarioWarning.
const (
	// WarnPageBusy: the page did not come to rest before a snapshot.
	WarnPageBusy = "page_busy"
	// WarnNewDocument: the page loaded a new document after the
	// baseline.
	WarnNewDocument = "page_new_document"
)

// The names of the three snapshots in ScenarioOptions.Dir.
const (
	BaselineName = "baseline.heapsnapshot"
	TargetName   = "target.heapsnapshot"
	FinalName    = "final.heapsnapshot"
)

// gcRounds is how many full collections run before a snapshot, a pause
// after each for the browser's own cleanup to run: memlab's number, for
// V8 to drop what only its feedback caches hold.
const (
	gcRounds = 6
	gcPause  = 100 * time.Millisecond
)

// RunScenario runs the scenario in a browser page in one DevTools session
// and takes memlab's three heap snapshots: the baseline after the setup
// (and the warm-up),
// the target after the first action, the final after the last back (the
// action and back run Repeat times), each once the page is at rest and
// after full garbage collections. Beside them it counts the page's DOM
// nodes and event listeners after each repetition, and which of its
// collections grew, as fuite does. The browser it started, or the tab it
// opened, is closed at the end.
func RunScenario(ctx context.Context, o ScenarioOptions) (*ScenarioResult, error) {
	if err := o.Scenario.Check(); err != nil {
		return nil, err
	}
	if o.Warmup < 0 {
		return nil, fmt.Errorf("a scenario warms up 0 or more times, not %d", o.Warmup)
	}
	if st, err := os.Stat(o.Dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%s: no directory to write the snapshots in", o.Dir)
	}
	o.defaults()
	res := &ScenarioResult{}
	wsURL, closePage, err := o.openPage(ctx, res)
	if err != nil {
		return res, err
	}
	defer closePage()
	conn, err := cdp.Dial(ctx, wsURL, o.Timeout)
	if err != nil {
		return res, err
	}
	s := &V8{conn: conn, timeout: o.Timeout, ended: make(chan struct{})}
	defer s.Close()
	r := &scenarioRun{o: o, res: res}
	err = r.run(ctx, s)
	for i, w := range res.Warnings {
		if w.Code == WarnPageBusy && r.busy > 1 {
			res.Warnings[i].Message += fmt.Sprintf(" (so it was %d times in all)", r.busy)
		}
	}
	return res, err
}

// defaults fills in the options left unset.
func (o *ScenarioOptions) defaults() {
	if o.Timeout <= 0 {
		o.Timeout = cdp.DefaultTimeout
	}
	if o.Quiet <= 0 {
		o.Quiet = 500 * time.Millisecond
	}
	if o.Settle <= 0 {
		o.Settle = 10 * time.Second
	}
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	if o.Said == nil {
		o.Said = func(string) {}
	}
}

// openPage starts the browser, or opens a tab in the one at Endpoint,
// and returns the page's WebSocket URL and what closes it.
func (o *ScenarioOptions) openPage(ctx context.Context, res *ScenarioResult) (string, func(), error) {
	if o.Endpoint != "" {
		hp := endpointHostPort(o.Endpoint)
		lctx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		t, err := cdp.OpenPage(lctx, hp, "about:blank")
		if err != nil {
			return "", nil, fmt.Errorf("%w (a scenario opens a tab of its own in a Chrome started with --remote-debugging-port)", err)
		}
		res.Browser = browserVersion(lctx, hp)
		return t.WebSocketURL, func() {
			cctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
			defer cancel()
			if cdp.ClosePage(cctx, hp, t.ID) == nil {
				waitClosed(cctx, hp, t.ID)
			}
		}, nil
	}
	path := o.Browser
	if path == "" {
		var err error
		if path, err = FindBrowser(); err != nil {
			return "", nil, err
		}
	}
	b, err := StartBrowser(ctx, path)
	if err != nil {
		return "", nil, err
	}
	lctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	res.Browser = b.Version(lctx)
	ts, err := cdp.ListTargets(lctx, b.Endpoint)
	if err == nil {
		var t cdp.Target
		if t, err = pickTarget(ts, b.Endpoint, "about:blank"); err == nil {
			return t.WebSocketURL, func() { b.Close() }, nil
		}
	}
	b.Close()
	return "", nil, err
}

// waitClosed waits until the page id is gone from the browser at
// hostPort: Chrome closes a page after answering /json/close, and the
// browser's user, or the next scenario, must not find it still open.
func waitClosed(ctx context.Context, hostPort, id string) {
	for {
		ts, err := cdp.ListTargets(ctx, hostPort)
		if err != nil {
			return
		}
		open := false
		for _, t := range ts {
			open = open || t.ID == id
		}
		if !open || sleep(ctx, pollEvery) != nil {
			return
		}
	}
}

// scenarioRun is a scenario under way.
type scenarioRun struct {
	o       ScenarioOptions
	res     *ScenarioResult
	p       *page
	names   *scriptNames
	scripts *Scripts
	// navigated is the main frame's document loads at the baseline.
	navigated int64
	// busy counts the times the page did not come to rest.
	busy int
}

// run drives the page through the scenario and takes the snapshots.
func (r *scenarioRun) run(ctx context.Context, s *V8) error {
	if err := r.start(ctx, s); err != nil {
		return err
	}
	sc := r.o.Scenario
	if err := r.steps(ctx, "setup", sc.Setup); err != nil {
		return err
	}
	for i := 1; i <= r.o.Warmup; i++ {
		if err := r.steps(ctx, r.label("warm-up action", i, r.o.Warmup), sc.Action); err != nil {
			return err
		}
		if err := r.steps(ctx, r.label("warm-up back", i, r.o.Warmup), sc.Back); err != nil {
			return err
		}
	}
	before, tracked, err := r.baseline(ctx)
	if err != nil {
		return err
	}
	n := sc.repeats()
	for i := 1; i <= n; i++ {
		if err := r.steps(ctx, r.label("action", i, n), sc.Action); err != nil {
			return err
		}
		if i == 1 {
			if err := r.snapshot(ctx, TargetName, "target"); err != nil {
				return err
			}
		}
		if err := r.steps(ctx, r.label("back", i, n), sc.Back); err != nil {
			return err
		}
		if i < n {
			if err := r.collect(ctx, 2); err != nil {
				return err
			}
			if err := r.count(ctx, fmt.Sprintf("repetition %d", i)); err != nil {
				return err
			}
		}
	}
	return r.final(ctx, before, tracked)
}

// label names a part of a repetition: "action", or "action 2/5".
func (r *scenarioRun) label(part string, i, n int) string {
	if n == 1 {
		return part
	}
	return fmt.Sprintf("%s %d/%d", part, i, n)
}

// start readies the session (scripts, network, page events) and opens
// the scenario's URL.
func (r *scenarioRun) start(ctx context.Context, s *V8) error {
	conn := s.conn
	r.names = &scriptNames{urls: map[string]string{}}
	conn.On("Debugger.scriptParsed", r.names.parsed)
	nav := watchNavigations(conn)
	for _, m := range []string{"Page.enable", "HeapProfiler.enable"} {
		if err := conn.Call(ctx, m, nil, nil); err != nil {
			return s.cause(ctx, err)
		}
	}
	net, err := watchNetwork(ctx, conn)
	if err != nil {
		return s.cause(ctx, err)
	}
	r.p = &page{V8: s, net: net, navigations: nav}
	scripts, err := s.RecordScripts(ctx)
	if err != nil {
		return err
	}
	r.scripts = scripts
	url := r.o.Scenario.URL
	r.o.Said("open " + url)
	if err := r.p.navigate(ctx, url); err != nil {
		return err
	}
	return r.settle(ctx, "the page")
}

// steps runs the steps of one part, then lets the page come to rest.
func (r *scenarioRun) steps(ctx context.Context, part string, steps []Step) error {
	for _, st := range steps {
		r.o.Said(part + ": " + st.Text)
		if err := r.p.do(ctx, st); err != nil {
			return fmt.Errorf("%s: %s: %w", part, st, err)
		}
	}
	if len(steps) == 0 {
		return nil
	}
	return r.settle(ctx, part)
}

// settle waits for the page to come to rest, warning once if it did not.
func (r *scenarioRun) settle(ctx context.Context, after string) error {
	w, err := r.p.settle(ctx, r.o.Quiet, r.o.Settle)
	if err != nil {
		return err
	}
	if w != "" {
		// One warning says it, however many times.
		if r.busy++; r.busy == 1 {
			r.warn(WarnPageBusy, "after "+after+", "+w)
		}
	}
	return nil
}

// warn adds a warning, once.
func (r *scenarioRun) warn(code, msg string) {
	w := ScenarioWarning{Code: code, Message: msg}
	for _, x := range r.res.Warnings {
		if x == w {
			return
		}
	}
	r.res.Warnings = append(r.res.Warnings, w)
}

// baseline measures the page after the setup and takes the baseline
// snapshot: its counts, its event listeners, its collections' sizes.
func (r *scenarioRun) baseline(ctx context.Context) (listenerSet, *collections, error) {
	if err := r.collect(ctx, 2); err != nil {
		return nil, nil, err
	}
	before, err := r.p.listeners(ctx, r.names)
	if err != nil {
		return nil, nil, err
	}
	tracked, err := r.p.trackCollections(ctx)
	if err != nil {
		return nil, nil, err
	}
	r.navigated = r.p.navigations.n.Load()
	return before, tracked, r.snapshot(ctx, BaselineName, "baseline")
}

// final takes the final snapshot and what grew since the baseline.
func (r *scenarioRun) final(ctx context.Context, before listenerSet, tracked *collections) error {
	newDocument := r.p.navigations.n.Load() != r.navigated
	if newDocument {
		r.warn(WarnNewDocument, "the page loaded a new document after the baseline (a goto, a link or a reload): what the action allocated went with the old one, so the snapshots cannot show it leak, nor the page's collections grow; steps that stay in the page (the app's own links and buttons) can")
	}
	if err := r.collect(ctx, 2); err != nil {
		return err
	}
	after, err := r.p.listeners(ctx, r.names)
	if err != nil {
		return err
	}
	r.res.Listeners = grownListeners(before, after)
	if err := r.snapshot(ctx, FinalName, fmt.Sprintf("repetition %d", r.o.Scenario.repeats())); err != nil {
		return err
	}
	if newDocument {
		// The sizes were of the old document's collections.
		r.p.release(trackingGroup)
		return nil
	}
	// After the snapshot, so that what the count makes is not in it.
	r.res.Collections, err = tracked.grown(ctx, r.p, r.o.Scenario.repeats())
	return err
}

// collect runs rounds full garbage collections, pausing after each.
func (r *scenarioRun) collect(ctx context.Context, rounds int) error {
	for range rounds {
		if err := r.p.CollectGarbage(ctx); err != nil {
			return r.p.cause(ctx, err)
		}
		if err := sleep(ctx, gcPause); err != nil {
			return err
		}
	}
	return nil
}

// count adds the page's counts now, labelled at.
func (r *scenarioRun) count(ctx context.Context, at string) error {
	c, err := r.p.counts(ctx, at)
	if err != nil {
		return err
	}
	r.res.Counts = append(r.res.Counts, c)
	return nil
}

// snapshot collects the garbage, counts the page (as at) and takes the
// snapshot name, with its scripts side file and the source maps of the
// page's scripts (Scripts.SaveMaps).
func (r *scenarioRun) snapshot(ctx context.Context, name, at string) error {
	// Messages the page logged hold what they show; DevTools keeps them
	// for its console, a page without DevTools does not.
	r.p.conn.Call(ctx, "Runtime.discardConsoleEntries", nil, nil)
	if err := r.collect(ctx, gcRounds); err != nil {
		return err
	}
	if err := r.count(ctx, at); err != nil {
		return err
	}
	path := filepath.Join(r.o.Dir, name)
	r.o.Said("snapshot " + path)
	n, err := r.p.Snapshot(ctx, path, r.o.Progress)
	if err == nil {
		// A snapshot is kept with its side files or not at all.
		if err = r.scripts.WriteBeside(path); err != nil {
			os.Remove(path)
		} else if err = r.scripts.SaveMaps(ctx, r.p.V8, path); err != nil {
			os.Remove(path)
			os.Remove(v8.ScriptsPath(path))
		}
	}
	if err != nil {
		return fmt.Errorf("%s not written: %w", path, err)
	}
	f := File{Path: path, Size: n}
	r.res.Files = append(r.res.Files, f)
	if r.o.Wrote != nil {
		r.o.Wrote(f)
	}
	return nil
}
