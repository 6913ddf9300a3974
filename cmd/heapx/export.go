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
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

func newExportCmd(stderr *os.File) *cobra.Command {
	var dir string
	var labels []string
	var jobs int
	var leaks bool
	c := &cobra.Command{
		Use:   "export --parquet DIR [--leaks] DUMP...",
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

With --leaks, the dumps are BASELINE TARGET FINAL, one series of one
process oldest first, as heapx leaks takes them: all three are exported,
and FINAL's partition gets the leaks table too, the leak clusters heapx
leaks -n 0 finds in them (default options). FINAL must not be in DIR yet:
a partition is never rewritten.

heapx summary DIR/dump=<id> (and every other command) reads a partition
back like a dump file.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return errors.New("export needs --parquet DIR, the directory to write (see heapx export --help)")
			}
			if len(args) == 0 {
				return errors.New("export needs at least one DUMP to export (see heapx export --help)")
			}
			if leaks && len(args) != 3 {
				return fmt.Errorf("export --leaks needs three dumps, BASELINE TARGET FINAL (oldest first), not %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ls, err := parseLabels(labels)
			if err != nil {
				return err
			}
			return export(cmd.OutOrStdout(), stderr, dir, args, ls, jobs, leaks)
		},
	}
	c.Flags().StringVar(&dir, "parquet", "", "the Parquet directory to write (created if missing)")
	c.Flags().StringArrayVar(&labels, "label", nil, "a KEY=VALUE label for every dump of this export (repeatable)")
	c.Flags().BoolVar(&leaks, "leaks", false, "the dumps are BASELINE TARGET FINAL: add their leaks table to FINAL's partition")
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

func export(stdout io.Writer, stderr *os.File, dir string, dumps []string, labels []parquet.Label, jobs int, leaks bool) error {
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
	if leaks {
		// FINAL's partition must be new: its leaks table is written with it.
		final := dumps[len(dumps)-1]
		id, _, err := parquet.ContentID(final)
		if err != nil {
			return err
		}
		if have[id] {
			return fmt.Errorf("%s: its partition %s is in %s already, without this series' leaks; a partition is never rewritten (remove it to export the series with --leaks)",
				final, parquet.PartitionPrefix+id, dir)
		}
	}
	defer cleanUpOnInterrupt(stderr, "")()

	start := time.Now()
	bar := startProgress(stderr, fmt.Sprintf("exporting %d dumps", len(dumps)), total)
	var done atomic.Int64
	results := make([]exported, len(dumps))
	var mu sync.Mutex // guards have, so two equal files in one run are one dump
	if leaks {
		// One after the other: each needs the digest of the one before.
		results = exportSeries(stderr, dir, dumps, labels, &mu, have, func(i int) { bar.set(done.Add(sizes[i])) })
	} else {
		next := make(chan int)
		var wg sync.WaitGroup
		for range min(jobs, len(dumps)) {
			wg.Go(func() {
				for i := range next {
					results[i] = exportOne(dir, dumps[i], labels, &mu, have, nil)
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
	}
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
			fmt.Fprintf(stdout, "wrote %s: %s nodes from %s\n", parquet.PartitionDir(dir, r.id), humanize.Thousands(uint64(r.nodes)), r.path)
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
// one with its id is in have already. with, when not nil, is called with
// the analysis and the partition before it is written (exportSeries).
func exportOne(dir, path string, labels []parquet.Label, mu *sync.Mutex, have map[string]bool,
	with func(a *analysis.Analysis, pd *parquet.Dump) error) exported {
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
	if with != nil {
		if err := with(a, pd); err != nil {
			r.err = fmt.Errorf("%s: %w", path, err)
			return r
		}
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
	if of, frames := alloc.AllocatingFunctions(a); of != nil {
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
			HolderID: int64(g.Nodes.ID.At(int(s.Holder))), RetainedSize: int64(s.Retained), Share: humanize.Share(s.Retained, total) / 100,
			Point: text(row, "point"), PointID: int64(g.Nodes.ID.At(int(s.Point))), HeldBy: text(row, "held_by"),
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

// exportSeries exports BASELINE TARGET FINAL (dumps, oldest first) with
// FINAL's leaks table: the digests heapx leaks compares FINAL with are
// made of the first two as they are exported (or read, when in DIR
// already), and the leaks computed when FINAL is analysed, before its
// partition is written. done(i) is called when dump i is through.
func exportSeries(stderr *os.File, dir string, dumps []string, labels []parquet.Label, mu *sync.Mutex, have map[string]bool,
	done func(i int)) []exported {
	results := make([]exported, len(dumps))
	last := len(dumps) - 1
	snaps := make([]query.Snapshot, len(dumps))
	var prev *leak.Digest
	for i, path := range dumps[:last] {
		snaps[i].Path = path
		results[i] = exportOne(dir, path, labels, mu, have, func(a *analysis.Analysis, _ *parquet.Dump) error {
			snaps[i].Digest = leak.DigestOf(a, prev)
			return nil
		})
		if r := results[i]; r.err == nil && r.skipped {
			snaps[i].Digest, results[i].err = loadDigest(path, prev, stderr)
		}
		done(i)
		if results[i].err != nil {
			for j := i + 1; j < len(dumps); j++ {
				results[j] = exported{path: dumps[j], err: fmt.Errorf("%s: not exported: the leak series stopped at %s", dumps[j], path)}
			}
			return results
		}
		prev = snaps[i].Digest
	}
	snaps[last].Path = dumps[last]
	results[last] = exportOne(dir, dumps[last], labels, mu, have, func(a *analysis.Analysis, pd *parquet.Dump) error {
		snaps[last].Analysis = a
		ws, err := query.CheckSeries(snaps, query.SeriesRules{Expected: "BASELINE, TARGET, FINAL, oldest first",
			Command: func(p []string) string { return "heapx export --parquet " + dir + " --leaks " + strings.Join(p, " ") }})
		if err != nil {
			return err
		}
		warnOnStderr(stderr, ws)
		if pd.Leaks, err = leakRows(snaps); err != nil {
			return err
		}
		for i := range pd.Leaks {
			pd.Leaks[i].BaselineDumpID, pd.Leaks[i].TargetDumpID = results[0].id, results[1].id
		}
		return nil
	})
	if results[last].skipped {
		// export refused a FINAL in DIR already: skipped, it is BASELINE or TARGET again.
		results[last].err = fmt.Errorf("%s: the same dump as BASELINE or TARGET; a leak series is three dumps taken one after the other", dumps[last])
	}
	done(last)
	return results
}

// leakRows are the rows of the leaks table for the series snaps
// (BASELINE and TARGET as digests, FINAL analysed): the leak clusters
// heapx leaks -n 0 finds with its default options, or, when the series'
// objects cannot be matched by id, the classes it compares by count.
func leakRows(snaps []query.Snapshot) ([]parquet.LeakRow, error) {
	res, lr, err := query.LeaksResult(snaps[0], snaps[1], snaps[2], 0, leak.LeakOptions{})
	if err != nil {
		return nil, err
	}
	a := snaps[2].Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	if lr.Matching == leak.MatchByClass {
		return classLeakRows(snaps[0].Digest, snaps[1].Digest, a, nm), nil
	}
	g := a.Graph
	t := res.Sections[0].Table
	site := -1
	for i, c := range t.Columns {
		if c.Key == "allocated_in" {
			site = i
		}
	}
	rows := make([]parquet.LeakRow, len(lr.Clusters))
	for i, cl := range lr.Clusters {
		// The path heapx leaks shows for the representative, not the
		// trace the clusters were formed by.
		path := query.ShownPath(a, cl.Representative)
		if path.Cost < 0 {
			path = cl.Path
		}
		rows[i] = parquet.LeakRow{Matching: leak.MatchByID.String(), Rank: int32(i + 1), Class: a.Classes.Name(cl.Representative),
			Count: int64(cl.Count), Objects: int64(cl.Objects), RetainedSize: int64(cl.Retained),
			RepresentativeID: int64(g.Nodes.ID.At(int(cl.Representative))), Path: query.PathText(a, nm, path)}
		if site >= 0 {
			if s := fmt.Sprint(t.Rows[i][site]); s != "" {
				rows[i].Site = &s
			}
		}
	}
	return rows, nil
}

// classLeakRows are the leaks table's "class" rows: the classes with
// more instances in the target and the final dump than in the baseline
// (leak.ClassLeaks, as heapx leaks lists them when objects cannot be
// matched), each with the path of its largest instance.
func classLeakRows(baseline, target *leak.Digest, final *analysis.Analysis, nm *analysis.Namer) []parquet.LeakRow {
	cls := leak.ClassLeaks(baseline.Classes, target.Classes, final)
	examples := make([]model.NodeIndex, len(cls))
	for i, c := range cls {
		examples[i] = max(c.Example, final.Graph.Root)
	}
	paths := final.ShortestPaths(examples)
	rows := make([]parquet.LeakRow, len(cls))
	for i, c := range cls {
		counts := [3]int64{int64(c.Counts[0]), int64(c.Counts[1]), int64(c.Counts[2])}
		rows[i] = parquet.LeakRow{Matching: leak.MatchByClass.String(), Rank: int32(i + 1), Class: c.Name,
			Count: int64(c.Kept), Objects: int64(c.Kept), RetainedSize: int64(c.KeptSize),
			BaselineCount: &counts[0], TargetCount: &counts[1], FinalCount: &counts[2]}
		if c.Example != model.NoNode {
			rows[i].RepresentativeID = int64(final.Graph.Nodes.ID.At(int(c.Example)))
			rows[i].Path = query.PathText(final, nm, paths[i])
		}
	}
	return rows
}
