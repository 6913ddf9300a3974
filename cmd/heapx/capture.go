package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/humanize"
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
(gzip-compressed when it ends in .gz); a series numbers them (app-1,
app-2, ...). --report then runs 'heapx report' on the series, the last
snapshot reported on and the others as baselines: memlab's leak
detection with three snapshots. An interrupt (Ctrl-C), the target's exit
or a lost connection stops tracking and sampling in the target, removes
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
	f.BoolVar(&o.report, "report", false, "then run heapx report on the series (the last snapshot reported on, the others as baselines)")
	report.Flags().VisitAll(func(fl *pflag.Flag) {
		fl.Usage = "with --report: " + fl.Usage
		f.AddFlag(fl)
	})
	f.SetInterspersed(true)
	return c
}

// captureMode is what a capture writes.
type captureMode int

const (
	modeSnapshots captureMode = iota
	modeTimeline
	modeSampling
)

// checkCapture validates the flags and completes the defaults.
func checkCapture(cmd *cobra.Command, o *captureOptions, argv []string) (captureMode, float64, error) {
	targets := 0
	for _, set := range []bool{o.inspect != "", o.jvm != 0, len(argv) > 0} {
		if set {
			targets++
		}
	}
	if targets != 1 {
		return 0, 0, errors.New("capture needs one target: --inspect HOST:PORT, --jvm PID, or a command after -- (heapx capture -- node app.js)")
	}
	if o.url != "" && o.inspect == "" {
		return 0, 0, errors.New("--url picks a target of --inspect HOST:PORT")
	}
	if o.jvm < 0 {
		return 0, 0, fmt.Errorf("--jvm: %d is not a process id", o.jvm)
	}
	if o.timeline < 0 || o.sampling < 0 || o.every < 0 {
		return 0, 0, errors.New("--every, --timeline and --sampling take a positive duration (30s, 2m)")
	}
	mode := modeSnapshots
	switch {
	case o.timeline > 0 && o.sampling > 0:
		return 0, 0, errors.New("--timeline and --sampling cannot be used together")
	case o.timeline > 0:
		mode = modeTimeline
	case o.sampling > 0:
		mode = modeSampling
	}
	series := o.every > 0 || o.grow != "" || cmd.Flags().Changed("count")
	if mode != modeSnapshots && series {
		return 0, 0, errors.New("--every, --grow and --count take snapshots; --timeline and --sampling record one file each")
	}
	if mode != modeSnapshots && o.jvm != 0 {
		return 0, 0, errors.New("--timeline and --sampling need a V8 target (Node.js, Chrome); for a JVM heapx takes heap dumps")
	}
	if mode == modeSampling && o.report {
		return 0, 0, errors.New("--report needs heap snapshots; a sampling profile records allocations, not the heap")
	}
	var grow float64
	if o.grow != "" {
		if o.jvm != 0 {
			return 0, 0, errors.New("--grow measures a V8 heap (Node.js, Chrome); for a JVM use --every")
		}
		if o.every > 0 {
			return 0, 0, errors.New("--every and --grow cannot be used together")
		}
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(o.grow), "%"), 64)
		if err != nil || v <= 0 {
			return 0, 0, fmt.Errorf("--grow: %q is not a percentage above 0 (example: 20%%)", o.grow)
		}
		grow = v / 100
	}
	if !cmd.Flags().Changed("count") {
		o.count = 1
		if o.every > 0 || o.grow != "" {
			o.count = 3
		}
	}
	if o.count < 1 {
		return 0, 0, fmt.Errorf("--count must be 1 or more, not %d", o.count)
	}
	if mode != modeSampling && cmd.Flags().Changed("sampling-interval") {
		return 0, 0, errors.New("--sampling-interval is a flag of --sampling")
	}
	return mode, grow, nil
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

// runCapture is `heapx capture` once its arguments are parsed.
func runCapture(cmd *cobra.Command, o captureOptions, argv []string, report *cobra.Command, stderr *os.File) error {
	mode, grow, err := checkCapture(cmd, &o, argv)
	if err != nil {
		return err
	}
	interval, err := humanize.ParseSize(o.interval)
	if err != nil || interval == 0 || interval > 1<<30 {
		return fmt.Errorf("--sampling-interval: %q is not a size from 1 byte to 1 GiB", o.interval)
	}
	out := o.out
	if out == "" {
		ext := map[captureMode]string{modeSnapshots: ".heapsnapshot", modeTimeline: ".heaptimeline", modeSampling: ".heapprofile"}[mode]
		if o.jvm != 0 {
			ext = ".hprof"
		}
		out = "heap-" + time.Now().Format("20060102-150405") + ext
	}
	// Found out before the program starts, not at its first snapshot.
	if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: no directory %s to write it in", out, filepath.Dir(out))
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
	prog := &captureProgress{w: stderr}
	// SIGUSR1 takes a snapshot of a series at once, whatever else says
	// when; listened to from the start, so that an early one is not the
	// signal's default (exit). A program heapx starts is not worth a
	// snapshot before it has run: without --every or --grow, it waits
	// for the signal too; one snapshot of a running target does not.
	var sigs chan os.Signal
	if mode == modeSnapshots && !(o.every == 0 && grow == 0 && o.count == 1 && (o.inspect != "" || o.jvm != 0)) {
		if o.every == 0 && grow == 0 && len(capture.SnapshotSignals) == 0 {
			return errors.New("this system has no SIGUSR1 to say when to take a snapshot: use --every or --grow")
		}
		sigs = make(chan os.Signal, 1)
		signal.Notify(sigs, capture.SnapshotSignals...)
		defer signal.Stop(sigs)
	}

	var written []string
	if o.jvm != 0 {
		err = captureSeries(ctx, o, out, 0, nil, sigs, said, stderr, &written, func(ctx context.Context, path string) (int64, error) {
			return capture.DumpJVM(ctx, o.jvm, path)
		})
	} else {
		err = captureV8(ctx, cancel, o, argv, mode, out, grow, int(interval), sigs, prog, said, stderr, &written)
	}
	prog.finish()
	// From here on an interrupt is an interrupt of heapx report.
	stopInterrupt()
	if err != nil {
		if len(written) > 0 {
			fmt.Fprintf(stderr, "heapx: written before the capture failed: %s\n", strings.Join(written, ", "))
		}
		return fmt.Errorf("capture: %w", err)
	}
	if !o.report {
		return nil
	}
	// memlab's order: the last snapshot is reported on, the earlier ones
	// are its baselines, oldest first.
	files := append([]string{written[len(written)-1]}, written[:len(written)-1]...)
	report.SetOut(cmd.OutOrStdout())
	report.SetErr(cmd.ErrOrStderr())
	return report.RunE(report, files)
}

// captureV8 captures a V8 target, one heapx starts (argv) or one at an
// endpoint (--inspect).
func captureV8(ctx context.Context, cancel context.CancelCauseFunc, o captureOptions, argv []string, mode captureMode, out string, grow float64, interval int, sigs <-chan os.Signal, prog *captureProgress, said io.Writer, stderr *os.File, written *[]string) error {
	var s *capture.V8
	var p *capture.Process
	var exited <-chan struct{}
	var err error
	if len(argv) > 0 {
		if p, err = capture.Launch(ctx, argv, stderr); err != nil {
			return err
		}
		// Stopped last: the session ends first, so that the program is
		// no longer tracked while it exits.
		defer p.Stop()
		exited = p.Exited()
		s, err = capture.ConnectProcess(ctx, p)
	} else {
		s, err = capture.ConnectV8(ctx, o.inspect, o.url)
	}
	if err != nil {
		return err
	}
	defer s.Close()
	// The target's end cancels the capture, with the reason: a started
	// program's exit, which explains a lost connection best, or the lost
	// connection. A program that finished ends a series; a timeline or a
	// profile ends early by itself, with what it has.
	var finished <-chan struct{}
	if mode == modeSnapshots {
		finished = s.Finished()
	}
	go func() {
		select {
		case <-s.Lost():
			if p != nil {
				select {
				case <-exited:
					cancel(p.ExitError())
					return
				case <-time.After(time.Second):
				}
			}
			cancel(s.Why())
		case <-finished:
			cancel(s.Why())
		case <-exited:
			cancel(p.ExitError())
		case <-ctx.Done():
		}
	}()

	switch mode {
	case modeTimeline:
		st, err := s.Timeline(ctx, out, o.timeline, prog)
		if err != nil {
			return fmt.Errorf("%s not written: %w", out, err)
		}
		*written = append(*written, out)
		prog.finish()
		fmt.Fprintf(said, "wrote %s (%s): allocations tracked for %.1f s%s in %d intervals; live objects %s at the start, %s at the end (at most %s)\n",
			out, fileSize(out), st.Duration.Seconds(), finishedNote(st.Finished), st.Updates,
			humanize.Thousands(uint64(st.StartObjects)), humanize.Thousands(uint64(st.Objects)), humanize.Thousands(uint64(st.PeakObjects)))
		return nil
	case modeSampling:
		st, err := s.Sampling(ctx, out, o.sampling, interval, prog)
		if err != nil {
			return fmt.Errorf("%s not written: %w", out, err)
		}
		*written = append(*written, out)
		prog.finish()
		if !st.Collected {
			fmt.Fprintln(stderr, "heapx: warning: this V8 cannot keep samples of objects the garbage collector freed (V8 11 and later can): the profile has only what was alive at its end")
		}
		fmt.Fprintf(said, "wrote %s (%s): %s samples standing for %s allocated%s\n", out, fileSize(out), humanize.Thousands(uint64(st.Samples)), humanize.Size(uint64(st.Bytes)), finishedNote(st.Finished))
		return nil
	}
	if err := s.RunProgram(ctx); err != nil {
		return err
	}
	var g capture.Gauge
	if grow > 0 {
		g = s
	}
	return captureSeries(ctx, o, out, grow, g, sigs, said, stderr, written, func(ctx context.Context, path string) (int64, error) {
		n, err := s.Snapshot(ctx, path, prog)
		prog.finish()
		return n, err
	})
}

// captureSeries takes the snapshots of a series with take, naming them
// after out, and says each one written. Each signal on sigs takes one
// (without --every or --grow, only they do); without sigs, the one
// snapshot is taken at once.
func captureSeries(ctx context.Context, o captureOptions, out string, grow float64, g capture.Gauge, sigs <-chan os.Signal, said io.Writer, stderr *os.File, written *[]string, take func(ctx context.Context, path string) (int64, error)) error {
	one := func(ctx context.Context, i int) error {
		path := out
		if o.count > 1 {
			path = capture.SeriesPath(out, i)
		}
		if _, err := take(ctx, path); err != nil {
			return fmt.Errorf("%s not written: %w", path, err)
		}
		*written = append(*written, path)
		fmt.Fprintf(said, "wrote %s (%s)\n", path, fileSize(path))
		return nil
	}
	if sigs == nil {
		return one(ctx, 1)
	}
	if o.every == 0 && grow == 0 {
		fmt.Fprintf(stderr, "heapx: waiting for SIGUSR1 (kill -USR1 %d) to take each of %d snapshot(s)\n", os.Getpid(), o.count)
	}
	series := capture.Series{Count: o.count, Every: o.every, Grow: grow, Signals: sigs}
	return series.Run(ctx, g, one)
}

// finishedNote says, when it did, that the program finished before the
// time a timeline or profile was to take.
func finishedNote(finished bool) string {
	if finished {
		return " (until the program finished)"
	}
	return ""
}

// fileSize is the size of a file written, for the user.
func fileSize(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return humanize.Size(uint64(st.Size()))
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

// captureProgress shows a capture's phases as progress bars on stderr (a
// terminal only; see progress), one bar per phase.
type captureProgress struct {
	mu  sync.Mutex
	w   *os.File
	bar *progress
}

func (p *captureProgress) Phase(label string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.done()
	}
	p.bar = startProgress(p.w, label, total)
}

func (p *captureProgress) Set(done int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.set(done)
	}
}

// finish removes the bar of the last phase.
func (p *captureProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.done()
		p.bar = nil
	}
}
