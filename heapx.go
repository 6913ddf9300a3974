// Package heapx is heapx as a Go library: open a heap dump of any format
// heapx reads (V8 .heapsnapshot and .heaptimeline, Firefox .fxsnapshot,
// Java HPROF, the exchange formats .jsonl and .db, plain or gzip, and its
// Parquet partitions; Node.js core dumps with Options.Binary), analyse
// it as the Chrome DevTools Memory panel does, and ask what the heapx
// command asks: the objects that retain the most, what keeps one alive,
// what changed between two dumps, the threads' stacks (Stacks), or any
// query of the registry.
//
//	d, err := heapx.Open("app.heapsnapshot", heapx.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	top, err := d.Top(10)
//	if err != nil {
//		log.Fatal(err)
//	}
//	for _, o := range top {
//		fmt.Println(o.Label(), o.Retained)
//	}
//
// It is a facade over the packages below it, as esbuild's pkg/api and
// pprof's driver are over theirs: it follows the recipe the heapx command
// follows (detect the format, read with progress, reuse the analysis
// results a file carries when they are valid, analyse), so a program does
// not repeat it. It links in every format (formats/all). What it does not
// wrap, those packages offer directly: Dump.Graph is the model.Graph,
// Dump.Analysis the analysis.Analysis, Dump.Query's result a query.Result.
package heapx

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all" // every format, for Open
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/sourcemaps"
)

// Options tune Open and the analysis of the dump it returns.
type Options struct {
	// Progress, if set, is told how the work goes, for a progress bar.
	// It is called when a stage starts, with done 0 and the stage's
	// total: for Reading the input's size in bytes (-1 when it is
	// unknown, as for a pipe), for Analyzing -1 (it reports no steps).
	// While reading it is called again every few megabytes with the
	// bytes read so far and the total they count to (a format read in
	// two passes, HPROF, counts the file twice), maybe from a goroutine
	// of the reader's. A stage ends when the call that started it
	// returns: Open for Reading, the first call that needs the analysis
	// for Analyzing.
	Progress func(stage Stage, done, total int64)
	// Stored says what becomes of the analysis results a file carries
	// (heapx convert --analyze writes them into .jsonl and .db files).
	Stored Stored
	// Analysis tunes the analysis (retained-size policy, columns
	// skipped, memory). With NoClasses, Diff and the queries that list
	// classes fail; with NoDistances, Results cannot be stored.
	Analysis analysis.Options
	// NodesOnly reads the dump without its edges where the format allows
	// (V8; formats.ReadOptions.CountEdges), for a program that wants only
	// counts and node sizes, as heapx info: on V8 the edges are about
	// 40% of the graph's memory. Dump.EdgeCount still gives their
	// number; the graph has none, so Analysis fails and Digest must not
	// be called.
	NodesOnly bool
	// Binary is the executable a core dump's process ran: a Node.js core
	// (formats/nodecore) is read with its node binary's postmortem
	// metadata. Empty: the path the core names, when it exists.
	Binary string
	// NoSourceMaps turns source maps off: positions in minified scripts
	// and the minifier's names are shown as the dump has them. Otherwise
	// a V8 dump's scripts are mapped through their source maps (package
	// sourcemaps): every position a view prints, and the names of
	// functions and classes, before the analysis groups them.
	NoSourceMaps bool
	// Warn, if set, is told what went wrong without failing the open: a
	// source map that is missing or does not parse.
	Warn func(msg string)
}

// Stage is a step of the work that Options.Progress follows.
type Stage uint8

// The stages, in the order they happen.
const (
	// Reading is Open reading the dump.
	Reading Stage = iota + 1
	// Analyzing is the analysis: computed, or built from stored results.
	Analyzing
)

// String returns "reading" or "analyzing", a progress bar's label.
func (s Stage) String() string {
	switch s {
	case Reading:
		return "reading"
	case Analyzing:
		return "analyzing"
	}
	return fmt.Sprintf("Stage(%d)", uint8(s))
}

// Stored says what Open does with the analysis results a file carries.
type Stored uint8

const (
	// ReuseStored reads them and builds the analysis from them, without
	// recomputing the dominators and distances, when they fit the graph
	// and were computed under the policy the analysis would apply
	// (analysis.FromResults); otherwise the analysis is computed. The
	// default.
	ReuseStored Stored = iota
	// RecomputeStored reads them (StoredResults gives them) but computes
	// the analysis anew.
	RecomputeStored
	// SkipStored does not read them: for a program that wants only the
	// graph, it saves reading and checking them.
	SkipStored
)

// Dump is a heap dump read by Open, with its analysis, computed on first
// use: by Analysis, or by any method that needs it.
type Dump struct {
	path     string
	format   *formats.Format
	size     int64
	gzip     bool
	graph    *model.Graph
	stored   *model.Results
	edges    int // the dump's edge count, kept when NodesOnly left them out
	readTime time.Duration
	opts     Options

	analysisOnce sync.Once
	analysis     *analysis.Analysis
	analysisErr  error
	// maps are the source maps of the dump's scripts, nil when none is
	// used (Options.NoSourceMaps, or a dump without scripts).
	maps *sourcemaps.Set
}

// Open reads the heap dump at path, whatever its format, and the analysis
// results it carries (see Options.Stored). The format is told from the
// content (gzip is looked through), so the common mistakes (a wrong path,
// a directory, an archive, a CPU profile) get an error that says so. A
// path that can be read only once (a pipe, /dev/stdin) is read in one
// pass by the formats that can (V8, Firefox, .jsonl); the others say that
// they need a file. Every error names the file; bad input never panics
// (a reader bug is returned as an internal error).
//
// The analysis is not computed here but on first use, so a program that
// wants only the graph does not pay for it.
func Open(path string, opts Options) (_ *Dump, err error) {
	in, err := formats.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	d := &Dump{path: path, format: in.Format, gzip: in.Gzip, opts: opts}
	if opts.Stored != SkipStored {
		d.stored = &model.Results{}
	}
	progress := d.progress
	progress(Reading, 0, in.Size)
	defer func() {
		// A reader bug on hostile input must end in an error that names
		// the file, not a crash of the program using heapx.
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error while reading (please report it): %v", path, r)
		}
	}()
	start := time.Now()
	ro := formats.ReadOptions{
		Progress: func(done, total int64) { progress(Reading, done, total) },
		Results:  d.stored,
		Binary:   opts.Binary,
	}
	if opts.NodesOnly {
		ro.CountEdges = &d.edges
	}
	g, err := in.Read(ro)
	if err != nil {
		return nil, readError(path, err)
	}
	if !opts.NodesOnly {
		d.edges = g.NumEdges()
	}
	d.graph, d.readTime, d.size = g, time.Since(start), in.Size
	if !opts.NoSourceMaps && !opts.NodesOnly {
		d.maps = mapScripts(path, g, opts.Warn)
	}
	if d.stored != nil && d.stored.Shallow == nil {
		d.stored = nil // the file has none
	}
	return d, nil
}

// mapScripts finds the source maps of a V8 dump's scripts and gives its
// functions and classes the names the maps have for them (before the
// analysis makes classes of the names); nil for a dump with no script
// positions.
func mapScripts(path string, g *model.Graph, warn func(string)) *sourcemaps.Set {
	if len(g.Locations) == 0 && g.Trace == nil {
		return nil
	}
	res := analysis.NewResolver(g)
	maps := sourcemaps.ForDump(path, res, warn)
	sourcemaps.Rename(g, res, maps)
	return maps
}

// readError makes sure a read error names the file: a *formats.FormatError
// does already (with section and offset), as do readers that start their
// messages with it (nodecore's); an I/O error from the gzip layer may not.
func readError(path string, err error) error {
	var fe *formats.FormatError
	if errors.As(err, &fe) || strings.HasPrefix(err.Error(), path+": ") {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// progress calls Options.Progress, if set.
func (d *Dump) progress(s Stage, done, total int64) {
	if d.opts.Progress != nil {
		d.opts.Progress(s, done, total)
	}
}

// Path is the path the dump was opened from.
func (d *Dump) Path() string { return d.path }

// Format is the format the dump was read as (Format.Name is "v8",
// "spidermonkey", "hprof", "jsonl" or "sqlite").
func (d *Dump) Format() *formats.Format { return d.format }

// Size is the file's size in bytes, as stored (compressed when Gzip); for
// input read from a pipe, the bytes read.
func (d *Dump) Size() int64 { return d.size }

// Gzip says the file is gzip-compressed.
func (d *Dump) Gzip() bool { return d.gzip }

// ReadTime is how long reading the dump took (after detecting its format).
func (d *Dump) ReadTime() time.Duration { return d.readTime }

// Graph is the heap graph, the runtime-neutral form every format is read
// into. Nothing in heapx modifies it.
func (d *Dump) Graph() *model.Graph { return d.graph }

// EdgeCount is the number of edges in the dump, also after
// Options.NodesOnly left them out of the graph.
func (d *Dump) EdgeCount() int { return d.edges }

// StoredResults are the analysis results the file carries, checked
// against the graph by its reader (model.Results.Check); nil when it
// carries none or Options.Stored is SkipStored.
func (d *Dump) StoredResults() *model.Results { return d.stored }

// Analysis returns the dump's analysis (retained sizes, dominators,
// distances, classes: the columns of DevTools' Memory panel), computing
// it on the first call, or building it from the stored results (see
// Options.Stored). Later calls, from any goroutine, return the same
// analysis or error. The error names the file.
func (d *Dump) Analysis() (*analysis.Analysis, error) {
	d.analysisOnce.Do(func() {
		if d.opts.NodesOnly {
			d.analysisErr = fmt.Errorf("%s: opened without its edges (Options.NodesOnly), which the analysis needs", d.path)
			return
		}
		d.progress(Analyzing, 0, -1)
		if d.stored != nil && d.opts.Stored == ReuseStored {
			d.analysis, d.analysisErr = analysis.FromResults(d.graph, d.stored, d.opts.Analysis)
		} else {
			d.analysis, d.analysisErr = analysis.Analyze(d.graph, d.opts.Analysis)
		}
		if d.analysisErr != nil {
			d.analysis, d.analysisErr = nil, fmt.Errorf("%s: %w", d.path, d.analysisErr)
			return
		}
		if d.maps != nil {
			d.analysis.Resolver().SetMapper(d.maps)
		}
	})
	return d.analysis, d.analysisErr
}

// Digest returns what comparing the dump with later ones of a series
// needs of it, made after prev's (the dump before it; nil for the first):
// its ids, class counts and the sample the series checks use (see
// leak.Digest). It is a few bytes a node, so a caller that needs no
// more of the dump (query.Query.EarlierAsDigests) can drop the Dump and
// keep the digest. It computes shallow sizes and classes, not the
// dominators: Analysis(...).Digest gives the same from an analysed dump.
func (d *Dump) Digest(prev *leak.Digest) *leak.Digest {
	d.progress(Analyzing, 0, -1)
	return leak.NewDigest(d.graph, prev)
}

// Results returns the dump's analysis as the results a file stores
// (analysis.Analysis.Results): give them to formats.Save in
// formats.WriteOptions.Results to write a .jsonl or .db file that Open
// reads back without recomputing them.
func (d *Dump) Results() (*model.Results, error) {
	a, err := d.Analysis()
	if err != nil {
		return nil, err
	}
	return a.Results(), nil
}
