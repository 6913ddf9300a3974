package main

import (
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"
)

// progressDelay is how long a task runs before a bar appears: a bar that
// flashes for a fraction of a second on small files is noise.
const progressDelay = time.Second

// progress is a progress bar that shows itself only when its output is a
// terminal and the task outlasts progressDelay. Otherwise (pipes, CI, tests)
// it writes nothing at all, so stderr carries only errors.
type progress struct {
	cur      atomic.Int64
	total    atomic.Int64
	stop     chan struct{}
	finished chan struct{}
}

// startProgress starts a bar labelled label for a task of total units
// (bytes); a negative total draws a spinner instead.
func startProgress(w *os.File, label string, total int64) *progress {
	p := &progress{}
	p.total.Store(total)
	if !term.IsTerminal(int(w.Fd())) {
		return p
	}
	p.stop, p.finished = make(chan struct{}), make(chan struct{})
	go p.run(w, label)
	return p
}

// setTotal gives a task started with an unknown total (a spinner) its
// total, when one is known before the bar appears, or a drawn bar a
// larger total (HPROF is read twice: its reader counts the file twice).
func (p *progress) setTotal(total int64) { p.total.Store(total) }

// set records how many units are done; it is cheap enough for every
// callback of a reader.
func (p *progress) set(done int64) { p.cur.Store(done) }

// done removes the bar, if one is drawn, and returns once the terminal is
// left clean for whatever the command prints next.
func (p *progress) done() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.finished
}

func (p *progress) run(w *os.File, label string) {
	defer close(p.finished)
	select {
	case <-p.stop:
		return
	case <-time.After(progressDelay):
	}
	// mpb buffers the erasing of its last frame until its next one, and
	// a dropped bar can be the last: lines tells whether a bar was left
	// on the terminal, to be erased here. Not a terminal to mpb any more,
	// it is told to refresh itself anyway.
	lines := &lastFrame{w: w}
	cols, _, err := term.GetSize(int(w.Fd()))
	if err != nil || cols <= 0 {
		cols = 80
	}
	c := mpb.New(mpb.WithOutput(lines), mpb.WithAutoRefresh(), mpb.WithWidth(cols), mpb.WithRefreshRate(150*time.Millisecond))
	name, width := mpb.PrependDecorators(decor.Name(label, decor.WCSyncSpaceR)), mpb.BarWidth(40)
	var bar *mpb.Bar
	total := p.total.Load()
	if total < 0 {
		bar = c.AddSpinner(0, name, width)
	} else {
		bar = c.AddBar(total, name, width, mpb.AppendDecorators(decor.Percentage(decor.WCSyncSpace)))
	}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if n := p.total.Load(); total >= 0 && n > total {
				total = n
				bar.SetTotal(n, false)
			}
			bar.SetCurrent(p.cur.Load())
		case <-p.stop:
			// Abort, not complete: a bar with a known total cannot be
			// completed short of it, and the task is over either way.
			// Dropping the bar leaves the terminal line clean.
			bar.Abort(true)
			c.Wait()
			if lines.shown {
				_, _ = io.WriteString(w, eraseLine)
			}
			return
		}
	}
}

// eraseLine moves the cursor up a line and clears the screen from there:
// what mpb writes to take back a bar's line.
const eraseLine = "\x1b[1A\x1b[J"

// lastFrame passes mpb's output through and remembers whether the last
// write left a bar's line on the terminal (mpb writes each frame, the
// previous one's erasing first, in one write).
type lastFrame struct {
	w     io.Writer
	shown bool
}

func (f *lastFrame) Write(b []byte) (int, error) {
	if len(b) > 0 {
		f.shown = b[len(b)-1] == '\n'
	}
	return f.w.Write(b)
}
