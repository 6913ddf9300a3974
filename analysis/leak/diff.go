package leak

import (
	"slices"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/model"
)

// Matching says how the objects of two snapshots were paired.
type Matching uint8

const (
	// MatchByID pairs objects by node id: the ids are stable between the
	// snapshots (V8 snapshots of one process), so an object's identity is
	// known and "new" and "deleted" are exact.
	MatchByID Matching = iota
	// MatchByClass compares only the instance counts and sizes per class:
	// the ids are not stable (dumps of different processes, or runtimes
	// whose ids are addresses a moving collector changes), so which object
	// is new cannot be told.
	MatchByClass
)

// String returns "id" or "class".
func (m Matching) String() string {
	if m == MatchByID {
		return "id"
	}
	return "class"
}

// StableIDFraction is the share of one snapshot's objects that must be
// found again as the same objects in the next (PairCheck.SameShare) for
// the two to be taken as snapshots of one process. Within one V8 process
// almost every id survives between snapshots except those of collected
// objects (99.8% on the leak fixtures); a moving collector that renames
// objects by address leaves few. Ids that coincide by chance (V8 numbers
// objects from the same start in every process and every session) can
// pass it; PairCheck.IDsReused tells them apart.
const StableIDFraction = 0.5

// MaxDiffExamples bounds ClassDiff.NewNodes, so a class with millions of
// new instances does not cost a list of them.
const MaxDiffExamples = 10

// ClassDiff is one row of DevTools' Comparison view.
type ClassDiff struct {
	// Name is the "Constructor" column, Key DevTools' class key (see
	// Classes.Key), which is what rows are matched by.
	Name, Key string
	// New and Deleted are the "# New" and "# Deleted" columns: instances
	// whose id is only in the target, or only in the base (zero with
	// MatchByClass).
	New, Deleted int
	// Delta is "# Delta": New - Deleted, or TargetCount - BaseCount with
	// MatchByClass.
	Delta int
	// AllocSize and FreedSize are "Alloc. Size" and "Freed Size": the
	// shallow sizes of the new and of the deleted instances (zero with
	// MatchByClass).
	AllocSize, FreedSize uint64
	// SizeDelta is "Size Delta": AllocSize - FreedSize, as DevTools
	// computes it (an instance that changed size in place does not count),
	// or TargetSize - BaseSize with MatchByClass.
	SizeDelta int64
	// BaseCount, TargetCount, BaseSize and TargetSize are the class's
	// instances and shallow sizes in each snapshot (DevTools' Summary
	// counts: instances with a non-zero shallow size).
	BaseCount, TargetCount int
	BaseSize, TargetSize   uint64
	// NewNodes are up to MaxDiffExamples new instances (target node
	// indexes, in id order); nil with MatchByClass.
	NewNodes []model.NodeIndex
}

// DiffResult is DevTools' Comparison view of a target snapshot against a
// base snapshot.
type DiffResult struct {
	// Matching is how objects were paired: by id when Pair matches
	// objects (PairCheck.MatchesObjects: V8's ids, one process, one
	// numbering). IDOverlap is the share of the base's counted instances
	// whose id (within the same class) is in the target.
	Matching  Matching
	IDOverlap float64
	// Pair is what the ids say about the two snapshots (ComparePair).
	Pair PairCheck
	// Classes are the rows with a change, sorted as DevTools sorts them by
	// default: AllocSize descending, then name. With MatchByClass
	// (AllocSize is zero) they are sorted by SizeDelta descending, then
	// name.
	Classes []ClassDiff
	// New, Deleted, AllocSize and FreedSize are the columns' totals.
	New, Deleted         int
	AllocSize, FreedSize uint64
}

// Diff compares target with base as DevTools' Comparison view does
// (HeapSnapshot.calculateSnapshotDiff): instances with a non-zero shallow
// size are grouped by class key in each snapshot, and within a class the
// base's and the target's ids are merged in id order; an id only in the
// target is new, one only in the base deleted. An object that changed class
// (a plain object that gained properties and so another inferred
// interface) is deleted from one row and new in another, as in DevTools.
//
// When the snapshots do not look like two of one process numbered by one
// session (see PairCheck.OneProcess and IDsReused), or when the ids are
// addresses (AddressIDs: a moving collector makes a moved object look
// deleted and new), only counts and sizes per class are compared
// (MatchByClass), as MAT and Firefox do.
//
// Unlike DevTools, which classes the base's plain objects with the
// target's inferred interfaces for the comparison, each snapshot keeps its
// own interfaces; rows of "{a, b}" classes can differ from DevTools' where
// the two snapshots inferred different interfaces. Both analyses need
// classes; Diff returns nil otherwise.
func Diff(base, target *analysis.Analysis) *DiffResult {
	if base.Classes == nil || target.Classes == nil {
		return nil
	}
	// Joint class numbering by key; a map per class, not per node.
	keys := map[string]int32{}
	var names, keyText []string
	joint := func(c *analysis.Classes) []int32 {
		j := make([]int32, len(c.Names))
		for i := range c.Names {
			k := c.Key(uint32(i))
			id, ok := keys[k]
			if !ok {
				id = int32(len(names))
				keys[k] = id
				names = append(names, c.Names[i])
				keyText = append(keyText, k)
			}
			j[i] = id
		}
		return j
	}
	bj, tj := joint(base.Classes), joint(target.Classes)
	nc := len(names)
	bOrder, bStart := byClassAndID(base, bj, nc)
	tOrder, tStart := byClassAndID(target, tj, nc)

	r := &DiffResult{}
	rows := make([]ClassDiff, nc)
	matched := 0
	bid, tid := base.Graph.Nodes.ID, target.Graph.Nodes.ID
	for c := 0; c < nc; c++ {
		d := &rows[c]
		d.Name, d.Key = names[c], keyText[c]
		bs, ts := bOrder[bStart[c]:bStart[c+1]], tOrder[tStart[c]:tStart[c+1]]
		d.BaseCount, d.TargetCount = len(bs), len(ts)
		for _, v := range bs {
			d.BaseSize += base.Self.At(int(v))
		}
		for _, v := range ts {
			d.TargetSize += target.Self.At(int(v))
		}
		i, j := 0, 0
		for i < len(bs) || j < len(ts) {
			switch {
			case j == len(ts) || i < len(bs) && bid.At(int(bs[i])) < tid.At(int(ts[j])):
				d.Deleted++
				d.FreedSize += base.Self.At(int(bs[i]))
				i++
			case i == len(bs) || bid.At(int(bs[i])) > tid.At(int(ts[j])):
				d.New++
				d.AllocSize += target.Self.At(int(ts[j]))
				if len(d.NewNodes) < MaxDiffExamples {
					d.NewNodes = append(d.NewNodes, ts[j])
				}
				j++
			default:
				matched++
				i++
				j++
			}
		}
	}
	if n := len(bOrder); n > 0 {
		r.IDOverlap = float64(matched) / float64(n)
	}
	r.Pair = ComparePair(base.Graph, target.Graph)
	if r.Pair.MatchesObjects() {
		r.Matching = MatchByID
	} else {
		r.Matching = MatchByClass
	}
	for _, d := range rows {
		if r.Matching == MatchByID {
			if d.New == 0 && d.Deleted == 0 {
				continue
			}
			d.Delta = d.New - d.Deleted
			d.SizeDelta = int64(d.AllocSize) - int64(d.FreedSize)
			r.New += d.New
			r.Deleted += d.Deleted
			r.AllocSize += d.AllocSize
			r.FreedSize += d.FreedSize
		} else {
			if d.BaseCount == d.TargetCount && d.BaseSize == d.TargetSize {
				continue
			}
			d.New, d.Deleted, d.AllocSize, d.FreedSize, d.NewNodes = 0, 0, 0, 0, nil
			d.Delta = d.TargetCount - d.BaseCount
			d.SizeDelta = int64(d.TargetSize) - int64(d.BaseSize)
		}
		r.Classes = append(r.Classes, d)
	}
	sort.SliceStable(r.Classes, func(a, b int) bool {
		x, y := &r.Classes[a], &r.Classes[b]
		if r.Matching == MatchByID {
			if x.AllocSize != y.AllocSize {
				return x.AllocSize > y.AllocSize
			}
		} else if x.SizeDelta != y.SizeDelta {
			return x.SizeDelta > y.SizeDelta
		}
		return jsstr.Compare(x.Name, y.Name) < 0
	})
	return r
}

// byClassAndID returns a's instances with a non-zero shallow size grouped
// by joint class (the class of node v is joint[Classes.Of[v]]) and in id
// order within a class: the instances of class c are
// order[start[c]:start[c+1]]. A counting sort by class, then a sort of
// each class's index slice by id.
func byClassAndID(a *analysis.Analysis, joint []int32, nc int) (order []int32, start []int) {
	start = make([]int, nc+1)
	of := a.Classes.Of
	for v := range a.Self.Len() {
		s := a.Self.At(v)
		if s != 0 {
			start[joint[of[v]]+1]++
		}
	}
	for c := 1; c <= nc; c++ {
		start[c] += start[c-1]
	}
	order = make([]int32, start[nc])
	next := slices.Clone(start[:nc])
	for v := range a.Self.Len() {
		s := a.Self.At(v)
		if s != 0 {
			c := joint[of[v]]
			order[next[c]] = int32(v)
			next[c]++
		}
	}
	id := a.Graph.Nodes.ID
	for c := 0; c < nc; c++ {
		slices.SortFunc(order[start[c]:start[c+1]], func(x, y int32) int {
			switch {
			case id.At(int(x)) < id.At(int(y)):
				return -1
			case id.At(int(x)) > id.At(int(y)):
				return 1
			}
			return 0
		})
	}
	return order, start
}

// sortedIDs returns g's node ids in ascending order, for membership tests
// by binary search (8 bytes per node, instead of a hash table's 32).
func sortedIDs(g *model.Graph) []uint64 {
	ids := g.Nodes.ID.Slice()
	slices.Sort(ids)
	return ids
}

// hasID reports whether id is in the ascending ids.
func hasID(ids []uint64, id uint64) bool {
	_, ok := slices.BinarySearch(ids, id)
	return ok
}

// sharedShare is the share of the ascending ids from that are also in
// the ascending ids: one merge of the two.
func sharedShare(from, ids []uint64) float64 {
	if len(from) == 0 {
		return 0
	}
	n, j := 0, 0
	for _, id := range from {
		for j < len(ids) && ids[j] < id {
			j++
		}
		if j < len(ids) && ids[j] == id {
			n++
		}
	}
	return float64(n) / float64(len(from))
}
