package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/parquet"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
)

func newConvertCmd(stderr *os.File) *cobra.Command {
	var to string
	var analyze bool
	c := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a heap dump to another format (.heapsnapshot, .jsonl[.gz], .db)",
		Long: `Convert the heap dump IN, in any format heapx reads, to OUT. The output
format is chosen by OUT's extension (.heapsnapshot, .jsonl, .db; a trailing
.gz compresses stream formats) or by --to.

Formats heapx writes: ` + writableFormats() + `.

The exchange format (.jsonl, .db) is described in docs/format.md. A V8
snapshot converted to it and back is the same snapshot, byte for byte
(Node.js's and Chrome's).

A dump of another runtime (Java, Firefox) converted to .heapsnapshot is
written so that Chrome DevTools shows heapx's numbers for it: shallow
and retained sizes, distances and most classes. Where DevTools cannot
(it classes strings as "(string)", splits plain Objects by their property
names, keeps 32 bits of each node id), convert says so on stderr.

With --analyze, retained sizes, dominators and distances are computed and
stored in OUT (exchange formats only), so reopening it needs no analysis.
Results already in IN are carried over to an exchange-format OUT.

IN may be a memory trace (heapx trace): OUT, in an exchange format, then
holds one node per object the trace allocated, named by its allocation
site, with its allocation, last-use and unreachable times as the fields
heapx_lifetime:alloc_time, :last_use and :unreachable_time
(docs/format.md 2.10).

With --to parquet, OUT is a directory: IN is analysed and written as the
partition OUT/dump=<id> (heapx export --parquet OUT IN; see heapx export).

OUT is written to a temporary file and renamed into place when complete:
a failed or interrupted convert leaves no OUT behind.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("convert needs two arguments, IN and OUT, got %d (see heapx convert --help)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return convert(cmd.OutOrStdout(), stderr, args[0], args[1], to, analyze)
		},
	}
	c.Flags().StringVar(&to, "to", "", "output format ("+writableFormats()+"); default: from OUT's extension")
	c.Flags().BoolVar(&analyze, "analyze", false, "compute retained sizes, dominators and distances and store them in OUT")
	return c
}

// writableFormats lists the formats heapx can write, for help texts and
// messages.
func writableFormats() string {
	var names []string
	for _, f := range formats.All() {
		if f.Write != nil || f.WriteFile != nil {
			names = append(names, f.Name+" ("+strings.Join(f.Extensions, ", ")+")")
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// outputFormat picks OUT's format from --to or its extension, before
// anything is read, so a mistake costs nothing.
func outputFormat(out, to string) (*formats.Format, error) {
	var f *formats.Format
	if to != "" {
		var ok bool
		if f, ok = formats.Lookup(to); !ok {
			return nil, fmt.Errorf("--to %s: no such format (formats heapx writes: %s)", to, writableFormats())
		}
	} else {
		var ok bool
		if f, ok = formats.ByExtension(out); !ok {
			return nil, fmt.Errorf("%s: cannot tell the output format from the extension; name it .heapsnapshot, .jsonl, .jsonl.gz or .db, or use --to (formats heapx writes: %s)", out, writableFormats())
		}
	}
	if f.Write == nil && f.WriteFile == nil {
		return nil, fmt.Errorf("heapx cannot write format %s (formats heapx writes: %s)", f.Name, writableFormats())
	}
	return f, nil
}

func convert(stdout io.Writer, stderr *os.File, in, out, to string, analyze bool) error {
	if to == parquet.Name {
		// A Parquet directory holds analysed dumps: convert is export of one.
		return export(stdout, stderr, out, []string{in}, nil, 1, false)
	}
	of, err := outputFormat(out, to)
	if err != nil {
		return err
	}
	if analyze && !of.Results {
		return fmt.Errorf("--analyze: format %s cannot store analysis results (the exchange formats can: .jsonl, .db)", of.Name)
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("%s: is a directory", out)
	}
	if st, err := os.Stat(filepath.Dir(out)); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: directory %s does not exist", out, filepath.Dir(out))
	}

	// An interrupt must not leave a temporary file behind: the output is
	// only renamed into place once complete, and the handler removes the
	// one being written before exiting.
	defer cleanUpOnInterrupt(stderr, out)()

	if isMemoryTrace(in) {
		return convertTrace(stdout, in, out, of, analyze)
	}

	// The results the file carries are read either way (a file whose
	// results do not fit its graph is refused); --analyze computes them
	// anew, without the classes, which no file stores.
	opts := hx.Options{Analysis: analysis.Options{NoClasses: true}}
	if analyze {
		opts.Stored = hx.RecomputeStored
	}
	d, err := load(in, stderr, opts)
	if err != nil {
		return err
	}
	g := d.Graph()
	res := d.StoredResults()
	if analyze {
		a, err := d.analysis()
		if err != nil {
			return err
		}
		res = a.Results()
	}
	wopt := formats.WriteOptions{Sources: []string{in}, Generator: generator()}
	if res != nil && of.Results {
		wopt.Results = res
	}

	edges := g.NumEdges()
	if of.Name == v8.Namespace { // the V8 format is registered under its namespace, "v8"
		for _, w := range query.DevToolsDeviations(g) {
			fmt.Fprintf(stderr, "heapx: warning: %s: %s\n", out, w)
		}
		if len(g.Stacks) > 0 {
			fmt.Fprintf(stderr, "heapx: warning: %s: the %d threads' stacks are left out: a V8 heap snapshot has no place for them (.jsonl and .db keep them)\n", out, len(g.Stacks))
		}
		edges -= v8.DuplicateRootEdges(g)
	}

	start := time.Now()
	bar := startProgress(stderr, "writing "+filepath.Base(out), int64(g.NumNodes()+g.NumEdges()))
	wopt.Progress = func(done, _ int64) { bar.set(done) }
	err = formats.Save(out, of, g, wopt)
	bar.done()
	if err != nil {
		var fe *formats.FormatError
		if errors.As(err, &fe) || strings.Contains(err.Error(), out) {
			return err
		}
		return fmt.Errorf("%s: %w", out, err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	what := of.Name
	if strings.HasSuffix(strings.ToLower(out), ".gz") {
		what += ", gzip"
	}
	if wopt.Results != nil {
		what += ", with analysis results"
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%s, %s): %s nodes, %s edges in %.2f s (read %.2f s)\n", out, what,
		humanize.Size(uint64(st.Size())), humanize.Thousands(uint64(g.NumNodes())), humanize.Thousands(uint64(edges)),
		time.Since(start).Seconds(), d.ReadTime().Seconds())
	return err
}

// cleanUpOnInterrupt makes an interrupt (or SIGTERM, SIGHUP) while out is
// being written remove the temporary files formats.WriteFileAtomic is
// writing and the files in remove, say that out was not written (when out
// is not empty) and exit 130, until the returned function is called.
func cleanUpOnInterrupt(stderr *os.File, out string, remove ...string) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			formats.RemoveTemps()
			for _, f := range remove {
				os.Remove(f)
			}
			if out != "" {
				fmt.Fprintf(stderr, "\nheapx: %v: %s not written\n", s, out)
			} else {
				fmt.Fprintf(stderr, "\nheapx: %v\n", s)
			}
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		close(done)
		signal.Stop(sigs)
	}
}

// convertTrace writes the object lifetimes of the memory trace in as an
// exchange-format dump (lifetime.Graph).
func convertTrace(stdout io.Writer, in, out string, of *formats.Format, analyze bool) error {
	if !of.Results {
		return fmt.Errorf("%s: a memory trace converts to the exchange format only (.jsonl, .db), not %s", in, of.Name)
	}
	if analyze {
		return fmt.Errorf("--analyze: %s is a memory trace: its dump has no references to analyse", in)
	}
	start := time.Now()
	t, err := hx.OpenTrace(in)
	if err != nil {
		return err
	}
	g, fields := lifetime.Graph(t.Lifetimes)
	err = formats.Save(out, of, g, formats.WriteOptions{Sources: []string{in}, Generator: generator(), NodeFields: fields})
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	st, err := os.Stat(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s (%s, object lifetimes, %s): %s objects in %.2f s\n", out, of.Name,
		humanize.Size(uint64(st.Size())), humanize.Thousands(uint64(g.NumNodes()-1)), time.Since(start).Seconds())
	return err
}
