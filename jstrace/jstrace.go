// Package jstrace runs a Node.js program with its JavaScript instrumented
// as it loads and records its memory trace (docs/trace.md, read by
// formats/memtrace): the seed-004 "deep mode" behind `heapx trace`.
//
// The instrumenter and the runtime are JavaScript, embedded here and
// loaded into the program with `node --require` (through NODE_OPTIONS): an
// acorn parser (vendored, js/acorn.mjs, MIT) finds the places to log and
// the instrumenter splices calls into the original text, so every token
// keeps its line and the trace's positions are the original file's.
// CommonJS modules are instrumented in Module.prototype._compile, ES
// modules in a module.register load hook. The runtime writes the trace in
// chunks to file descriptor 3, a pipe Run reads while the program runs,
// with control messages (a signal the program saw, how it ended) between
// them.
//
// Why JavaScript and not a Go parser: tdewolff/parse, the only Go parser
// that reads all of ES2022 and prints, keeps no source positions on its
// AST and reprints the whole file (positions would need source maps), and
// a Go instrumenter would need the loader to call heapx for every file;
// acorn gives exact positions and runs in the process that loads the code
// (docs/benchmarks.md, "heapx trace", has the measurements).
package jstrace

import (
	"bufio"
	"context"
	"embed"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/memtrace"
)

//go:embed js/*.mjs js/*.cjs js/acorn.LICENSE
var scripts embed.FS

// Options are Run's settings.
type Options struct {
	// Include lists path globs (** any path, * any name part) of files to
	// instrument even inside node_modules, which is left out otherwise.
	Include []string
	// Stdin, Stdout and Stderr are the program's; nil is the null device.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Signals are signals heapx received (SIGINT, SIGTERM, SIGHUP), to
	// pass on to the program. One the program itself received about
	// then (a terminal's Ctrl-C or a kill of the process group reaches
	// both) is not passed on again; a second one the program does not
	// answer within a second kills it (SIGKILL).
	Signals <-chan os.Signal
}

// Result says how the traced program ended and what the trace holds.
type Result struct {
	ExitCode int    // the program's exit status, -1 if a signal ended it
	Signal   int    // the signal that ended it, 0 none
	Flags    uint64 // the END record's flags (memtrace.EndCutOff, EndNoExit)
	Bytes    int64  // bytes of trace written, END included
	// Exit is how the program said it ended (its EXIT record), nil when
	// it could not say (killed outright, or not a traced node).
	Exit *Exit
	// Received are the signals the program received, by name (SIGINT),
	// in order.
	Received []string
	// Killed says heapx killed the program: it did not answer a signal
	// passed on to it.
	Killed bool
}

// Exit is the EXIT record's content (docs/trace.md).
type Exit struct {
	Code   int64  `json:"code"`
	How    uint64 `json:"how"` // memtrace.ExitLoopDone, ExitProcessExit, ExitUncaught, ExitSignal
	Detail string `json:"detail"`
}

// Bits of a chunk's length word: the runtime's last chunk (the one with
// EXIT), and a control message (JSON for heapx, not trace records).
const (
	finalChunk   = 1 << 31
	controlChunk = 1 << 30
)

// answerWait is how long a signal heapx received waits for the program to
// say it received it too before heapx passes it on.
const answerWait = time.Second

// RunFile is Run writing the trace to the file at path atomically
// (formats.WriteStream): renamed into place once the program has ended,
// however it ended; a failure to run it leaves no file.
func RunFile(ctx context.Context, argv []string, opt Options, path string) (Result, error) {
	var res Result
	err := formats.WriteStream(path, func(w io.Writer) error {
		var err error
		res, err = Run(ctx, argv, opt, w)
		return err
	})
	return res, err
}

// DefaultPath is the trace file of a command line: app.hxtrace for node
// app.js, trace.hxtrace when no script is named.
func DefaultPath(argv []string) string {
	for _, a := range argv[min(1, len(argv)):] {
		if ext := filepath.Ext(a); !strings.HasPrefix(a, "-") && (ext == ".js" || ext == ".mjs" || ext == ".cjs") {
			return strings.TrimSuffix(filepath.Base(a), ext) + ".hxtrace"
		}
	}
	return "trace.hxtrace"
}

// Run runs argv (a node command line: node app.js args) with its
// JavaScript instrumented, writes the trace to w and returns how the
// program ended. A program that fails (non-zero exit, uncaught exception,
// a signal) is not an error: its trace ends with what happened. Errors are
// heapx's own: node not found, the pipe or w failing. Cancelling ctx
// interrupts the program (SIGINT).
func Run(ctx context.Context, argv []string, opt Options, w io.Writer) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("no program to run (heapx trace -- node app.js)")
	}
	dir, err := os.MkdirTemp("", "heapx-trace-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	if err := unpack(dir); err != nil {
		return Result{}, err
	}
	include, err := json.Marshal(absGlobs(opt.Include))
	if err != nil {
		return Result{}, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return Result{}, err
	}
	defer pr.Close()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = opt.Stdin, opt.Stdout, opt.Stderr
	cmd.ExtraFiles = []*os.File{pw} // fd 3
	// Cancelling interrupts the program, as Ctrl-C would: its exit
	// handlers run and the trace ends with its EXIT record.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	// A preload (--require), not an --import: an --import makes Node run a
	// CommonJS main module through its ES module loader (js/register.cjs).
	register := filepath.Join(dir, "js", "register.cjs")
	nodeOptions := strings.TrimSpace(os.Getenv("NODE_OPTIONS") + ` --require="` + register + `"`)
	// HEAPX_TRACE_PID is set by the runtime once the program runs (its
	// children are not traced); one inherited from a traced parent is cleared.
	cmd.Env = append(os.Environ(), "NODE_OPTIONS="+nodeOptions, "HEAPX_TRACE_FD=3", "HEAPX_TRACE_INCLUDE="+string(include), "HEAPX_TRACE_PID=")
	if err := cmd.Start(); err != nil {
		pw.Close()
		return Result{}, err
	}
	pw.Close()
	bw := bufio.NewWriterSize(w, 256<<10)
	var res Result
	st := &runState{answered: make(chan struct{}, 1)}
	done := make(chan struct{})
	relayed := make(chan struct{})
	go func() {
		defer close(relayed)
		relay(opt.Signals, cmd.Process, st, done)
	}()
	n, flags, copyErr := copyChunks(bw, pr, st)
	waitErr := cmd.Wait()
	close(done)
	<-relayed
	res.Flags = flags
	st.mu.Lock()
	res.Exit, res.Received, res.Killed = st.exit, st.received, st.killed
	st.mu.Unlock()
	res.ExitCode, res.Signal = status(cmd.ProcessState)
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return res, waitErr
	}
	if copyErr != nil {
		return res, copyErr
	}
	end := memtrace.AppendEnd(nil, int64(res.ExitCode), uint64(res.Signal), res.Flags)
	if _, err := bw.Write(end); err != nil {
		return res, err
	}
	res.Bytes = n + int64(len(end))
	return res, bw.Flush()
}

// runState is what the runtime's control messages said, shared by the
// chunk copier and the signal relay.
type runState struct {
	mu       sync.Mutex
	exit     *Exit
	received []string
	lastSeen time.Time // when the program last said it received a signal
	killed   bool
	// answered is signalled at each signal the program says it received.
	answered chan struct{}
}

// control takes in a control message of the runtime.
func (st *runState) control(msg []byte) {
	var m struct {
		Signal string `json:"signal"`
		Exit   *Exit  `json:"exit"`
	}
	if json.Unmarshal(msg, &m) != nil {
		return // not from heapx's runtime: ignored
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if m.Exit != nil {
		st.exit = m.Exit
	}
	if m.Signal != "" {
		st.received = append(st.received, m.Signal)
		st.lastSeen = time.Now()
		select {
		case st.answered <- struct{}{}:
		default:
		}
	}
}

// seenSince says whether the program said it received a signal at or
// after t.
func (st *runState) seenSince(t time.Time) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return !st.lastSeen.Before(t)
}

// relay passes the signals heapx receives on to the program p until done,
// unless the program received them itself (it says so within
// answerWait); a second signal while one passed on is unanswered kills
// it.
func relay(sigs <-chan os.Signal, p *os.Process, st *runState, done <-chan struct{}) {
	unanswered := false
	for {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-done:
			return
		}
		at := time.Now()
		timer := time.NewTimer(answerWait)
	wait:
		for !st.seenSince(at.Add(-answerWait)) {
			select {
			case <-st.answered:
			case <-timer.C:
				break wait
			case <-done:
				timer.Stop()
				return
			}
		}
		timer.Stop()
		switch {
		case st.seenSince(at.Add(-answerWait)):
			unanswered = false
		case unanswered:
			st.mu.Lock()
			st.killed = true
			st.mu.Unlock()
			p.Kill()
		default:
			unanswered = true
			p.Signal(sig)
		}
	}
}

// copyChunks copies the records of the runtime's chunks from r to w until
// r ends, and hands control messages to st. It returns the bytes written
// and the END flags: EndCutOff for a chunk r ended inside (the program
// died mid-write), EndNoExit when the final chunk never came. The trace's
// header comes first.
func copyChunks(w io.Writer, r io.Reader, st *runState) (int64, uint64, error) {
	n := int64(len(memtrace.Magic) + 1)
	if _, err := io.WriteString(w, memtrace.Magic+string(rune(memtrace.Version))); err != nil {
		return 0, 0, err
	}
	br := bufio.NewReaderSize(r, 256<<10)
	var head [4]byte
	var chunk []byte
	final := false
	for {
		k, err := io.ReadFull(br, head[:])
		if err == io.EOF {
			break
		}
		if err != nil {
			if k > 0 {
				return n, flagsOf(true, final), nil
			}
			return n, 0, err
		}
		size := binary.LittleEndian.Uint32(head[:])
		control := size&controlChunk != 0
		if size&finalChunk != 0 && !control {
			final = true
		}
		size &^= finalChunk | controlChunk
		// A chunk is copied whole or not at all: records cut short would
		// leave the file undecodable.
		if uint32(cap(chunk)) < size {
			chunk = make([]byte, size)
		}
		chunk = chunk[:size]
		if _, err := io.ReadFull(br, chunk); err != nil {
			return n, flagsOf(true, final), nil
		}
		if control {
			st.control(chunk)
			continue
		}
		if _, err := w.Write(chunk); err != nil {
			return n, 0, err
		}
		n += int64(size)
	}
	return n, flagsOf(false, final), nil
}

func flagsOf(cut, final bool) uint64 {
	var f uint64
	if cut {
		f |= memtrace.EndCutOff
	}
	if !final {
		f |= memtrace.EndNoExit
	}
	return f
}

// status is the exit code and signal of a finished process.
func status(ps *os.ProcessState) (int, int) {
	if ps == nil {
		return -1, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, int(ws.Signal())
	}
	return ps.ExitCode(), 0
}

// absGlobs makes relative --include globs absolute (the runtime matches
// absolute paths).
func absGlobs(globs []string) []string {
	out := make([]string, 0, len(globs))
	for _, g := range globs {
		if !filepath.IsAbs(g) && !strings.HasPrefix(g, "**") {
			if a, err := filepath.Abs(g); err == nil {
				g = a
			}
		}
		out = append(out, filepath.ToSlash(g))
	}
	return out
}

// unpack writes the embedded JavaScript to dir/js.
func unpack(dir string) error {
	return fs.WalkDir(scripts, "js", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, p), 0o755)
		}
		b, err := scripts.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, p), b, 0o644); err != nil {
			return fmt.Errorf("unpacking heapx's trace runtime: %w", err)
		}
		return nil
	})
}
