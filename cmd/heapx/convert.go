package main

import (
	"errors"
	"fmt"
	"io"
	"math"
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
		for _, w := range devToolsDeviations(g) {
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

// maxDeviationClasses bounds the classes a class-name warning lists.
const maxDeviationClasses = 5

// devToolsDeviations says where Chrome DevTools, loading g as
// formats/v8.Write writes it, will show other numbers than heapx shows for
// g itself, one sentence each; nothing for a V8 graph, which is written as
// it was read. The writer maps types so that shallow and retained sizes,
// distances and class names agree (v8.DevToolsTypes); what it cannot
// change is DevTools' own naming of some types and its 32-bit node ids.
// Class names are compared as heapx computes them for both (heapx applies
// DevTools' rules to V8 types), over the nodes DevTools counts in its
// Summary (self size above 0).
func devToolsDeviations(g *model.Graph) []string {
	if v8.FromV8(g) || g.NumNodes() == 0 {
		return nil
	}
	nts, ets := v8.DevToolsTypes(g)
	ours := analysis.ClassifyNodes(g, nil)
	var out []string
	if s := classDeviations(g, ours, nts, ets); s != "" {
		out = append(out, s)
	}
	if s := unreachableDistances(g, ours); s != "" {
		out = append(out, s)
	}
	if n := v8.DuplicateRootEdges(g); n > 0 {
		out = append(out, fmt.Sprintf("%s of the root's references repeat an earlier one's target and are merged into it, as DevTools cannot load a snapshot whose root references an object twice: the file has %s edges fewer",
			humanize.Thousands(uint64(n)), humanize.Thousands(uint64(n))))
	}
	var wide int
	var example uint64
	for i := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(i)
		if id > math.MaxUint32 {
			if wide == 0 {
				example = id
			}
			wide++
		}
	}
	if wide > 0 {
		out = append(out, fmt.Sprintf("DevTools keeps 32 bits of a node id: %s of the %s ids are larger and show as their low 32 bits (@%d as @%d)",
			humanize.Thousands(uint64(wide)), humanize.Thousands(uint64(g.NumNodes())), example, example&math.MaxUint32))
	}
	return out
}

// classDeviations compares heapx's classes for g with those of g retyped
// as DevTools sees it and describes the classes whose objects DevTools
// files under another name, largest first; "" when all agree.
func classDeviations(g *model.Graph, ours *analysis.Classes, nts []model.NodeType, ets []model.EdgeType) string {
	view := *g
	view.NodeTypes, view.EdgeTypes = nts, ets
	theirs := analysis.ClassifyNodes(&view, nil)
	type moved struct {
		count int
		size  uint64
		to    map[uint32]int // DevTools class -> objects
	}
	byClass := map[uint32]*moved{}
	all := make([]int, len(ours.Names))
	for i := range g.Nodes.Size.Len() {
		size := g.Nodes.Size.At(i)
		if size == 0 {
			continue
		}
		c := ours.Of[i]
		all[c]++
		d := theirs.Of[i]
		if ours.Names[c] == theirs.Names[d] {
			continue
		}
		m := byClass[c]
		if m == nil {
			m = &moved{to: map[uint32]int{}}
			byClass[c] = m
		}
		m.count++
		m.size += size
		m.to[d]++
	}
	if len(byClass) == 0 {
		return ""
	}
	classes := make([]uint32, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := byClass[classes[i]], byClass[classes[j]]
		if a.count != b.count {
			return a.count > b.count
		}
		return ours.Names[classes[i]] < ours.Names[classes[j]]
	})
	var parts []string
	for k, c := range classes {
		if k == maxDeviationClasses {
			parts = append(parts, fmt.Sprintf("and %d more", len(classes)-k))
			break
		}
		m := byClass[c]
		what := humanize.Thousands(uint64(m.count))
		if m.count < all[c] {
			what += " of " + humanize.Thousands(uint64(all[c]))
		}
		what += " object"
		if all[c] > 1 {
			what += "s"
		}
		to := make([]uint32, 0, len(m.to))
		for d := range m.to {
			to = append(to, d)
		}
		sort.Slice(to, func(i, j int) bool {
			if m.to[to[i]] != m.to[to[j]] {
				return m.to[to[i]] > m.to[to[j]]
			}
			return theirs.Names[to[i]] < theirs.Names[to[j]]
		})
		as := theirs.Names[to[0]]
		if len(to) > 1 {
			var names []string
			for _, d := range to[:min(len(to), 3)] {
				names = append(names, fmt.Sprintf("%s (%s)", theirs.Names[d], humanize.Thousands(uint64(m.to[d]))))
			}
			as = fmt.Sprintf("%d classes: %s", len(to), strings.Join(names, ", "))
			if len(to) > 3 {
				as += ", …"
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s) as %s", query.Shorten(ours.Names[c], 60), what, humanize.Size(m.size), as))
	}
	return "DevTools classes some objects under other names than heapx (counts and sizes per class differ accordingly): " + strings.Join(parts, "; ")
}

// unreachableDistances names the classes DevTools shows at distance -5
// where heapx shows a distance: DevTools takes a class's distance from all
// its instances (those its Summary counts, self size above 0), so one
// instance no root reaches makes it -5, where heapx takes the nearest
// reachable instance's (docs/devtools-deviations.md); "" when no class
// has both kinds.
func unreachableDistances(g *model.Graph, cls *analysis.Classes) string {
	reach := analysis.Reachable(g)
	reached := make([]bool, len(cls.Names))
	unreached := make([]int, len(cls.Names))
	for i := range g.Nodes.Size.Len() {
		size := g.Nodes.Size.At(i)
		if size == 0 {
			continue
		}
		if c := cls.Of[i]; reach.Has(i) {
			reached[c] = true
		} else {
			unreached[c]++
		}
	}
	var classes []int
	for c := range cls.Names {
		if reached[c] && unreached[c] > 0 {
			classes = append(classes, c)
		}
	}
	if len(classes) == 0 {
		return ""
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := classes[i], classes[j]
		if unreached[a] != unreached[b] {
			return unreached[a] > unreached[b]
		}
		return cls.Names[a] < cls.Names[b]
	})
	var names []string
	for _, c := range classes[:min(len(classes), maxDeviationClasses)] {
		names = append(names, fmt.Sprintf("%s (%s unreachable)", query.Shorten(cls.Names[c], 60), humanize.Thousands(uint64(unreached[c]))))
	}
	if len(classes) > maxDeviationClasses {
		names = append(names, fmt.Sprintf("and %d more", len(classes)-maxDeviationClasses))
	}
	return fmt.Sprintf("%s classes have instances no root reaches: DevTools shows their distance as -5, the smallest over every instance, where heapx shows the nearest reachable one's: %s",
		humanize.Thousands(uint64(len(classes))), strings.Join(names, ", "))
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
