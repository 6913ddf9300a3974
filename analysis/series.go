package analysis

import (
	"slices"
	"sort"

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

// IDKindOf returns what g's node ids are: CountedIDs for V8 dumps,
// AddressIDs for every other runtime (no order is claimed for ids whose
// meaning is not known).
func IDKindOf(g *model.Graph) IDKind {
	if Runtime(g) == v8Namespace {
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
	p := PairCheck{IDs: IDKindOf(earlier)}
	if IDKindOf(later) != p.IDs {
		p.IDs = AddressIDs
	}
	n := earlier.NumNodes()
	step := (n + maxPairSample - 1) / maxPairSample
	if step < 1 {
		step = 1
	}
	// A bit per hash of the sampled ids, 16 times as many bits as ids,
	// answers most lookups of the later snapshot's ids without the map.
	sample := make(map[uint64]int32, n/step+1)
	var filter [1 << 20 / 64]uint64
	for v := 0; v < n; v += step {
		id := earlier.Nodes.ID[v]
		sample[id] = int32(v)
		h := idHash(id)
		filter[h>>6] |= 1 << (h & 63)
	}
	p.Sampled = len(sample)
	for v, id := range later.Nodes.ID {
		if h := idHash(id); filter[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		u, ok := sample[id]
		if !ok {
			continue
		}
		if earlier.NodeName(u) == later.NodeName(int32(v)) &&
			earlier.NodeType(u).QualifiedName() == later.NodeType(int32(v)).QualifiedName() {
			p.Same++
		}
	}
	if p.IDs == CountedIDs {
		p.EarlierNewest, p.LaterNewest = newestCountedID(earlier), newestCountedID(later)
		for _, id := range earlier.Nodes.ID {
			if id&1 == 1 && id > p.LaterNewest {
				p.Newer++
			}
		}
	}
	return p
}

// idHash spreads ids (V8's step by 2, addresses by 8) over 20 bits.
func idHash(id uint64) uint32 { return uint32((id * 0x9e3779b97f4a7c15) >> 44) }

// newestCountedID is the largest V8 heap-object id of g: odd, as V8's
// object counter hands them out (embedder nodes' even ids come from a
// separate counter, or from a hash).
func newestCountedID(g *model.Graph) uint64 {
	var m uint64
	for _, id := range g.Nodes.ID {
		if id&1 == 1 && id > m {
			m = id
		}
	}
	return m
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
func CheckSeries(snaps []*Analysis) *SeriesCheck {
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
// Kept, then name. All three analyses need classes; nil otherwise.
func ClassLeaks(baseline, target, final *Analysis) []ClassLeak {
	snaps := []*Analysis{baseline, target, final}
	for _, a := range snaps {
		if a.Classes == nil {
			return nil
		}
	}
	rows, finalRow := classSeries(snaps)
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
		return cmp16(x.Name, y.Name)
	})
	return out
}
