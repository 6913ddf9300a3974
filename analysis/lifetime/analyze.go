package lifetime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"

	"github.com/heapx/heapx/formats/memtrace"
)

// Options tune Analyze.
type Options struct {
	// CycleQueueLimit: see DefaultCycleQueueLimit (0: the default).
	CycleQueueLimit int
	// StopAt, when not 0, stops the simulation after the last event at
	// or before this time and keeps the heap of that moment for
	// AccessPaths; objects alive then are reported alive at the end.
	StopAt uint64
	// Each, when not nil, is called with every object's lifetime as it
	// is decided (heapx convert writes them out).
	Each Sink
}

// Result is a trace's lifetime analysis: per object a compact record,
// per allocation site MemInsight's client analyses.
type Result struct {
	// End is the time of the trace's last event; Events the records
	// read.
	End    uint64
	Events uint64
	// Objects holds one record per object, in the order they were
	// decided (see Record).
	Objects []Record
	// Sites are the allocation sites, by iid (Site.IID), in the order
	// first seen.
	Sites []Site
	// Idles are the idle points (returns to the event loop with an empty
	// stack, Simulator.Idles), in time order; IdleMillis their wall-clock
	// times in milliseconds from the program's start (empty for traces
	// without IDLE records).
	Idles      []uint64
	IdleMillis []uint64
	// Judged are the idle points the leak rule looks at: those before
	// the end, at most LeakSamples of them spread evenly (indices into
	// Idles). Site.StaleAtIdle is the stale count at each.
	Judged []int
	// Contexts is the calling-context tree of the allocations.
	Contexts *ContextTree
	// Positions resolves iids to source positions.
	Positions func(iid uint64) (memtrace.Pos, bool)
	// FirstSeenLate counts objects first seen at a write or a use rather
	// than their allocation (made by untraced code); Revived those seen
	// again after they were found unreachable (Lifetime.Revived).
	FirstSeenLate, Revived uint64
	// Unseen are the trace's UNSEEN records; Exit and EndRecord its EXIT
	// and END records (Kind 0 when missing); Signals the signals the
	// program received.
	Unseen          []memtrace.Event
	Exit, EndRecord memtrace.Event
	Signals         []string
	// NativeEmitters are the emitters made by untraced code that held
	// more of the program's listeners at once than Node's MaxListeners
	// (Simulator.NativeEmitters).
	NativeEmitters []NativeEmitter
	// Heap is the simulation stopped at Options.StopAt, or at the END
	// record before it reports what is alive (nil without StopAt).
	Heap *Simulator

	siteOf map[uint64]int32
}

// Record is one object's lifetime in 40 bytes: the analysis keeps one per
// object the trace allocated, the only part of its memory that grows with
// the trace rather than with the live heap.
type Record struct {
	Site        int32 // index into Result.Sites
	Flags       uint8
	Alloc       uint64
	LastUse     uint64 // 0: never used
	Unreachable uint64 // Result.End for objects alive at the end
	ID          uint64
}

// Record flags.
const (
	RecAtEnd uint8 = 1 << iota
	RecNonEscaping
	RecOwned
	RecFunction
)

// StaleSince is when the object became stale: its last use, or its
// allocation when it was never used.
func (r *Record) StaleSince() uint64 { return max(r.Alloc, r.LastUse) }

// Site is one allocation site and what the client analyses say of it.
type Site struct {
	IID uint64
	Pos memtrace.Pos
	// Count is the objects allocated; AtEnd those still alive at the
	// end; Unused those never used; Functions those that are functions.
	Count, AtEnd, Unused, Functions int
	// NonEscaping counts objects that died before the call that made
	// them returned; Owned those consistently owned by one object of
	// OwnerSite (0 when they disagree).
	NonEscaping, Owned int
	OwnerSite          uint64
	// Staleness is the sum over its objects of the time from last use
	// to unreachability (MemInsight's drag, in ticks); MaxStaleness the
	// largest.
	Staleness, MaxStaleness uint64
	// MaxAlive and MaxStale are the most objects of the site alive, and
	// stale, at one time; MaxStaleAt when the stale peak was.
	MaxAlive, MaxStale int
	MaxStaleAt         uint64
	// StaleAtIdle is the site's stale count at each judged idle point
	// (Result.Judged).
	StaleAtIdle []int
	// Trend is the leak rule's measure of StaleAtIdle; Leaking says the
	// rule holds (Trend.Leaking).
	Trend   Trend
	Leaking bool
	// Late counts the objects the trace first saw after their allocation
	// (made by code it does not show, such as Node's requests and
	// sockets): the site is where the program first touched them.
	// Revived counts those seen again after they were found unreachable
	// (Lifetime.Revived).
	Late, Revived int
	// Suspended counts the objects alive at the end that only suspended
	// calls held (Lifetime.Suspended); SuspendedAt is the await of one.
	Suspended   int
	SuspendedAt uint64
	// HeldBy is the access path, at the end, to one of the site's
	// objects alive then (nil when none is).
	HeldBy []string
}

// OneAliveAtATime says at most one object of the site was ever alive at
// once though it made several: one reused object would do.
func (s *Site) OneAliveAtATime() bool { return s.Count > 1 && s.MaxAlive <= 1 }

// AllNonEscaping says every object of the site died in the call that
// made it: a candidate for stack allocation (scalar replacement).
func (s *Site) AllNonEscaping() bool { return s.Count > 0 && s.NonEscaping == s.Count }

// Inlinable says every object of the site is owned by one object of one
// other site, made in the same call, dying with it: its fields could live
// in the owner (MemInsight's consistentlyPointedBy).
func (s *Site) Inlinable() bool { return s.Count > 0 && s.Owned == s.Count && s.OwnerSite != 0 }

// AllUnused says no object of the site was ever used.
func (s *Site) AllUnused() bool { return s.Count > 0 && s.Unused == s.Count }

// Analyze reads a trace front to back, simulating its heap, and computes
// the client analyses. A malformed or truncated trace is an error naming
// name (the file) and the byte offset.
func Analyze(r *memtrace.Reader, name string, opt Options) (*Result, error) {
	res := &Result{siteOf: map[uint64]int32{}, Positions: r.Position}
	sim := NewSimulator(func(l *Lifetime) {
		if opt.Each != nil {
			opt.Each(l)
		}
		res.add(l)
	})
	if opt.CycleQueueLimit > 0 {
		sim.CycleQueueLimit = opt.CycleQueueLimit
	}
	sim.Positions = r.Position
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if opt.StopAt != 0 && (ev.Kind.IsEvent() && ev.Time > opt.StopAt || ev.Kind == memtrace.End) {
			// The heap of that moment, with what no root reaches gone:
			// as at a flush point.
			sim.flush(sim.Now(), true)
			res.Heap = sim
			res.End = sim.Now()
			return res, nil
		}
		res.Events++
		if err := sim.Apply(&ev); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	sim.End(sim.Now())
	res.End = sim.Now()
	res.Idles = sim.Idles
	res.Contexts = &sim.Contexts
	res.IdleMillis, res.NativeEmitters = sim.IdleMillis, sim.NativeEmitters
	res.FirstSeenLate, res.Revived, res.Unseen, res.Exit, res.EndRecord, res.Signals = sim.FirstSeenLate, sim.Revived, sim.Unseen, sim.Exit, sim.EndRecord, sim.Signals
	for i := range res.Sites {
		res.Sites[i].Pos, _ = r.Position(res.Sites[i].IID)
		res.Sites[i].HeldBy = sim.HeldAtEnd[res.Sites[i].IID]
	}
	res.siteStats()
	return res, nil
}

func (res *Result) add(l *Lifetime) {
	if l.Site == 0 {
		// Objects that exist before the program (process, which the
		// runtime holds in globalThis to model its listeners) or that
		// untraced code made before any traced code ran: no site of
		// the program's.
		return
	}
	si, ok := res.siteOf[l.Site]
	if !ok {
		si = int32(len(res.Sites))
		res.siteOf[l.Site] = si
		res.Sites = append(res.Sites, Site{IID: l.Site})
	}
	rec := Record{Site: si, Alloc: l.Alloc, LastUse: l.LastUse, Unreachable: l.Unreachable, ID: l.ID}
	if l.AtEnd {
		rec.Flags |= RecAtEnd
	}
	if l.NonEscaping {
		rec.Flags |= RecNonEscaping
	}
	if l.Function {
		rec.Flags |= RecFunction
	}
	s := &res.Sites[si]
	if l.Owned {
		rec.Flags |= RecOwned
		switch {
		case s.Owned == 0 && s.Count == 0:
			s.OwnerSite = l.OwnerSite
		case s.OwnerSite != l.OwnerSite:
			s.OwnerSite = 0
		}
		s.Owned++
	}
	s.Count++
	if l.AtEnd {
		s.AtEnd++
	}
	if l.LastUse == 0 {
		s.Unused++
	}
	if l.Function {
		s.Functions++
	}
	if l.NonEscaping {
		s.NonEscaping++
	}
	if l.Late {
		s.Late++
	}
	if l.Revived {
		s.Revived++
	}
	if l.Suspended != 0 {
		if s.Suspended == 0 {
			s.SuspendedAt = l.Suspended
		}
		s.Suspended++
	}
	stale := l.Unreachable - min(l.Unreachable, l.StaleSince())
	s.Staleness += stale
	s.MaxStaleness = max(s.MaxStaleness, stale)
	res.Objects = append(res.Objects, rec)
}

// siteStats computes the per-site peaks and the stale counts at idle
// points from the records: a sweep over each site's intervals in time
// order.
func (res *Result) siteStats() {
	type point struct {
		t     uint64
		delta int
	}
	bySite := make([][]int32, len(res.Sites))
	for i := range res.Objects {
		s := res.Objects[i].Site
		bySite[s] = append(bySite[s], int32(i))
	}
	res.Judged = judgedIdles(res.Idles, res.End)
	judged := make([]uint64, len(res.Judged))
	for k, i := range res.Judged {
		judged[k] = res.Idles[i]
	}
	var pts []point
	peak := func(pts []point) (int, uint64) {
		// Deaths sort before births at one time: an object unreachable
		// at t and one allocated at t are not alive together.
		sort.Slice(pts, func(i, j int) bool {
			if pts[i].t != pts[j].t {
				return pts[i].t < pts[j].t
			}
			return pts[i].delta < pts[j].delta
		})
		n, best, at := 0, 0, uint64(0)
		for _, p := range pts {
			n += p.delta
			if n > best {
				best, at = n, p.t
			}
		}
		return best, at
	}
	// The leak rule is quadratic in the judged points, and sites often
	// share their stale counts (a site per handler call, each object
	// stale from its call on: 100,000 sites of 256 points took 21 s), so
	// each distinct series of counts is measured once.
	trends := map[string]Trend{}
	var key []byte
	for si, objs := range bySite {
		s := &res.Sites[si]
		pts = pts[:0]
		for _, i := range objs {
			o := &res.Objects[i]
			pts = append(pts, point{o.Alloc, 1}, point{o.Unreachable + o.endBonus(), -1})
		}
		s.MaxAlive, _ = peak(pts)
		pts = pts[:0]
		for _, i := range objs {
			o := &res.Objects[i]
			if from := o.StaleSince(); from < o.Unreachable || o.Flags&RecAtEnd != 0 {
				pts = append(pts, point{from + 1, 1}, point{o.Unreachable + o.endBonus(), -1})
			}
		}
		s.MaxStale, s.MaxStaleAt = peak(pts)
		if len(judged) > 0 {
			s.StaleAtIdle = staleAt(judged, res.Objects, objs)
			key = key[:0]
			for _, x := range s.StaleAtIdle {
				key = binary.AppendUvarint(key, uint64(x))
			}
			tr, ok := trends[string(key)]
			if !ok {
				tr = LeakTrend(s.StaleAtIdle, res.Judged)
				trends[string(key)] = tr
			}
			s.Trend = tr
			s.Leaking = s.Trend.Leaking
		}
	}
}

// The leak rule's thresholds (docs/trace.md, "Leaks"): a site leaks when
// its stale count at the judged idle points (at least LeakMinPoints of
// them) rises with a rank correlation (Kendall's tau-b against their order)
// of at least LeakMinTau, a Theil-Sen line through them gains at least
// LeakMinGrowth objects over the run, and it was still rising in the run's
// second half. Ranks and medians tolerate plateaus (a leak that grows in
// steps) and dips (some of the leaked objects freed now and then); the
// second half's rise tells a leak from a cache that filled up and stayed.
const (
	LeakMinPoints = 4
	LeakMinTau    = 0.5
	LeakMinGrowth = 3
	// LeakSamples bounds the judged idle points: the rule is quadratic
	// in them.
	LeakSamples = 256
)

// Trend is the leak rule's measure of a site's stale counts over the
// judged idle points.
type Trend struct {
	Points      int     // judged idle points
	First, Last int     // stale count at the first and the last
	Tau         float64 // Kendall's tau-b of the counts against their order
	// Slope is the Theil-Sen slope, in stale objects per idle point;
	// Growth that slope over the run (Slope times the idle points
	// spanned). Tau, Slope and Growth are measured only when Rising
	// holds over enough points (0 otherwise).
	Slope, Growth float64
	// Rising says the count rose over the second half: the median of
	// its last quarter exceeds that of its second by at least a quarter
	// of the rise from the first quarter to the second.
	Rising  bool
	Leaking bool
}

// LeakTrend applies the leak rule to the stale counts xs at the idle
// points at (their indices among all idle points, increasing).
func LeakTrend(xs []int, at []int) Trend {
	n := len(xs)
	t := Trend{Points: n}
	if n == 0 {
		return t
	}
	t.First, t.Last = xs[0], xs[n-1]
	if n < 2 {
		return t
	}
	q := func(k int) float64 { // the median of quarter k (0-3)
		lo, hi := k*n/4, (k+1)*n/4
		if hi <= lo {
			hi = lo + 1
		}
		part := make([]float64, 0, hi-lo)
		for _, x := range xs[lo:hi] {
			part = append(part, float64(x))
		}
		return median(part)
	}
	q1, q2, q4 := q(0), q(1), q(3)
	t.Rising = q4 > q2 && 4*(q4-q2) >= q2-q1
	if !t.Rising || n < LeakMinPoints {
		return t // the quadratic part only where it can matter
	}
	var conc, disc, tiedX float64
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d := xs[j] - xs[i]
			switch {
			case d > 0:
				conc++
			case d < 0:
				disc++
			default:
				tiedX++
			}
			slopes = append(slopes, float64(d)/float64(at[j]-at[i]))
		}
	}
	pairs := conc + disc + tiedX
	if pairs > tiedX {
		t.Tau = (conc - disc) / math.Sqrt(pairs*(pairs-tiedX))
	}
	t.Slope = median(slopes)
	t.Growth = t.Slope * float64(at[n-1]-at[0])
	t.Leaking = t.Tau >= LeakMinTau && t.Growth >= LeakMinGrowth
	return t
}

// median sorts xs and returns its median.
func median(xs []float64) float64 {
	slices.Sort(xs)
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return xs[m]
	}
	return (xs[m-1] + xs[m]) / 2
}

// judgedIdles picks the idle points the leak rule looks at: those before
// end (a program's last idle point, with nothing after it, only repeats
// the counts of the handler before), at most LeakSamples of them, spread
// evenly, first and last included.
func judgedIdles(idles []uint64, end uint64) []int {
	n := len(idles)
	if n > 0 && idles[n-1] >= end {
		n--
	}
	m := min(n, LeakSamples)
	out := make([]int, m)
	for j := range out {
		if m == 1 {
			break
		}
		out[j] = int((uint64(j)*uint64(n-1) + uint64(m-1)/2) / uint64(m-1))
	}
	return out
}

// staleAt counts the objects objs (indices into recs) stale at each of
// the times: a difference array over the times each object was stale
// through, so a long-lived object costs two binary searches, not one
// step per idle point.
func staleAt(times []uint64, recs []Record, objs []int32) []int {
	diff := make([]int, len(times)+1)
	for _, i := range objs {
		o := &recs[i]
		since, until := o.StaleSince(), o.Unreachable+o.endBonus()
		lo := sort.Search(len(times), func(k int) bool { return times[k] > since })
		hi := sort.Search(len(times), func(k int) bool { return times[k] >= until })
		if lo < hi {
			diff[lo]++
			diff[hi]--
		}
	}
	out := diff[:len(times)]
	for k := 1; k < len(out); k++ {
		out[k] += out[k-1]
	}
	return out
}

// endBonus keeps objects alive at the end alive at the last tick too.
func (r *Record) endBonus() uint64 {
	if r.Flags&RecAtEnd != 0 {
		return 1
	}
	return 0
}

// Timeline is the number of objects alive and stale over time, sampled at
// the end of equal slices of the trace's time, with the stale counts of
// chosen sites.
type Timeline struct {
	Times        []uint64
	Alive, Stale []int
	// SiteStale[k][i] is site Sites[k]'s stale count at Times[i].
	Sites     []int32
	SiteStale [][]int
}

// Timeline samples the live and stale counts at n times spread evenly
// over the trace, with the stale counts of sites (indices into Sites).
func (res *Result) Timeline(n int, sites []int32) *Timeline {
	n = max(1, min(n, int(max(res.End, 1))))
	tl := &Timeline{Times: make([]uint64, n), Alive: make([]int, n+1), Stale: make([]int, n+1), Sites: sites}
	for i := range tl.Times {
		tl.Times[i] = max(1, res.End*uint64(i+1)/uint64(n))
	}
	idx := map[int32]int{}
	for k, s := range sites {
		idx[s] = k
		tl.SiteStale = append(tl.SiteStale, make([]int, n+1))
	}
	// bucket is the first sample at or after t.
	bucket := func(t uint64) int { return sort.Search(n, func(i int) bool { return tl.Times[i] >= t }) }
	for i := range res.Objects {
		o := &res.Objects[i]
		end := bucket(o.Unreachable + o.endBonus())
		tl.Alive[bucket(o.Alloc)]++
		tl.Alive[end]--
		if from := bucket(o.StaleSince() + 1); from < end {
			tl.Stale[from]++
			tl.Stale[end]--
			if k, ok := idx[o.Site]; ok {
				tl.SiteStale[k][from]++
				tl.SiteStale[k][end]--
			}
		}
	}
	prefix := func(xs []int) []int {
		for i := 1; i < len(xs); i++ {
			xs[i] += xs[i-1]
		}
		return xs[:n]
	}
	tl.Alive, tl.Stale = prefix(tl.Alive), prefix(tl.Stale)
	for k := range tl.SiteStale {
		tl.SiteStale[k] = prefix(tl.SiteStale[k])
	}
	return tl
}

// SitesBy returns the indices of the sites for which keep is true,
// ordered by less.
func (res *Result) SitesBy(keep func(*Site) bool, less func(a, b *Site) bool) []int32 {
	var out []int32
	for i := range res.Sites {
		if keep(&res.Sites[i]) {
			out = append(out, int32(i))
		}
	}
	slices.SortStableFunc(out, func(a, b int32) int {
		switch {
		case less(&res.Sites[a], &res.Sites[b]):
			return -1
		case less(&res.Sites[b], &res.Sites[a]):
			return 1
		}
		return 0
	})
	return out
}

// SiteIndex returns the index into Sites of the site of iid, or -1.
func (res *Result) SiteIndex(iid uint64) int32 {
	if i, ok := res.siteOf[iid]; ok {
		return i
	}
	return -1
}

// CallTree returns the calling contexts that allocated site's objects:
// for each context-tree node that did, its path of call sites from the
// top level and its count.
func (res *Result) CallTree(site uint64) []CallPath {
	var out []CallPath
	for k, n := range res.Contexts.Allocs {
		if k.Site == site {
			out = append(out, CallPath{Calls: res.Contexts.Path(k.Node), Count: n})
		}
	}
	slices.SortFunc(out, func(a, b CallPath) int { return slices.Compare(a.Calls, b.Calls) })
	return out
}

// CallPath is one calling context of an allocation site.
type CallPath struct {
	Calls []uint64 // iids of the call sites, outermost first
	Count uint64
}
