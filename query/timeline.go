package query

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/humanize"
)

func init() {
	Register(&Query{
		Name: "timeline", Group: GroupLeaks, Usage: "FILE.heaptimeline", MinInputs: 1, MaxInputs: 1,
		Title: "Objects still alive by the time they were allocated, from an allocation timeline (DevTools' timeline bars)",
		Help: `Read an allocation timeline (heapx capture --timeline, DevTools'
"Allocation instrumentation on timeline") as DevTools draws its bars: per
time bucket, the objects allocated then that are still alive at the end,
with their count, size and top allocation sites; the live heap as it was
built up over time, for the top sites too; and the age of the live
objects. Buckets split the recorded time evenly (--buckets N) or are
--bucket long (500ms, 2s).`,
		Args: []Arg{
			{Name: "buckets", Kind: IntArg, Default: 10, Help: "split the recorded time into `N` buckets"},
			{Name: "bucket", Kind: StringArg, Default: "", Help: "make each bucket `DURATION` long (500ms, 2s) instead"},
			{Name: "sites", Kind: IntArg, Default: 3, Help: "allocation sites to list per bucket"},
		},
		Run: runTimeline,
	})
	Register(&Query{
		Name: "site-growth", Group: GroupLeaks, Usage: "S1 S2 [S3...]", MinInputs: 2,
		Title: "Allocation sites whose live object count grows at every snapshot of a series",
		Help: `Count the live objects of every allocation site (function and
script:line:column) in each snapshot of a series taken with allocation
stacks (node --track-heap-objects, or timelines), oldest first, and list
the sites whose count grows at every step: MemInsight's leak rule, with
live objects for stale ones. Take the snapshots at idle points (between
requests, after repeating an action). --all lists every site.`,
		Args: []Arg{limitArg(20), {Name: "all", Kind: BoolArg, Default: false,
			Help: "list every site, not only the growing ones"}},
		Run: runSiteGrowth,
	})
}

func runTimeline(c *Context) (*Result, error) {
	opt := alloc.TimelineOptions{Buckets: c.Int("buckets"), Sites: c.Int("sites")}
	if opt.Buckets < 1 {
		return nil, fmt.Errorf("--buckets must be 1 or more, not %d", opt.Buckets)
	}
	if opt.Sites < 0 {
		return nil, fmt.Errorf("--sites must be 0 or more, not %d", opt.Sites)
	}
	if b := c.String("bucket"); b != "" {
		d, err := time.ParseDuration(b)
		if err != nil || d < time.Microsecond {
			return nil, fmt.Errorf("--bucket %q: want a duration of a microsecond or more, such as 500ms or 2s", b)
		}
		opt.BucketMicros = uint64(d.Microseconds())
	}
	sn := c.Snapshots[0]
	return TimelineResult(sn.Path, sn.Analysis, opt)
}

// TimelineResult lays out alloc.Timeline of the dump at path: the
// buckets (a bar chart, as DevTools draws them), the live heap over time
// with its top sites (a line chart) and the age histogram. When heapx
// capture kept V8's heap statistics beside the timeline (the graph's
// HeapStats) and opt has none, they are taken from there, and the
// buckets say how many objects were alive at their end.
func TimelineResult(path string, a *analysis.Analysis, opt alloc.TimelineOptions) (*Result, error) {
	statsFile := "given"
	if hs := a.Graph.HeapStats; opt.Stats == nil && hs != nil {
		if hs.Err != nil {
			return nil, hs.Err
		}
		opt.Stats, statsFile = hs.Updates, hs.File
	}
	tl, err := alloc.Timeline(a, opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var tracked int
	for _, b := range tl.Buckets {
		tracked += b.Count
	}
	r := &Result{Header: []string{fmt.Sprintf("%s: allocation timeline of %s, %d samples; %s live objects allocated while tracked, %s from before the first sample",
		path, seconds(tl.Duration), tl.Samples, humanize.Thousands(uint64(tracked)), humanize.Thousands(uint64(tl.BeforeCount)))}}

	bt := &Table{Columns: []Column{{Key: "time", Title: "Allocated", Kind: Text},
		{Key: "start_ms", Title: "From ms", Kind: Count}, {Key: "end_ms", Title: "To ms", Kind: Count},
		{Key: "count", Title: "Still alive", Kind: Count}, {Key: "size", Title: "Size", Kind: Bytes},
		{Key: "surviving", Title: "Alive by then", Kind: Count}, {Key: "surviving_size", Title: "Size by then", Kind: Bytes},
		{Key: "sites", Title: "Top sites", Kind: Text}}}
	withLive := tl.Live != nil
	if withLive {
		// Before the sites, which are the widest.
		bt.Columns = slices.Insert(bt.Columns, len(bt.Columns)-1,
			Column{Key: "live_count", Title: "Live then", Kind: Count}, Column{Key: "live_size", Title: "Live size then", Kind: Bytes})
	}
	for _, b := range tl.Buckets {
		var sites []string
		for _, s := range b.Sites {
			sites = append(sites, fmt.Sprintf("%s %s", siteName(s.Frame), humanize.Thousands(uint64(s.Count))))
		}
		row := []any{seconds(b.Start) + " – " + seconds(b.End), int64(b.Start / 1000), int64(b.End / 1000),
			b.Count, b.Size, b.Surviving, b.SurvivingSize}
		if withLive {
			row = append(row, b.LiveCount, b.LiveSize)
		}
		bt.Rows = append(bt.Rows, append(row, strings.Join(sites, ", ")))
	}
	buckets := &Section{Heading: "Objects still alive, by when they were allocated", Table: bt,
		Chart: &Chart{Label: "time", Value: "count"},
		Notes: []string{fmt.Sprintf("Before the first sample: %s live objects (%s), alive by then in every row. After the last sample (while the snapshot was taken): %s (%s), in no row.",
			humanize.Thousands(uint64(tl.BeforeCount)), humanize.Size(tl.BeforeSize), humanize.Thousands(uint64(tl.AfterCount)), humanize.Size(tl.AfterSize))}}
	if withLive {
		peak := tl.Live[0]
		for _, p := range tl.Live {
			if p.Count > peak.Count {
				peak = p
			}
		}
		first, last := tl.Live[0], tl.Live[len(tl.Live)-1]
		buckets.Notes = append(buckets.Notes, fmt.Sprintf("\"Live then\" is every object alive at the bucket's end, from V8's %d heap statistics updates (%s): %s objects (%s) at the start, at most %s (%s) at %s, %s (%s) at the end.",
			len(tl.Live), statsFile, humanize.Thousands(uint64(first.Count)), humanize.Size(first.Size), humanize.Thousands(uint64(peak.Count)), humanize.Size(peak.Size),
			seconds(peak.Micros), humanize.Thousands(uint64(last.Count)), humanize.Size(last.Size)))
	}
	r.Sections = append(r.Sections, buckets)

	if tl.Stacks {
		cols := []Column{{Key: "end_ms", Title: "To ms", Kind: Count}, {Key: "total", Title: "All sites", Kind: Count}}
		for i, s := range tl.Series {
			cols = append(cols, Column{Key: fmt.Sprintf("site_%d", i+1), Title: Shorten(siteName(s.Frame), 40), Kind: Count})
		}
		st := &Table{Columns: cols}
		for i, b := range tl.Buckets {
			row := []any{int64(b.End / 1000), b.Count}
			for _, s := range tl.Series {
				row = append(row, s.Counts[i])
			}
			st.Rows = append(st.Rows, row)
		}
		r.Sections = append(r.Sections, &Section{Heading: "Top allocation sites over time (objects still alive, per bucket)", Table: st,
			Chart: &Chart{Label: "end_ms", Value: "total", Kind: ChartLine}})
	} else {
		r.Notes = append(r.Notes, "The timeline has no allocation stacks, so no sites.")
	}

	at := &Table{Columns: []Column{{Key: "age", Title: "Age", Kind: Text}, {Key: "count", Title: "Objects", Kind: Count},
		{Key: "size", Title: "Size", Kind: Bytes}, {Key: "percent", Title: "% of objects", Kind: Percent}}}
	live := uint64(tracked + tl.BeforeCount)
	for _, b := range tl.Ages {
		age := "≥ " + seconds(b.Min)
		switch {
		case b.Min == 0:
			age = "< " + seconds(b.Max)
		case b.Max > 0:
			age = seconds(b.Min) + " – " + seconds(b.Max)
		}
		at.Rows = append(at.Rows, []any{age, b.Count, b.Size, humanize.Share(uint64(b.Count), live)})
	}
	at.Rows = append(at.Rows, []any{"older (before the first sample)", tl.BeforeCount, tl.BeforeSize, humanize.Share(uint64(tl.BeforeCount), live)})
	r.Sections = append(r.Sections, &Section{Heading: "Age of the live objects at the end of the timeline", Table: at,
		Chart: &Chart{Label: "age", Value: "count"}})
	note := "A timeline keeps which objects allocated in each bucket are alive at the end, not how many were alive at each moment: \"Alive by then\" is the final heap as it was built up. Native (embedder) objects are left out, as DevTools leaves them out."
	if withLive {
		note = "A timeline keeps which objects allocated in each bucket are alive at the end: \"Alive by then\" is the final heap as it was built up; \"Live then\" is the heap at that moment, objects freed later included. Native (embedder) objects are left out, as DevTools leaves them out."
	}
	r.Notes = append(r.Notes, note)
	return r, nil
}

// seconds writes microseconds for people: "850 ms", "1.25 s", "3 min".
func seconds(us uint64) string {
	switch {
	case us == 0:
		return "0"
	case us < 1000:
		return fmt.Sprintf("%d µs", us)
	case us < 1e6:
		return fmt.Sprintf("%d ms", us/1000)
	case us < 60e6:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", float64(us)/1e6), "0"), ".") + " s"
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", float64(us)/60e6), "0"), ".") + " min"
}

// siteName is a site as one short text: "makeOrder (app.js:5:10)", or
// "(no allocation stack)".
func siteName(f alloc.Frame) string {
	if f == (alloc.Frame{}) {
		return "(no allocation stack)"
	}
	s := functionName(f)
	if l := frameLocation(f); l != "" {
		s += " (" + shortLocation(l) + ")"
	}
	return s
}

// shortLocation keeps a location's file name and position: a table of
// sites is read for the line, the directory is in the JSON's full rows.
func shortLocation(l string) string {
	if i := strings.LastIndexAny(l, "/\\"); i >= 0 {
		return l[i+1:]
	}
	return l
}

func runSiteGrowth(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	return checkedRun(c, "site-growth", "the snapshots oldest first", func(c *Context) (*Result, error) {
		return SiteGrowthResult(c.Snapshots, n, c.Bool("all"))
	})
}

// SiteGrowthResult lays out alloc.SitesOverSeries over snaps, oldest
// first: the sites growing at every step (every site with all), at most
// limit rows (0: all).
func SiteGrowthResult(snaps []Snapshot, limit int, all bool) (*Result, error) {
	as := make([]*analysis.Analysis, len(snaps))
	for i, s := range snaps {
		as[i] = s.Analysis
	}
	sites, err := alloc.SitesOverSeries(as)
	if err != nil {
		return nil, err
	}
	last := len(snaps) - 1
	t := &Table{Columns: []Column{{Key: "function", Title: "Function", Kind: Text}, {Key: "location", Title: "Location", Kind: Text},
		{Key: "first_count", Title: "First count", Kind: Count}, {Key: "last_count", Title: "Last count", Kind: Count},
		{Key: "count_growth", Title: "# Growth", Kind: Delta}, {Key: "last_size", Title: "Last size", Kind: Bytes},
		{Key: "grows", Title: "Grows", Kind: Text}, {Key: "series", Title: "Counts", Kind: Text}}}
	growing := 0
	for _, s := range sites {
		if s.Grows {
			growing++
		}
		if !s.Grows && !all || limit > 0 && len(t.Rows) == limit {
			continue
		}
		grows := ""
		if s.Grows {
			grows = "yes"
		}
		t.Rows = append(t.Rows, []any{functionName(s.Frame), frameLocation(s.Frame), s.Counts[0], s.Counts[last],
			int64(s.Counts[last] - s.Counts[0]), s.Sizes[last], grows, series(s.Counts)})
	}
	heading := fmt.Sprintf("Allocation sites whose live count grows at every step of %d snapshots", len(snaps))
	if all {
		heading = fmt.Sprintf("Allocation sites in %d snapshots, growing ones first", len(snaps))
	}
	sec := &Section{Heading: heading, Table: t, Chart: &Chart{Label: "function", Value: "count_growth"}}
	if growing == 0 {
		sec.Notes = []string{"No allocation site's live count grows at every step."}
	}
	r := &Result{Sections: []*Section{sec}, Notes: []string{
		fmt.Sprintf("%d of %s sites grow at every step. Sites are matched by function and script:line:column; an object a GC moved can lose its allocation stack, which makes counts lower, never higher.",
			growing, humanize.Thousands(uint64(len(sites))))}}
	return r, nil
}
