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

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
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

With --analyze, retained sizes, dominators and distances are computed and
stored in OUT (exchange formats only), so reopening it needs no analysis.
Results already in IN are carried over to an exchange-format OUT.

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

	res := &model.Results{}
	d, err := loadResults(in, stderr, res)
	if err != nil {
		return err
	}
	g := d.graph
	if analyze {
		a, err := analyze1(d, stderr)
		if err != nil {
			return err
		}
		res = resultsOf(a)
	}
	wopt := formats.WriteOptions{Sources: []string{in}}
	if res.Shallow != nil && of.Results {
		wopt.Results = res
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
		query.HumanSize(uint64(st.Size())), query.Thousands(uint64(g.NumNodes())), query.Thousands(uint64(g.NumEdges())),
		time.Since(start).Seconds(), d.readTime.Seconds())
	return err
}

// analyze1 is analyze without the classes and the Summary, which convert
// does not store.
func analyze1(d *dump, stderr *os.File) (*analysis.Analysis, error) {
	spin := startProgress(stderr, "analyzing "+filepath.Base(d.path), -1)
	defer spin.done()
	a, err := analysis.Analyze(d.graph, analysis.Options{NoClasses: true})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	return a, nil
}

// cleanUpOnInterrupt makes an interrupt (or SIGTERM, SIGHUP) while out is
// being written remove the temporary files formats.WriteFileAtomic is
// writing, say that out was not written and exit 130, until the returned
// function is called.
func cleanUpOnInterrupt(stderr *os.File, out string) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			formats.RemoveTemps()
			fmt.Fprintf(stderr, "\nheapx: %v: %s not written\n", s, out)
			os.Exit(130)
		case <-done:
		}
	}()
	return func() {
		close(done)
		signal.Stop(sigs)
	}
}
