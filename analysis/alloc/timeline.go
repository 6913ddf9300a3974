package alloc

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// ErrNoTimeline is returned, wrapped with what to do, for a heap dump
// without timeline samples: V8 writes them only into a snapshot that
// ends an allocation timeline recorded over the DevTools protocol.
var ErrNoTimeline = errors.New("the dump has no timeline samples")

// TimelineOptions tune Timeline.
type TimelineOptions struct {
	// Buckets splits the recorded time into this many buckets of equal
	// length (0: 10). BucketMicros, when set, wins.
	Buckets int
	// BucketMicros is the length of a bucket in microseconds.
	BucketMicros uint64
	// Sites is how many allocation sites each bucket lists, most objects
	// first (0: 3), and Series how many sites get a count per bucket for
	// the chart of the top sites (0: 5).
	Sites, Series int
	// Stats are V8's heap statistics updates recorded with the timeline
	// (heapx capture --timeline keeps them beside it), oldest first; with
	// them the result has the live heap at each moment (Live).
	Stats []model.HeapStatsUpdate
}

// TimelineSite is one allocation site's live objects in a bucket or over
// the whole timeline. An object without an allocation stack (a GC that
// moved it lost its trace node) is in a site whose Frame is zero.
type TimelineSite struct {
	Frame
	Count int
	Size  uint64
}

// TimelineBucket is one time bucket of an allocation timeline: the live
// objects of the snapshot that V8 numbered while it lasted.
type TimelineBucket struct {
	// Start and End are microseconds since tracking started; the bucket
	// holds the objects of the sample intervals that end after Start and
	// no later than End.
	Start, End uint64
	// Count and Size are those objects and their shallow sizes.
	Count int
	Size  uint64
	// Sites are the bucket's allocation sites with the most objects
	// (TimelineOptions.Sites of them).
	Sites []TimelineSite
	// Surviving and SurvivingSize count the live objects numbered up to
	// End, those from before tracking included: the heap at the end as
	// it had been built up by then.
	Surviving     int
	SurvivingSize uint64
	// LiveCount and LiveSize are the live objects V8 tracked at the last
	// heap statistics update by End (TimelineResult.Live); zero without
	// them.
	LiveCount int64
	LiveSize  uint64
}

// LivePoint is the live heap at one heap statistics update: the objects
// V8 tracks (all of its heap's, from before tracking too) and their
// sizes, Micros after the first update (the timeline's first sample).
type LivePoint struct {
	Micros uint64
	Count  int64
	Size   uint64
}

// TimelineSeries is one allocation site's live objects per bucket, for
// a chart of the top sites over time.
type TimelineSeries struct {
	Frame
	Counts []int
}

// AgeBin counts the live objects whose age at the end of the timeline
// (see Timeline) is at least Min and below Max microseconds (Max 0: no
// upper bound).
type AgeBin struct {
	Min, Max uint64
	Count    int
	Size     uint64
}

// TimelineResult is what Timeline found.
type TimelineResult struct {
	// Duration is the recorded time in microseconds (first to last
	// sample), Samples the number of samples.
	Duration uint64
	Samples  int
	// BucketMicros is each bucket's length.
	BucketMicros uint64
	Buckets      []TimelineBucket
	// Before counts the live objects V8 numbered up to the first sample,
	// which have no time (V8 takes it at its first update after tracking
	// starts: what the program allocated meanwhile is in Before too), After
	// those numbered after the last sample (while the snapshot was taken),
	// which DevTools leaves out too.
	BeforeCount, AfterCount int
	BeforeSize, AfterSize   uint64
	// Series are the sites with the most live objects allocated while
	// tracked (TimelineOptions.Series of them), with their count in each
	// bucket. Nil without allocation stacks.
	Series []TimelineSeries
	// Ages is the age histogram of the live objects allocated while
	// tracked, youngest first, up to the bin that holds Duration.
	Ages []AgeBin
	// Stacks says whether the dump has allocation stacks (sites).
	Stacks bool
	// Live is the live heap after each of TimelineOptions.Stats, the
	// objects allocated and freed between samples included; nil without
	// them.
	Live []LivePoint
}

// maxTimelineBuckets bounds the buckets of a timeline: more are no
// picture, and a bucket of a microsecond over an hour would take
// gigabytes.
const maxTimelineBuckets = 100000

// ageEdges are the bounds of the age histogram's bins in microseconds:
// a generational view (what the young generation frees at once, what
// lives a few seconds, what lives on).
var ageEdges = []uint64{100e3, 1e6, 10e6, 60e6, 600e6, 3600e6}

// Timeline reads an allocation timeline (a .heaptimeline: DevTools'
// "Allocation instrumentation on timeline", heapx capture --timeline) the
// way DevTools draws its bars: V8 numbers objects in the order it first
// sees them, and while it tracks allocations it numbers each one as it is
// allocated and records, about every 50 ms, a sample (timestamp, last
// object id assigned). An object of the final snapshot with an id in
// (sample k-1, sample k] was allocated between those samples' times and
// is still alive. Native (embedder) objects, whose even ids come from
// another counter, are left out, as DevTools leaves them out. Sizes are
// shallow sizes as a's policy gives them (Analysis.Self), which are
// DevTools' with its policy.
//
// It approximates MemInsight's time-varying live-object view (its
// all-sites timeline of live counts per allocation site): MemInsight
// knows when each object died, a timeline only which of the objects
// allocated in each bucket are alive at the end; the curve of
// Surviving is the heap at the end as it was built up over time, not the
// heap's size at each moment. V8's heapStatsUpdate events say that, and a
// .heaptimeline does not keep them; given them (opt.Stats), Live and the
// buckets' LiveCount are the live heap at each update, which is
// MemInsight's live count over time for all sites together (V8 counts no
// site). An object's age is taken from the
// end of its sample interval, so it is up to one interval (~50 ms) too
// young.
func Timeline(a *analysis.Analysis, opt TimelineOptions) (*TimelineResult, error) {
	g := a.Graph
	ss, err := timelineSamples(g.Trace)
	if err != nil {
		return nil, err
	}
	r := &TimelineResult{Duration: ss[len(ss)-1].TimestampMicros - ss[0].TimestampMicros, Samples: len(ss)}
	if err := r.makeBuckets(opt); err != nil {
		return nil, err
	}
	r.makeAges()
	// A live object's site is its trace node's function.
	r.Stacks = len(g.Trace.Tree) > 0 && len(g.TraceNodeID) == g.NumNodes()
	tracked := r.countObjects(a, ss)
	r.addLive(opt.Stats)
	r.addSurviving()
	if !r.Stacks {
		return r, nil
	}
	slices.SortFunc(tracked, func(x, y objectSite) int {
		switch {
		case x.key < y.key:
			return -1
		case x.key > y.key:
			return 1
		}
		return 0
	})
	perSite := r.addBucketSites(a.Resolver(), g, tracked, opt.Sites)
	r.addSeries(a.Resolver(), g, tracked, perSite, opt.Series)
	return r, nil
}

// timelineSamples returns t's samples, with an error saying how to record
// some when it has none, or when they are out of order.
func timelineSamples(t *model.AllocationTrace) ([]model.TraceSample, error) {
	if t == nil || len(t.Samples) == 0 {
		return nil, fmt.Errorf("%w: record one with heapx capture --timeline, or DevTools' \"Allocation instrumentation on timeline\" (node --track-heap-objects writes allocation stacks but no samples)", ErrNoTimeline)
	}
	ss := t.Samples
	for i := 1; i < len(ss); i++ {
		if ss[i].LastAssignedID < ss[i-1].LastAssignedID || ss[i].TimestampMicros < ss[i-1].TimestampMicros {
			return nil, fmt.Errorf("timeline sample %d (time %d µs, id %d) is before sample %d (time %d µs, id %d): samples must be in order",
				i, ss[i].TimestampMicros, ss[i].LastAssignedID, i-1, ss[i-1].TimestampMicros, ss[i-1].LastAssignedID)
		}
	}
	return ss, nil
}

// makeBuckets divides the timeline into opt.Buckets buckets (10 by
// default), or buckets of opt.BucketMicros.
func (r *TimelineResult) makeBuckets(opt TimelineOptions) error {
	n := opt.Buckets
	if n <= 0 {
		n = 10
	}
	w := opt.BucketMicros
	if w > 0 {
		n = int(max((r.Duration+w-1)/w, 1))
	} else {
		w = max((r.Duration+uint64(n)-1)/uint64(n), 1)
	}
	if n > maxTimelineBuckets {
		return fmt.Errorf("%d buckets of %d µs for a timeline of %d µs: at most %d", n, w, r.Duration, maxTimelineBuckets)
	}
	r.BucketMicros = w
	r.Buckets = make([]TimelineBucket, n)
	for i := range r.Buckets {
		r.Buckets[i].Start, r.Buckets[i].End = uint64(i)*w, uint64(i+1)*w
	}
	r.Buckets[n-1].End = max(r.Buckets[n-1].End, r.Duration)
	return nil
}

// makeAges makes the age histogram's bins up to the timeline's duration.
func (r *TimelineResult) makeAges() {
	var prev uint64
	for _, e := range ageEdges {
		r.Ages = append(r.Ages, AgeBin{Min: prev, Max: e})
		if prev = e; e > r.Duration {
			break
		}
	}
	if last := &r.Ages[len(r.Ages)-1]; last.Max <= r.Duration {
		r.Ages = append(r.Ages, AgeBin{Min: last.Max})
	}
}

// objectSite is a tracked object's bucket and site (bucket<<32 |
// function, the function len(Functions) for no allocation stack) with its
// size: 16 bytes an object and no map.
type objectSite struct{ key, size uint64 }

// countObjects counts the live objects of a by when they were allocated:
// before the first sample, after the last, or into a bucket and an age
// bin. With stacks, it returns each tracked object's bucket and site.
func (r *TimelineResult) countObjects(a *analysis.Analysis, ss []model.TraceSample) []objectSite {
	g, t := a.Graph, a.Graph.Trace
	t0 := ss[0].TimestampMicros
	n, w := len(r.Buckets), r.BucketMicros
	nf := uint32(len(t.Functions))
	var treeIndex func(uint32) int32
	if r.Stacks {
		treeIndex = newTraceIndex(t).of
	}
	var tracked []objectSite
	for v := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(v)
		if id&1 == 0 {
			continue
		}
		size := a.Self.At(int(v))
		k := sort.Search(len(ss), func(i int) bool { return ss[i].LastAssignedID >= id })
		switch {
		case k == 0:
			r.BeforeCount++
			r.BeforeSize += size
			continue
		case k == len(ss):
			r.AfterCount++
			r.AfterSize += size
			continue
		}
		at := ss[k].TimestampMicros - t0
		b := 0
		if at > 0 {
			b = min(int((at-1)/w), n-1)
		}
		bk := &r.Buckets[b]
		bk.Count++
		bk.Size += size
		age := r.Duration - at
		j := 0
		for j < len(r.Ages)-1 && age >= r.Ages[j].Max {
			j++
		}
		r.Ages[j].Count++
		r.Ages[j].Size += size
		if r.Stacks {
			fn := nf
			if ti := treeIndex(g.TraceNodeID[v]); ti >= 0 && t.Tree[ti].Function < nf {
				fn = t.Tree[ti].Function
			}
			tracked = append(tracked, objectSite{uint64(b)<<32 | uint64(fn), size})
		}
	}
	return tracked
}

// addLive adds the live heap after each of stats, and to each bucket the
// last one at its end.
func (r *TimelineResult) addLive(stats []model.HeapStatsUpdate) {
	r.Live = liveCurve(stats)
	for i, j := 0, 0; i < len(r.Buckets) && len(r.Live) > 0; i++ {
		for j+1 < len(r.Live) && r.Live[j+1].Micros <= r.Buckets[i].End {
			j++
		}
		r.Buckets[i].LiveCount, r.Buckets[i].LiveSize = r.Live[j].Count, r.Live[j].Size
	}
}

// addSurviving sums into each bucket the objects allocated by its end.
func (r *TimelineResult) addSurviving() {
	surviving, survivingSize := r.BeforeCount, r.BeforeSize
	for i := range r.Buckets {
		surviving += r.Buckets[i].Count
		survivingSize += r.Buckets[i].Size
		r.Buckets[i].Surviving, r.Buckets[i].SurvivingSize = surviving, survivingSize
	}
}

// siteFrame returns the frame of trace function fn, none for the "no
// allocation stack" function len(Functions).
func siteFrame(res *analysis.Resolver, g *model.Graph, fn uint32) Frame {
	if fn == uint32(len(g.Trace.Functions)) {
		return Frame{}
	}
	return traceFrame(res, g, &g.Trace.Functions[fn])
}

// addBucketSites adds to each bucket its top sites (3 by default) from
// tracked, sorted by key, and returns each site's tracked objects.
func (r *TimelineResult) addBucketSites(res *analysis.Resolver, g *model.Graph, tracked []objectSite, sites int) []int {
	perSite := make([]int, len(g.Trace.Functions)+1)
	if sites <= 0 {
		sites = 3
	}
	for i := 0; i < len(tracked); {
		b := int(tracked[i].key >> 32)
		var bucket []TimelineSite
		var fns []uint32
		for i < len(tracked) && int(tracked[i].key>>32) == b {
			fn := uint32(tracked[i].key)
			s := TimelineSite{}
			for ; i < len(tracked) && tracked[i].key == uint64(b)<<32|uint64(fn); i++ {
				s.Count++
				s.Size += tracked[i].size
			}
			perSite[fn] += s.Count
			bucket = append(bucket, s)
			fns = append(fns, fn)
		}
		order := make([]int, len(bucket))
		for j := range order {
			order[j] = j
		}
		sort.SliceStable(order, func(x, y int) bool { return bucket[order[x]].Count > bucket[order[y]].Count })
		for _, j := range order[:min(sites, len(order))] {
			s := bucket[j]
			s.Frame = siteFrame(res, g, fns[j])
			r.Buckets[b].Sites = append(r.Buckets[b].Sites, s)
		}
	}
	return perSite
}

// addSeries adds the chart's series: the sites with the most tracked live
// objects (5 by default), objects without a stack not among them, with
// their count per bucket.
func (r *TimelineResult) addSeries(res *analysis.Resolver, g *model.Graph, tracked []objectSite, perSite []int, series int) {
	nf := uint32(len(g.Trace.Functions))
	top := make([]uint32, 0, nf)
	for fn := uint32(0); fn < nf; fn++ {
		if perSite[fn] > 0 {
			top = append(top, fn)
		}
	}
	sort.SliceStable(top, func(x, y int) bool { return perSite[top[x]] > perSite[top[y]] })
	if series <= 0 {
		series = 5
	}
	top = top[:min(series, len(top))]
	for _, fn := range top {
		s := TimelineSeries{Frame: siteFrame(res, g, fn), Counts: make([]int, len(r.Buckets))}
		for _, o := range tracked {
			if uint32(o.key) == fn {
				s.Counts[o.key>>32]++
			}
		}
		r.Series = append(r.Series, s)
	}
}

// liveCurve sums V8's heap statistics updates into the live heap after
// each: an update says the live count and size of the id intervals whose
// numbers changed, the others keep theirs. Times are from the first
// update, as the timeline's samples' are from the first sample: both are
// the first update.
func liveCurve(us []model.HeapStatsUpdate) []LivePoint {
	if len(us) == 0 {
		return nil
	}
	var counts, sizes []uint64
	var count, size uint64
	curve := make([]LivePoint, len(us))
	for k, u := range us {
		for _, iv := range u.Intervals {
			for int(iv.Index) >= len(counts) {
				counts, sizes = append(counts, 0), append(sizes, 0)
			}
			count += uint64(iv.Count) - counts[iv.Index]
			size += iv.Size - sizes[iv.Index]
			counts[iv.Index], sizes[iv.Index] = uint64(iv.Count), iv.Size
		}
		curve[k] = LivePoint{Micros: uint64(max(u.TimestampMillis-us[0].TimestampMillis, 0) * 1000), Count: int64(count), Size: size}
	}
	return curve
}

// SiteChurn is what one allocation site allocated while V8 tracked
// allocations and what of it is still alive.
type SiteChurn struct {
	Frame
	// Allocated and AllocatedSize are the objects the site allocated
	// while tracked and their sizes (V8's trace tree totals).
	Allocated     int
	AllocatedSize uint64
	// Live and LiveSize are those of them alive in the snapshot (its
	// objects with the site's trace node), with their shallow sizes.
	Live     int
	LiveSize uint64
}

// FreedSize is the bytes the site allocated that are gone.
func (s SiteChurn) FreedSize() uint64 {
	if s.LiveSize >= s.AllocatedSize {
		return 0
	}
	return s.AllocatedSize - s.LiveSize
}

// AllocationChurn compares, per allocating function, what V8's
// allocation tracker counted as allocated (trace_tree's count and size:
// every allocation while tracked, the dead ones too) with the objects of
// the snapshot allocated there, and ranks the functions by the bytes
// they allocated that are gone, most first: sites with much allocation
// and little survival.
//
// It approximates MemInsight's churn analysis (sites with high
// allocation counts whose objects die young): MemInsight counts every
// allocation and knows each object's death; here the counts are V8's,
// which miss allocations its optimising compiler removed (escape
// analysis), and survival is read at the end only. An object a GC moved
// can lose its trace node, which makes its site look more churned than
// it is. The error wraps ErrNoAllocationStacks for a dump without
// allocation stacks.
func AllocationChurn(a *analysis.Analysis) ([]SiteChurn, error) {
	g := a.Graph
	t := g.Trace
	if t == nil || len(t.Tree) == 0 || len(g.TraceNodeID) != g.NumNodes() {
		return nil, noAllocationStacks(g)
	}
	nf := uint32(len(t.Functions))
	out := make([]SiteChurn, nf)
	for _, tn := range t.Tree {
		if tn.Function < nf {
			out[tn.Function].Allocated += int(tn.Count)
			out[tn.Function].AllocatedSize += tn.Size
		}
	}
	treeIndex := newTraceIndex(t).of
	for v, id := range g.TraceNodeID {
		if id == 0 {
			continue
		}
		if ti := treeIndex(id); ti >= 0 && t.Tree[ti].Function < nf {
			s := &out[t.Tree[ti].Function]
			s.Live++
			s.LiveSize += g.Nodes.Size.At(v)
		}
	}
	kept := out[:0]
	for fn := range out {
		if out[fn].Allocated > 0 || out[fn].Live > 0 {
			out[fn].Frame = traceFrame(a.Resolver(), g, &t.Functions[fn])
			kept = append(kept, out[fn])
		}
	}
	sort.SliceStable(kept, func(i, j int) bool {
		if fi, fj := kept[i].FreedSize(), kept[j].FreedSize(); fi != fj {
			return fi > fj
		}
		return kept[i].AllocatedSize > kept[j].AllocatedSize
	})
	return kept, nil
}

// SiteGrowth is one allocation site's live objects in each snapshot of
// a series.
type SiteGrowth struct {
	Frame
	// Counts and Sizes are the site's live objects and their shallow
	// sizes, one per snapshot (0 where the site has none).
	Counts []int
	Sizes  []uint64
	// Grows says the count increases strictly at every step.
	Grows bool
}

// SitesOverSeries counts the live objects of every allocation site in
// each of snaps, oldest first, all with allocation stacks (node
// --track-heap-objects, or timelines); sites are matched across the
// snapshots by function and script:line:column. The sites whose count
// grows at every step come first, by growth from the first snapshot to
// the last, then the others by their last count.
//
// It is MemInsight's leak rule (a site whose stale objects increase at
// every idle point) with "live" for "stale": V8 cannot tell an object
// that will be used again from one that will not, so a cache that fills
// up is a leak here too. Take the snapshots at idle points (between
// requests, after an action), after the program has warmed up: V8
// attributes an allocation to the function it was inlined into once it
// optimises the caller, which moves a site's new objects to another site
// in the middle of a series. The error names the snapshot without
// allocation stacks (ErrNoAllocationStacks).
func SitesOverSeries(snaps []*analysis.Analysis) ([]SiteGrowth, error) {
	index := map[Frame]int{}
	var out []SiteGrowth
	for i, a := range snaps {
		sites, err := AllocationSites(a)
		if err != nil {
			return nil, fmt.Errorf("snapshot %d: %w", i+1, err)
		}
		for _, s := range sites {
			k, ok := index[s.Frame]
			if !ok {
				k = len(out)
				index[s.Frame] = k
				out = append(out, SiteGrowth{Frame: s.Frame, Counts: make([]int, len(snaps)), Sizes: make([]uint64, len(snaps))})
			}
			out[k].Counts[i] += s.Count
			out[k].Sizes[i] += s.Shallow
		}
	}
	last := len(snaps) - 1
	for k := range out {
		c := out[k].Counts
		out[k].Grows = last > 0
		for i := 1; i <= last; i++ {
			if c[i] <= c[i-1] {
				out[k].Grows = false
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		x, y := out[i], out[j]
		switch {
		case x.Grows != y.Grows:
			return x.Grows
		case x.Grows && x.Counts[last]-x.Counts[0] != y.Counts[last]-y.Counts[0]:
			return x.Counts[last]-x.Counts[0] > y.Counts[last]-y.Counts[0]
		}
		return x.Counts[last] > y.Counts[last]
	})
	return out, nil
}
