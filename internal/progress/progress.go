// Package progress draws the progress bars of heapx's front ends on a
// terminal: a bar for a task of known size, a spinner for one of unknown
// size, the stages of opening a dump (Stages) and the phases of a capture
// (Phases). It draws nothing when its output is not a terminal, so pipes,
// CI logs and tests see only what the command prints.
package progress

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	hx "github.com/heapx/heapx"
)

// delay is how long a task runs before a bar appears: a bar that
// flashes for a fraction of a second on small files is noise.
const delay = time.Second

// Bar is a progress bar that shows itself only when its output is a
// terminal and the task outlasts a second. Otherwise (pipes, CI, tests)
// it writes nothing at all, so stderr carries only errors.
type Bar struct {
	cur      atomic.Int64
	total    atomic.Int64
	stop     chan struct{}
	finished chan struct{}
}

// Start starts a bar labelled label for a task of total units (bytes);
// a negative total draws a spinner instead.
func Start(w *os.File, label string, total int64) *Bar {
	p := &Bar{}
	p.total.Store(total)
	if !term.IsTerminal(int(w.Fd())) {
		return p
	}
	p.stop, p.finished = make(chan struct{}), make(chan struct{})
	go p.run(w, label)
	return p
}

// SetTotal gives a task started with an unknown total (a spinner) its
// total, when one is known before the bar appears, or a drawn bar a
// larger total (HPROF is read twice: its reader counts the file twice).
func (p *Bar) SetTotal(total int64) { p.total.Store(total) }

// Set records how many units are done; it is cheap enough for every
// callback of a reader.
func (p *Bar) Set(done int64) { p.cur.Store(done) }

// Update is SetTotal and Set at once: the callback of a writer that
// reports both (hsql.WriteOptions.Progress, fleet.Options.Progress).
func (p *Bar) Update(done, total int64) {
	p.SetTotal(total)
	p.Set(done)
}

// Done removes the bar, if one is drawn, and returns once the terminal is
// left clean for whatever the command prints next.
func (p *Bar) Done() {
	if p.stop == nil {
		return
	}
	close(p.stop)
	<-p.finished
}

func (p *Bar) run(w *os.File, label string) {
	defer close(p.finished)
	select {
	case <-p.stop:
		return
	case <-time.After(delay):
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

// Stages draws the stages heapx.Options.Progress reports, one at a time:
// a bar while reading, a spinner while analysing, labelled with the stage
// and Name, the file's name.
type Stages struct {
	W     *os.File
	Name  string
	stage hx.Stage
	bar   *Bar // nil between stages
}

// Set is a heapx.Options.Progress. A stage's first call comes before its
// work starts, so the calls that follow, from whatever goroutine, only
// read b.
func (b *Stages) Set(stage hx.Stage, done, total int64) {
	if b.bar == nil || stage != b.stage {
		b.Done()
		b.stage, b.bar = stage, Start(b.W, stage.String()+" "+b.Name, total)
	}
	if total > 0 {
		b.bar.SetTotal(total)
	}
	b.bar.Set(done)
}

// Done removes the bar of the stage that ended, if one is drawn.
func (b *Stages) Done() {
	if b.bar != nil {
		b.bar.Done()
		b.bar = nil
	}
}

// Phases is a capture.Progress: a capture's phases as bars on W, one bar
// per phase.
type Phases struct {
	W   *os.File
	mu  sync.Mutex
	bar *Bar
}

// Phase starts the bar of the next phase, removing the last one's.
func (p *Phases) Phase(label string, total int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Done()
	}
	p.bar = Start(p.W, label, total)
}

// Set records how much of the phase is done.
func (p *Phases) Set(done int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Set(done)
	}
}

// Finish removes the bar of the last phase, before a line is printed.
func (p *Phases) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Done()
		p.bar = nil
	}
}
