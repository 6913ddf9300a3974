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
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the process exit code. It
// is separate from main so the exit code is decided in one place: every
// error, whether cobra's (unknown flag) or a command's, is printed once as
// "heapx: <error>" and exits 1.
func run(args []string, stdout io.Writer, stderr *os.File) int {
	root := newRootCmd(stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintf(stderr, "heapx: %v\n", err)
		return 1
	}
	return 0
}
