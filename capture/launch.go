package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/heapx/heapx/capture/cdp"
)

// Process is a Node.js program heapx started with its inspector on, to
// capture its heap.
type Process struct {
	// WebSocketURL is the program's inspector, as node printed it.
	WebSocketURL string

	cmd     *exec.Cmd
	out     *lineFilter
	exited  chan struct{}
	waitErr error // set before exited is closed
}

// startTimeout is how long node may take to open its inspector.
const startTimeout = 30 * time.Second

// Launch starts argv, a node command line (node app.js args...), with
// node's inspector on a free local port (--inspect-brk=127.0.0.1:0), and
// returns once the inspector listens. The program waits before its first
// line until a debugger tells it to run (V8.Run), so that tracking or
// sampling started first sees all of it.
//
// The program's stdout and stderr go to out, less the lines node's
// inspector adds (where it listens, "Debugger attached."). It runs in a
// process group of its own, so a Ctrl-C meant for heapx reaches heapx
// alone, which stops what it started in the program before stopping the
// program (Stop).
func Launch(ctx context.Context, argv []string, out io.Writer) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command to start")
	}
	if !isNode(argv[0]) {
		return nil, fmt.Errorf("%q is not node: Launch starts Node.js programs", argv[0])
	}
	urls := make(chan string, 1)
	p := &Process{exited: make(chan struct{})}
	p.out = &lineFilter{out: out, found: urls}
	args := append([]string{"--inspect-brk=127.0.0.1:0"}, argv[1:]...)
	p.cmd = exec.Command(argv[0], args...)
	// No stdin: in a process group of its own, a program reading the
	// terminal would be stopped (SIGTTIN).
	p.cmd.Stdin = nil
	p.cmd.Stdout = out
	p.cmd.Stderr = p.out
	p.cmd.SysProcAttr = sysProcAttr()
	// A grandchild holding the output open must not keep Wait waiting.
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", argv[0], err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		p.out.flush()
		close(p.exited)
	}()
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case p.WebSocketURL = <-urls:
		return p, nil
	case <-p.exited:
		e := p.Exit("its inspector not yet listening")
		return nil, e
	case <-timer.C:
		p.Stop()
		return nil, fmt.Errorf("%s did not start its inspector within %v", argv[0], startTimeout)
	case <-ctx.Done():
		p.Stop()
		return nil, context.Cause(ctx)
	}
}

// isNode reports whether the program named is node itself, which takes
// --inspect-brk.
func isNode(prog string) bool {
	base := strings.TrimSuffix(strings.ToLower(filepath.Base(prog)), ".exe")
	return base == "node" || base == "nodejs"
}

// Exited is closed when the program has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Exit says how the program ended, with its last lines on stderr; nil
// while it runs. done says what the capture had done by then.
func (p *Process) Exit(done string) *ProgramExit {
	select {
	case <-p.exited:
	default:
		return nil
	}
	e := &ProgramExit{Program: filepath.Base(p.cmd.Path), Status: -1, Stderr: p.out.tail(), Done: done}
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		e.Status = 0
	case errors.As(p.waitErr, &ee):
		e.Status = ee.ExitCode()
		e.Signal = exitSignal(ee.ProcessState)
	}
	return e
}

// waitExit waits up to d for the program to exit by itself, as node does
// once the debugger that held it has gone, and says how it ended; nil if
// it is still running.
func (p *Process) waitExit(d time.Duration, done string) *ProgramExit {
	select {
	case <-p.exited:
		return p.Exit(done)
	case <-time.After(d):
		return nil
	}
}

// stopGrace is how long the program has to exit after SIGTERM.
const stopGrace = 5 * time.Second

// Stop ends the program, if it is still running: SIGTERM to its process
// group, then SIGKILL when it is still there after stopGrace.
func (p *Process) Stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	terminate(p.cmd.Process)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		kill(p.cmd.Process)
		<-p.exited
	}
}

// tailLines is how many of a program's last lines on stderr are kept, to
// say why it ended; maxLine bounds each.
const (
	tailLines  = 50
	maxLine    = 1024
	maxPartial = 64 << 10
)

// lineFilter passes a program's stderr on, line by line, but for the
// lines node's inspector adds; the first says where the inspector
// listens, which it sends on found. It keeps the last tailLines lines.
type lineFilter struct {
	mu      sync.Mutex
	out     io.Writer
	found   chan<- string
	partial []byte
	sent    bool
	last    []string // a ring of the last lines, next at next
	next    int
}

// tail returns the last lines the program wrote, oldest first.
func (f *lineFilter) tail() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append(append([]string(nil), f.last[f.next:]...), f.last[:f.next]...)
}

// keep adds a line to the ring.
func (f *lineFilter) keep(s string) {
	if len(s) > maxLine {
		s = s[:maxLine] + "…"
	}
	if len(f.last) < tailLines {
		f.last = append(f.last, s)
		return
	}
	f.last[f.next] = s
	f.next = (f.next + 1) % tailLines
}

func (f *lineFilter) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			f.partial = append(f.partial, b...)
			if len(f.partial) > maxPartial {
				// A line that never ends is passed on as it comes.
				f.line(f.partial)
				f.partial = f.partial[:0]
			}
			break
		}
		line := b[:i+1]
		if len(f.partial) > 0 {
			line = append(f.partial, line...)
			f.partial = f.partial[:0]
		}
		f.line(line)
		b = b[i+1:]
	}
	return n, nil
}

// line handles one whole line (with its newline).
func (f *lineFilter) line(line []byte) {
	s := strings.TrimRight(string(line), "\r\n")
	if u, ok := cdp.ListeningURL(s); ok && !f.sent {
		f.sent = true
		f.found <- u
	}
	if !cdp.InspectorNoise(s) {
		f.out.Write(line)
		f.keep(s)
	}
}

// flush passes on a last line without a newline.
func (f *lineFilter) flush() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.partial) > 0 {
		f.line(f.partial)
		f.partial = nil
	}
}
