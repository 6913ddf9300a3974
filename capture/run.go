package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/formats/v8"
)

// exitWait is how long a program that finished (its debugger holds it)
// or lost its connection has to exit by itself once the session is over,
// so that its exit status and its last words are known.
const exitWait = 5 * time.Second

// errFinished is the cause of a series the program's end cut short.
var errFinished = errors.New("the program finished before the capture did")

// Run takes the capture the options say, writing each file as it
// streams in (never whole in memory) and telling Options.Wrote of it. It
// returns the files written, also when it fails: those complete by then
// are kept.
//
// A program Run starts (Options.Command) that ends before the capture is
// complete ends it with a *ProgramExit saying how (its status or signal,
// its last lines on stderr) and what was taken: the files written by
// then are kept. A timeline or a sampling profile of a program that
// ended normally (status 0) is complete: it covers the program's whole
// run (TimelineStats.Finished, SamplingStats.Finished say so); of one that
// failed, it is written and the error says how the program ended.
// Whatever ends a capture early (ctx, the program's end, a lost
// connection, a timeout), tracking and sampling are stopped in the target
// if it is still there, and no partial file is left.
func Run(ctx context.Context, o Options) (Result, error) {
	if err := o.Check(); err != nil {
		return Result{}, err
	}
	out, err := o.OutputPath(time.Now())
	if err != nil {
		return Result{}, err
	}
	if o.Progress == nil {
		o.Progress = noProgress{}
	}
	r := &run{o: o, out: out, start: time.Now()}
	if o.JVM != 0 {
		err = r.series(ctx, nil, func(ctx context.Context, path string) (File, error) {
			n, err := DumpJVM(ctx, o.JVM, path)
			return File{Path: path, Size: n}, err
		})
		return r.res, err
	}
	err = r.v8(ctx)
	return r.res, err
}

// run is one capture under way.
type run struct {
	o     Options
	out   string
	start time.Time
	res   Result
}

// wrote records a file written.
func (r *run) wrote(f File) {
	r.res.Files = append(r.res.Files, f)
	if r.o.Wrote != nil {
		r.o.Wrote(f)
	}
}

// v8 captures a V8 target: a program Run starts, or one at an endpoint.
func (r *run) v8(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var p *Process
	var s *V8
	var err error
	if len(r.o.Command) > 0 {
		if p, err = Launch(ctx, r.o.Command, r.o.ProgramOutput); err != nil {
			return err
		}
		// Stopped last: the session ends first, so that the program is
		// no longer tracked while it exits.
		defer p.Stop()
		r.start = time.Now()
		s, err = ConnectProcess(ctx, p, r.o.Timeout)
	} else {
		s, err = ConnectV8(ctx, r.o.Endpoint, r.o.URL, r.o.Timeout)
	}
	if err != nil {
		return r.explain(p, nil, err, nil)
	}
	closeSession := sync.OnceFunc(func() { s.Close() })
	defer closeSession()
	r.watch(ctx, cancel, s, p)
	err = r.take(ctx, s)
	return r.explain(p, s, err, closeSession)
}

// watch cancels the capture when the target ends: its connection is
// lost, its program exits, or (for snapshots; a timeline or a profile
// ends early by itself, with what it has) it finished its work.
func (r *run) watch(ctx context.Context, cancel context.CancelCauseFunc, s *V8, p *Process) {
	var exited <-chan struct{}
	if p != nil {
		exited = p.Exited()
	}
	var finished <-chan struct{}
	if r.o.Kind() == KindSnapshots {
		finished = s.Finished()
	}
	go func() {
		select {
		case <-s.Lost():
			cancel(s.Why())
		case <-finished:
			cancel(errFinished)
		case <-exited:
			cancel(errFinished)
		case <-ctx.Done():
		}
	}()
}

// explain turns the end of a capture (err, nil when it was complete) into
// its outcome. When a program Run started has finished or is gone, the
// session is closed so that it exits (node holds a finished program, and
// prints its uncaught error, until the debugger leaves), and its exit
// explains the end best.
func (r *run) explain(p *Process, s *V8, err error, closeSession func()) error {
	if p == nil {
		return err
	}
	finished := false
	if s != nil {
		select {
		case <-s.Finished():
			finished = true
		default:
		}
	}
	if err == nil && !finished {
		return nil // complete: the program is stopped
	}
	if closeSession != nil {
		closeSession()
	}
	wait := time.Duration(0)
	if finished || errors.Is(err, errFinished) || isLost(err) {
		wait = exitWait
	}
	pe := p.waitExit(wait, r.done())
	switch {
	case pe == nil:
		return err
	case err == nil && pe.Status == 0:
		return nil // a timeline or profile of the program's whole run
	}
	return pe
}

// done says what the capture had done, for a ProgramExit.
func (r *run) done() string {
	after := fmt.Sprintf("after %.1f s", time.Since(r.start).Seconds())
	switch r.o.Kind() {
	case KindTimeline:
		if len(r.res.Files) > 0 {
			return after + "; the timeline is written up to then"
		}
		return after + "; no timeline written"
	case KindSampling:
		if len(r.res.Files) > 0 {
			return after + "; the profile is written up to then"
		}
		return after + "; no profile written"
	}
	if n := r.o.Snapshots(); n > 1 || len(r.res.Files) > 0 {
		return fmt.Sprintf("%s; %d of %d snapshots taken", after, len(r.res.Files), n)
	}
	return after + "; no snapshot taken"
}

// take takes what the options say from the session, each V8 file with
// its scripts side file (Scripts.WriteBeside) when the target reports its
// scripts.
func (r *run) take(ctx context.Context, s *V8) error {
	scripts, err := s.RecordScripts(ctx)
	if err != nil && !isMethodNotFound(err) {
		return err
	}
	// beside writes path's side file; a file is kept with its side
	// files or not at all, as a timeline with its heap statistics (also
	// removed: others).
	beside := func(path string, others ...string) error {
		if scripts == nil {
			return nil
		}
		if err := scripts.WriteBeside(path); err != nil {
			for _, f := range append(others, path) {
				os.Remove(f)
			}
			return fmt.Errorf("writing its scripts side file: %w", err)
		}
		if err := scripts.SaveMaps(ctx, s, path); err != nil {
			for _, f := range append(others, path, v8.ScriptsPath(path)) {
				os.Remove(f)
			}
			return fmt.Errorf("writing its saved source maps: %w", err)
		}
		return nil
	}
	switch r.o.Kind() {
	case KindTimeline:
		st, err := s.Timeline(ctx, r.out, r.o.Timeline, r.o.Progress)
		if err == nil {
			err = beside(r.out, v8.HeapStatsPath(r.out))
		}
		if err != nil {
			return fmt.Errorf("%s not written: %w", r.out, err)
		}
		r.wrote(File{Path: r.out, Size: fileSize(r.out), Timeline: &st})
		return nil
	case KindSampling:
		interval := r.o.SamplingInterval
		if interval == 0 {
			interval = 32 << 10
		}
		st, err := s.Sampling(ctx, r.out, r.o.Sampling, interval, r.o.Progress)
		if err == nil {
			err = beside(r.out)
		}
		if err != nil {
			return fmt.Errorf("%s not written: %w", r.out, err)
		}
		r.wrote(File{Path: r.out, Size: fileSize(r.out), Sampling: &st})
		return nil
	}
	if err := s.RunProgram(ctx); err != nil {
		return err
	}
	var g Gauge
	if r.o.Grow > 0 {
		g = s
	}
	return r.series(ctx, g, func(ctx context.Context, path string) (File, error) {
		n, err := s.Snapshot(ctx, path, r.o.Progress)
		if err == nil {
			err = beside(path)
		}
		return File{Path: path, Size: n}, err
	})
}

// series takes the snapshots with take, named after the output, when
// the options say: at once for one snapshot of a running target, else
// as Series says.
func (r *run) series(ctx context.Context, g Gauge, take func(ctx context.Context, path string) (File, error)) error {
	count := r.o.Snapshots()
	one := func(ctx context.Context, i int) error {
		path := r.out
		if count > 1 {
			path = SeriesPath(r.out, i)
		}
		f, err := take(ctx, path)
		if err != nil {
			return fmt.Errorf("%s not written: %w", path, err)
		}
		r.wrote(f)
		return nil
	}
	if !r.o.WaitsForSignals() {
		return one(ctx, 1)
	}
	series := Series{Count: count, Every: r.o.Every, Grow: r.o.Grow, Signals: r.o.Signals}
	return series.Run(ctx, g, one)
}

// isLost reports whether err is the loss of the connection.
func isLost(err error) bool { return errors.Is(err, cdp.ErrClosed) }

// fileSize is the size of the file at path on disk; 0 if unknown.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}
