package heapx

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// WriteOptions tune Dump.Write and WriteTrace.
type WriteOptions struct {
	// Analyze stores the dump's analysis results (Dump.Results) in the
	// output, which must be an exchange format. Open the dump with
	// RecomputeStored to have them computed anew rather than carried
	// over. Without Analyze, results the file carries are carried over
	// to an exchange-format output.
	Analyze bool
	// Generator names the program writing (formats.WriteOptions).
	Generator string
	// Progress, if set, is told how the write goes: the nodes and edges
	// written and their total.
	Progress func(done, total int64)
	// Warn, if set, is told before the write what the output loses:
	// where Chrome DevTools will show other numbers for a dump of
	// another runtime written as a V8 snapshot
	// (query.DevToolsDeviations), the threads' stacks it has no place
	// for.
	Warn func(msg string)
}

// Written is what Dump.Write or WriteTrace wrote.
type Written struct {
	Path   string
	Format *formats.Format
	// Size is the output file's size; Gzip says it is gzip-compressed.
	Size int64
	Gzip bool
	// Nodes and Edges are the graph's as written (a V8 snapshot merges
	// repeated references of the root).
	Nodes, Edges int
	// Results says the analysis results were stored.
	Results bool
	// Lifetimes says the file holds a memory trace's object lifetimes
	// (WriteTrace): a node per object, and the root.
	Lifetimes bool
}

// String says what was written, as heapx convert does: the file, its
// format and size, and its nodes and edges, or a trace's objects.
func (w *Written) String() string {
	size := humanize.Size(uint64(w.Size))
	if w.Lifetimes {
		return fmt.Sprintf("%s (%s, object lifetimes, %s): %s objects", w.Path, w.Format.Name, size, humanize.Thousands(uint64(w.Nodes-1)))
	}
	what := w.Format.Name
	if w.Gzip {
		what += ", gzip"
	}
	if w.Results {
		what += ", with analysis results"
	}
	return fmt.Sprintf("%s (%s, %s): %s nodes, %s edges", w.Path, what, size, humanize.Thousands(uint64(w.Nodes)), humanize.Thousands(uint64(w.Edges)))
}

// CheckOutput says, before anything is read, what makes out unfit to be
// written in format of (with the analysis results when analyze): a
// format that cannot store them, a directory, a directory that does not
// exist. The errors call analyze --analyze, heapx convert's flag.
func CheckOutput(out string, of *formats.Format, analyze bool) error {
	if analyze && !of.Results {
		return fmt.Errorf("--analyze: format %s cannot store analysis results (the exchange formats can: .jsonl, .db)", of.Name)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("%s: is a directory", out)
	}
	if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist", out, filepath.Dir(out))
	}
	return nil
}

// Write writes the dump to out in format of, atomically (formats.Save):
// a failed write leaves no out behind.
func (d *Dump) Write(out string, of *formats.Format, opt WriteOptions) (*Written, error) {
	g := d.Graph()
	res := d.StoredResults()
	if opt.Analyze {
		a, err := d.Analysis()
		if err != nil {
			return nil, err
		}
		res = a.Results()
	}
	wopt := formats.WriteOptions{Sources: []string{d.Path()}, Generator: opt.Generator, Progress: opt.Progress}
	if res != nil && of.Results {
		wopt.Results = res
	}
	w := &Written{Format: of, Nodes: g.NumNodes(), Edges: g.NumEdges(), Results: wopt.Results != nil}
	if of.Name == v8.Namespace { // the V8 format is registered under its namespace, "v8"
		warn := opt.Warn
		if warn == nil {
			warn = func(string) {}
		}
		for _, s := range query.DevToolsDeviations(g) {
			warn(s)
		}
		if len(g.Stacks) > 0 {
			warn(fmt.Sprintf("the %d threads' stacks are left out: a V8 heap snapshot has no place for them (.jsonl and .db keep them)", len(g.Stacks)))
		}
		w.Edges -= v8.DuplicateRootEdges(g)
	}
	if err := formats.Save(out, of, g, wopt); err != nil {
		var fe *formats.FormatError
		if errors.As(err, &fe) || strings.Contains(err.Error(), out) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	return w, w.stat(out)
}

// stat records the size of the file written at out.
func (w *Written) stat(out string) error {
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	w.Path, w.Size, w.Gzip = out, st.Size(), strings.HasSuffix(strings.ToLower(out), ".gz")
	return nil
}

// WriteTrace writes the object lifetimes of the memory trace in to out,
// in an exchange format (of.Results): one node per object the trace
// allocated, named by its allocation site, with its times as node fields
// (lifetime.Graph). A trace has no references to analyse: opt.Analyze is
// refused.
func WriteTrace(in, out string, of *formats.Format, opt WriteOptions) (*Written, error) {
	if !of.Results {
		return nil, fmt.Errorf("%s: a memory trace converts to the exchange format only (.jsonl, .db), not %s", in, of.Name)
	}
	if opt.Analyze {
		return nil, fmt.Errorf("--analyze: %s is a memory trace: its dump has no references to analyse", in)
	}
	t, err := OpenTrace(in)
	if err != nil {
		return nil, err
	}
	g, fields := lifetime.Graph(t.Lifetimes)
	err = formats.Save(out, of, g, formats.WriteOptions{Sources: []string{in}, Generator: opt.Generator, NodeFields: fields, Progress: opt.Progress})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	w := &Written{Format: of, Nodes: g.NumNodes(), Edges: g.NumEdges(), Lifetimes: true}
	return w, w.stat(out)
}

// ResultsToStore are the analysis results a copy of the dump stores
// (an SQL copy, sqlquery.Builder.Load): those the file carries, else
// the analysis' (computed), since the first questions asked of a copy
// are about retained sizes.
func (d *Dump) ResultsToStore() (*model.Results, error) {
	if res := d.StoredResults(); res != nil {
		return res, nil
	}
	return d.Results()
}
