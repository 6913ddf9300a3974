package alloc

import (
	"errors"
	"fmt"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Frame is a function and where it is defined: one frame of an allocation
// stack. Line and Column are one-based, as editors and DevTools show
// them; 0 when unknown.
type Frame struct {
	Function, URL string
	Line, Column  int32
}

// ErrNoAllocationStacks is returned, wrapped with what to do, for a heap
// dump without allocation stacks: V8 records them only while allocations
// are tracked.
var ErrNoAllocationStacks = errors.New("the dump has no allocation stacks")

// noAllocationStacks says how to get a dump with allocation stacks.
func noAllocationStacks(g *model.Graph) error {
	if !kinds.IsV8(g) {
		return fmt.Errorf("%w: heapx reads them from V8 heap snapshots and timelines only", ErrNoAllocationStacks)
	}
	return fmt.Errorf("%w: take it with node --track-heap-objects, or record one with heapx capture --timeline (DevTools: \"Allocation instrumentation on timeline\")", ErrNoAllocationStacks)
}

// AllocationSite is the live objects of a heap dump allocated in one
// function: a row of DevTools' Allocation view, bottom-up.
type AllocationSite struct {
	Frame
	// Count is the number of live objects, Shallow their shallow size
	// (Analysis.Self, as DevTools' Allocation view's "Live size").
	Count    int
	Shallow  uint64
	Retained uint64 // of the objects no other object of the site dominates
	// Stack is the call stack above the trace node that allocated most of
	// the site's objects, innermost caller first (DevTools' Allocation
	// stack pane).
	Stack          []Frame
	largestTrace   int32 // that trace node
	largestObjects int   // and its object count
}

// AllocationSites groups the objects of a's dump by the function that
// allocated them (V8's allocation trace: trace_function_infos,
// trace_tree, each node's trace_node_id), with count, shallow and
// retained size, largest retained first. Objects without a trace node
// (allocated before tracking began, or moved by a compacting GC) are not
// in any site. The error wraps ErrNoAllocationStacks when the dump has
// none.
func AllocationSites(a *analysis.Analysis) ([]AllocationSite, error) {
	g := a.Graph
	t := g.Trace
	if !hasAllocationStacks(g) {
		return nil, noAllocationStacks(g)
	}
	res := a.Resolver()
	treeIndex := newTraceIndex(t).of
	// site per function index, then objects per trace node to find each
	// site's main stack.
	siteOf := make([]int32, len(t.Functions))
	for i := range siteOf {
		siteOf[i] = -1
	}
	perTrace := make([]int32, len(t.Tree))
	nodeSite := make([]int32, g.NumNodes())
	var sites []AllocationSite
	for v, id := range g.TraceNodeID {
		nodeSite[v] = -1
		if id == 0 || v == int(g.Root) {
			continue
		}
		ti := treeIndex(id)
		if ti < 0 || int(t.Tree[ti].Function) >= len(t.Functions) {
			continue
		}
		fn := t.Tree[ti].Function
		s := siteOf[fn]
		if s < 0 {
			s = int32(len(sites))
			siteOf[fn] = s
			sites = append(sites, AllocationSite{Frame: traceFrame(res, g, &t.Functions[fn]), largestTrace: -1})
		}
		nodeSite[v] = s
		st := &sites[s]
		st.Count++
		st.Shallow += a.Self.At(int(v))
		perTrace[ti]++
		if int(perTrace[ti]) > st.largestObjects {
			st.largestObjects, st.largestTrace = int(perTrace[ti]), ti
		}
	}
	if len(sites) == 0 {
		return nil, noAllocationStacks(g)
	}
	ret := a.GroupRetained(func(v int32) int32 { return nodeSite[v] }, len(sites))
	for i := range sites {
		sites[i].Retained = ret[i]
	}
	sort.SliceStable(sites, func(i, j int) bool {
		if sites[i].Retained != sites[j].Retained {
			return sites[i].Retained > sites[j].Retained
		}
		return sites[i].Count > sites[j].Count
	})
	for i := range sites {
		// The site's own frame is the trace node itself; its callers follow.
		at := sites[i].largestTrace
		sites[i].Stack = traceStack(res, g, at, t.Tree[at].Parent)
	}
	return sites, nil
}

// traceFrame names a trace function, its place as res resolves it (a
// script the trace leaves unnamed named by its id, source maps). V8
// writes its line and column one-based with 0 for unknown
// (SerializePosition), which is Frame's convention already.
func traceFrame(res *analysis.Resolver, g *model.Graph, f *model.TraceFunction) Frame {
	str := func(id model.StringID) string {
		if int(id) >= g.Strings.Len() {
			return ""
		}
		return g.Strings.At(id)
	}
	p := res.Resolve(analysis.Position{ScriptID: f.ScriptID, Script: str(f.ScriptName), Line: max(f.Line, 0), Column: max(f.Column, 0)})
	return Frame{Function: str(f.Name), URL: p.Script, Line: p.Line, Column: p.Column}
}

// ProfileSite is the bytes a sampling heap profile attributes to one
// function: a row of pprof's top view.
type ProfileSite struct {
	Frame
	// Self is the bytes allocated in the function itself, Total those
	// allocated in it and everything it called (V8's scaled estimates).
	Self, Total uint64
	// Samples counts the samples taken in the function itself, and
	// SampledBytes their sizes.
	Samples      int
	SampledBytes uint64
}

// ProfileTotals holds per call tree node sums of a sampling profile.
type ProfileTotals struct {
	// Total is each node's self size plus its descendants'.
	Total []uint64
	// Samples counts the samples taken at each node itself.
	Samples []int
	// SampledBytes sums those samples' sizes.
	SampledBytes []uint64
	// Outside counts the samples of no node in the tree, OutsideBytes
	// their sizes (model.ProfileSample.Node).
	Outside      int
	OutsideBytes uint64
}

// SumProfile computes the per node sums of p.
func SumProfile(p *model.SamplingProfile) ProfileTotals {
	n := len(p.Nodes)
	t := ProfileTotals{Total: make([]uint64, n), Samples: make([]int, n), SampledBytes: make([]uint64, n)}
	// Preorder with parents first: a reverse walk adds each node's total
	// to its parent after all its children have.
	for i := n - 1; i >= 0; i-- {
		t.Total[i] += p.Nodes[i].SelfSize
		if par := p.Nodes[i].Parent; par >= 0 {
			t.Total[par] += t.Total[i]
		}
	}
	for _, s := range p.Samples {
		if s.Node < 0 || int(s.Node) >= n {
			t.Outside++
			t.OutsideBytes += s.Size
			continue
		}
		t.Samples[s.Node]++
		t.SampledBytes[s.Node] += s.Size
	}
	return t
}

// ProfileFrame is node i's frame, with V8's zero-based positions made
// one-based.
func ProfileFrame(p *model.SamplingProfile, i int32) Frame {
	n := &p.Nodes[i]
	return Frame{Function: n.Function, URL: n.URL, Line: n.Line + 1, Column: n.Column + 1}
}

// ProfileSites groups a sampling profile's call tree by function, largest
// self size first (pprof's top, DevTools' Allocation sampling "Heavy
// (Bottom Up)" top level). A function's Total counts each subtree once
// even when it recurses.
func ProfileSites(p *model.SamplingProfile, t ProfileTotals) []ProfileSite {
	idx := map[Frame]int{}
	var sites []ProfileSite
	// path holds the ancestors of the node (preorder keeps them on a
	// stack), onStack[f] how many of them are frame f.
	onStack := map[Frame]int{}
	var path []int32
	for i := range p.Nodes {
		for len(path) > 0 && path[len(path)-1] != p.Nodes[i].Parent {
			onStack[ProfileFrame(p, path[len(path)-1])]--
			path = path[:len(path)-1]
		}
		f := ProfileFrame(p, int32(i))
		if i == 0 {
			path = append(path, 0)
			onStack[f]++
			continue // the root is not a function
		}
		k, ok := idx[f]
		if !ok {
			k = len(sites)
			idx[f] = k
			sites = append(sites, ProfileSite{Frame: f})
		}
		s := &sites[k]
		s.Self += p.Nodes[i].SelfSize
		s.Samples += t.Samples[i]
		s.SampledBytes += t.SampledBytes[i]
		if onStack[f] == 0 {
			s.Total += t.Total[i]
		}
		path = append(path, int32(i))
		onStack[f]++
	}
	sort.SliceStable(sites, func(i, j int) bool {
		if sites[i].Self != sites[j].Self {
			return sites[i].Self > sites[j].Self
		}
		return sites[i].Total > sites[j].Total
	})
	return sites
}

// BottomUpNode is one row of a bottom-up tree: a function and, under it,
// the callers through which it allocated, each with the bytes allocated
// (in the top-level function) through that caller chain.
type BottomUpNode struct {
	Frame
	Self     uint64
	Samples  int
	Children []*BottomUpNode
}

// ProfileBottomUp inverts a sampling profile's call tree: the top level
// is every function that allocated, and below a function are its callers
// (DevTools' "Heavy (Bottom Up)", pprof's reverse tree). Levels are
// sorted by bytes, largest first; with limit > 0 each level keeps its
// limit heaviest rows.
//
// Inverting expands every allocating node's stack, and a call tree's
// stacks together can hold the square of its depth in frames (a chain of
// 10,000 functions, a 1 MB file, holds 50 million): so the tree is built
// a level at a time, and only under the rows kept. Each allocating node
// is a cursor walking up its stack; a level groups the cursors by the
// frame they are at, and a kept row's cursors step to their callers in
// place, so the memory is one cursor per allocating node whatever the
// depth. Cursors of a row that reach the same call-tree node become one
// (their stacks are the same from there), so a recursion with 50,000
// leaves at its bottom walks its 1,000 levels once, not 50,000 times.
func ProfileBottomUp(p *model.SamplingProfile, t ProfileTotals, limit int) []*BottomUpNode {
	var cs []buCursor
	for i := 1; i < len(p.Nodes); i++ {
		if p.Nodes[i].SelfSize != 0 || t.Samples[i] != 0 {
			cs = append(cs, buCursor{self: p.Nodes[i].SelfSize, samples: t.Samples[i], at: int32(i)})
		}
	}
	slot := make([]int32, len(p.Nodes))
	for i := range slot {
		slot[i] = -1
	}
	b := &bottomUp{p: p, limit: limit, scratch: make([]buCursor, len(cs)), group: make([]int32, len(cs)), slot: slot}
	return b.level(cs)
}

// buCursor is the frame a level of the bottom-up tree has reached (at) on
// the stacks of one or more allocating nodes, and the bytes and samples
// of those nodes.
type buCursor struct {
	self    uint64
	samples int
	at      int32
}

// bottomUp builds ProfileBottomUp's levels; scratch and group are as
// long as the cursors, reused by every level, and slot, one per call-tree
// node, is -1 but where step is merging cursors.
type bottomUp struct {
	p       *model.SamplingProfile
	limit   int
	scratch []buCursor
	group   []int32
	slot    []int32
}

// level returns the rows of the cursors cs, each with the levels under
// it; cs is reordered and overwritten.
func (b *bottomUp) level(cs []buCursor) []*BottomUpNode {
	if len(cs) == 0 {
		return nil
	}
	index := map[Frame]int32{}
	var rows []*BottomUpNode
	var count []int
	for i, c := range cs {
		f := ProfileFrame(b.p, c.at)
		k, ok := index[f]
		if !ok {
			k = int32(len(rows))
			index[f] = k
			rows = append(rows, &BottomUpNode{Frame: f})
			count = append(count, 0)
		}
		b.group[i] = k
		count[k]++
		rows[k].Self += c.self
		rows[k].Samples += c.samples
	}
	// Cursors grouped by row, in place: start[k] is where row k's begin.
	start := make([]int, len(rows)+1)
	for k, n := range count {
		start[k+1] = start[k] + n
	}
	next := append([]int(nil), start[:len(rows)]...)
	for i, c := range cs {
		b.scratch[next[b.group[i]]] = c
		next[b.group[i]]++
	}
	copy(cs, b.scratch[:len(cs)])
	order := make([]int, len(rows))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(x, y int) bool { return rows[order[x]].Self > rows[order[y]].Self })
	if b.limit > 0 && len(order) > b.limit {
		order = order[:b.limit]
	}
	out := make([]*BottomUpNode, len(order))
	for j, k := range order {
		rows[k].Children = b.level(b.step(cs[start[k]:start[k+1]]))
		out[j] = rows[k]
	}
	return out
}

// step moves a row's cursors to their callers in place and returns them:
// those at a top-level frame (called from the root) are done, and those
// reaching the same node are merged.
func (b *bottomUp) step(cs []buCursor) []buCursor {
	n := 0
	for _, c := range cs {
		par := b.p.Nodes[c.at].Parent
		if par <= 0 {
			continue
		}
		if j := b.slot[par]; j >= 0 {
			cs[j].self += c.self
			cs[j].samples += c.samples
			continue
		}
		b.slot[par] = int32(n)
		cs[n] = buCursor{self: c.self, samples: c.samples, at: par}
		n++
	}
	for _, c := range cs[:n] {
		b.slot[c.at] = -1
	}
	return cs[:n]
}
