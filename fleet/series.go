package fleet

import (
	"fmt"
	"strings"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// series exports BASELINE TARGET FINAL (paths, oldest first) with
// FINAL's leaks table: the digests heapx leaks compares FINAL with are
// made of the first two as they are exported (or read, when in dir
// already), and the leaks computed when FINAL is analysed, before its
// partition is written. through(i) is called when dump i is through.
func (x *exporter) series(paths []string, through func(i int)) []Exported {
	results := make([]Exported, len(paths))
	last := len(paths) - 1
	snaps := make([]query.Snapshot, len(paths))
	var prev *leak.Digest
	for i, path := range paths[:last] {
		snaps[i].Path = path
		results[i] = x.one(path, func(a *analysis.Analysis, _ *parquet.Dump) error {
			snaps[i].Digest = leak.DigestOf(a, prev)
			return nil
		})
		if r := results[i]; r.Err == nil && r.Skipped {
			snaps[i].Digest, results[i].Err = x.digest(path, prev)
		}
		through(i)
		if results[i].Err != nil {
			for j := i + 1; j < len(paths); j++ {
				results[j] = Exported{Path: paths[j], Err: fmt.Errorf("%s: not exported: the leak series stopped at %s", paths[j], path)}
			}
			return results
		}
		prev = snaps[i].Digest
	}
	snaps[last].Path = paths[last]
	results[last] = x.one(paths[last], func(a *analysis.Analysis, pd *parquet.Dump) error {
		snaps[last].Analysis = a
		ws, err := query.CheckSeries(snaps, query.SeriesRules{Expected: "BASELINE, TARGET, FINAL, oldest first", Command: x.command})
		if err != nil {
			return err
		}
		if x.opt.Warn != nil {
			x.opt.Warn(ws)
		}
		if pd.Leaks, err = leakRows(snaps); err != nil {
			return err
		}
		for i := range pd.Leaks {
			pd.Leaks[i].BaselineDumpID, pd.Leaks[i].TargetDumpID = results[0].ID, results[1].ID
		}
		return nil
	})
	if results[last].Skipped {
		// Export refused a FINAL in dir already: skipped, it is BASELINE or TARGET again.
		results[last].Err = fmt.Errorf("%s: the same dump as BASELINE or TARGET; a leak series is three dumps taken one after the other", paths[last])
	}
	through(last)
	return results
}

// command is the command line the series' checks suggest for paths.
func (x *exporter) command(paths []string) string {
	if x.opt.Command != nil {
		return x.opt.Command(paths)
	}
	return strings.Join(paths, " ")
}

// opened is the Options a dump of the export is opened with: the
// caller's, with stored results as stored says and no progress of their
// own (the export counts bytes across dumps).
func (x *exporter) opened(stored hx.Stored) hx.Options {
	o := x.opt.Dump
	o.Stored, o.Progress = stored, nil
	return o
}

// digest is the digest of the dump at path, in dir already, made after
// prev's.
func (x *exporter) digest(path string, prev *leak.Digest) (*leak.Digest, error) {
	if x.opt.Digest != nil {
		return x.opt.Digest(path, prev)
	}
	d, err := hx.Open(path, x.opened(hx.SkipStored))
	if err != nil {
		return nil, err
	}
	return d.Digest(prev), nil
}

// leakRows are the rows of the leaks table for the series snaps
// (BASELINE and TARGET as digests, FINAL analysed): the leak clusters
// heapx leaks -n 0 finds with its default options, or, when the series'
// objects cannot be matched by id, the classes it compares by count.
// Their BaselineDumpID and TargetDumpID are the caller's.
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
