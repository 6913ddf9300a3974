package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/report"
)

// scenarioFlags are the flags of `heapx scenario` but report's.
type scenarioFlags struct {
	url                   string
	setup, action, back   []string
	repeat, warmup        int
	browser, inspect, out string
	timeout, idle, settle time.Duration
}

// defaultRepeat is how many times the action and back run when neither
// the command line nor the scenario file says.
const defaultRepeat = 3

// newScenarioCmd is `heapx scenario`: drive a page through an action and
// its undo in headless Chromium, take memlab's three snapshots, and
// report what leaked.
func newScenarioCmd(stderr *os.File) *cobra.Command {
	var o scenarioFlags
	rf := &reportFlags{}
	c := &cobra.Command{
		Use:   "scenario [FILE] --url URL --action STEP --back STEP",
		Short: "Find what a web page leaks: repeat an action and its undo in headless Chromium, then report",
		Long: `Open a page in headless Chromium, do the setup, then the action and the
steps that undo it (back), --repeat times, and report what leaked, as
memlab does: a heap snapshot after the setup (the baseline), after the
first action (the target) and after the last back (the final), each once
the page is at rest and after full garbage collections. What the action
allocated and is still alive at the end is a leak, shown by the path
that holds it. Beside the heap, the report shows the page's DOM nodes and
event listeners after each repetition, the listeners added and never
removed, and the collections that grew at every repetition (fuite's
measures).

A step is one of:
  click SELECTOR        click the element (CSS selector) once it is shown
  type SELECTOR TEXT    focus the element and type TEXT, key by key
  press KEY             Enter, Escape, Tab, ArrowDown, a, Control+a, ...
  goto URL              load a URL (relative to the page's)
  wait SELECTOR|MS      wait for an element to be shown, or MS milliseconds
  eval JS               run JavaScript in the page, awaiting its promise
Give each with its own flag (--action 'click #open' --action 'wait .modal'),
or several in one, a line each; or write the scenario in FILE
(docs/scenario.md). The flags replace the file's parts.

heapx starts Chromium (chromium, chromium-browser or google-chrome on the
PATH, or --browser PATH) with a throwaway profile and DevTools on
127.0.0.1 only, or opens a tab in the Chrome at --inspect HOST:PORT.
The snapshots are kept in -o DIR (else removed after the report). The
report takes report's flags: --json, --html PATH, --fail-leaks N (exit 1
at N leaks or more), --fail-over SIZE, ...`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScenario(cmd, &o, rf, args, stderr)
		},
	}
	f := c.Flags()
	f.StringVar(&o.url, "url", "", "the page to open, `URL`")
	f.StringArrayVar(&o.setup, "setup", nil, "a `STEP` done once, before the baseline (repeat the flag for more)")
	f.StringArrayVar(&o.action, "action", nil, "a `STEP` of the action whose leaks are looked for (repeat the flag for more)")
	f.StringArrayVar(&o.back, "back", nil, "a `STEP` that undoes the action (repeat the flag for more)")
	f.IntVar(&o.repeat, "repeat", defaultRepeat, "run the action and back `N` times before the final snapshot")
	f.IntVar(&o.warmup, "warmup", 1, "run the action and back `N` times before the baseline, unmeasured (0: memlab's order)")
	f.StringVar(&o.browser, "browser", "", "the Chromium or Chrome to start, `PATH` (default: found on the PATH)")
	f.StringVar(&o.inspect, "inspect", "", "open a tab in the Chrome whose DevTools endpoint is at `HOST:PORT` instead of starting one")
	f.StringVarP(&o.out, "output", "o", "", "keep the snapshots in `DIR` (made if missing): baseline, target and final.heapsnapshot")
	f.DurationVar(&o.timeout, "timeout", cdp.DefaultTimeout, "give up on a step's element, a page load or the browser after `D`")
	f.DurationVar(&o.idle, "idle", 500*time.Millisecond, "the page is at rest after `D` with no request in flight and no DOM change")
	f.DurationVar(&o.settle, "settle", 10*time.Second, "wait at most `D` for the page to come to rest (then warn and go on)")
	rf.add(f)
	return c
}

// options turns the flags and the scenario file of args into the
// library's options.
func (o *scenarioFlags) options(cmd *cobra.Command, args []string) (capture.ScenarioOptions, error) {
	so := capture.ScenarioOptions{Browser: o.browser, Endpoint: o.inspect, Warmup: o.warmup, Timeout: o.timeout, Quiet: o.idle, Settle: o.settle}
	switch {
	case o.browser != "" && o.inspect != "":
		return so, errors.New("--browser starts a browser, --inspect uses a running one: give one")
	case o.timeout <= 0 || o.idle <= 0 || o.settle <= 0:
		return so, errors.New("--timeout, --idle and --settle take a positive duration (500ms, 10s)")
	case o.warmup < 0:
		return so, fmt.Errorf("--warmup must be 0 or more, not %d", o.warmup)
	case o.repeat < 1:
		return so, fmt.Errorf("--repeat must be 1 or more, not %d", o.repeat)
	}
	sc := &so.Scenario
	if len(args) == 1 {
		f, err := os.Open(args[0])
		if err != nil {
			return so, err
		}
		defer f.Close()
		if sc, err = capture.ParseScenario(f, args[0]); err != nil {
			return so, err
		}
		so.Scenario = *sc
		sc = &so.Scenario
	}
	if o.url != "" {
		sc.URL = o.url
	}
	for _, p := range []struct {
		flag   string
		values []string
		steps  *[]capture.Step
	}{{"--setup", o.setup, &sc.Setup}, {"--action", o.action, &sc.Action}, {"--back", o.back, &sc.Back}} {
		if len(p.values) == 0 {
			continue
		}
		steps, err := capture.ParseSteps(p.values, p.flag)
		if err != nil {
			return so, err
		}
		*p.steps = steps
	}
	if cmd.Flags().Changed("repeat") || sc.Repeat == 0 {
		sc.Repeat = o.repeat
	}
	if err := sc.Check(); err != nil {
		return so, fmt.Errorf("%w (see heapx scenario --help)", err)
	}
	return so, nil
}

// runScenario is `heapx scenario` once its arguments are parsed.
func runScenario(cmd *cobra.Command, o *scenarioFlags, rf *reportFlags, args []string, stderr *os.File) error {
	so, err := o.options(cmd, args)
	if err != nil {
		return err
	}
	opt, err := rf.options(2)
	if err != nil {
		return err
	}
	keep := o.out != ""
	if keep {
		if err := os.MkdirAll(o.out, 0o777); err != nil {
			return fmt.Errorf("-o: %w", err)
		}
		so.Dir = o.out
	} else {
		if so.Dir, err = os.MkdirTemp("", "heapx-scenario-"); err != nil {
			return err
		}
		defer os.RemoveAll(so.Dir)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopInterrupt := onInterrupt(cancel)
	defer stopInterrupt()
	prog := &captureProgress{w: stderr}
	so.Progress = prog
	so.Said = func(s string) {
		prog.finish()
		fmt.Fprintf(stderr, "heapx: %s\n", s)
	}
	if keep {
		so.Wrote = func(f capture.File) {
			prog.finish()
			fmt.Fprintf(stderr, "heapx: wrote %s (%s)\n", f.Path, humanize.Size(uint64(f.Size)))
		}
	}
	res, err := capture.RunScenario(ctx, so)
	prog.finish()
	stopInterrupt()
	if err != nil {
		if keep && res != nil && len(res.Files) > 0 {
			fmt.Fprintf(stderr, "heapx: kept the snapshots written before the end in %s\n", so.Dir)
		}
		if errors.Is(err, cdp.ErrTimeout) {
			return fmt.Errorf("scenario: %w (--timeout %v)", err, o.timeout)
		}
		return fmt.Errorf("scenario: %w", err)
	}
	r, err := scenarioReport(so, res, opt, keep, stderr)
	if err != nil {
		return err
	}
	return rf.write(cmd, stderr, r, res.Paths())
}

// scenarioReport reads the scenario's snapshots and composes their report:
// report's, memlab's order (the final reported on, the baseline and the
// target its baselines), with what the scenario measured of the page.
func scenarioReport(so capture.ScenarioOptions, res *capture.ScenarioResult, opt report.Options, kept bool, stderr *os.File) (*report.Report, error) {
	paths := res.Paths()
	inputs, err := loadInputs([]string{paths[2], paths[0], paths[1]}, stderr)
	if err != nil {
		return nil, err
	}
	if !kept {
		// The files are gone after the report: it names them alone.
		for i := range inputs {
			inputs[i].Path = filepath.Base(inputs[i].Path)
		}
	}
	r, err := report.Build(inputs[0], inputs[1:], opt)
	if err != nil {
		return nil, err
	}
	sc := so.Scenario
	where := so.Dir
	if !kept {
		where = "not kept (-o DIR keeps them)"
	}
	r.Overview = append([][2]string{
		{"Page", sc.URL},
		{"Browser", res.Browser},
		{"Scenario", scenarioText(sc, so.Warmup)},
		{"Snapshots", where},
	}, r.Overview...)
	for _, w := range res.Warnings {
		r.Warnings = append(r.Warnings, query.Warning{Code: w.Code, Message: w.Message})
	}
	page, err := pagePart(res, sc, inputs[0], opt.Rows)
	if err != nil {
		return nil, err
	}
	// After memlab's leaks, which lead.
	at := 0
	if len(r.Parts) > 0 && r.Parts[0].Key == "leaks" {
		at = 1
	}
	r.Parts = append(r.Parts[:at], append([]report.Part{{Key: "page", Title: "The page, repetition by repetition", Result: page}}, r.Parts[at:]...)...)
	return r, nil
}

// scenarioText says what the scenario did: "setup 1 step, action 2
// steps, back 1 step; 1 warm-up, 3 repetitions".
func scenarioText(sc capture.Scenario, warmup int) string {
	steps := func(n int) string {
		if n == 1 {
			return "1 step"
		}
		return fmt.Sprintf("%d steps", n)
	}
	s := fmt.Sprintf("action %s, back %s; ", steps(len(sc.Action)), steps(len(sc.Back)))
	if len(sc.Setup) > 0 {
		s = fmt.Sprintf("setup %s, ", steps(len(sc.Setup))) + s
	}
	return s + fmt.Sprintf("%d warm-up, %d repetition(s)", warmup, max(sc.Repeat, 1))
}

// pagePart is what the page's own counts say: its DOM and heap after
// each repetition, the event listeners added and not removed, and the
// collections that grew at every repetition, each with the path that
// holds it in the final snapshot.
func pagePart(res *capture.ScenarioResult, sc capture.Scenario, final report.Input, rows int) (*query.Result, error) {
	n := max(sc.Repeat, 1)
	r := &query.Result{Query: "scenario"}
	r.Sections = append(r.Sections, countsSection(res.Counts, n))
	r.Sections = append(r.Sections, listenersSection(res.Listeners, n, sc.URL, rows))
	cs, paths, err := collectionsSections(res.Collections, n, final, rows)
	if err != nil {
		return nil, err
	}
	r.Sections = append(append(r.Sections, cs), paths...)
	return r, nil
}

// countsSection is the page's counts at each point, with what grew at
// every repetition.
func countsSection(counts []capture.PageCounts, n int) *query.Section {
	t := &query.Table{Columns: []query.Column{{Key: "at", Title: "After", Kind: query.Text},
		{Key: "documents", Title: "Documents", Kind: query.Count}, {Key: "nodes", Title: "DOM nodes", Kind: query.Count},
		{Key: "listeners", Title: "JS event listeners", Kind: query.Count}, {Key: "heap_used", Title: "JS heap used", Kind: query.Bytes}}}
	var base capture.PageCounts
	var reps []capture.PageCounts
	for _, c := range counts {
		t.Rows = append(t.Rows, []any{c.At, c.Documents, c.Nodes, c.Listeners, uint64(c.HeapUsed)})
		switch {
		case c.At == "baseline":
			base = c
		case strings.HasPrefix(c.At, "repetition "):
			reps = append(reps, c)
		}
	}
	s := &query.Section{Heading: "DOM and JavaScript heap (after full garbage collections)", Table: t}
	var grew []string
	for _, m := range []struct {
		what string
		get  func(capture.PageCounts) int
	}{{"DOM nodes", func(c capture.PageCounts) int { return c.Nodes }},
		{"JS event listeners", func(c capture.PageCounts) int { return c.Listeners }},
		{"documents", func(c capture.PageCounts) int { return c.Documents }}} {
		if note := growthNote(m.what, base, reps, m.get); note != "" {
			grew = append(grew, note)
		}
	}
	if len(grew) == 0 && len(reps) == n {
		grew = append(grew, "DOM nodes, event listeners and documents are back to the baseline's counts or below after the repetitions.")
	}
	s.Notes = grew
	return s
}

// growthNote says how a count grew from the baseline over the
// repetitions: at every one, or overall; "" when it did not.
func growthNote(what string, base capture.PageCounts, reps []capture.PageCounts, get func(capture.PageCounts) int) string {
	if len(reps) == 0 {
		return ""
	}
	first, last := get(base), get(reps[len(reps)-1])
	if last <= first {
		return ""
	}
	every := true
	prev := first
	for _, c := range reps {
		if get(c) <= prev {
			every = false
		}
		prev = get(c)
	}
	per := perRepetition(last-first, len(reps))
	if every {
		return fmt.Sprintf("%s grew at every repetition: %s at the baseline, %s after %d (%s per repetition).",
			upperFirst(what), humanize.Thousands(uint64(first)), humanize.Thousands(uint64(last)), len(reps), per)
	}
	return fmt.Sprintf("%s grew from %s at the baseline to %s after %d repetitions, not at every one.",
		upperFirst(what), humanize.Thousands(uint64(first)), humanize.Thousands(uint64(last)), len(reps))
}

// perRepetition is d over n, as a count: "+81", "+0.7".
func perRepetition(d, n int) string {
	if d%n == 0 {
		return fmt.Sprintf("%+d", d/n)
	}
	return fmt.Sprintf("%+.1f", float64(d)/float64(n))
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// listenersSection lists the event listeners added and not removed.
func listenersSection(ls []capture.ListenerGrowth, n int, pageURL string, rows int) *query.Section {
	t := &query.Table{Columns: []query.Column{{Key: "target", Title: "On", Kind: query.Text}, {Key: "event", Title: "Event", Kind: query.Text},
		{Key: "baseline", Title: "Baseline", Kind: query.Count}, {Key: "final", Title: "Final", Kind: query.Count},
		{Key: "per_repetition", Title: "Per repetition", Kind: query.Text}, {Key: "handler", Title: "Handler", Kind: query.Text},
		{Key: "defined_at", Title: "Defined at", Kind: query.Text}}}
	origin := ""
	if u, err := url.Parse(pageURL); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
	}
	for i, l := range ls {
		if rows > 0 && i == rows {
			break
		}
		at := ""
		if l.Script != "" {
			at = fmt.Sprintf("%s:%d:%d", strings.TrimPrefix(l.Script, origin), l.Line, l.Column)
		}
		t.Rows = append(t.Rows, []any{l.Target, l.Type, l.Before, l.After, perRepetition(l.After-l.Before, n), l.Handler, at})
	}
	s := &query.Section{Heading: "Event listeners added and not removed (on the window, the document and its elements)", Table: t}
	if len(ls) == 0 {
		s.Notes = []string{"No event listener on the window, the document or its elements was left behind."}
	} else if rows > 0 && len(ls) > rows {
		s.Notes = []string{fmt.Sprintf("%d of %d kinds of listener shown (-n 0 shows all).", rows, len(ls))}
	}
	return s
}

// maxCollectionPaths is how many growing collections get their retainer
// path shown.
const maxCollectionPaths = 3

// collectionsSections lists the collections that grew at every
// repetition, then the retainer path of the first few in the final
// snapshot: what holds them.
func collectionsSections(cs []capture.CollectionGrowth, n int, final report.Input, rows int) (*query.Section, []*query.Section, error) {
	t := &query.Table{Columns: []query.Column{{Key: "id", Title: "Id", Kind: query.ID}, {Key: "type", Title: "Type", Kind: query.Text},
		{Key: "before", Title: "Baseline", Kind: query.Count}, {Key: "after", Title: "Final", Kind: query.Count},
		{Key: "per_repetition", Title: "Per repetition", Kind: query.Text}, {Key: "held_by", Title: "Held by", Kind: query.Text},
		{Key: "preview", Title: "First item", Kind: query.Text}}}
	a := final.A
	sn := query.Snapshot{Path: final.Path, Analysis: a}
	var paths []*query.Section
	for i, c := range cs {
		if rows > 0 && i == rows {
			break
		}
		held := ""
		if node, ok := a.NodeByID(c.HeapID); ok && c.HeapID != 0 {
			if ps := a.Paths(node, analysis.PathOptions{K: 1}); len(ps) > 0 {
				steps := ps[0].Steps
				held = query.Shorten(analysis.EdgeString(a.Graph, steps[len(steps)-1].Edge), query.MaxNameWidth)
			}
			if len(paths) < maxCollectionPaths {
				p, err := query.Lookup("paths").Exec(&query.Context{Snapshots: []query.Snapshot{sn}, Values: map[string]any{"id": fmt.Sprintf("@%d", c.HeapID), "limit": 1}})
				if err != nil {
					return nil, nil, err
				}
				if len(p.Sections) > 0 {
					s := p.Sections[0]
					s.Heading = fmt.Sprintf("Collection %d: %s @%d (%s), its retainer path in the final snapshot", i+1, c.Type, c.HeapID, c.Preview)
					paths = append(paths, s)
				}
			}
		}
		t.Rows = append(t.Rows, []any{c.HeapID, c.Type, c.Before, c.After, perRepetition(c.After-c.Before, n), held, c.Preview})
	}
	s := &query.Section{Heading: fmt.Sprintf("Collections that grew by a multiple of the %d repetition(s) (Arrays, Maps, Sets, plain Objects that existed at the baseline)", n), Table: t}
	if len(cs) == 0 {
		s.Notes = []string{"No collection of the page grew by a multiple of the repetitions."}
	}
	return s, paths, nil
}
