// Command heapx reads heap dumps and answers the questions a heap viewer
// answers: what is in the heap, what looks like a leak, which classes take
// the memory and what keeps an object alive.
//
// It reads V8 heap snapshots (.heapsnapshot and .heaptimeline from Node.js,
// Chrome and Electron), Firefox heap snapshots (.fxsnapshot), Java HPROF
// dumps and the exchange format (.jsonl, .db), plain or gzip-compressed.
// Run `heapx help` for the commands; `heapx report` is the main job.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"

	"github.com/heapx/heapx/internal/termtext"
	"github.com/heapx/heapx/model"
)

func main() {
	hugePages()
	// On a terminal every output format passes through termtext.Writer,
	// so no string from a dump (a --csv cell, a --json value with a C1
	// control) can drive the terminal. Pipes and files get the exact
	// bytes.
	var stdout io.Writer = os.Stdout
	var tw *termtext.Writer
	if term.IsTerminal(int(os.Stdout.Fd())) {
		tw = termtext.NewWriter(os.Stdout)
		stdout = tw
	}
	code := run(os.Args[1:], stdout, os.Stderr)
	if tw != nil {
		tw.Flush()
	}
	os.Exit(code)
}

// hugePages applies HEAPX_HUGEPAGES (docs/cli.md "Environment"): 1 or true
// asks the kernel for transparent huge pages for the big columns
// (model.SetHugePages), 0 or false does not; unset or anything else keeps
// the default, which measured better on the machine of docs/benchmarks.md.
func hugePages() {
	if on, err := strconv.ParseBool(os.Getenv("HEAPX_HUGEPAGES")); err == nil {
		model.SetHugePages(on)
	}
}

// maxErrorBytes caps the message of an error: one quoting a crafted dump's
// text (a V8 meta with a million field names) must not print megabytes.
const maxErrorBytes = 4 << 10

// run executes the command line args and returns the process exit code. It
// is separate from main so the exit code is decided in one place: every
// error, whether cobra's (unknown flag) or a command's, is printed once as
// "heapx: <error>", on one line with what a terminal would act on escaped,
// and exits 1. It builds its command tree anew and keeps no state between
// calls, so the tests call it in process, several at once.
func run(args []string, stdout io.Writer, stderr *os.File) int {
	root := newRootCmd(stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		// heapx trace passes the traced program's exit status through.
		var st exitStatus
		if errors.As(err, &st) {
			return int(st)
		}
		fmt.Fprintf(stderr, "heapx: %s\n", termtext.Cap(err.Error(), maxErrorBytes))
		// heapx capture ends as the program it started did.
		var ec exitCode
		if errors.As(err, &ec) {
			return ec.code
		}
		return 1
	}
	return 0
}
