// Package fleet exports many heap dumps, analysed, into a directory in
// the Parquet form of the exchange format (docs/format.md, section 10),
// for DuckDB, Spark or Trino to query across dumps: what heapx export
// does, for any Go program that collects dumps. It opens each dump
// through the heapx facade, so it sits above it.
package fleet

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/query"
)

// Options tune Export.
type Options struct {
	// Labels go to every exported dump's dumps and labels tables.
	Labels []parquet.Label
	// Jobs is how many dumps are analysed at once, each held in memory;
	// 0 means runtime.GOMAXPROCS.
	Jobs int
	// Leaks says the dumps are BASELINE TARGET FINAL, one series of one
	// process oldest first: FINAL's partition gets the leaks table, and
	// it must not be in the directory yet (a partition is never
	// rewritten).
	Leaks bool
	// Dump is how each dump is opened: a core's Binary, source maps and
	// their warnings. Stored and Progress are the export's own.
	Dump hx.Options
	// Generator names the program that writes the partitions.
	Generator string
	// Progress, if set, is told how many bytes of the dumps are through
	// out of their total, from any goroutine.
	Progress func(done, total int64)
	// Warn, if set, is told what a leak series' checks found doubtful.
	Warn func([]query.Warning)
	// Command is the command line a leak series' checks suggest to
	// export the dumps paths in another order; nil: the paths.
	Command func(paths []string) string
	// Digest reads the digest of a dump of a leak series that is in the
	// directory already (made after prev's); nil opens it with
	// heapx.Open and Dump.
	Digest func(path string, prev *leak.Digest) (*leak.Digest, error)
}

// Exported is what became of one dump of an export.
type Exported struct {
	Path string
	// ID is the dump id, "" when the file could not be read.
	ID string
	// Skipped says a partition with ID was in the directory already.
	Skipped bool
	// Nodes is the dump's node count, Size its file's.
	Nodes int
	Size  int64
	// Err says why the dump was not exported.
	Err error
}

// Export exports the dumps at paths into dir (created if missing), one
// partition dir/dump=<id> per dump, with its objects, references,
// classes and leak suspects: dumps already in dir are skipped, and each
// partition is written whole or not at all (parquet.WritePartition).
// The error is for the export as a whole (dir unusable, a dump missing,
// FINAL of a leak series in dir already); each dump's own failure is in
// its Exported.
func Export(dir string, paths []string, opt Options) ([]Exported, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	have, err := parquet.Prepare(dir)
	if err != nil {
		return nil, err
	}
	var total int64
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("%s: no such file", p)
		}
		sizes[i] = st.Size()
		total += sizes[i]
	}
	if opt.Leaks {
		if err := checkFinalNew(dir, paths[len(paths)-1], have); err != nil {
			return nil, err
		}
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(int64, int64) {}
	}
	progress(0, total)
	var done atomic.Int64
	through := func(i int) { progress(done.Add(sizes[i]), total) }
	x := &exporter{dir: dir, opt: opt, have: have}
	var results []Exported
	if opt.Leaks {
		// One after the other: each needs the digest of the one before.
		results = x.series(paths, through)
	} else {
		results = x.parallel(paths, through)
	}
	for i := range results {
		results[i].Size = sizes[i]
	}
	return results, nil
}

// checkFinalNew refuses a leak series whose FINAL is in dir already: its
// leaks table is written with its partition.
func checkFinalNew(dir, final string, have map[string]bool) error {
	id, _, err := parquet.ContentID(final)
	if err != nil {
		return err
	}
	if have[id] {
		return fmt.Errorf("%s: its partition %s is in %s already, without this series' leaks; a partition is never rewritten (remove it to export the series with --leaks)",
			final, parquet.PartitionPrefix+id, dir)
	}
	return nil
}

// exporter is one export into dir.
type exporter struct {
	dir  string
	opt  Options
	mu   sync.Mutex      // guards have, so two equal files in one run are one dump
	have map[string]bool // the ids in dir, and those being written
}

// parallel exports paths on opt.Jobs workers, one dump each at a time.
func (x *exporter) parallel(paths []string, through func(i int)) []Exported {
	jobs := x.opt.Jobs
	if jobs < 1 {
		jobs = runtime.GOMAXPROCS(0)
	}
	results := make([]Exported, len(paths))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(paths)) {
		wg.Go(func() {
			for i := range next {
				results[i] = x.one(paths[i], nil)
				if r := results[i]; r.Err != nil && r.ID != "" {
					// Not in dir after all: a copy of it later on is tried.
					x.mu.Lock()
					delete(x.have, r.ID)
					x.mu.Unlock()
				}
				through(i)
			}
		})
	}
	for i := range paths {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// one analyses the dump at path and writes its partition, unless one
// with its id is in dir already. with, when not nil, is called with the
// analysis and the partition before it is written (series).
func (x *exporter) one(path string, with func(a *analysis.Analysis, pd *parquet.Dump) error) Exported {
	r := Exported{Path: path}
	id, sum, err := parquet.ContentID(path)
	if err != nil {
		r.Err = err
		return r
	}
	r.ID = id
	x.mu.Lock()
	r.Skipped = x.have[id]
	x.have[id] = true
	x.mu.Unlock()
	if r.Skipped {
		return r
	}
	d, err := hx.Open(path, x.opened(hx.ReuseStored))
	if err != nil {
		r.Err = err
		return r
	}
	a, err := d.Analysis()
	if err != nil {
		r.Err = fmt.Errorf("%s: %w", path, err)
		return r
	}
	if r.Err = x.write(a, path, id, sum, with); r.Err != nil {
		r.Err = fmt.Errorf("%s: %w", path, r.Err)
		return r
	}
	r.Nodes = d.Graph().NumNodes()
	return r
}

// write writes the partition of the dump at path, analysed as a.
func (x *exporter) write(a *analysis.Analysis, path, id, sum string, with func(a *analysis.Analysis, pd *parquet.Dump) error) error {
	pd, err := partition(a, path, id, sum, x.opt.Labels)
	if err != nil {
		return err
	}
	pd.Generator = x.opt.Generator
	if with != nil {
		if err := with(a, pd); err != nil {
			return err
		}
	}
	_, err = parquet.WritePartition(x.dir, pd)
	return err
}
