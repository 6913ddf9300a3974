package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// suspectThreshold is the share of the heap, in percent, above which a
// holder is a leak suspect of the suspects table: heapx suspects'
// default --threshold, so the table holds what that view shows.
const suspectThreshold = 10.0

// partition gathers what the partition of the dump at path (dump id id,
// content digest sum) holds from its analysis a: the same results,
// classes and suspects heapx's views show, and labels. Its Generator
// and Leaks are the caller's.
func partition(a *analysis.Analysis, path, id, sum string, labels []parquet.Label) (*parquet.Dump, error) {
	g := a.Graph
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
		ClassOf: a.Classes.Of, ClassNames: a.Classes.Names}
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

// captureTime is when the dump of g was taken, in ms since the Unix
// epoch, when the dump records it (HPROF, Firefox; V8 snapshots do not).
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
// (suspectThreshold), as rows of the suspects table.
func suspectRows(a *analysis.Analysis, path string) ([]parquet.SuspectRow, error) {
	res, sus, err := query.SuspectsResult(query.Snapshot{Path: path, Analysis: a}, suspectThreshold, 0)
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
