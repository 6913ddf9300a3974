package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// newReportCmd is `heapx report`, the main job: everything heapx can say
// about a heap in one document.
func newReportCmd(stderr *os.File) *cobra.Command {
	var asJSON, asCSV bool
	var htmlPath, failOver string
	// Failures name the limits by the flags that set them.
	opt := report.Options{FailOverName: "--fail-over", FailGrowthName: "--fail-growth"}
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
charts. --fail-over and --fail-growth
make the command exit with status 1 after the report when a leak is
larger or the heap grew more than allowed, so CI can gate on leaks.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("report needs a FILE argument (see heapx report --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if asCSV && (asJSON || htmlPath != "") {
				return errors.New("--csv cannot be used with --json or --html")
			}
			if opt.Rows < 0 {
				return fmt.Errorf("-n must be 0 or more, not %d", opt.Rows)
			}
			if opt.FailGrowth < 0 {
				return fmt.Errorf("--fail-growth must be 0 or more, not %g", opt.FailGrowth)
			}
			if failOver != "" {
				n, err := humanize.ParseSize(failOver)
				if err != nil {
					return fmt.Errorf("--fail-over: %w", err)
				}
				opt.FailOver = n
			}
			if opt.FailGrowth > 0 && len(args) < 2 {
				return errors.New("--fail-growth needs a BASELINE snapshot to compare with")
			}
			var r *report.Report
			var err error
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
			out := cmd.OutOrStdout()
			if asJSON || asCSV || htmlPath != "" {
				warnOnStderr(cmd.ErrOrStderr(), r.Warnings)
			}
			switch {
			case htmlPath == "-":
				err = r.Write(out, render.HTML)
			case htmlPath != "":
				// An interrupt must not leave the temporary page behind.
				stop := cleanUpOnInterrupt(stderr, htmlPath)
				err = formats.WriteFileAtomic(htmlPath, func(tmp string) error {
					f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_TRUNC, 0)
					if err != nil {
						return err
					}
					bw := bufio.NewWriter(f)
					if err := r.Write(bw, render.HTML); err != nil {
						f.Close()
						return err
					}
					if err := bw.Flush(); err != nil {
						f.Close()
						return err
					}
					return f.Close()
				}, args...)
				stop()
				if err == nil && !asJSON {
					_, err = fmt.Fprintf(out, "wrote %s\n", htmlPath)
				}
			}
			if err != nil {
				return err
			}
			if asJSON || asCSV || htmlPath == "" {
				if err := r.Write(out, outputForm(asJSON, asCSV)); err != nil {
					return err
				}
			}
			if len(r.Failures) > 0 {
				return fmt.Errorf("report gate failed: %s", strings.Join(r.Failures, "; "))
			}
			return nil
		},
	}
	f := c.Flags()
	f.BoolVar(&asJSON, "json", false, "print the report as JSON")
	f.BoolVar(&asCSV, "csv", false, "print every part of the report as CSV (raw numbers)")
	f.StringVar(&htmlPath, "html", "", "write the report as a self-contained HTML page to `PATH` (- for stdout)")
	f.IntVarP(&opt.Rows, "limit", "n", 15, "rows per table")
	f.Float64Var(&opt.Threshold, "threshold", 10, "leak-suspect threshold, in percent of the heap")
	f.StringVar(&failOver, "fail-over", "", "exit 1 when the leaked size is over `SIZE` (e.g. 10MB): the leaks' retained size with two or more baselines, the heap's growth with one, else the largest suspect's retained size")
	f.Float64Var(&opt.FailGrowth, "fail-growth", 0, "exit 1 when the heap grew more than `PCT` percent since the first baseline")
	return c
}

// buildReport reads the snapshots of args (FILE, then the BASELINEs) and
// composes their report.
func buildReport(args []string, opt report.Options, stderr *os.File) (*report.Report, error) {
	inputs, err := loadInputs(args, stderr)
	if err != nil {
		return nil, err
	}
	return report.Build(inputs[0], inputs[1:], opt)
}

// loadInputs reads and analyses the dumps of args (FILE, then the
// BASELINEs), in args' order. The baselines are read first, so the file
// reported on or explored is read last and a mistyped baseline fails
// before the long part.
func loadInputs(args []string, stderr *os.File) ([]report.Input, error) {
	inputs := make([]report.Input, len(args))
	for i := range args {
		j := (i + 1) % len(args)
		d, a, err := loadAndAnalyze(args[j], stderr)
		if err != nil {
			return nil, err
		}
		inputs[j] = report.Input{Path: d.Path(), Format: d.Format().Name, A: a}
	}
	return inputs, nil
}
