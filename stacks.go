package heapx

import (
	"errors"
	"fmt"
	"strings"

	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/nodecore"
	"github.com/heapx/heapx/query"
)

// ErrBinaryNotCore is the error of Stacks given Options.Binary for a file
// that is not a core dump: a node binary is read only with a core.
var ErrBinaryNotCore = errors.New("a node binary is for core dumps")

// Stacks reads every thread's call stack that the dump at path records,
// innermost frame first, in the dump's order: what heapx stack prints
// (render.WriteStacks) and its --json form. Which dumps have stacks
// decides the work:
//
//   - a Node.js core dump: its threads are walked with the node binary
//     (Options.Binary, else the path the core names), the heap is not
//     read, so this is quick on a big core; the frames have no sizes;
//   - a Java HPROF dump: it is read and analysed (Options.Progress tells
//     how), and each thread comes with its object's sizes and the sizes
//     of the objects its frames hold;
//   - an exchange file (.jsonl, .db) converted from either: the stacks it
//     carries, without sizes (Dump.Query("threads") has them).
//
// Other dumps (V8 and Firefox snapshots) record no stacks: an error says
// so.
func Stacks(path string, opts Options) (*query.ThreadsJSON, error) {
	f, _ := formats.Detect(path) // Open says what is wrong with a path that fails here
	isCore := f != nil && f.Name == nodecore.Name
	switch {
	case opts.Binary != "" && !isCore:
		return nil, fmt.Errorf("%w; %s is not an ELF core", ErrBinaryNotCore, path)
	case isCore:
		return coreStacks(path, opts.Binary)
	case f != nil && f.Name == hprof.Name:
		return javaStacks(path, opts)
	}
	opts.Stored, opts.NodesOnly = SkipStored, true
	d, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	g := d.Graph()
	if len(g.Stacks) == 0 {
		return nil, fmt.Errorf("%s has no stacks: only a core dump, a Java heap dump, or an exchange file converted from one, carries them", path)
	}
	out := query.NewThreadsJSON(path, g.Stacks)
	out.Runtime, _ = g.MetaValue("producer")
	out.Runtime = strings.TrimSuffix(out.Runtime, " core dump")
	return out, nil
}

// coreStacks walks the threads of the Node.js core at path, without its
// heap.
func coreStacks(path, binary string) (*query.ThreadsJSON, error) {
	p, err := nodecore.Open(path, binary)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	stacks, err := p.Stacks()
	if err != nil {
		return nil, err
	}
	out := query.NewThreadsJSON(path, stacks)
	out.Binary, out.Runtime = p.Binary, p.RuntimeName()
	return out, nil
}

// javaStacks reads and analyses the HPROF dump at path for its threads
// with their sizes.
func javaStacks(path string, opts Options) (*query.ThreadsJSON, error) {
	d, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	a, err := d.Analysis()
	if err != nil {
		return nil, err
	}
	if len(d.Graph().Stacks) == 0 {
		return nil, fmt.Errorf("%s has no stack traces (an HPROF dump from jcmd GC.heap_dump, jmap or a crash has them)", path)
	}
	return query.ThreadsJSONOf(path, a, inspect.ThreadStacks(a)), nil
}
