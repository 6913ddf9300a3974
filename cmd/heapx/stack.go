package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/progress"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

func newStackCmd(stderr *os.File) *cobra.Command {
	var asJSON, all bool
	c := &cobra.Command{
		Use:   "stack FILE",
		Short: "Print every thread's stack: a Java heap dump's frames with the objects their locals hold, a Node.js core's JavaScript frames",
		Long: `Print every thread's call stack, innermost frame first, in the dump's
order (heapx threads shows the same threads, the ones keeping the most
alive first).

Java heap dumps (HPROF, from jcmd GC.heap_dump, jmap or
-XX:+HeapDumpOnOutOfMemoryError): each thread's name, state and
java.lang.Thread object with its retained size, then its frames (class,
method, file:line) with the objects each frame's locals hold (and its JNI
local references), with their retained sizes.

Node.js core dumps (x86-64 Linux, from gcore or a crash): JavaScript
frames with their function, script:line (where the function starts),
receiver, arguments and the variables their closure captures; V8's own
frames (entry, exit, internal) by type; native frames by the node
binary's symbol. The node executable the process ran comes from --binary
(heapx's flag for every command on a core), or from the path the core
names when that file is here; it must be the same build. Only the stacks
are read, not the heap, so this is quick on a big core.

FILE may also be an exchange file (.jsonl, .db) converted from either,
which keeps the stacks (without sizes: heapx threads has them).

By default a JavaScript frame lists at most 6 closure variables; --all
lists every one. With --json the stacks are printed as one JSON object
(docs/json.md).`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := readStacks(args[0], binaryFor(stderr), stderr)
			if err != nil {
				return err
			}
			if asJSON {
				return render.WriteJSON(cmd.OutOrStdout(), out)
			}
			return render.WriteStacks(cmd.OutOrStdout(), out, all)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "list every closure variable of a frame")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	return c
}

// readStacks reads the stacks of the dump at path (heapx.Stacks) with the
// run's --binary and source-map flags, drawing the progress of a dump
// read whole (HPROF) on stderr.
func readStacks(path, binary string, stderr *os.File) (*query.ThreadsJSON, error) {
	opts := hx.Options{Binary: binary}
	mapOptions(stderr, &opts)
	bars := &progress.Stages{W: stderr, Name: filepath.Base(path)}
	opts.Progress = bars.Set
	out, err := hx.Stacks(path, opts)
	bars.Done()
	if errors.Is(err, hx.ErrBinaryNotCore) {
		return nil, fmt.Errorf("--binary is for core dumps; %s is not an ELF core", path)
	}
	return out, err
}
