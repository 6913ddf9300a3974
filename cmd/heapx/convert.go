package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/internal/progress"
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

Formats heapx writes: ` + formats.Writable() + `.

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
	c.Flags().StringVar(&to, "to", "", "output format ("+formats.Writable()+"); default: from OUT's extension")
	c.Flags().BoolVar(&analyze, "analyze", false, "compute retained sizes, dominators and distances and store them in OUT")
	return c
}

func convert(stdout io.Writer, stderr *os.File, in, out, to string, analyze bool) error {
	if to == parquet.Name {
		// A Parquet directory holds analysed dumps: convert is export of one.
		return export(stdout, stderr, out, []string{in}, nil, 1, false)
	}
	of, err := formats.ForOutput(out, to)
	if err != nil {
		return err
	}
	if err := hx.CheckOutput(out, of, analyze); err != nil {
		return err
	}

	// An interrupt must not leave a temporary file behind: the output is
	// only renamed into place once complete, and the handler removes the
	// one being written before exiting.
	defer cleanUpOnInterrupt(stderr, out)()

	wopt := hx.WriteOptions{Analyze: analyze, Generator: generator(),
		Warn: func(msg string) { fmt.Fprintf(stderr, "heapx: warning: %s: %s\n", out, msg) }}
	if isMemoryTrace(in) {
		return convertTrace(stdout, in, out, of, wopt)
	}
	return convertDump(stdout, stderr, in, out, of, wopt)
}

// convertTrace writes the object lifetimes of the memory trace in to out
// (heapx.WriteTrace).
func convertTrace(stdout io.Writer, in, out string, of *formats.Format, wopt hx.WriteOptions) error {
	start := time.Now()
	w, err := hx.WriteTrace(in, out, of, wopt)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s in %.2f s\n", w, time.Since(start).Seconds())
	return err
}

// convertDump writes the dump in to out (heapx.Dump.Write), with a
// progress bar on stderr.
func convertDump(stdout io.Writer, stderr *os.File, in, out string, of *formats.Format, wopt hx.WriteOptions) error {
	// The results the file carries are read either way (a file whose
	// results do not fit its graph is refused); --analyze computes them
	// anew, without the classes, which no file stores.
	opts := hx.Options{Analysis: analysis.Options{NoClasses: true}}
	if wopt.Analyze {
		opts.Stored = hx.RecomputeStored
	}
	d, err := load(in, stderr, opts)
	if err != nil {
		return err
	}
	if wopt.Analyze {
		if _, err := d.analysis(); err != nil {
			return err
		}
	}
	start := time.Now()
	// The bar starts with the write, after the warnings.
	var bar *progress.Bar
	var started sync.Once
	wopt.Progress = func(done, _ int64) {
		started.Do(func() {
			bar = progress.Start(stderr, "writing "+filepath.Base(out), int64(d.Graph().NumNodes()+d.Graph().NumEdges()))
		})
		bar.Set(done)
	}
	w, err := d.Write(out, of, wopt)
	if bar != nil {
		bar.Done()
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s in %.2f s (read %.2f s)\n", w, time.Since(start).Seconds(), d.ReadTime().Seconds())
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
