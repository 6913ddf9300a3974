package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/heapx/heapx/humanize"
)

// Options say what Run captures, from which target, and where it writes.
type Options struct {
	// The target, one of Endpoint, Command and JVM.

	// Endpoint is a DevTools endpoint: HOST:PORT (or PORT on this
	// machine) of node --inspect or of a Chrome started with
	// --remote-debugging-port, or a target's ws:// URL. URL picks, among
	// the endpoint's targets, the one whose URL contains it (a page).
	Endpoint, URL string
	// Command is a node command line (node app.js args...) that Run
	// starts with its inspector on, and stops once the capture is done.
	// Its output (but for the lines the inspector adds) goes to
	// ProgramOutput.
	Command       []string
	ProgramOutput io.Writer
	// JVM is the process id of a Java virtual machine, dumped through
	// the JDK's jcmd.
	JVM int

	// What is captured: one heap snapshot (an HPROF dump for a JVM) by
	// default; a series of snapshots when Count > 1, Every or Grow is
	// set; an allocation timeline of Timeline; a sampling heap profile
	// of Sampling.

	// Count is the number of snapshots (default 1, or 3 with Every or
	// Grow). One is taken every Every, or whenever the heap has grown by
	// the fraction Grow (0.2 for 20%) since the last, and one for each
	// value on Signals.
	Count   int
	Every   time.Duration
	Grow    float64
	Signals <-chan os.Signal
	// Timeline and Sampling are how long allocations are tracked or
	// sampled; SamplingInterval is the mean bytes allocated between
	// samples (default 32 KiB).
	Timeline, Sampling time.Duration
	SamplingInterval   int

	// Output is the file to write (a series numbers it: app-1, app-2),
	// gzip-compressed when it ends in ".gz"; when it names a directory,
	// or is empty (the current directory), the file there is named
	// heap-TIME with the extension of what is captured.
	Output string
	// Timeout bounds each step of a V8 capture: listing the targets,
	// connecting, and each call, a snapshot's progress restarting it.
	// 0 means cdp.DefaultTimeout (30 s).
	Timeout time.Duration

	// Progress, if set, hears the phases of the capture.
	Progress Progress
	// Wrote, if set, is told of each file as soon as it is complete.
	Wrote func(File)
}

// Kind is what a capture writes.
type Kind int

// The kinds of capture.
const (
	KindSnapshots Kind = iota // heap snapshots: one, or a series
	KindTimeline              // an allocation timeline
	KindSampling              // a sampling heap profile
)

// Kind says what the options capture.
func (o *Options) Kind() Kind {
	switch {
	case o.Timeline > 0:
		return KindTimeline
	case o.Sampling > 0:
		return KindSampling
	}
	return KindSnapshots
}

// Snapshots is the number of snapshots the options take.
func (o *Options) Snapshots() int {
	switch {
	case o.Count > 0:
		return o.Count
	case o.Every > 0 || o.Grow > 0:
		return 3
	}
	return 1
}

// WaitsForSignals reports whether the snapshots are taken (also) on
// Signals: for a series, and for the one snapshot of a program Run
// starts, which is not worth taking before it has run. One snapshot of a
// running target is taken at once.
func (o *Options) WaitsForSignals() bool {
	if o.Kind() != KindSnapshots {
		return false
	}
	return o.Every > 0 || o.Grow > 0 || o.Snapshots() > 1 || len(o.Command) > 0
}

// Check says what is wrong with the options before anything starts: no
// target or two, a Command that is not node, kinds of capture mixed, an
// Output whose directory does not exist. Run calls it first.
func (o *Options) Check() error {
	if err := o.checkKinds(); err != nil {
		return err
	}
	if len(o.Command) > 0 && !isNode(o.Command[0]) {
		return fmt.Errorf("heapx starts Node.js programs (node app.js ...), not %q; start another launcher with node's --inspect yourself and use --inspect HOST:PORT", o.Command[0])
	}
	_, err := o.OutputPath(time.Now())
	return err
}

// checkKinds checks the target and what is captured, in the options' own
// terms (the command line says it in its flags' before calling Run).
func (o *Options) checkKinds() error {
	targets := 0
	for _, set := range []bool{o.Endpoint != "", len(o.Command) > 0, o.JVM != 0} {
		if set {
			targets++
		}
	}
	series := o.Count > 1 || o.Every > 0 || o.Grow > 0
	switch {
	case targets != 1:
		return errors.New("capture: Options need one target: Endpoint, Command or JVM")
	case o.Timeline > 0 && o.Sampling > 0, o.Kind() != KindSnapshots && series:
		return errors.New("capture: Options take one of a series of snapshots, a Timeline and a Sampling profile")
	case o.JVM != 0 && (o.Kind() != KindSnapshots || o.Grow > 0):
		return errors.New("capture: a JVM gives heap dumps, at a pace set by Every or Signals")
	case o.Count < 0 || o.Every < 0 || o.Grow < 0 || o.Timeline < 0 || o.Sampling < 0 || o.SamplingInterval < 0:
		return errors.New("capture: negative Options")
	case o.WaitsForSignals() && o.Signals == nil && o.Every == 0 && o.Grow == 0:
		return errors.New("capture: nothing says when to take the snapshots: set Every, Grow or Signals")
	}
	return nil
}

// extension is the file extension of what the options capture.
func (o *Options) extension() string {
	switch {
	case o.JVM != 0:
		return ".hprof"
	case o.Kind() == KindTimeline:
		return ".heaptimeline"
	case o.Kind() == KindSampling:
		return ".heapprofile"
	}
	return ".heapsnapshot"
}

// OutputPath is the file Run writes (the first of a series is
// SeriesPath(OutputPath, 1)): Output, or heap-TIME with the extension of
// what is captured (.heapsnapshot, .heaptimeline, .heapprofile, .hprof)
// in the directory Output names, or in the current one. Its directory
// must exist: a mistake is found before the program starts, not at its
// first snapshot.
func (o *Options) OutputPath(now time.Time) (string, error) {
	name := "heap-" + now.Format("20060102-150405") + o.extension()
	if o.Output == "" {
		return name, nil
	}
	if st, err := os.Stat(o.Output); err == nil && st.IsDir() {
		return filepath.Join(o.Output, name), nil
	}
	if strings.HasSuffix(o.Output, "/") || strings.HasSuffix(o.Output, string(filepath.Separator)) {
		return "", fmt.Errorf("%s: no such directory", o.Output)
	}
	dir := filepath.Dir(o.Output)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return "", fmt.Errorf("%s: no directory %s to write it in", o.Output, dir)
	}
	return o.Output, nil
}

// File is a file a capture wrote.
type File struct {
	Path string
	Size int64 // on disk
	// Timeline and Sampling describe an allocation timeline and a
	// sampling profile; nil for a snapshot.
	Timeline *TimelineStats
	Sampling *SamplingStats
}

// String says what the file holds, as heapx capture reports it: its path
// and size, and what a timeline or a profile recorded.
func (f File) String() string {
	size := humanize.Size(uint64(f.Size))
	switch {
	case f.Timeline != nil:
		st := f.Timeline
		return fmt.Sprintf("%s (%s): allocations tracked for %.1f s%s in %d intervals; live objects %s at the start, %s at the end (at most %s)",
			f.Path, size, st.Duration.Seconds(), finishedNote(st.Finished), st.Updates,
			humanize.Thousands(uint64(st.StartObjects)), humanize.Thousands(uint64(st.Objects)), humanize.Thousands(uint64(st.PeakObjects)))
	case f.Sampling != nil:
		st := f.Sampling
		return fmt.Sprintf("%s (%s): %s samples standing for %s allocated%s", f.Path, size, humanize.Thousands(uint64(st.Samples)), humanize.Size(uint64(st.Bytes)), finishedNote(st.Finished))
	}
	return fmt.Sprintf("%s (%s)", f.Path, size)
}

// finishedNote says, when it did, that the program finished before the
// time a timeline or profile was to take.
func finishedNote(finished bool) string {
	if finished {
		return " (until the program ended)"
	}
	return ""
}

// ParseGrowth reads a growth in percent ("20%", or "20") as the fraction
// Options.Grow takes (0.2); it must be above 0.
func ParseGrowth(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil {
		return 0, err
	}
	if v <= 0 {
		return 0, fmt.Errorf("growth %s is not above 0", s)
	}
	return v / 100, nil
}

// Result is what a capture wrote, in order: also when it failed, the
// files complete by then, which it keeps.
type Result struct {
	Files []File
}

// Paths are the files' paths.
func (r Result) Paths() []string {
	paths := make([]string, len(r.Files))
	for i, f := range r.Files {
		paths[i] = f.Path
	}
	return paths
}
