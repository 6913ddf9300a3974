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
// chunks to file descriptor 3, a pipe Run reads while the program runs.
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
	"syscall"

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
}

// Result says how the traced program ended and what the trace holds.
type Result struct {
	ExitCode int    // the program's exit status, -1 if a signal ended it
	Signal   int    // the signal that ended it, 0 none
	Flags    uint64 // the END record's flags (memtrace.EndCutOff, EndNoExit)
	Bytes    int64  // bytes of trace written, END included
}

// finalChunk marks the runtime's last chunk (the one with EXIT) in the
// chunk length's top bit.
const finalChunk = 1 << 31

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
	n, flags, copyErr := copyChunks(bw, pr)
	waitErr := cmd.Wait()
	res.Flags = flags
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

// copyChunks copies the records of the runtime's chunks from r to w until
// r ends. It returns the bytes written and the END flags: EndCutOff for a
// chunk r ended inside (the program died mid-write), EndNoExit when the
// final chunk never came. The trace's header comes first.
func copyChunks(w io.Writer, r io.Reader) (int64, uint64, error) {
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
		if size&finalChunk != 0 {
			final = true
			size &^= finalChunk
		}
		// A chunk is copied whole or not at all: records cut short would
		// leave the file undecodable.
		if uint32(cap(chunk)) < size {
			chunk = make([]byte, size)
		}
		chunk = chunk[:size]
		if _, err := io.ReadFull(br, chunk); err != nil {
			return n, flagsOf(true, final), nil
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
