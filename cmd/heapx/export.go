package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

func newExportCmd(stderr *os.File) *cobra.Command {
	var dir string
	var labels []string
	var jobs int
	c := &cobra.Command{
		Use:   "export --parquet DIR DUMP...",
		Short: "Export many heap dumps, analysed, to a Parquet directory for fleet queries",
		Long: `Export the heap dumps DUMP... (any format heapx reads) into DIR, the
Parquet form of the exchange format (docs/format.md, section 10): one
partition DIR/dump=<id> per dump, with its objects (retained sizes,
dominators, distances, classes), references, classes and leak suspects,
for DuckDB (heapx sql), Spark or Trino to query across dumps.

Dumps are analysed on every core, one dump per worker at a time (--jobs),
so memory stays that of --jobs dumps. The dump id is the start of the
SHA-256 of the file's bytes: a dump whose partition DIR has already is
skipped, so exporting a growing set of dumps into one DIR again writes
only the new ones. Labels (--label service=api --label release=42) go to
the dumps and labels tables, for selecting dumps by service or release.

Each partition is written into a hidden temporary directory and renamed
into place when complete: an interrupted export leaves every partition
complete or absent (the next export removes what it left). One export at a
time per DIR.

heapx summary DIR/dump=<id> (and every other command) reads a partition
back like a dump file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return errors.New("export needs --parquet DIR, the directory to write (see heapx export --help)")
			}
			if len(args) == 0 {
				return errors.New("export needs at least one DUMP to export (see heapx export --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ls, err := parseLabels(labels)
			if err != nil {
				return err
			}
			return export(cmd.OutOrStdout(), stderr, dir, args, ls, jobs)
		},
	}
	c.Flags().StringVar(&dir, "parquet", "", "the Parquet directory to write (created if missing)")
	c.Flags().StringArrayVar(&labels, "label", nil, "a KEY=VALUE label for every dump of this export (repeatable)")
	c.Flags().IntVar(&jobs, "jobs", runtime.GOMAXPROCS(0), "dumps analysed at once (each holds one dump in memory)")
	return c
}

// parseLabels turns --label KEY=VALUE flags into labels, in order.
func parseLabels(flags []string) ([]parquet.Label, error) {
	var out []parquet.Label
	seen := map[string]bool{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--label %q: want KEY=VALUE, such as --label service=api", f)
		}
		if seen[k] {
			return nil, fmt.Errorf("--label %s given twice", k)
		}
		seen[k] = true
		out = append(out, parquet.Label{Key: k, Value: v})
	}
	return out, nil
}

// exported is what became of one dump of an export.
type exported struct {
	path, id string
	skipped  bool
	nodes    int
	err      error
}

func export(stdout io.Writer, stderr *os.File, dir string, dumps []string, labels []parquet.Label, jobs int) error {
	if jobs < 1 {
		return fmt.Errorf("--jobs %d: want at least 1", jobs)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	have, err := parquet.Prepare(dir)
	if err != nil {
		return err
	}
	var total int64
	sizes := make([]int64, len(dumps))
	for i, p := range dumps {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s: no such file", p)
		}
		sizes[i] = st.Size()
		total += sizes[i]
	}
	defer cleanUpOnInterrupt(stderr, "")()

	start := time.Now()
	bar := startProgress(stderr, fmt.Sprintf("exporting %d dumps", len(dumps)), total)
	var done atomic.Int64
	results := make([]exported, len(dumps))
	var mu sync.Mutex // guards have, so two equal files in one run are one dump
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(dumps)) {
		wg.Go(func() {
			for i := range next {
				results[i] = exportOne(dir, dumps[i], labels, &mu, have)
				if r := results[i]; r.err != nil && r.id != "" {
					// Not in DIR after all: a copy of it later on is tried.
					mu.Lock()
					delete(have, r.id)
					mu.Unlock()
				}
				bar.set(done.Add(sizes[i]))
			}
		})
	}
	for i := range dumps {
		next <- i
	}
	close(next)
	wg.Wait()
	bar.done()

	var failed, wrote, skipped int
	var bytes int64
	for i, r := range results {
		switch {
		case r.err != nil:
			failed++
			fmt.Fprintf(stderr, "heapx: %v\n", r.err)
		case r.skipped:
			skipped++
			fmt.Fprintf(stdout, "skipped %s: dump=%s is in %s already\n", r.path, r.id, dir)
		default:
			wrote++
			bytes += sizes[i]
			fmt.Fprintf(stdout, "wrote %s: %s nodes from %s\n", parquet.PartitionDir(dir, r.id), query.Thousands(uint64(r.nodes)), r.path)
		}
	}
	secs := time.Since(start).Seconds()
	fmt.Fprintf(stdout, "exported %d of %d dumps (%d skipped, %d failed) in %.2f s: %.2f dumps/s, %.1f MB/s\n",
		wrote, len(dumps), skipped, failed, secs, float64(wrote)/secs, float64(bytes)/1e6/secs)
	if failed > 0 {
		return fmt.Errorf("%d of %d dumps not exported", failed, len(dumps))
	}
	return nil
}

// exportOne analyses the dump at path and writes its partition, unless
// one with its id is in have already.
func exportOne(dir, path string, labels []parquet.Label, mu *sync.Mutex, have map[string]bool) exported {
	r := exported{path: path}
	id, sum, err := parquet.ContentID(path)
	if err != nil {
		r.err = err
		return r
	}
	r.id = id
	mu.Lock()
	r.skipped = have[id]
	have[id] = true
	mu.Unlock()
	if r.skipped {
		return r
	}
	d, err := hx.Open(path, hx.Options{})
	if err != nil {
		r.err = err
		return r
	}
	a, err := d.Analysis()
	if err != nil {
		r.err = fmt.Errorf("%s: %w", path, err)
		return r
	}
	pd, err := partitionOf(d, a, path, id, sum, labels)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", path, err)
		return r
	}
	if _, err := parquet.WritePartition(dir, pd); err != nil {
		r.err = fmt.Errorf("%s: %w", path, err)
		return r
	}
	r.nodes = d.Graph().NumNodes()
	return r
}

// partitionOf gathers what a partition holds from the dump's analysis:
// the same results, classes and suspects heapx's views show.
func partitionOf(d *hx.Dump, a *analysis.Analysis, path, id, sum string, labels []parquet.Label) (*parquet.Dump, error) {
	g := d.Graph()
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	info := parquet.DumpRow{DumpID: id, ContentSHA256: sum, File: abs, FileSize: st.Size(),
		CaptureTimeMillis: st.ModTime().UnixMilli(), CaptureTimeFrom: "file", Labels: labels,
		TotalSize: int64(a.TotalSize())}
	if ms, ok := captureTime(g); ok {
		info.CaptureTimeMillis, info.CaptureTimeFrom = ms, "dump"
	}
	pd := &parquet.Dump{Graph: g, Results: a.Results(), Info: info,
		ClassOf: a.Classes.Of, ClassNames: a.Classes.Names, Generator: generator()}
	if of, frames := a.AllocatingFunctions(); of != nil {
		pd.SiteOf = of
		for _, f := range frames {
			pd.SiteNames = append(pd.SiteNames, query.FrameText(f))
		}
	}
	for _, c := range a.Summary() {
		pd.Classes = append(pd.Classes, parquet.ClassRow{Class: c.Name, ClassKey: c.Key, Count: int64(c.Count),
			ShallowSize: int64(c.Shallow), RetainedSize: int64(c.Retained), Distance: c.Distance})
	}
	rows, err := suspectRows(a, path)
	if err != nil {
		return nil, err
	}
	pd.Suspects = rows
	return pd, nil
}

// captureTime is when the dump was taken, in ms since the Unix epoch,
// when the dump records it (HPROF, Firefox; V8 snapshots do not).
func captureTime(g *model.Graph) (int64, bool) {
	if v, ok := g.MetaValue("hprof:timestamp"); ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil && ms > 0 {
			return ms, true
		}
	}
	if v, ok := g.MetaValue("spidermonkey:timestamp_us"); ok {
		if us, err := strconv.ParseInt(v, 10, 64); err == nil && us > 0 {
			return us / 1000, true
		}
	}
	return 0, false
}

// suspectRows are the dump's leak suspects as heapx suspects finds them
// (its default threshold), as rows of the suspects table.
func suspectRows(a *analysis.Analysis, path string) ([]parquet.SuspectRow, error) {
	res, sus, err := query.SuspectsResult(query.Snapshot{Path: path, Analysis: a}, defaultSuspectThreshold, 0)
	if err != nil {
		return nil, err
	}
	t := res.Sections[0].Table
	col := map[string]int{}
	for i, c := range t.Columns {
		col[c.Key] = i
	}
	text := func(row []any, key string) string {
		if i, ok := col[key]; ok && i < len(row) {
			return fmt.Sprint(row[i])
		}
		return ""
	}
	g := a.Graph
	total := a.TotalSize()
	rows := make([]parquet.SuspectRow, len(t.Rows))
	for i, row := range t.Rows {
		s := sus[i]
		rows[i] = parquet.SuspectRow{Rank: int32(i + 1), Kind: text(row, "kind"), Holder: text(row, "holder"),
			HolderID: int64(g.Nodes.ID[s.Holder]), RetainedSize: int64(s.Retained), Share: query.Share(s.Retained, total) / 100,
			Point: text(row, "point"), PointID: int64(g.Nodes.ID[s.Point]), HeldBy: text(row, "held_by"),
			Class: text(row, "class"), Count: int64(s.Count), ClassRetainedSize: int64(s.ClassRetained)}
		if site := text(row, "allocated_in"); site != "" {
			rows[i].Site = &site
		}
	}
	return rows, nil
}

// defaultSuspectThreshold is heapx suspects' default --threshold, in
// percent of the heap.
const defaultSuspectThreshold = 10.0
