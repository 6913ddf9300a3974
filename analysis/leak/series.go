package leak

import (
	"slices"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// IDKind says what a runtime's node ids are, which decides what they can
// tell across snapshots.
type IDKind uint8

const (
	// CountedIDs are V8's: HeapObjectsMap numbers each heap object the
	// first time a snapshot (or allocation tracking) sees it, from a
	// counter per process that starts at an odd number and steps by 2
	// (objects of the embedder, "native" nodes, get even ids from another
	// counter). An object keeps its id for its life, and an object first
	// seen later gets a larger one: within one process ids match objects,
	// and the largest odd id tells which snapshot was taken later.
	CountedIDs IDKind = iota
	// AddressIDs are HPROF's object ids and SpiderMonkey's node ids: the
	// object's address. A moving collector gives a surviving object
	// another address and can put another object at its old one, so even
	// within one process an id names an object only until the next
	// collection, and ids say nothing about the order of the dumps. MAT and
	// VisualVM compare two HPROF dumps by class histogram, and Firefox's
	// memory tool compares two snapshots by census, for that reason.
	AddressIDs
)

// Runtime returns the runtime that wrote g: the namespace of its node
// types ("v8", "hprof", "spidermonkey"), whatever file format carried it
// (the exchange format keeps the runtime's own types). It is "" for a
// graph without node types.
func Runtime(g *model.Graph) string {
	for _, t := range g.NodeTypes {
		if t.Namespace != "" {
			return t.Namespace
		}
	}
	return ""
}

// IDKindOf returns what g's node ids are: AddressIDs where the reader
// says so (model.MetaIDs "address": a Node.js core, a V8 heap read from
// memory), CountedIDs for V8 dumps, AddressIDs for every other runtime (no
// order is claimed for ids whose meaning is not known).
func IDKindOf(g *model.Graph) IDKind {
	if v, ok := g.MetaValue(model.MetaIDs); ok && v == "address" {
		return AddressIDs
	}
	if Runtime(g) == kinds.V8Namespace {
		return CountedIDs
	}
	return AddressIDs
}

// maxPairSample bounds how many nodes of the earlier snapshot PairCheck
// looks up in the later one: enough for the share to be within half a
// percent, and a lookup table small enough to stay in cache.
const maxPairSample = 1 << 16

// PairCheck is what the ids of two snapshots, given as an earlier and a
// later one, say about them.
type PairCheck struct {
	// Sampled counts the earlier snapshot's nodes looked up in the later
	// one (all of them up to 65,536 nodes, else every k-th); Same counts
	// those found there under the same id as a node of the same type and
	// name. Within one process nearly every object that lives on keeps
	// its id (99.8% between the bundled Node snapshots); two processes
	// started alike number their objects alike, but the same numbers soon
	// name other objects (15% of the shared ids name the same object
	// between two Node processes, under 1% between Node and Chromium).
	// Java ids are addresses, and the objects a JDK maps from its
	// class-data archive or makes at startup sit at the same addresses in
	// every JVM: two different small programs (java-ticketleak-1 and
	// java-jshell-agent) share 66%, so this test cannot tell them apart,
	// while two runs of LeakDemo share 18%. Their objects are never
	// matched by id anyway (see AddressIDs).
	Sampled, Same int
	// IDs is the kind of both snapshots' ids.
	IDs IDKind
	// EarlierNewest and LaterNewest are the largest V8 heap-object (odd)
	// id in each snapshot; Newer counts the earlier snapshot's heap
	// objects with an id above LaterNewest: objects first seen after
	// everything the later snapshot holds. All three are zero unless IDs
	// is CountedIDs.
	EarlierNewest, LaterNewest uint64
	Newer                      int
}

// SameShare is the share of the sampled nodes found again as the same
// object (see PairCheck.Same).
func (p PairCheck) SameShare() float64 {
	if p.Sampled == 0 {
		return 0
	}
	return float64(p.Same) / float64(p.Sampled)
}

// OneProcess reports whether the two snapshots look like snapshots of one
// process: at least StableIDFraction of the earlier one's objects are
// found again as the same objects.
func (p PairCheck) OneProcess() bool { return p.SameShare() >= StableIDFraction }

// Reversed reports whether the later snapshot was taken first: both come
// from one V8 process and the earlier one holds objects V8 numbered after
// everything in the later one. A snapshot taken later always holds new
// objects (taking it allocates some), so in the right order the later
// snapshot's newest id is the largest.
func (p PairCheck) Reversed() bool { return p.IDs == CountedIDs && p.OneProcess() && p.Newer > 0 }

// ComparePair compares the ids of two snapshots of the same runtime,
// given as earlier and later (see PairCheck). It reads each graph once
// and allocates only for the sample.
func ComparePair(earlier, later *model.Graph) PairCheck {
	s := newPairSample(earlier)
	return s.compare(later, func(id uint64) int {
		n := 0
		for i := range earlier.Nodes.ID.Len() {
			e := earlier.Nodes.ID.At(i)
			if e&1 == 1 && e > id {
				n++
			}
		}
		return n
	})
}

// pairSample is what ComparePair keeps of the earlier snapshot: every
// k-th node's id, with a hash of its type and name, behind a bit filter.
type pairSample struct {
	ids    IDKind
	newest uint64 // newestCountedID of the snapshot
	// sample maps an id to the hash of its node's type and name (see
	// nodeHash): a pair compared by hash needs no string of the earlier
	// snapshot, so a Digest keeps 16 bytes a sampled node, not its graph.
	sample map[uint64]uint64
	// A bit per hash of the sampled ids, 16 times as many bits as ids,
	// answers most lookups of the later snapshot's ids without the map.
	filter *[1 << 20 / 64]uint64
}

func newPairSample(g *model.Graph) *pairSample {
	n := g.NumNodes()
	step := (n + maxPairSample - 1) / maxPairSample
	if step < 1 {
		step = 1
	}
	s := &pairSample{ids: IDKindOf(g), sample: make(map[uint64]uint64, n/step+1), filter: new([1 << 20 / 64]uint64)}
	for v := 0; v < n; v += step {
		id := g.Nodes.ID.At(v)
		s.sample[id] = nodeHash(g, int32(v))
		h := idHash(id)
		s.filter[h>>6] |= 1 << (h & 63)
	}
	if s.ids == CountedIDs {
		s.newest = newestCountedID(g)
	}
	return s
}

// compare looks the sample up in the later snapshot; newer counts the
// earlier snapshot's V8 heap-object ids above the given one.
func (s *pairSample) compare(later *model.Graph, newer func(uint64) int) PairCheck {
	p := PairCheck{IDs: s.ids, Sampled: len(s.sample)}
	if IDKindOf(later) != p.IDs {
		p.IDs = AddressIDs
	}
	for v := range later.Nodes.ID.Len() {
		id := later.Nodes.ID.At(v)
		if h := idHash(id); s.filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		if h, ok := s.sample[id]; ok && h == nodeHash(later, int32(v)) {
			p.Same++
		}
	}
	if p.IDs == CountedIDs {
		p.EarlierNewest, p.LaterNewest = s.newest, newestCountedID(later)
		p.Newer = newer(p.LaterNewest)
	}
	return p
}

// nodeHash hashes node v's qualified type name and name (FNV-1a, 64 bits:
// two different nodes of a pair's sample, at most 65,536, collide with a
// chance of about 2^-48).
func nodeHash(g *model.Graph, v int32) uint64 {
	h := uint64(14695981039346656037)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
		h = (h ^ 0xff) * 1099511628211 // a separator no UTF-8 text holds
	}
	add(g.NodeType(v).QualifiedName())
	add(g.NodeName(v))
	return h
}

// idHash spreads ids (V8's step by 2, addresses by 8) over 20 bits.
func idHash(id uint64) uint32 { return uint32((id * 0x9e3779b97f4a7c15) >> 44) }

// newestCountedID is the largest V8 heap-object id of g: odd, as V8's
// object counter hands them out (embedder nodes' even ids come from a
// separate counter, or from a hash).
func newestCountedID(g *model.Graph) uint64 {
	var m uint64
	for i := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(i)
		if id&1 == 1 && id > m {
			m = id
		}
	}
	return m
}

// Digest is what comparing a snapshot with the later snapshots of a series
// needs of it, without its graph: its runtime, its ids, a sample to check
// the next snapshot against (see PairCheck) and its class counts. It takes
// 8 bytes a node where a graph and its analysis take over a hundred, so a
// command that compares the last snapshot of a series with digests of the
// others (leaks) costs about what analysing the last one alone does.
type Digest struct {
	// Runtime and IDs are the snapshot's runtime (see Runtime) and the
	// kind of its ids (see IDKindOf).
	Runtime string
	IDs     IDKind
	// Sorted holds every node's id, ascending.
	Sorted []uint64
	// Classes counts the instances of each class with a non-zero shallow
	// size, in the order of the snapshot's Classes (nil when it has no
	// class names).
	Classes []ClassCount
	// Pair compares the snapshot the Digest was made after (the one
	// before it in the series) with this one; nil for the first.
	Pair   *PairCheck
	sample *pairSample
}

// ClassCount is a class's instances with a non-zero shallow size in one
// snapshot: how many and their shallow sizes.
type ClassCount struct {
	// Name is the class name, Key its class key (see Classes.Key).
	Name, Key string
	Count     int
	Size      uint64
}

// NewDigest makes the digest of g, read as the snapshot after prev in a
// series (prev nil for the first). It computes shallow sizes and classes
// as Analyze would, but neither dominators nor distances.
func NewDigest(g *model.Graph, prev *Digest) *Digest {
	p := analysis.DefaultPolicy(g)
	dom := analysis.PropagateDOMState(g)
	var self []uint64
	if p.RedistributeShallow {
		self = analysis.ShallowSizes(g, analysis.FindRootsWith(g, !p.SkipIntoPageOwned), dom)
	} else {
		self = g.Nodes.Size.Slice()
	}
	return newDigest(g, self, analysis.ClassifyNodes(g, dom), prev)
}

// ClassCounts counts the instances of each class with a non-zero shallow
// size, in the order of a.Classes; nil without classes.
func ClassCounts(a *analysis.Analysis) []ClassCount { return classCounts(a.Self, a.Classes) }

// DigestOf is a's digest, as the snapshot after prev in a series (prev nil
// for the first); see NewDigest.
func DigestOf(a *analysis.Analysis, prev *Digest) *Digest {
	return newDigest(a.Graph, a.Self, a.Classes, prev)
}

func newDigest(g *model.Graph, self []uint64, cs *analysis.Classes, prev *Digest) *Digest {
	d := &Digest{Runtime: Runtime(g), IDs: IDKindOf(g), Sorted: sortedIDs(g), Classes: classCounts(self, cs), sample: newPairSample(g)}
	if prev != nil && prev.Runtime == d.Runtime {
		p := prev.compare(g)
		d.Pair = &p
	}
	return d
}

// compare is ComparePair with d's snapshot as the earlier one.
func (d *Digest) compare(later *model.Graph) PairCheck {
	return d.sample.compare(later, func(id uint64) int {
		n := 0
		for _, e := range d.Sorted[sort.Search(len(d.Sorted), func(i int) bool { return d.Sorted[i] > id }):] {
			n += int(e & 1)
		}
		return n
	})
}

// SeriesCheck is what CheckSeries found about snapshots given as one
// series, oldest first.
type SeriesCheck struct {
	// Runtimes is the runtime of each snapshot (see Runtime).
	Runtimes []string
	// Pairs compares each snapshot with the next: Pairs[i] is
	// ComparePair(snaps[i], snaps[i+1]). Nil when the runtimes differ.
	Pairs []PairCheck
}

// CheckSeries checks what snapshots given as a series, oldest first, can
// be compared for: whether one runtime wrote them all (SameRuntime),
// whether they come from one process (OneProcess) and, for V8, whether
// they were taken in the order given (Reversed, TakenOrder).
func CheckSeries(snaps []*analysis.Analysis) *SeriesCheck {
	s := &SeriesCheck{}
	for _, a := range snaps {
		s.Runtimes = append(s.Runtimes, Runtime(a.Graph))
	}
	if !s.SameRuntime() || len(snaps) < 2 {
		return s
	}
	s.Pairs = make([]PairCheck, len(snaps)-1)
	for i := range s.Pairs {
		s.Pairs[i] = ComparePair(snaps[i].Graph, snaps[i+1].Graph)
	}
	return s
}

// CheckDigests is CheckSeries for a series given as the digests of all but
// its last snapshot, oldest first, and the last one's graph.
func CheckDigests(earlier []*Digest, last *model.Graph) *SeriesCheck {
	s := &SeriesCheck{}
	for _, d := range earlier {
		s.Runtimes = append(s.Runtimes, d.Runtime)
	}
	s.Runtimes = append(s.Runtimes, Runtime(last))
	if !s.SameRuntime() || len(s.Runtimes) < 2 {
		return s
	}
	for _, d := range earlier[1:] {
		s.Pairs = append(s.Pairs, *d.Pair)
	}
	s.Pairs = append(s.Pairs, earlier[len(earlier)-1].compare(last))
	return s
}

// SameRuntime reports whether one runtime wrote every snapshot.
func (s *SeriesCheck) SameRuntime() bool {
	for _, r := range s.Runtimes {
		if r != s.Runtimes[0] {
			return false
		}
	}
	return true
}

// OneProcess reports whether every pair of neighbours looks like two
// snapshots of one process (see PairCheck.OneProcess).
func (s *SeriesCheck) OneProcess() bool {
	if !s.SameRuntime() {
		return false
	}
	for _, p := range s.Pairs {
		if !p.OneProcess() {
			return false
		}
	}
	return true
}

// MatchesObjects reports whether objects can be matched by id across the
// series: it comes from one process and its ids are V8's counted ids,
// which follow an object for its life (addresses do not; see
// AddressIDs).
func (s *SeriesCheck) MatchesObjects() bool {
	return s.OneProcess() && len(s.Pairs) > 0 && s.Pairs[0].IDs == CountedIDs
}

// Reversed returns the indexes i of the pairs whose snapshot i+1 was
// taken before snapshot i (see PairCheck.Reversed).
func (s *SeriesCheck) Reversed() []int {
	var out []int
	for i, p := range s.Pairs {
		if p.Reversed() {
			out = append(out, i)
		}
	}
	return out
}

// TakenOrder returns the snapshots' indexes in the order they were taken,
// oldest first, when the ids tell it (one V8 process), or nil.
func (s *SeriesCheck) TakenOrder() []int {
	if !s.MatchesObjects() {
		return nil
	}
	newest := make([]uint64, len(s.Runtimes))
	for i, p := range s.Pairs {
		newest[i], newest[i+1] = p.EarlierNewest, p.LaterNewest
	}
	order := make([]int, len(newest))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return newest[order[a]] < newest[order[b]] })
	return order
}

// ClassLeak is memlab's leak rule applied to class counts, for snapshots
// whose objects cannot be matched by id (see ClassLeaks).
type ClassLeak struct {
	// Name is the class name, Key its class key (see Classes.Key), which
	// matches classes across the snapshots.
	Name, Key string
	// Counts and Sizes are the class's instances with a non-zero shallow
	// size and their shallow sizes in the baseline, target and final
	// snapshots.
	Counts [3]int
	Sizes  [3]uint64
	// Kept is how many instances were added between the baseline and the
	// target and are still there in the final snapshot, as far as counts
	// tell: the smaller of the two increases over the baseline. KeptSize
	// is the same for the shallow sizes (0 when either does not grow).
	Kept     int
	KeptSize uint64
	// Example is the class's instance in the final snapshot with the
	// largest retained size: where to start looking (heapx paths).
	Example model.NodeIndex
}

// ClassLeaks is the class-count form of Leaks, for snapshots whose
// objects cannot be matched by id (different processes, or ids that are
// addresses): per class, how many more instances the target and the final
// snapshot both hold than the baseline. It cannot tell a leaked object
// from a replaced one, only that the count stays up. Classes are matched
// by key; those with Kept > 0 are returned, largest KeptSize first, then
// Kept, then name. The baseline and the target come as their class counts
// (Digest.Classes, or ClassCounts). All three snapshots need
// classes; nil otherwise.
func ClassLeaks(baseline, target []ClassCount, final *analysis.Analysis) []ClassLeak {
	if baseline == nil || target == nil || final.Classes == nil {
		return nil
	}
	rows, finalRow := classSeries([][]ClassCount{baseline, target, ClassCounts(final)})
	var out []ClassLeak
	index := make([]int32, len(rows)) // row -> position in out, or -1
	for i, r := range rows {
		index[i] = -1
		kept := min(r.Counts[1], r.Counts[2]) - r.Counts[0]
		if kept <= 0 {
			continue
		}
		cl := ClassLeak{Name: r.Name, Key: r.Key, Kept: kept, Example: model.NoNode}
		copy(cl.Counts[:], r.Counts)
		copy(cl.Sizes[:], r.Sizes)
		if m := min(r.Sizes[1], r.Sizes[2]); m > r.Sizes[0] {
			cl.KeptSize = m - r.Sizes[0]
		}
		index[i] = int32(len(out))
		out = append(out, cl)
	}
	ret := final.Dominators.Retained
	for v, c := range final.Classes.Of {
		if final.Self[v] == 0 {
			continue
		}
		if j := index[finalRow[c]]; j >= 0 {
			if ex := out[j].Example; ex == model.NoNode || ret[v] > ret[ex] {
				out[j].Example = int32(v)
			}
		}
	}
	slices.SortStableFunc(out, func(x, y ClassLeak) int {
		switch {
		case x.KeptSize != y.KeptSize:
			if x.KeptSize > y.KeptSize {
				return -1
			}
			return 1
		case x.Kept != y.Kept:
			return y.Kept - x.Kept
		}
		return jsstr.Compare(x.Name, y.Name)
	})
	return out
}
