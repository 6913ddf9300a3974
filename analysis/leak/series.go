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
	// one (all of them up to 65,536 nodes, else every k-th); Found counts
	// those whose id the later one has, and Same those found there as a
	// node of the same type and name. Within one process nearly every
	// object that lives on keeps its id (99.8% between the bundled Node
	// snapshots); two processes started alike number their objects alike,
	// but the same numbers soon name other objects (15% of the shared ids
	// name the same object between two Node processes, under 1% between
	// Node and Chromium). Java ids are addresses, and the objects a JDK
	// maps from its class-data archive or makes at startup sit at the same
	// addresses in every JVM: two different small programs
	// (java-ticketleak-1 and java-jshell-agent) share 66%, so this test
	// cannot tell them apart, while two runs of LeakDemo share 18%. Their
	// objects are never matched by id anyway (see AddressIDs).
	Sampled, Found, Same int
	// OtherType counts the sampled ids found in the later snapshot as a
	// node of another type. A V8 object never changes type, where its name
	// may (a DOM element's name holds its class attribute), so within one
	// process it stays near zero (1 of 53,357 on the bundled Node series,
	// 0 with 400 elements renamed); see IDsReused.
	OtherType int
	// IDs is the kind of both snapshots' ids.
	IDs IDKind
	// Renumbered reports that the later snapshot's V8 heap-object (odd)
	// ids rise in the order its nodes are listed, as in a process's first
	// snapshot: V8 numbers objects as the snapshot first meets them, so a
	// snapshot of objects numbered before it lists old and new objects
	// interleaved (hundreds of descents or more in every later snapshot
	// of the fixtures), while one taken after V8 dropped its numbering
	// (its heap profiler turned off, as when an inspector session ends)
	// numbers everything afresh, from the start again. False unless IDs
	// is CountedIDs.
	Renumbered bool
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

// ReusedShare is the share of the sampled ids found in the later
// snapshot that name another object there (another type or name).
func (p PairCheck) ReusedShare() float64 {
	if p.Found == 0 {
		return 0
	}
	return float64(p.Found-p.Same) / float64(p.Found)
}

// MaxOtherTypeFraction is the share of the ids found in both snapshots
// that may name a node of another type in the later one before the ids
// are taken as reused (see IDsReused): a tenth of a percent, 50 times
// what one V8 process showed, 60 times under what separate sessions of
// one Chromium page (6% to 30%) and of one Node process (10% to 14%)
// showed.
const MaxOtherTypeFraction = 0.001

// IDsReused reports whether V8 numbered the later snapshot's objects
// afresh, so that its ids name other objects than the earlier's: the
// snapshots were taken in separate sessions of V8's heap profiler (each
// `heapx capture --inspect` run, each DevTools window: V8 forgets its
// numbering when a session ends) or by separate processes: more than
// MaxOtherTypeFraction of the ids found in both name a node of another
// type, or, in a later snapshot V8 Renumbered, another object (a later
// snapshot of one session can be in order too, when everything new was
// met after everything old, but then its ids name the objects they
// named). Then a share of ids found again proves nothing: ids
// restarted from the same first number, and the heap was walked in much
// the same order, so nine in ten may name an object of the same type and
// name by coincidence (three sessions of one page: 89.5%). Only V8's
// counted ids are checked: an address names another object after the
// collector moved one (see AddressIDs).
func (p PairCheck) IDsReused() bool {
	if p.IDs != CountedIDs || p.Found == 0 {
		return false
	}
	limit := MaxOtherTypeFraction * float64(p.Found)
	return float64(p.OtherType) > limit || p.Renumbered && float64(p.Found-p.Same) > limit
}

// OneProcess reports whether the two snapshots look like snapshots of one
// process, numbered by one session: at least StableIDFraction of the
// earlier one's objects are found again as the same objects, and the ids
// were not reused (IDsReused).
func (p PairCheck) OneProcess() bool {
	return p.SameShare() >= StableIDFraction && !p.IDsReused()
}

// MatchesObjects reports whether objects can be matched by id across the
// pair: V8's counted ids of one process (OneProcess). This is the one
// check every comparison by id makes first (Diff, Leaks, Growth, and the
// front ends' warnings through CheckSeries).
func (p PairCheck) MatchesObjects() bool { return p.IDs == CountedIDs && p.OneProcess() }

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
// k-th node's id, with hashes of its type and of its type and name, behind
// a bit filter.
type pairSample struct {
	ids    IDKind
	newest uint64 // newestCountedID of the snapshot
	// sample maps an id to the hashes of its node (see sampledNode): a
	// pair compared by hash needs no string of the earlier snapshot, so a
	// Digest keeps 24 bytes a sampled node, not its graph.
	sample map[uint64]sampledNode
	// A bit per hash of the sampled ids, 16 times as many bits as ids,
	// answers most lookups of the later snapshot's ids without the map.
	filter *[1 << 20 / 64]uint64
}

// sampledNode is what a pair sample keeps of a node: the hash of its
// type's qualified name and that of its type and name (nodeHash).
type sampledNode struct{ typ, node uint64 }

func newPairSample(g *model.Graph) *pairSample {
	n := g.NumNodes()
	step := (n + maxPairSample - 1) / maxPairSample
	if step < 1 {
		step = 1
	}
	s := &pairSample{ids: IDKindOf(g), sample: make(map[uint64]sampledNode, n/step+1), filter: new([1 << 20 / 64]uint64)}
	for v := 0; v < n; v += step {
		id := g.Nodes.ID.At(v)
		s.sample[id] = sampledOf(g, int32(v))
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
		e, ok := s.sample[id]
		if !ok {
			continue
		}
		p.Found++
		l := sampledOf(later, int32(v))
		switch {
		case l == e:
			p.Same++
		case l.typ != e.typ:
			p.OtherType++
		}
	}
	if p.IDs == CountedIDs {
		p.EarlierNewest, p.LaterNewest = s.newest, newestCountedID(later)
		p.Newer = newer(p.LaterNewest)
		p.Renumbered = numberedInOrder(later)
	}
	return p
}

// numberedInOrder reports whether g's V8 heap-object (odd) ids rise in
// node order but for at most one in 10,000 (the first snapshot of a
// Chromium page had 1 descent in 160,858 ids); see PairCheck.Renumbered.
func numberedInOrder(g *model.Graph) bool {
	var last uint64
	odd, descents := 0, 0
	for i := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(i)
		if id&1 == 0 {
			continue
		}
		odd++
		if id < last {
			descents++
		}
		last = id
	}
	return odd > 0 && descents*10000 <= odd
}

// sampledOf hashes node v of g for a pair sample.
func sampledOf(g *model.Graph, v int32) sampledNode {
	t := g.NodeType(v).QualifiedName()
	return sampledNode{typ: nodeHash(t, ""), node: nodeHash(t, g.NodeName(v))}
}

// nodeHash hashes a node's qualified type name and name (FNV-1a, 64
// bits: two different nodes of a pair's sample, at most 65,536, collide
// with a chance of about 2^-48).
func nodeHash(typ, name string) uint64 {
	h := uint64(14695981039346656037)
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			h = (h ^ uint64(s[i])) * 1099511628211
		}
		h = (h ^ 0xff) * 1099511628211 // a separator no UTF-8 text holds
	}
	add(typ)
	add(name)
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
	self := g.Nodes.Size
	if p.RedistributeShallow {
		self = model.NewUint64s(analysis.ShallowSizes(g, analysis.FindRootsWith(g, !p.SkipIntoPageOwned), dom)...)
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

func newDigest(g *model.Graph, self model.Uint64s, cs *analysis.Classes, prev *Digest) *Digest {
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
	if !s.SameRuntime() || len(s.Pairs) == 0 {
		return false
	}
	for _, p := range s.Pairs {
		if !p.MatchesObjects() {
			return false
		}
	}
	return true
}

// Weakest returns the pair that decides how the series is compared: the
// first that does not look like one process, else the one with the
// smallest SameShare; ok is false without pairs.
func (s *SeriesCheck) Weakest() (p PairCheck, ok bool) {
	for i, q := range s.Pairs {
		if !q.OneProcess() {
			return q, true
		}
		if i == 0 || q.SameShare() < p.SameShare() {
			p = q
		}
	}
	return p, len(s.Pairs) > 0
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
		if final.Self.At(int(v)) == 0 {
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
