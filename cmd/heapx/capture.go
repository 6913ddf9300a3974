package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/progress"
)

// captureOptions are the flags of `heapx capture`.
type captureOptions struct {
	inspect, url string
	jvm          int
	out          string
	every        time.Duration
	count        int
	grow         string
	timeline     time.Duration
	sampling     time.Duration
	interval     string
	timeout      time.Duration
	report       bool
}

// newCaptureCmd is `heapx capture`: heap snapshots, allocation timelines
// and sampling profiles taken from a live program over the DevTools
// protocol (or, for a JVM, through jcmd).
func newCaptureCmd(stderr *os.File) *cobra.Command {
	var o captureOptions
	// --report runs `heapx report` itself: its flags are capture's too,
	// parsed into the report command that then runs on the series.
	report := newReportCmd(stderr)
	c := &cobra.Command{
		Use:   "capture (--inspect HOST:PORT | -- node app.js | --jvm PID)",
		Short: "Take heap snapshots, allocation timelines or sampling profiles of a live Node.js, Chrome or Java program",
		Long: `Capture the heap of a running program.

The target is one of:
  --inspect HOST:PORT   a Node.js process started with node --inspect, or a
                        Chrome started with --remote-debugging-port (pick
                        the page with --url TEXT, a part of its URL)
  -- node app.js ARGS   a Node.js program heapx starts with its inspector
                        on, and stops at the end
  --jvm PID             a Java virtual machine, through the JDK's jcmd

What is captured:
  (default)             one heap snapshot (.heapsnapshot; .hprof for a JVM)
  --every D --count N   a series of N snapshots, one every D
  --grow PCT            a series, one whenever the heap grew by PCT percent
  --count N             a series, one for each SIGUSR1 sent to heapx
  --timeline D          an allocation timeline of D (.heaptimeline): every
                        allocation's stack, as DevTools' "Allocation
                        instrumentation on timeline"; slows the program
  --sampling D          a sampling heap profile of D (.heapprofile), as
                        DevTools' "Allocation sampling"; cheap

Files are written as they stream in, never whole in memory, under -o PATH
(gzip-compressed when it ends in .gz; a directory gets the default
names); a series numbers them (app-1, app-2, ...). --report then runs
'heapx report' on the series, the last snapshot reported on and the
others as baselines: memlab's leak detection with three snapshots.

A program heapx starts shows its output as it runs. If it ends before
the capture is complete, heapx says how (its exit status or signal, its
last error line), keeps what was written, and exits with the program's
status (1 if it ended normally before a series was complete). A timeline
or profile of a program that ends normally covers its whole run.

An interrupt (Ctrl-C), the target's exit, a lost connection, or a target
silent for --timeout stops tracking and sampling in the target, removes
the file being written and exits 1.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			var argv []string
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				argv = args[dash:]
				args = args[:dash]
			}
			if len(args) > 0 {
				return fmt.Errorf("capture takes no FILE argument (got %q); put a command to start after --, as in heapx capture -- node app.js", args[0])
			}
			if err := checkReportFlags(cmd, o.report, report); err != nil {
				return err
			}
			return runCapture(cmd, o, argv, report, stderr)
		},
	}
	f := c.Flags()
	f.StringVar(&o.inspect, "inspect", "", "capture the target at the DevTools endpoint `HOST:PORT` (node --inspect, Chrome --remote-debugging-port; also PORT or a ws:// URL)")
	f.StringVar(&o.url, "url", "", "with --inspect: capture the target whose URL contains `TEXT` (a Chrome page)")
	f.IntVar(&o.jvm, "jvm", 0, "capture the Java virtual machine with process id `PID` (jcmd PID GC.heap_dump)")
	f.StringVarP(&o.out, "output", "o", "", "write to `PATH` (.gz: gzip-compressed); a series numbers the files (default heap-TIME.heapsnapshot, .heaptimeline, .heapprofile or .hprof)")
	f.DurationVar(&o.every, "every", 0, "take a snapshot every `D` (30s, 2m), the first after D")
	f.IntVar(&o.count, "count", 0, "take `N` snapshots (default 1; 3 with --every or --grow)")
	f.StringVar(&o.grow, "grow", "", "take a snapshot whenever the heap has grown by `PCT` percent (20%) since the last")
	f.DurationVar(&o.timeline, "timeline", 0, "record an allocation timeline for `D` (every allocation's stack; slows the program)")
	f.DurationVar(&o.sampling, "sampling", 0, "run the sampling heap profiler for `D`")
	f.StringVar(&o.interval, "sampling-interval", "32KiB", "with --sampling: the mean `BYTES` allocated between samples")
	f.DurationVar(&o.timeout, "timeout", cdp.DefaultTimeout, "give up on a target silent for `D` (a snapshot in progress is not silent)")
	f.BoolVar(&o.report, "report", false, "then run heapx report on the series (the last snapshot reported on, the others as baselines)")
	report.Flags().VisitAll(func(fl *pflag.Flag) {
		fl.Usage = "with --report: " + fl.Usage
		f.AddFlag(fl)
	})
	f.SetInterspersed(true)
	return c
}

// checkCapture validates the flags and turns them into the library's
// options.
func checkCapture(cmd *cobra.Command, o captureOptions, argv []string) (capture.Options, error) {
	targets := 0
	for _, set := range []bool{o.inspect != "", o.jvm != 0, len(argv) > 0} {
		if set {
			targets++
		}
	}
	co := capture.Options{Endpoint: o.inspect, URL: o.url, Command: argv, JVM: o.jvm, Output: o.out,
		Every: o.every, Timeline: o.timeline, Sampling: o.sampling, Timeout: o.timeout}
	series := o.every > 0 || o.grow != "" || cmd.Flags().Changed("count")
	switch {
	case targets != 1:
		return co, errors.New("capture needs one target: --inspect HOST:PORT, --jvm PID, or a command after -- (heapx capture -- node app.js)")
	case o.url != "" && o.inspect == "":
		return co, errors.New("--url picks a target of --inspect HOST:PORT")
	case o.jvm < 0:
		return co, fmt.Errorf("--jvm: %d is not a process id", o.jvm)
	case o.timeline < 0 || o.sampling < 0 || o.every < 0 || o.timeout <= 0:
		return co, errors.New("--every, --timeline, --sampling and --timeout take a positive duration (30s, 2m)")
	case o.timeline > 0 && o.sampling > 0:
		return co, errors.New("--timeline and --sampling cannot be used together")
	case co.Kind() != capture.KindSnapshots && series:
		return co, errors.New("--every, --grow and --count take snapshots; --timeline and --sampling record one file each")
	case co.Kind() != capture.KindSnapshots && o.jvm != 0:
		return co, errors.New("--timeline and --sampling need a V8 target (Node.js, Chrome); for a JVM heapx takes heap dumps")
	case co.Kind() == capture.KindSampling && o.report:
		return co, errors.New("--report needs heap snapshots; a sampling profile records allocations, not the heap")
	case o.grow != "" && o.jvm != 0:
		return co, errors.New("--grow measures a V8 heap (Node.js, Chrome); for a JVM use --every")
	case o.grow != "" && o.every > 0:
		return co, errors.New("--every and --grow cannot be used together")
	case cmd.Flags().Changed("count") && o.count < 1:
		return co, fmt.Errorf("--count must be 1 or more, not %d", o.count)
	case co.Kind() != capture.KindSampling && cmd.Flags().Changed("sampling-interval"):
		return co, errors.New("--sampling-interval is a flag of --sampling")
	}
	if o.grow != "" {
		g, err := capture.ParseGrowth(o.grow)
		if err != nil {
			return co, fmt.Errorf("--grow: %q is not a percentage above 0 (example: 20%%)", o.grow)
		}
		co.Grow = g
	}
	if cmd.Flags().Changed("count") {
		co.Count = o.count
	}
	interval, err := humanize.ParseSize(o.interval)
	if err != nil || interval == 0 || interval > 1<<30 {
		return co, fmt.Errorf("--sampling-interval: %q is not a size from 1 byte to 1 GiB", o.interval)
	}
	co.SamplingInterval = int(interval)
	if co.WaitsForSignals() && o.every == 0 && co.Grow == 0 && len(capture.SnapshotSignals) == 0 {
		return co, errors.New("this system has no SIGUSR1 to say when to take a snapshot: use --every or --grow")
	}
	return co, nil
}

// checkReportFlags refuses report's flags without --report.
func checkReportFlags(cmd *cobra.Command, asked bool, report *cobra.Command) error {
	var err error
	report.Flags().VisitAll(func(fl *pflag.Flag) {
		if !asked && err == nil && cmd.Flags().Changed(fl.Name) {
			err = fmt.Errorf("--%s is a flag of --report", fl.Name)
		}
	})
	return err
}

// exitCode is an error after whose message heapx exits with code: a
// program heapx started ended before the capture did, and heapx ends as
// the program did.
type exitCode struct {
	error
	code int
}

func (e exitCode) Unwrap() error { return e.error }

// runCapture is `heapx capture` once its arguments are parsed.
func runCapture(cmd *cobra.Command, o captureOptions, argv []string, report *cobra.Command, stderr *os.File) error {
	co, err := checkCapture(cmd, o, argv)
	if err != nil {
		return err
	}
	// What is written is said on stdout, unless the report is printed
	// there.
	var said io.Writer = cmd.OutOrStdout()
	if o.report {
		said = cmd.ErrOrStderr()
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopInterrupt := onInterrupt(cancel)
	defer stopInterrupt()
	prog := &progress.Phases{W: stderr}
	co.Progress, co.ProgramOutput = prog, stderr
	co.Wrote = func(f capture.File) {
		prog.Finish()
		sayWritten(said, stderr, f)
	}
	// SIGUSR1 takes a snapshot of a series at once, whatever else says
	// when; listened to from the start, so that an early one is not the
	// signal's default (exit).
	if co.WaitsForSignals() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, capture.SnapshotSignals...)
		defer signal.Stop(sigs)
		co.Signals = sigs
	}
	if err := co.Check(); err != nil {
		return err
	}
	if co.WaitsForSignals() {
		if co.Every == 0 && co.Grow == 0 {
			fmt.Fprintf(stderr, "heapx: waiting for SIGUSR1 (kill -USR1 %d) to take each of %d snapshot(s)\n", os.Getpid(), co.Snapshots())
		}
	}
	res, err := capture.Run(ctx, co)
	prog.Finish()
	// From here on an interrupt is an interrupt of heapx report.
	stopInterrupt()
	if err != nil {
		if len(res.Files) > 0 && co.Kind() == capture.KindSnapshots {
			fmt.Fprintf(stderr, "heapx: kept the snapshots written before the end: %s\n", strings.Join(res.Paths(), ", "))
		}
		var pe *capture.ProgramExit
		if errors.As(err, &pe) {
			return exitCode{fmt.Errorf("capture: %w", err), pe.ExitCode()}
		}
		if errors.Is(err, cdp.ErrTimeout) {
			return fmt.Errorf("capture: %w (--timeout %v)", err, o.timeout)
		}
		return fmt.Errorf("capture: %w", err)
	}
	if !o.report {
		return nil
	}
	// memlab's order: the last snapshot is reported on, the earlier ones
	// are its baselines, oldest first.
	written := res.Paths()
	files := append([]string{written[len(written)-1]}, written[:len(written)-1]...)
	report.SetOut(cmd.OutOrStdout())
	report.SetErr(cmd.ErrOrStderr())
	return report.RunE(report, files)
}

// sayWritten says a file was written, with what it holds.
func sayWritten(said io.Writer, stderr *os.File, f capture.File) {
	if f.Sampling != nil && !f.Sampling.Collected {
		fmt.Fprintln(stderr, "heapx: warning: this V8 cannot keep samples of objects the garbage collector freed (V8 11 and later can): the profile has only what was alive at its end")
	}
	fmt.Fprintf(said, "wrote %s\n", f)
}

// errInterrupted is the cause of a capture a signal ended.
var errInterrupted = errors.New("interrupted")

// onInterrupt cancels the capture on SIGINT, SIGTERM or SIGHUP, with the
// signal as the cause, so that it stops what it started in the target and
// removes the file it was writing before heapx exits. A second signal
// does not wait: it removes the temporary files and exits at once.
func onInterrupt(cancel context.CancelCauseFunc) (stop func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			name := map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[s]
			cancel(fmt.Errorf("%w (%s)", errInterrupted, name))
		case <-done:
			return
		}
		select {
		case <-sigs:
			formats.RemoveTemps()
			os.Exit(1)
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			signal.Stop(sigs)
		})
	}
}
