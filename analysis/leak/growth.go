package leak

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// GrowthOptions tune Growth.
type GrowthOptions struct {
	// Limit caps each list of the result (classes, collections) to the
	// largest growths; 0 keeps all.
	Limit int
	// Internals keeps the classes of the runtime's own objects (compiled
	// code, maps, internal arrays: see engineRules.owns, closure contexts
	// excepted). Without it they are left out and counted in
	// GrowthResult.Internal: they grow a little as code is compiled and
	// optimised, whatever the program keeps.
	Internals bool
}

// ClassGrowth is a class whose instance count or total shallow size grows
// at every step.
type ClassGrowth struct {
	// Name is the class name, Key its class key (see Classes.Key), which
	// matches classes across snapshots.
	Name, Key string
	// Counts and Sizes are the instances with a non-zero shallow size and
	// their shallow sizes, one per snapshot (the Summary view's numbers).
	Counts []int
	Sizes  []uint64
	// CountGrows and SizeGrows say which series increases strictly at
	// every step (at least one does).
	CountGrows, SizeGrows bool
}

// CollectionGrowth is one collection, matched by id, whose element count
// grows at every step.
type CollectionGrowth struct {
	ID uint64 // the runtime's node id, the same in every snapshot
	// Nodes are its node indexes, one per snapshot.
	Nodes []model.NodeIndex
	// Class is its class in the last snapshot.
	Class string
	// Elements and Retained are its element count (see Growth) and
	// retained size, one per snapshot.
	Elements []int
	Retained []uint64
}

// GrowthResult is the outcome of Growth.
type GrowthResult struct {
	// Matching is MatchByID when the snapshots look like snapshots of one
	// process (Series.OneProcess; IDOverlap is the smallest share of one
	// snapshot's objects found again as the same objects in the next).
	// With MatchByClass single collections cannot be followed and
	// Collections is empty.
	Matching  Matching
	IDOverlap float64
	// Series is what the ids say about the snapshots (CheckSeries).
	Series *SeriesCheck
	// Classes grow in count or size at every step, sorted by size growth
	// (last minus first), then count growth, both descending, then name.
	Classes []ClassGrowth
	// Internal counts the growing classes of the runtime's own objects
	// left out (GrowthOptions.Internals).
	Internal int
	// Collections grow in element count at every step, sorted by that
	// growth, descending, then by id.
	Collections []CollectionGrowth
}

// Growth finds what grows at every step across snaps, oldest first (at
// least two; nil otherwise, or without classes):
//
//   - classes, matched by class key, whose instance count or total shallow
//     size increases strictly from each snapshot to the next;
//   - collections, matched by node id (so only where ids are stable),
//     whose element count increases strictly at every step. Where ids are
//     addresses (AddressIDs), a collection the collector moved between
//     two dumps is not followed. A node's
//     element count is the number of its element edges (a V8 JSArray, a
//     Java or SpiderMonkey array); a node without any counts the entries
//     of the arrays it holds through internal or property edges instead: a
//     V8 Map's or Set's hash table (whose entries are internal edges with
//     numeric names), a Java ArrayList's elementData. A V8 array's backing
//     store is reallocated as it grows, so it is the JSArray, whose id
//     stays, that is followed.
func Growth(snaps []*analysis.Analysis, opt GrowthOptions) *GrowthResult {
	if len(snaps) < 2 {
		return nil
	}
	for _, a := range snaps {
		if a.Classes == nil {
			return nil
		}
	}
	r := &GrowthResult{Series: CheckSeries(snaps)}
	r.Classes, r.Internal = classGrowth(snaps, opt.Internals)
	for i, p := range r.Series.Pairs {
		if i == 0 || p.SameShare() < r.IDOverlap {
			r.IDOverlap = p.SameShare()
		}
	}
	if r.Series.OneProcess() {
		r.Collections = collectionGrowth(snaps)
	} else {
		r.Matching = MatchByClass
	}
	if opt.Limit > 0 {
		r.Classes = r.Classes[:min(opt.Limit, len(r.Classes))]
		r.Collections = r.Collections[:min(opt.Limit, len(r.Collections))]
	}
	return r
}

// classGrowth returns the classes that grow at every step, and how many
// growing classes of the runtime's own objects it left out (unless
// internals).
func classGrowth(snaps []*analysis.Analysis, internals bool) ([]ClassGrowth, int) {
	counts := make([][]ClassCount, len(snaps))
	for i, a := range snaps {
		counts[i] = ClassCounts(a)
	}
	rows, lastRow := classSeries(counts)
	var engine []bool // by row: the last snapshot's instances are the runtime's own
	if !internals {
		engine = engineRows(snaps[len(snaps)-1], rows, lastRow)
	}
	var out []ClassGrowth
	left := 0
	for i, row := range rows {
		row.CountGrows, row.SizeGrows = true, true
		for s := 1; s < len(snaps); s++ {
			row.CountGrows = row.CountGrows && row.Counts[s] > row.Counts[s-1]
			row.SizeGrows = row.SizeGrows && row.Sizes[s] > row.Sizes[s-1]
		}
		switch {
		case !row.CountGrows && !row.SizeGrows:
		case engine != nil && engine[i]:
			left++
		default:
			out = append(out, row)
		}
	}
	last := len(snaps) - 1
	sort.SliceStable(out, func(a, b int) bool {
		x, y := &out[a], &out[b]
		dx, dy := int64(x.Sizes[last])-int64(x.Sizes[0]), int64(y.Sizes[last])-int64(y.Sizes[0])
		if dx != dy {
			return dx > dy
		}
		if cx, cy := x.Counts[last]-x.Counts[0], y.Counts[last]-y.Counts[0]; cx != cy {
			return cx > cy
		}
		return jsstr.Compare(x.Name, y.Name) < 0
	})
	return out, left
}

// engineRows says, per row of classSeries, whether a's instances of the
// class are the runtime's own objects (judged by the first instance with a
// shallow size). Closure contexts are the program's: they grow with the
// closures a program keeps.
func engineRows(a *analysis.Analysis, rows []ClassGrowth, lastRow []int) []bool {
	g := a.Graph
	k := kinds.New(g)
	rules := engineRulesFor(g)
	engine := make([]bool, len(rows))
	seen := make([]bool, len(a.Classes.Names))
	for v := range a.Self.Len() {
		size := a.Self.At(v)
		c := a.Classes.Of[v]
		if size == 0 || seen[c] {
			continue
		}
		seen[c] = true
		engine[lastRow[c]] = rules.owns(g, k, int32(v)) && !analysis.IsContextName(g.NodeName(int32(v)))
	}
	return engine
}

// classSeries matches the class counts of each snapshot (see
// classCounts) by key: one row per key (Counts and Sizes set; the Grows
// flags are not). lastRow maps the last snapshot's classes to their rows.
func classSeries(snaps [][]ClassCount) (rows []ClassGrowth, lastRow []int) {
	keys := map[string]int{}
	for s, counts := range snaps {
		joint := make([]int, len(counts))
		for c, cc := range counts {
			j, ok := keys[cc.Key]
			if !ok {
				j = len(rows)
				keys[cc.Key] = j
				rows = append(rows, ClassGrowth{Name: cc.Name, Key: cc.Key,
					Counts: make([]int, len(snaps)), Sizes: make([]uint64, len(snaps))})
			}
			joint[c] = j
			rows[j].Counts[s] += cc.Count
			rows[j].Sizes[s] += cc.Size
		}
		lastRow = joint
	}
	return rows, lastRow
}

// classCounts counts every class's instances with a non-zero shallow size
// and their shallow sizes, by class; nil without classes. Names and keys
// are copies: a graph's strings point into its megabyte string chunks,
// which a Digest must not keep alive.
func classCounts(self model.Uint64s, cs *analysis.Classes) []ClassCount {
	if cs == nil {
		return nil
	}
	out := make([]ClassCount, len(cs.Names))
	for c, name := range cs.Names {
		out[c] = ClassCount{Name: strings.Clone(name), Key: strings.Clone(cs.Key(uint32(c)))}
	}
	for v := range self.Len() {
		size := self.At(v)
		if size != 0 {
			c := &out[cs.Of[v]]
			c.Count++
			c.Size += size
		}
	}
	return out
}

// collectionGrowth follows every node of the first snapshot with elements
// through the others by id.
func collectionGrowth(snaps []*analysis.Analysis) []CollectionGrowth {
	// Per snapshot, the nodes with elements in id order and their counts.
	type coll struct {
		node  int32
		count int32
	}
	lists := make([][]coll, len(snaps))
	for s, a := range snaps {
		g := a.Graph
		k := kinds.New(g)
		var l []coll
		for v := 0; v < g.NumNodes(); v++ {
			if c := elementCount(g, k, int32(v)); c > 0 {
				l = append(l, coll{int32(v), int32(c)})
			}
		}
		id := g.Nodes.ID
		slices.SortFunc(l, func(x, y coll) int {
			switch {
			case id.At(int(x.node)) < id.At(int(y.node)):
				return -1
			case id.At(int(x.node)) > id.At(int(y.node)):
				return 1
			}
			return 0
		})
		lists[s] = l
	}
	var out []CollectionGrowth
	first := snaps[0].Graph.Nodes.ID
next:
	for _, c := range lists[0] {
		id := first.At(int(c.node))
		cg := CollectionGrowth{ID: id, Nodes: []int32{c.node}, Elements: []int{int(c.count)}}
		for s := 1; s < len(snaps); s++ {
			ids := snaps[s].Graph.Nodes.ID
			l := lists[s]
			i := sort.Search(len(l), func(i int) bool { return ids.At(int(l[i].node)) >= id })
			if i == len(l) || ids.At(int(l[i].node)) != id || int(l[i].count) <= cg.Elements[s-1] {
				continue next
			}
			cg.Nodes = append(cg.Nodes, l[i].node)
			cg.Elements = append(cg.Elements, int(l[i].count))
		}
		for s, a := range snaps {
			cg.Retained = append(cg.Retained, a.Dominators.Retained[cg.Nodes[s]])
		}
		last := snaps[len(snaps)-1]
		cg.Class = last.Classes.Name(cg.Nodes[len(snaps)-1])
		out = append(out, cg)
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := &out[a], &out[b]
		dx, dy := x.Elements[len(x.Elements)-1]-x.Elements[0], y.Elements[len(y.Elements)-1]-y.Elements[0]
		if dx != dy {
			return dx > dy
		}
		return x.ID < y.ID
	})
	return out
}

// elementCount is node v's number of elements (see Growth).
func elementCount(g *model.Graph, k *kinds.Table, v int32) int {
	s, e := g.EdgeRange(v)
	n := 0
	for x := s; x < e; x++ {
		if k.Edge[g.Edges.Type[x]] == kinds.EdgeElement {
			n++
		}
	}
	if n > 0 {
		return n
	}
	for x := s; x < e; x++ {
		t := g.Edges.To[x]
		if ek := k.Edge[g.Edges.Type[x]]; (ek != kinds.EdgeInternal && ek != kinds.EdgeProperty) || k.NodeOf(g, t) != kinds.Array {
			continue
		}
		ts, te := g.EdgeRange(t)
		elems, numbered := 0, 0
		for y := ts; y < te; y++ {
			switch k.Edge[g.Edges.Type[y]] {
			case kinds.EdgeElement:
				elems++
			case kinds.EdgeInternal:
				if _, err := strconv.ParseUint(g.EdgeName(y), 10, 32); err == nil {
					numbered++
				}
			}
		}
		if elems > 0 {
			n += elems
		} else {
			n += numbered
		}
	}
	return n
}
