package alloc

import (
	"cmp"
	"slices"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// traceIndex finds a V8 allocation trace's tree node by id: trace node
// ids are dense in V8 (1..len(Tree)), so a slice indexed by id keeps the
// per-object lookup off maps; a map serves ids too sparse for one.
type traceIndex struct {
	byID    []int32
	byIDMap map[uint32]int32
}

// newTraceIndex indexes t's tree.
func newTraceIndex(t *model.AllocationTrace) traceIndex {
	var maxID uint32
	for _, tn := range t.Tree {
		maxID = max(maxID, tn.ID)
	}
	var x traceIndex
	if int(maxID) <= 2*len(t.Tree)+64 {
		x.byID = make([]int32, int(maxID)+1)
		for i := range x.byID {
			x.byID[i] = -1
		}
		for i, tn := range t.Tree {
			x.byID[tn.ID] = int32(i)
		}
		return x
	}
	x.byIDMap = make(map[uint32]int32, len(t.Tree))
	for i, tn := range t.Tree {
		x.byIDMap[tn.ID] = int32(i)
	}
	return x
}

// of returns the tree index of trace node id, -1 when there is none.
func (x traceIndex) of(id uint32) int32 {
	if x.byID != nil {
		if int(id) < len(x.byID) {
			return x.byID[id]
		}
		return -1
	}
	if i, ok := x.byIDMap[id]; ok {
		return i
	}
	return -1
}

// hasAllocationStacks reports whether g carries an allocation trace with
// a trace node per node.
func hasAllocationStacks(g *model.Graph) bool {
	return g.Trace != nil && len(g.Trace.Tree) > 0 && len(g.TraceNodeID) == g.NumNodes()
}

// HasAllocationStacks reports whether the dump records where its objects
// were allocated (V8 with --track-heap-objects, heap timelines).
func HasAllocationStacks(a *analysis.Analysis) bool { return hasAllocationStacks(a.Graph) }

// allocatingFunction returns the index into g.Trace.Functions of the
// function that allocated v, or -1 when v has no allocation stack.
func allocatingFunction(g *model.Graph, x traceIndex, v model.NodeIndex) int32 {
	id := g.TraceNodeID[v]
	if id == 0 || v == g.Root {
		return -1
	}
	ti := x.of(id)
	if ti < 0 || int(g.Trace.Tree[ti].Function) >= len(g.Trace.Functions) {
		return -1
	}
	return int32(g.Trace.Tree[ti].Function)
}

// AllocationStack returns the call stack that allocated v, the allocating
// function first, then its callers (DevTools' Allocation stack pane, but
// for V8's synthetic "(root)" frame at the bottom). It is nil when the
// dump has no allocation stacks or v has none (allocated before tracking
// began, or moved by a compacting GC).
func AllocationStack(a *analysis.Analysis, v model.NodeIndex) []Frame {
	g := a.Graph
	if !hasAllocationStacks(g) || v < 0 || int(v) >= g.NumNodes() {
		return nil
	}
	t := g.Trace
	x := newTraceIndex(t)
	if allocatingFunction(g, x, v) < 0 {
		return nil
	}
	return traceStack(a.Resolver(), g, int32(len(t.Tree)), x.of(g.TraceNodeID[v]))
}

// traceStack returns the frames of trace tree node ti and its callers, up
// to V8's synthetic (root), which names no code. Parents come first in the
// tree (model.AllocationTrace): a parent that does not (bad input), or
// that is not before at, ends the stack rather than looping.
func traceStack(res *analysis.Resolver, g *model.Graph, at, ti int32) []Frame {
	t := g.Trace
	var stack []Frame
	for ; ti >= 0 && ti < at; at, ti = ti, t.Tree[ti].Parent {
		fn := t.Tree[ti].Function
		if int(fn) >= len(t.Functions) {
			break
		}
		f := traceFrame(res, g, &t.Functions[fn])
		if f.Function == "(root)" && f.URL == "" {
			break
		}
		stack = append(stack, f)
	}
	return stack
}

// SiteShare is the allocation site (the allocating function, as `heapx
// sites` groups them) of most of a group of objects.
type SiteShare struct {
	Frame
	// Count is the group's objects allocated there, Of the group's
	// objects in all: Count/Of is the site's share.
	Count, Of int
}

// SiteFinder finds where groups of objects were allocated, with the
// trace indexed once for all the groups.
type SiteFinder struct {
	res    *analysis.Resolver
	g      *model.Graph
	x      traceIndex
	counts []int // per trace function, zero between calls
}

// NewSiteFinder returns a SiteFinder over a's dump, nil when the dump has no
// allocation stacks (a nil SiteFinder finds nothing).
func NewSiteFinder(a *analysis.Analysis) *SiteFinder {
	g := a.Graph
	if !hasAllocationStacks(g) {
		return nil
	}
	return &SiteFinder{res: a.Resolver(), g: g, x: newTraceIndex(g.Trace), counts: make([]int, len(g.Trace.Functions))}
}

// Dominant returns where most of nodes were allocated; ok is false when
// none of them has an allocation stack. Ties go to the function listed
// first in the trace.
func (f *SiteFinder) Dominant(nodes []model.NodeIndex) (s SiteShare, ok bool) {
	if f == nil {
		return s, false
	}
	best := int32(-1)
	for _, v := range nodes {
		if fn := allocatingFunction(f.g, f.x, v); fn >= 0 {
			f.counts[fn]++
			if best < 0 || f.counts[fn] > f.counts[best] || f.counts[fn] == f.counts[best] && fn < best {
				best = fn
			}
		}
	}
	if best < 0 {
		return s, false
	}
	s = SiteShare{Frame: traceFrame(f.res, f.g, &f.g.Trace.Functions[best]), Count: f.counts[best], Of: len(nodes)}
	for _, v := range nodes {
		if fn := allocatingFunction(f.g, f.x, v); fn >= 0 {
			f.counts[fn] = 0
		}
	}
	return s, true
}

// ClassSites returns, per class (an index into a.Classes.Names), where
// most of its objects were allocated (SiteFinder.Dominant of the class's
// instances, Of counting every instance); a class none of whose objects
// has a stack gets a zero Count. It is nil when the dump has no
// allocation stacks or no classes. The objects with a stack are bucketed
// by class (a counting sort: one int32 each), then each bucket's
// functions counted: no map, no sort.
func ClassSites(a *analysis.Analysis) []SiteShare {
	f := NewSiteFinder(a)
	if f == nil || a.Classes == nil {
		return nil
	}
	g := a.Graph
	sites := make([]SiteShare, len(a.Classes.Names))
	start := make([]int32, len(sites)+1) // bucket of class c: [start[c], start[c+1])
	for v, c := range a.Classes.Of {
		sites[c].Of++
		if allocatingFunction(g, f.x, int32(v)) >= 0 {
			start[c+1]++
		}
	}
	for c := range sites {
		start[c+1] += start[c]
	}
	fns := make([]int32, start[len(sites)])
	at := slices.Clone(start[:len(sites)])
	for v, c := range a.Classes.Of {
		if fn := allocatingFunction(g, f.x, int32(v)); fn >= 0 {
			fns[at[c]] = fn
			at[c]++
		}
	}
	for c := range sites {
		bucket := fns[start[c]:start[c+1]]
		best := int32(-1)
		for _, fn := range bucket {
			f.counts[fn]++
			if best < 0 || f.counts[fn] > f.counts[best] || f.counts[fn] == f.counts[best] && fn < best {
				best = fn
			}
		}
		if best >= 0 {
			sites[c].Count = f.counts[best]
			sites[c].Frame = traceFrame(f.res, g, &g.Trace.Functions[best])
		}
		for _, fn := range bucket {
			f.counts[fn] = 0
		}
	}
	return sites
}

// NodeLocations finds the source locations of nodes (g.Locations)
// through the dump's Resolver, which names their scripts.
type NodeLocations struct {
	res *analysis.Resolver
}

// NewNodeLocations returns the node locations of a's dump.
func NewNodeLocations(a *analysis.Analysis) NodeLocations {
	return NodeLocations{res: a.Resolver()}
}

// Dominant returns the location most of nodes share (ties: the one
// first in g.Locations) and how many distinct locations they have; zero
// when none has one.
func (nl NodeLocations) Dominant(nodes []model.NodeIndex) (Frame, int) {
	type located struct {
		l model.Location
		i int32 // index in g.Locations, for ties
	}
	var at []located
	for _, v := range nodes {
		if l, ok := nl.res.NodeLocation(v); ok {
			at = append(at, located{l, nl.res.LocationIndex(v)})
		}
	}
	if len(at) == 0 {
		return Frame{}, 0
	}
	same := func(x, y located) int {
		return cmp.Or(cmp.Compare(x.l.ScriptID, y.l.ScriptID), cmp.Compare(x.l.Line, y.l.Line), cmp.Compare(x.l.Column, y.l.Column))
	}
	slices.SortFunc(at, func(x, y located) int { return cmp.Or(same(x, y), cmp.Compare(x.i, y.i)) })
	best, bestN, places := at[0], 0, 0
	for i := 0; i < len(at); {
		j := i + 1
		for j < len(at) && same(at[i], at[j]) == 0 {
			j++
		}
		places++
		if j-i > bestN || (j-i == bestN && at[i].i < best.i) {
			best, bestN = at[i], j-i
		}
		i = j
	}
	p := nl.res.Locate(best.l.ScriptID, best.l.Line, best.l.Column)
	return Frame{URL: p.Script, Line: p.Line, Column: p.Column}, places
}
