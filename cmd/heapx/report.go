package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// newReportCmd is `heapx report`, the main job: everything heapx can say
// about a heap in one document.
func newReportCmd(stderr *os.File) *cobra.Command {
	rf := &reportFlags{}
	c := &cobra.Command{
		Use:   "report FILE [BASELINE...]",
		Short: "Report what holds the memory and what looks like a leak (text, --json or --html)",
		Long: `Report on a heap dump: an overview, the leak suspects with the paths that
keep them alive, the top classes by retained size, duplicate strings and
detached DOM trees. Given earlier snapshots of the same program as
BASELINEs (oldest first), it also compares FILE with the last one, finds
what grows in every snapshot and, with two or more baselines, runs memlab's
leak detection (allocated between the first and the last baseline, still
alive in FILE).

--json prints the report as versioned JSON, --csv every part's rows as
CSV; --html PATH writes a single self-contained page with tables and
charts. --fail-over, --fail-growth and --fail-leaks make the command
exit with status 1 after the report when a leak is larger, the heap grew
more, or more leaks were found than allowed, so CI can gate on leaks.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("report needs a FILE argument (see heapx report --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opt, err := rf.options(len(args) - 1)
			if err != nil {
				return err
			}
			var r *report.Report
			if len(args) == 1 && isMemoryTrace(args[0]) {
				var t *query.Trace
				if t, err = openTrace(args[0], stderr); err == nil {
					r, err = report.BuildTrace(args[0], t, opt)
				}
			} else {
				r, err = buildReport(args, opt, stderr)
			}
			if err != nil {
				return err
			}
			return rf.write(cmd, stderr, r, args)
		},
	}
	rf.add(c.Flags())
	return c
}

// reportFlags are the flags of heapx report, which heapx scenario takes
// too: the output form, the tables' rows and the gates.
type reportFlags struct {
	asJSON, asCSV      bool
	htmlPath, failOver string
	opt                report.Options
}

// add defines the flags in f.
func (rf *reportFlags) add(f *pflag.FlagSet) {
	f.BoolVar(&rf.asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&rf.asCSV, "csv", false, "print every part of the report as CSV (raw numbers)")
	f.StringVar(&rf.htmlPath, "html", "", "write the report as a self-contained HTML page to `PATH` (- for stdout)")
	f.IntVarP(&rf.opt.Rows, "limit", "n", 15, "rows per table")
	f.Float64Var(&rf.opt.Threshold, "threshold", 10, "leak-suspect threshold, in percent of the heap")
	f.StringVar(&rf.failOver, "fail-over", "", "exit 1 when the leaked size is over `SIZE` (e.g. 10MB): the leaks' retained size with two or more baselines, the heap's growth with one, else the largest suspect's retained size")
	f.Float64Var(&rf.opt.FailGrowth, "fail-growth", 0, "exit 1 when the heap grew more than `PCT` percent since the first baseline")
	f.IntVar(&rf.opt.FailLeaks, "fail-leaks", 0, "exit 1 when `N` or more leaks are found (memlab's leak detection, with two BASELINEs)")
}

// options checks the flags and returns the report's options for a
// report with that many baselines. Failures name the limits by the flags
// that set them.
func (rf *reportFlags) options(baselines int) (report.Options, error) {
	opt := rf.opt
	opt.FailOverName, opt.FailGrowthName, opt.FailLeaksName = "--fail-over", "--fail-growth", "--fail-leaks"
	switch {
	case rf.asCSV && (rf.asJSON || rf.htmlPath != ""):
		return opt, errors.New("--csv cannot be used with --json or --html")
	case opt.Rows < 0:
		return opt, fmt.Errorf("-n must be 0 or more, not %d", opt.Rows)
	case opt.FailGrowth < 0:
		return opt, fmt.Errorf("--fail-growth must be 0 or more, not %g", opt.FailGrowth)
	case opt.FailGrowth > 0 && baselines < 1:
		return opt, errors.New("--fail-growth needs a BASELINE snapshot to compare with")
	case opt.FailLeaks < 0:
		return opt, fmt.Errorf("--fail-leaks must be 0 or more, not %d", opt.FailLeaks)
	case opt.FailLeaks > 0 && baselines < 2:
		return opt, errors.New("--fail-leaks needs two BASELINE snapshots (memlab's leak detection compares three)")
	}
	if rf.failOver != "" {
		n, err := humanize.ParseSize(rf.failOver)
		if err != nil {
			return opt, fmt.Errorf("--fail-over: %w", err)
		}
		opt.FailOver = n
	}
	return opt, nil
}

// write prints the report r of the files inputs in the form the flags
// ask (an HTML page is written, never over an input), and returns the
// gates' failure, for heapx to exit 1 after the report.
func (rf *reportFlags) write(cmd *cobra.Command, stderr *os.File, r *report.Report, inputs []string) error {
	out := cmd.OutOrStdout()
	if rf.asJSON || rf.asCSV || rf.htmlPath != "" {
		warnOnStderr(cmd.ErrOrStderr(), r.Warnings)
	}
	var err error
	switch {
	case rf.htmlPath == "-":
		err = r.Write(out, render.HTML)
	case rf.htmlPath != "":
		// An interrupt must not leave the temporary page behind.
		stop := cleanUpOnInterrupt(stderr, rf.htmlPath)
		err = r.WriteFile(rf.htmlPath, render.HTML, inputs...)
		stop()
		if err == nil && !rf.asJSON {
			_, err = fmt.Fprintf(out, "wrote %s\n", rf.htmlPath)
		}
	}
	if err != nil {
		return err
	}
	if rf.asJSON || rf.asCSV || rf.htmlPath == "" {
		if err := r.Write(out, outputForm(rf.asJSON, rf.asCSV)); err != nil {
			return err
		}
	}
	if len(r.Failures) > 0 {
		return fmt.Errorf("report gate failed: %s", strings.Join(r.Failures, "; "))
	}
	return nil
}

// buildReport reads the snapshots of args (FILE, then the BASELINEs) and
// composes their report.
func buildReport(args []string, opt report.Options, stderr *os.File) (*report.Report, error) {
	inputs, err := readSeries(args, func(path string) (report.Input, error) { return loadInput(path, stderr) })
	if err != nil {
		return nil, err
	}
	return report.Build(inputs[0], inputs[1:], opt)
}

// loadInput reads and analyses the dump at path for a report.
func loadInput(path string, stderr *os.File) (report.Input, error) {
	d, err := load(path, stderr, hx.Options{})
	if err != nil {
		return report.Input{}, err
	}
	defer d.bars.Done()
	return d.ReportInput()
}
