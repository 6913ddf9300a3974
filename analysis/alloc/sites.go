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
		st.Shallow += a.Self[v]
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
// sorted by bytes, largest first.
func ProfileBottomUp(p *model.SamplingProfile, t ProfileTotals) []*BottomUpNode {
	root := &BottomUpNode{}
	index := map[*BottomUpNode]map[Frame]*BottomUpNode{}
	child := func(parent *BottomUpNode, f Frame) *BottomUpNode {
		m := index[parent]
		if m == nil {
			m = map[Frame]*BottomUpNode{}
			index[parent] = m
		}
		c := m[f]
		if c == nil {
			c = &BottomUpNode{Frame: f}
			m[f] = c
			parent.Children = append(parent.Children, c)
		}
		return c
	}
	for i := 1; i < len(p.Nodes); i++ {
		if p.Nodes[i].SelfSize == 0 && t.Samples[i] == 0 {
			continue
		}
		at := root
		for j := int32(i); j > 0; j = p.Nodes[j].Parent {
			at = child(at, ProfileFrame(p, j))
			at.Self += p.Nodes[i].SelfSize
			at.Samples += t.Samples[i]
		}
	}
	var sortLevel func(ns []*BottomUpNode)
	sortLevel = func(ns []*BottomUpNode) {
		sort.SliceStable(ns, func(a, b int) bool { return ns[a].Self > ns[b].Self })
		for _, n := range ns {
			sortLevel(n.Children)
		}
	}
	sortLevel(root.Children)
	return root.Children
}
