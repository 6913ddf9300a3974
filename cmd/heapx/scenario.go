package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/internal/progress"
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
	f.StringVar(&o.url, "url", "", "the page to open: a `URL`, or the path of a file (opened as file://)")
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
		file, err := capture.ReadScenarioFile(args[0])
		if err != nil {
			return so, err
		}
		*sc = *file
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
	sc.URL = capture.PageURL(sc.URL)
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
	prog := &progress.Phases{W: stderr}
	so.Progress = prog
	so.Said = func(s string) {
		prog.Finish()
		fmt.Fprintf(stderr, "heapx: %s\n", s)
	}
	if keep {
		so.Wrote = func(f capture.File) {
			prog.Finish()
			fmt.Fprintf(stderr, "heapx: wrote %s\n", f)
		}
	}
	res, err := capture.RunScenario(ctx, so)
	prog.Finish()
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

// scenarioReport reads the scenario's snapshots and composes their
// report (report.BuildScenario); snapshots not kept are named by their
// file names alone, the files being gone after the report.
func scenarioReport(so capture.ScenarioOptions, res *capture.ScenarioResult, opt report.Options, kept bool, stderr *os.File) (*report.Report, error) {
	read := func(path string) (report.Input, error) {
		in, err := loadInput(path, stderr)
		if err == nil && !kept {
			in.Path = filepath.Base(in.Path)
		}
		return in, err
	}
	where := so.Dir
	if !kept {
		where = "not kept (-o DIR keeps them)"
	}
	return report.BuildScenario(so, res, read, where, opt)
}
