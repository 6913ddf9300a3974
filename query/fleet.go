package query

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/stats"
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

// DefaultAlpha is the p-value under which heapx fleet --compare calls a
// difference between cohorts real.
const DefaultAlpha = 0.05

// FleetCohort is the dumps with one value of the compared label.
type FleetCohort struct {
	Value string
	Dumps []*parquet.DumpRow
}

// FleetSample compares one number of the dumps (a class's instances in
// each, its retained size) between two cohorts, A and B, with each dump a
// sample: the mean per dump of each, the change from A to B, and the
// Mann-Whitney test's two-sided p-value (package stats), which a dump
// far from the rest of its cohort moves by one rank only.
type FleetSample struct {
	MeanA, MeanB float64
	// Diff is MeanB - MeanA.
	Diff float64
	P    float64
	// Exact says P is exact, not the normal approximation (see
	// stats.Result).
	Exact bool
}

// sampleOf compares the values of cohort A's dumps, a, with B's, b.
func sampleOf(a, b []float64) FleetSample {
	r := stats.MannWhitney(a, b)
	s := FleetSample{MeanA: mean(a), MeanB: mean(b), P: r.P, Exact: r.Exact}
	s.Diff = s.MeanB - s.MeanA
	return s
}

func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(len(v))
}

// FleetClassDifference is a class of the dumps of two cohorts: its
// instances and retained size per dump (the sums over the classes of
// that name; 0 in a dump without it), compared.
type FleetClassDifference struct {
	Class           string
	Count, Retained FleetSample
	// CountBytes is Count.Diff times the class's retained size per
	// instance over every dump of both cohorts: the memory the extra (or
	// missing) instances account for. It orders the classes whose count
	// differs, so that a class with no more instances than before that
	// retains more (the array or map holding the extra objects, the
	// global object) does not come before what it holds.
	CountBytes float64
}

// FleetSuspectDifference is a leak suspect (matched across dumps by its
// accumulated class and the fields holding it, as FleetSuspect) in the
// dumps of two cohorts: in how many of each it was found, and its
// retained size per dump (0 where not found), compared.
type FleetSuspectDifference struct {
	Class, HeldBy  string
	FoundA, FoundB int
	Retained       FleetSample
}

// FleetComparison compares the dumps of two values of a label.
type FleetComparison struct {
	Label string
	A, B  FleetCohort
	// Others counts the dumps with neither value (or without the label).
	Others int
	// Objects and TotalSize compare the dumps' totals.
	Objects, TotalSize FleetSample
	// Classes are every class of the cohorts' dumps, by name.
	Classes []FleetClassDifference
	// Suspects are every leak suspect of the cohorts' dumps.
	Suspects []FleetSuspectDifference
}

// Compare compares the dumps whose label has value values[0] (cohort A)
// with those where it has values[1] (B). Without values the label must
// have exactly two values in the fleet, taken in order (numbers by
// value). Dumps with another value, or without the label, are left out.
func (f *Fleet) Compare(label string, values []string) (*FleetComparison, error) {
	byValue := map[string][]*parquet.DumpRow{}
	keys := map[string]bool{}
	for i := range f.Dumps {
		d := &f.Dumps[i]
		for _, l := range d.Labels {
			keys[l.Key] = true
			if l.Key == label {
				byValue[l.Value] = append(byValue[l.Value], d)
				break
			}
		}
	}
	if len(byValue) == 0 {
		known := slices.Sorted(func(yield func(string) bool) {
			for k := range keys {
				if !yield(k) {
					return
				}
			}
		})
		if len(known) == 0 {
			return nil, fmt.Errorf("no dump has a label %q (none has any label: heapx export --label %s=VALUE gives them)", label, label)
		}
		return nil, fmt.Errorf("no dump has a label %q; the dumps' labels are %s", label, strings.Join(known, ", "))
	}
	all := slices.SortedFunc(func(yield func(string) bool) {
		for v := range byValue {
			if !yield(v) {
				return
			}
		}
	}, naturalCompare)
	switch {
	case len(values) == 0 && len(all) != 2:
		if len(all) == 1 {
			return nil, fmt.Errorf("every dump with a label %q has the value %q: there is nothing to compare it with", label, all[0])
		}
		return nil, fmt.Errorf("label %q has %d values (%s): say which two to compare, --compare %s=%s,%s",
			label, len(all), strings.Join(all, ", "), label, all[0], all[1])
	case len(values) == 0:
		values = all
	case len(values) != 2:
		return nil, fmt.Errorf("--compare %s=%s: give two values, A,B", label, strings.Join(values, ","))
	case values[0] == values[1]:
		return nil, fmt.Errorf("--compare %s=%s,%s compares a value with itself", label, values[0], values[1])
	}
	for _, v := range values {
		if len(byValue[v]) == 0 {
			return nil, fmt.Errorf("no dump has %s=%s; its values are %s", label, v, strings.Join(all, ", "))
		}
	}
	c := &FleetComparison{Label: label, A: FleetCohort{values[0], byValue[values[0]]}, B: FleetCohort{values[1], byValue[values[1]]}}
	c.Others = len(f.Dumps) - len(c.A.Dumps) - len(c.B.Dumps)
	for _, co := range []*FleetCohort{&c.A, &c.B} {
		slices.SortFunc(co.Dumps, func(x, y *parquet.DumpRow) int {
			return cmp.Or(cmp.Compare(x.CaptureTimeMillis, y.CaptureTimeMillis), strings.Compare(x.DumpID, y.DumpID))
		})
	}
	pos, m, n := c.positions()
	totals := func(of func(d *parquet.DumpRow) int64) FleetSample {
		v := make([]float64, m+n)
		for i, d := range append(slices.Clip(c.A.Dumps), c.B.Dumps...) {
			v[i] = float64(of(d))
		}
		return sampleOf(v[:m], v[m:])
	}
	c.Objects = totals(func(d *parquet.DumpRow) int64 { return d.NodeCount })
	c.TotalSize = totals(func(d *parquet.DumpRow) int64 { return d.TotalSize })
	c.Classes = f.compareClasses(pos, m, n)
	c.Suspects = f.compareSuspects(pos, m, n)
	return c, nil
}

// positions maps each dump of the two cohorts to its sample: A's first,
// then B's.
func (c *FleetComparison) positions() (pos map[string]int, m, n int) {
	m, n = len(c.A.Dumps), len(c.B.Dumps)
	pos = make(map[string]int, m+n)
	for i, d := range c.A.Dumps {
		pos[d.DumpID] = i
	}
	for i, d := range c.B.Dumps {
		pos[d.DumpID] = m + i
	}
	return pos, m, n
}

// compareClasses compares every class of the cohorts' dumps, by name.
func (f *Fleet) compareClasses(pos map[string]int, m, n int) []FleetClassDifference {
	type acc struct{ count, retained []float64 }
	accs := map[string]*acc{}
	var names []string
	for i := range f.Classes {
		r := &f.Classes[i]
		p, ok := pos[r.DumpID]
		if !ok {
			continue
		}
		a := accs[r.Class]
		if a == nil {
			a = &acc{make([]float64, m+n), make([]float64, m+n)}
			accs[r.Class] = a
			names = append(names, r.Class)
		}
		a.count[p] += float64(r.Count)
		a.retained[p] += float64(r.RetainedSize)
	}
	out := make([]FleetClassDifference, 0, len(names))
	for _, name := range names {
		a := accs[name]
		d := FleetClassDifference{Class: name, Count: sampleOf(a.count[:m], a.count[m:]), Retained: sampleOf(a.retained[:m], a.retained[m:])}
		var count, retained float64
		for i := range a.count {
			count += a.count[i]
			retained += a.retained[i]
		}
		if count > 0 {
			d.CountBytes = d.Count.Diff * retained / count
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y FleetClassDifference) int {
		return cmp.Or(cmp.Compare(math.Abs(y.CountBytes), math.Abs(x.CountBytes)), strings.Compare(x.Class, y.Class))
	})
	return out
}

// compareSuspects compares every leak suspect of the cohorts' dumps.
func (f *Fleet) compareSuspects(pos map[string]int, m, n int) []FleetSuspectDifference {
	type key struct{ class, heldBy string }
	accs := map[key][]float64{}
	var keys []key
	for i := range f.Suspects {
		s := &f.Suspects[i]
		p, ok := pos[s.DumpID]
		if !ok {
			continue
		}
		k := key{s.Class, s.HeldBy}
		if accs[k] == nil {
			accs[k] = make([]float64, m+n)
			keys = append(keys, k)
		}
		accs[k][p] += float64(s.RetainedSize)
	}
	out := make([]FleetSuspectDifference, 0, len(keys))
	for _, k := range keys {
		v := accs[k]
		d := FleetSuspectDifference{Class: k.class, HeldBy: k.heldBy, Retained: sampleOf(v[:m], v[m:])}
		for i, x := range v {
			if x > 0 && i < m {
				d.FoundA++
			} else if x > 0 {
				d.FoundB++
			}
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(x, y FleetSuspectDifference) int {
		return cmp.Or(cmp.Compare(math.Abs(y.Retained.Diff), math.Abs(x.Retained.Diff)), strings.Compare(x.Class, y.Class),
			strings.Compare(x.HeldBy, y.HeldBy))
	})
	return out
}

// naturalCompare orders label values as people number them: numbers by
// value ("9" before "10"), before other text, which is in byte order.
func naturalCompare(a, b string) int {
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	switch {
	case errA == nil && errB == nil:
		return cmp.Or(cmp.Compare(x, y), strings.Compare(a, b))
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// FleetCompareOptions tune FleetCompareResult.
type FleetCompareOptions struct {
	// Alpha is the p-value under which a difference is shown (0:
	// DefaultAlpha; 1 shows every class).
	Alpha float64
	// Limit caps the rows of each view; 0 keeps all.
	Limit int
}

// minimalP is the smallest two-sided p-value the rank test can give for
// cohorts of m and n dumps: every dump of one above every dump of the
// other, 2/C(m+n, m).
func minimalP(m, n int) float64 {
	c := 1.0
	for i := 1; i <= m; i++ {
		c = c * float64(n+i) / float64(i)
	}
	return min(1, 2/c)
}

// FleetCompareResult is the comparison c as a Result: the classes whose
// number of instances differs between the cohorts, the classes as many
// in both that retain more or less (what holds a difference), the leak
// suspects that differ, and the cohorts' totals.
func FleetCompareResult(c *FleetComparison, opt FleetCompareOptions) (*Result, error) {
	if opt.Limit < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", opt.Limit)
	}
	if opt.Alpha == 0 {
		opt.Alpha = DefaultAlpha
	}
	if opt.Alpha < 0 || opt.Alpha > 1 {
		return nil, fmt.Errorf("--alpha must be a p-value, above 0 and at most 1, not %g", opt.Alpha)
	}
	m, n := len(c.A.Dumps), len(c.B.Dumps)
	cohort := func(co FleetCohort) string {
		return fmt.Sprintf("%s=%s (%s dump%s)", c.Label, co.Value, humanize.Thousands(uint64(len(co.Dumps))), plural(len(co.Dumps)))
	}
	r := &Result{Header: []string{fmt.Sprintf("A: %s, B: %s; each dump a sample, differences B - A, p from the Mann-Whitney U test",
		cohort(c.A), cohort(c.B))}}
	if c.Others > 0 {
		r.Header = append(r.Header, fmt.Sprintf("%s more dump%s with another value of %s, or without it, left out.",
			humanize.Thousands(uint64(c.Others)), plural(c.Others), c.Label))
	}
	if p := minimalP(m, n); p >= opt.Alpha {
		r.Warnings = append(r.Warnings, Warning{Code: WarnTooFewDumps, Message: fmt.Sprintf(
			"with %d and %d dumps, no difference can reach p < %g (the smallest p-value is %.3g): compare more dumps of each",
			m, n, opt.Alpha, p)})
	}
	cut := func(n int) int {
		if opt.Limit > 0 && n > opt.Limit {
			return opt.Limit
		}
		return n
	}
	sampleColumns := func(key, title string, kind, diffKind Kind) []Column {
		return []Column{{Key: key + "_a", Title: title + " A", Kind: kind}, {Key: key + "_b", Title: title + " B", Kind: kind},
			{Key: key + "_diff", Title: "Δ " + strings.ToLower(title), Kind: diffKind}, {Key: key + "_p", Title: "p", Kind: Probability}}
	}
	sampleCells := func(s FleetSample) []any { return []any{s.MeanA, s.MeanB, s.Diff, s.P} }
	more := func(sec *Section, total int) {
		if total > len(sec.Table.Rows) {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%d more; -n 0 shows all.", total-len(sec.Table.Rows)))
		}
	}
	alpha := strconv.FormatFloat(opt.Alpha, 'g', -1, 64)
	// A p-value of 1 is no evidence at all; --alpha 1 asks for every row.
	shown := func(p float64) bool { return p < opt.Alpha || opt.Alpha == 1 }

	var counted, holding []FleetClassDifference
	for _, d := range c.Classes {
		switch {
		case shown(d.Count.P):
			counted = append(counted, d)
		case shown(d.Retained.P):
			holding = append(holding, d)
		}
	}
	slices.SortStableFunc(holding, func(x, y FleetClassDifference) int {
		return cmp.Compare(math.Abs(y.Retained.Diff), math.Abs(x.Retained.Diff))
	})
	classColumns := append(append([]Column{{Key: "class", Title: "Class", Kind: Text}}, sampleColumns("count", "Count", Count, Delta)...),
		sampleColumns("retained", "Retained", Bytes, BytesDelta)...)
	ct := &Table{Columns: append(slices.Clip(classColumns), Column{Key: "count_diff_bytes", Title: "Δ count × size", Kind: BytesDelta})}
	for _, d := range counted[:cut(len(counted))] {
		row := append(append([]any{Shorten(d.Class, MaxNameWidth)}, sampleCells(d.Count)...), sampleCells(d.Retained)...)
		ct.Rows = append(ct.Rows, append(row, d.CountBytes))
	}
	cs := &Section{Heading: fmt.Sprintf("Classes whose number of instances per dump differs (p < %s), by the difference times their retained size per instance", alpha),
		Table: ct, Chart: &Chart{Label: "class", Value: "count_diff_bytes"}}
	if len(counted) == 0 {
		cs.Notes = []string{fmt.Sprintf("No class has a number of instances that differs between the cohorts with p < %s.", alpha)}
	}
	more(cs, len(counted))
	r.Sections = append(r.Sections, cs)

	ht := &Table{Columns: classColumns}
	for _, d := range holding[:cut(len(holding))] {
		ht.Rows = append(ht.Rows, append(append([]any{Shorten(d.Class, MaxNameWidth)}, sampleCells(d.Count)...), sampleCells(d.Retained)...))
	}
	hs := &Section{Heading: fmt.Sprintf("Classes as many in both whose retained size differs (p < %s): what holds a difference", alpha), Table: ht}
	if len(holding) == 0 {
		hs.Notes = []string{"None."}
	}
	more(hs, len(holding))
	r.Sections = append(r.Sections, hs)

	var sus []FleetSuspectDifference
	for _, d := range c.Suspects {
		if shown(d.Retained.P) {
			sus = append(sus, d)
		}
	}
	st := &Table{Columns: append([]Column{{Key: "class", Title: "Accumulated class", Kind: Text}, {Key: "held_by", Title: "Held by", Kind: Text},
		{Key: "found_a", Title: "In A", Kind: Count}, {Key: "found_b", Title: "In B", Kind: Count}},
		sampleColumns("retained", "Retained", Bytes, BytesDelta)...)}
	for _, d := range sus[:cut(len(sus))] {
		st.Rows = append(st.Rows, append([]any{Shorten(d.Class, MaxNameWidth), Shorten(d.HeldBy, MaxNameWidth), d.FoundA, d.FoundB},
			sampleCells(d.Retained)...))
	}
	ss := &Section{Heading: fmt.Sprintf("Leak suspects whose retained size per dump differs (p < %s; 0 in a dump where not found)", alpha), Table: st}
	switch {
	case len(c.Suspects) == 0:
		ss.Notes = []string{"No dump of either cohort has a leak suspect (heapx suspects' default threshold, 10% of the heap)."}
	case len(sus) == 0:
		ss.Notes = []string{fmt.Sprintf("None of the %d leak suspects differs with p < %s.", len(c.Suspects), alpha)}
	}
	more(ss, len(sus))
	r.Sections = append(r.Sections, ss)

	tt := &Table{Columns: []Column{{Key: "cohort", Title: "Cohort", Kind: Text}, {Key: "dumps", Title: "Dumps", Kind: Count},
		{Key: "objects", Title: "Objects", Kind: Count}, {Key: "total_size", Title: "Total size", Kind: Bytes}}}
	tt.Rows = [][]any{{"A: " + c.Label + "=" + c.A.Value, m, c.Objects.MeanA, c.TotalSize.MeanA},
		{"B: " + c.Label + "=" + c.B.Value, n, c.Objects.MeanB, c.TotalSize.MeanB}}
	r.Sections = append(r.Sections, &Section{Heading: "Cohorts, mean per dump", Table: tt, Notes: []string{
		fmt.Sprintf("Total size %s per dump from A to B (p = %s); objects %s (p = %s).",
			FormatValue(BytesDelta, c.TotalSize.Diff), FormatValue(Probability, c.TotalSize.P),
			FormatValue(Delta, c.Objects.Diff), FormatValue(Probability, c.Objects.P))}})
	return r, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
