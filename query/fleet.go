package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/humanize"
)

// Fleet is what the fleet views read of a directory of dumps in the
// Parquet form (heapx export --parquet): its small tables, one row per
// dump, per class of a dump and per leak suspect of a dump. The big
// tables (objects, references) are not needed: the classes and suspects
// were computed when each dump was exported.
type Fleet struct {
	Dumps    []parquet.DumpRow
	Classes  []parquet.ClassRow
	Suspects []parquet.SuspectRow
}

// FleetOptions tune the fleet views.
type FleetOptions struct {
	// By are the label keys whose values make a series: the dumps with
	// the same values, ordered by capture time, are one series. Empty:
	// all of a dump's labels (its pod, release, service...), so a
	// series is the dumps exported with the same --label flags.
	By []string
	// Limit caps the rows of each view; 0 keeps all.
	Limit int
}

// FleetSeries is one series of dumps: the dumps with the same labels,
// oldest first.
type FleetSeries struct {
	// Labels are the series' labels as text, "release=42 pod=a", or ""
	// for dumps without labels.
	Labels string
	// Pairs are the same labels, key and value.
	Pairs []parquet.Label
	Dumps []*parquet.DumpRow
}

// FleetClassGrowth is a class whose retained size grows at every step of
// a series: present in each of its dumps, with a larger retained size
// (the sum over the classes of that name, split by allocation site or
// not) in each than in the one before, and more instances in the last
// than in the first. The count rule leaves out the classes that only
// hold the growth, as many instances retaining more (the global object,
// the one EventEmitter whose listener keeps the leak): they grow with
// every leak, and the growing class is what a reader is after.
type FleetClassGrowth struct {
	// Series and Pairs are the series' labels (FleetSeries).
	Series string
	Pairs  []parquet.Label
	Class  string
	// Dumps is the series' length; Retained and Counts the class's
	// retained size and instances in each, oldest first.
	Dumps    int
	Retained []int64
	Counts   []int64
}

// Growth is the retained size gained from the first dump to the last.
func (g *FleetClassGrowth) Growth() int64 { return g.Retained[len(g.Retained)-1] - g.Retained[0] }

// FleetGrowingClass is a class and the series it grows in (see
// FleetClassGrowth), with its growth summed over them.
type FleetGrowingClass struct {
	Class  string
	Series []FleetClassGrowth
	// Growth and CountGrowth are the retained size and instances gained,
	// summed over the series.
	Growth, CountGrowth int64
}

// GrowingClasses returns the classes that grow at every step of a series
// (ClassGrowth), one row per class with the series it grows in: largest
// summed growth first, then by name. One row a class, not a series, so a
// class that grows in every pod of a release is one row however many
// pods there are, and the objects that hold a leak (growing in retained
// size, barely in count) do not push the leaking class off the page.
func (f *Fleet) GrowingClasses(by []string) []FleetGrowingClass {
	index := map[string]int{}
	var out []FleetGrowingClass
	for _, g := range f.ClassGrowth(by) {
		i, ok := index[g.Class]
		if !ok {
			i = len(out)
			index[g.Class] = i
			out = append(out, FleetGrowingClass{Class: g.Class})
		}
		o := &out[i]
		o.Series = append(o.Series, g)
		o.Growth += g.Growth()
		o.CountGrowth += g.Counts[len(g.Counts)-1] - g.Counts[0]
	}
	for _, o := range out {
		slices.SortFunc(o.Series, func(a, b FleetClassGrowth) int { return strings.Compare(a.Series, b.Series) })
	}
	slices.SortFunc(out, func(a, b FleetGrowingClass) int {
		return cmp.Or(cmp.Compare(b.Growth, a.Growth), strings.Compare(a.Class, b.Class))
	})
	return out
}

// FleetSuspect is a leak suspect, named by its accumulated class and the
// fields that hold it, and the dumps it was found in.
type FleetSuspect struct {
	Class, HeldBy string
	// Dumps is how many dumps have it among their suspects; PerSeries
	// how many of each series' dumps, by series labels.
	Dumps     int
	PerSeries map[string]int
	// MaxRetained and MaxShare are its largest retained size and share
	// of a heap (0 to 1) in any of them.
	MaxRetained int64
	MaxShare    float64
}

// Series groups the fleet's dumps into series (see FleetOptions.By),
// ordered by labels; each series' dumps by capture time, then id.
func (f *Fleet) Series(by []string) []FleetSeries {
	index := map[string]int{}
	var out []FleetSeries
	for i := range f.Dumps {
		d := &f.Dumps[i]
		pairs := seriesLabels(d, by)
		key := labelsText(pairs)
		j, ok := index[key]
		if !ok {
			j = len(out)
			index[key] = j
			out = append(out, FleetSeries{Labels: key, Pairs: pairs})
		}
		out[j].Dumps = append(out[j].Dumps, d)
	}
	for _, s := range out {
		slices.SortFunc(s.Dumps, func(a, b *parquet.DumpRow) int {
			return cmp.Or(cmp.Compare(a.CaptureTimeMillis, b.CaptureTimeMillis), strings.Compare(a.DumpID, b.DumpID))
		})
	}
	slices.SortFunc(out, func(a, b FleetSeries) int { return strings.Compare(a.Labels, b.Labels) })
	return out
}

// seriesLabels are d's labels of keys by (empty values for those it has
// not), or all its labels in the order given.
func seriesLabels(d *parquet.DumpRow, by []string) []parquet.Label {
	if len(by) == 0 {
		return d.Labels
	}
	out := make([]parquet.Label, len(by))
	for i, k := range by {
		out[i].Key = k
		for _, l := range d.Labels {
			if l.Key == k {
				out[i].Value = l.Value
				break
			}
		}
	}
	return out
}

// labelsText writes labels as "release=42 pod=a".
func labelsText(labels []parquet.Label) string {
	parts := make([]string, len(labels))
	for i, l := range labels {
		parts[i] = l.Key + "=" + l.Value
	}
	return strings.Join(parts, " ")
}

// labelValuesText sums up the labels of several series: each key once,
// with its values, "release=41 pod=001,002,003".
func labelValuesText(series []FleetClassGrowth) string {
	var keys []string
	values := map[string][]string{}
	for _, s := range series {
		for _, l := range s.Pairs {
			if _, ok := values[l.Key]; !ok {
				keys = append(keys, l.Key)
			}
			if !slices.Contains(values[l.Key], l.Value) {
				values[l.Key] = append(values[l.Key], l.Value)
			}
		}
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strings.Join(values[k], ",")
	}
	if len(parts) == 0 {
		return seriesText("")
	}
	return strings.Join(parts, " ")
}

// ClassGrowth returns the classes that grow at every step of a series of
// two or more dumps (see FleetClassGrowth), largest growth first, then by
// series and class.
func (f *Fleet) ClassGrowth(by []string) []FleetClassGrowth {
	type place struct{ series, pos int }
	series := f.Series(by)
	where := make(map[string]place, len(f.Dumps))
	for s, sr := range series {
		for p, d := range sr.Dumps {
			where[d.DumpID] = place{s, p}
		}
	}
	type key struct {
		series int
		class  string
	}
	type acc struct {
		retained, counts []int64
		present          []bool
	}
	accs := map[key]*acc{}
	for i := range f.Classes {
		c := &f.Classes[i]
		pl, ok := where[c.DumpID]
		if !ok || len(series[pl.series].Dumps) < 2 {
			continue
		}
		k := key{pl.series, c.Class}
		a := accs[k]
		if a == nil {
			n := len(series[pl.series].Dumps)
			a = &acc{retained: make([]int64, n), counts: make([]int64, n), present: make([]bool, n)}
			accs[k] = a
		}
		a.retained[pl.pos] += c.RetainedSize
		a.counts[pl.pos] += c.Count
		a.present[pl.pos] = true
	}
	var out []FleetClassGrowth
	for k, a := range accs {
		grows := a.present[0] && a.counts[len(a.counts)-1] > a.counts[0]
		for i := 1; i < len(a.retained) && grows; i++ {
			grows = a.present[i] && a.retained[i] > a.retained[i-1]
		}
		if grows {
			out = append(out, FleetClassGrowth{Series: series[k.series].Labels, Pairs: series[k.series].Pairs, Class: k.class, Dumps: len(a.retained),
				Retained: a.retained, Counts: a.counts})
		}
	}
	slices.SortFunc(out, func(a, b FleetClassGrowth) int {
		return cmp.Or(cmp.Compare(b.Growth(), a.Growth()), strings.Compare(a.Series, b.Series), strings.Compare(a.Class, b.Class))
	})
	return out
}

// SuspectCounts returns the leak suspects of the fleet's dumps, matched
// across dumps by accumulated class and holding fields, found in the
// most dumps first, then by largest retained size, class and fields.
func (f *Fleet) SuspectCounts(by []string) []FleetSuspect {
	labels := make(map[string]string, len(f.Dumps))
	for i := range f.Dumps {
		labels[f.Dumps[i].DumpID] = labelsText(seriesLabels(&f.Dumps[i], by))
	}
	type key struct{ class, heldBy string }
	index := map[key]int{}
	seen := map[string]bool{} // class, fields and dump: a dump counts once
	var out []FleetSuspect
	for i := range f.Suspects {
		s := &f.Suspects[i]
		k := key{s.Class, s.HeldBy}
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			out = append(out, FleetSuspect{Class: s.Class, HeldBy: s.HeldBy, PerSeries: map[string]int{}})
		}
		o := &out[j]
		o.MaxRetained = max(o.MaxRetained, s.RetainedSize)
		o.MaxShare = max(o.MaxShare, s.Share)
		if d := s.Class + "\x00" + s.HeldBy + "\x00" + s.DumpID; !seen[d] {
			seen[d] = true
			o.Dumps++
			o.PerSeries[labels[s.DumpID]]++
		}
	}
	slices.SortFunc(out, func(a, b FleetSuspect) int {
		return cmp.Or(cmp.Compare(b.Dumps, a.Dumps), cmp.Compare(b.MaxRetained, a.MaxRetained),
			strings.Compare(a.Class, b.Class), strings.Compare(a.HeldBy, b.HeldBy))
	})
	return out
}

// FleetResult is the fleet views of f as a Result: the classes that grow
// in a series, the leak suspects by the number of dumps they are found
// in, and each dump's totals.
func FleetResult(f *Fleet, opt FleetOptions) (*Result, error) {
	if opt.Limit < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", opt.Limit)
	}
	cut := func(n int) int {
		if opt.Limit > 0 && n > opt.Limit {
			return opt.Limit
		}
		return n
	}
	series := f.Series(opt.By)
	longest := 0
	for _, s := range series {
		longest = max(longest, len(s.Dumps))
	}
	r := &Result{Header: []string{fmt.Sprintf("%s dumps in %s series (dumps with the same %s)",
		humanize.Thousands(uint64(len(f.Dumps))), humanize.Thousands(uint64(len(series))), byText(opt.By))}}

	growth := f.GrowingClasses(opt.By)
	withTwo := 0
	for _, s := range series {
		if len(s.Dumps) >= 2 {
			withTwo++
		}
	}
	gt := &Table{Columns: []Column{{Key: "class", Title: "Class", Kind: Text}, {Key: "series", Title: "Series", Kind: Count},
		{Key: "series_percent", Title: "% of series", Kind: Percent}, {Key: "where", Title: "Grows in", Kind: Text},
		{Key: "growth", Title: "Growth", Kind: BytesDelta}, {Key: "count_growth", Title: "Count growth", Kind: Delta}}}
	for _, g := range growth[:cut(len(growth))] {
		gt.Rows = append(gt.Rows, []any{Shorten(g.Class, MaxNameWidth), len(g.Series), humanize.Share(uint64(len(g.Series)), uint64(withTwo)),
			Shorten(labelValuesText(g.Series), MaxNameWidth), g.Growth, g.CountGrowth})
	}
	gs := &Section{Heading: "Classes whose retained size grows at every dump of a series, by capture time (growth summed over the series)",
		Table: gt, Chart: &Chart{Label: "class", Value: "growth"}}
	switch {
	case longest < 2:
		gs.Notes = []string{"No series has two dumps: give dumps of one process the same labels (heapx export --label) to follow it."}
	case len(growth) == 0:
		gs.Notes = []string{"No class grows at every dump of any series."}
	case len(growth) > len(gt.Rows):
		gs.Notes = []string{fmt.Sprintf("%d more; -n 0 shows all.", len(growth)-len(gt.Rows))}
	}
	r.Sections = append(r.Sections, gs)

	sus := f.SuspectCounts(opt.By)
	st := &Table{Columns: []Column{{Key: "class", Title: "Accumulated class", Kind: Text}, {Key: "held_by", Title: "Held by", Kind: Text},
		{Key: "dumps", Title: "Dumps", Kind: Count}, {Key: "dumps_percent", Title: "% of dumps", Kind: Percent},
		{Key: "series", Title: "Found in", Kind: Text}, {Key: "max_retained_size", Title: "Largest", Kind: Bytes},
		{Key: "max_percent", Title: "Largest %", Kind: Percent}}}
	for _, s := range sus[:cut(len(sus))] {
		st.Rows = append(st.Rows, []any{Shorten(s.Class, MaxNameWidth), Shorten(s.HeldBy, MaxNameWidth), s.Dumps,
			humanize.Share(uint64(s.Dumps), uint64(len(f.Dumps))), Shorten(perSeriesText(s.PerSeries, series), MaxNameWidth),
			uint64(s.MaxRetained), 100 * s.MaxShare})
	}
	ss := &Section{Heading: "Leak suspects, by the number of dumps they are found in", Table: st}
	if len(sus) == 0 {
		ss.Notes = []string{"No dump has a leak suspect (heapx suspects' default threshold, 10% of the heap)."}
	} else if len(sus) > len(st.Rows) {
		ss.Notes = []string{fmt.Sprintf("%d more; -n 0 shows all.", len(sus)-len(st.Rows))}
	}
	r.Sections = append(r.Sections, ss)

	top := map[string]*parquet.SuspectRow{}
	nsus := map[string]int{}
	for i := range f.Suspects {
		s := &f.Suspects[i]
		nsus[s.DumpID]++
		if t := top[s.DumpID]; t == nil || s.Rank < t.Rank {
			top[s.DumpID] = s
		}
	}
	dt := &Table{Columns: []Column{{Key: "series", Title: "Series", Kind: Text}, {Key: "captured", Title: "Captured (UTC)", Kind: Text},
		{Key: "dump_id", Title: "Dump", Kind: Text}, {Key: "producer", Title: "Producer", Kind: Text},
		{Key: "node_count", Title: "Objects", Kind: Count}, {Key: "total_size", Title: "Total size", Kind: Bytes},
		{Key: "suspects", Title: "Suspects", Kind: Count}, {Key: "top_suspect", Title: "Largest suspect", Kind: Text}}}
	rows := 0
	for _, s := range series {
		for _, d := range s.Dumps {
			if opt.Limit > 0 && rows == opt.Limit {
				break
			}
			rows++
			topText := ""
			if t := top[d.DumpID]; t != nil {
				topText = fmt.Sprintf("%s (%.1f%%)", t.Class, 100*t.Share)
			}
			dt.Rows = append(dt.Rows, []any{seriesText(s.Labels), time.UnixMilli(d.CaptureTimeMillis).UTC().Format("2006-01-02 15:04:05"),
				d.DumpID, d.Producer, d.NodeCount, uint64(d.TotalSize), nsus[d.DumpID], Shorten(topText, MaxNameWidth)})
		}
	}
	ds := &Section{Heading: "Dumps, by series and capture time", Table: dt}
	if len(f.Dumps) > rows {
		ds.Notes = []string{fmt.Sprintf("%d more; -n 0 shows all.", len(f.Dumps)-rows)}
	}
	r.Sections = append(r.Sections, ds)
	return r, nil
}

// byText says what makes a series, for the header.
func byText(by []string) string {
	if len(by) == 0 {
		return "labels"
	}
	return "values of " + strings.Join(by, ", ")
}

// seriesText shows a series' labels; dumps without labels are one series.
func seriesText(labels string) string {
	if labels == "" {
		return "(no labels)"
	}
	return labels
}

// perSeriesText says in how many dumps of which series a suspect was
// found, "release=41 pod=a 3/3, release=41 pod=b 2/3", in series order.
func perSeriesText(per map[string]int, series []FleetSeries) string {
	var parts []string
	for _, s := range series {
		if n := per[s.Labels]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d/%d", seriesText(s.Labels), n, len(s.Dumps)))
		}
	}
	return strings.Join(parts, ", ")
}
