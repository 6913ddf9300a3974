package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	// The library, as hx: heapx is what the tests call the command.
	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/internal/progress"
	"github.com/heapx/heapx/query"
)

// binaries maps a run's stderr to its root --binary flag (the node
// executable a core dump is read with): load is given the stderr, and
// each run of the command tree has its own, so runs in parallel (the
// tests') each see their own flag.
var binaries sync.Map

// binaryFor returns the --binary flag of the run whose stderr is stderr.
func binaryFor(stderr *os.File) string {
	b, _ := binaries.Load(stderr)
	s, _ := b.(string)
	return s
}

// sourceMapsOff maps a run's stderr to its root --no-source-maps flag,
// as binaries does --binary.
var sourceMapsOff sync.Map

// mapOptions sets what source maps need of the Options of a dump read
// for the run whose stderr is stderr: whether --no-source-maps turned
// them off, and where what goes wrong with a map is said (each message
// once).
func mapOptions(stderr *os.File, opts *hx.Options) {
	off, _ := sourceMapsOff.Load(stderr)
	opts.NoSourceMaps, _ = off.(bool)
	var mu sync.Mutex
	said := map[string]bool{}
	opts.Warn = func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if !said[msg] {
			said[msg] = true
			fmt.Fprintf(stderr, "heapx: warning: %s\n", msg)
		}
	}
}

// openTrace opens the memory trace at path for the run whose stderr is
// stderr, its positions mapped through source maps unless
// --no-source-maps.
func openTrace(path string, stderr *os.File) (*query.Trace, error) {
	var opts hx.Options
	mapOptions(stderr, &opts)
	return hx.OpenTraceOptions(path, opts)
}

// dump is a heap dump opened through the heapx package, with the bars
// that draw its progress.
type dump struct {
	*hx.Dump
	bars *progress.Stages
}

// load opens the heap dump at path in whatever format it is (heapx.Open),
// drawing a progress bar on stderr when that is a terminal and the read is
// slow. Open checks the file first, so the common mistakes (wrong path, a
// directory, a file that is not a heap dump) get a message that says so
// instead of a parse error at byte 0, and reads a pipe once. opts.Stored
// and opts.Analysis are the caller's; the progress is load's.
func load(path string, stderr *os.File, opts hx.Options) (*dump, error) {
	if opts.Binary == "" {
		opts.Binary = binaryFor(stderr)
	}
	mapOptions(stderr, &opts)
	bars := &progress.Stages{W: stderr, Name: filepath.Base(path)}
	opts.Progress = bars.Set
	d, err := hx.Open(path, opts)
	bars.Done()
	if err != nil {
		return nil, err
	}
	return &dump{Dump: d, bars: bars}, nil
}

// analysis is the dump's analysis (Dump.Analysis), with a spinner on a
// terminal when it is slow.
func (d *dump) analysis() (*analysis.Analysis, error) {
	a, err := d.Analysis()
	d.bars.Done()
	return a, err
}

// loadAndAnalyze is load followed by the analysis, what every view but
// info needs. Results the file carries (heapx convert --analyze) are read
// and used, so reopening an analysed dump computes only the cheap columns.
func loadAndAnalyze(path string, stderr *os.File) (*dump, *analysis.Analysis, error) {
	d, err := load(path, stderr, hx.Options{})
	if err != nil {
		return nil, nil, err
	}
	a, err := d.analysis()
	if err != nil {
		return nil, nil, err
	}
	return d, a, nil
}

// loadSeries reads and analyses the snapshots of a session: FILE, then
// the BASELINEs of args, with binary ("": the root --binary) for a core.
func loadSeries(args []string, binary string, stderr *os.File) (file *hx.Dump, baselines []*hx.Dump, err error) {
	ds, err := readSeries(args, func(path string) (*hx.Dump, error) {
		d, err := load(path, stderr, hx.Options{Binary: binary})
		if err != nil {
			return nil, err
		}
		_, err = d.analysis()
		return d.Dump, err
	})
	if err != nil {
		return nil, nil, err
	}
	return ds[0], ds[1:], nil
}

// readSeries reads the files of args (FILE, then the BASELINEs) with
// read, into args' order. The baselines are read first, so the file
// reported on or explored is read last and a mistyped baseline fails
// before the long part.
func readSeries[T any](args []string, read func(path string) (T, error)) ([]T, error) {
	out := make([]T, len(args))
	for i := range args {
		j := (i + 1) % len(args)
		v, err := read(args[j])
		if err != nil {
			return nil, err
		}
		out[j] = v
	}
	return out, nil
}

// loadDigest reads the dump at path and keeps only its digest (see
// heapx.Dump.Digest), made after prev's, for a query that needs no more
// of it (query.Query.EarlierAsDigests): the graph is garbage before the
// next file is read.
func loadDigest(path string, prev *leak.Digest, stderr *os.File) (*leak.Digest, error) {
	d, err := load(path, stderr, hx.Options{Stored: hx.SkipStored})
	if err != nil {
		return nil, err
	}
	defer d.bars.Done()
	return d.Digest(prev), nil
}
