package query

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

// Views of `heapx sites` over a sampling heap profile.
const (
	SitesTop      = "top"       // functions by self bytes (pprof top)
	SitesTree     = "tree"      // the call tree, top-down
	SitesBottomUp = "bottom-up" // functions, then the callers they allocated through
)

// functionName is how a frame's function is shown: V8 leaves anonymous
// functions unnamed, DevTools writes "(anonymous)".
func functionName(f alloc.Frame) string {
	if f.Function == "" {
		return "(anonymous)"
	}
	return f.Function
}

// frameLocation is script:line:column, one-based, as DevTools and
// editors write it; the script alone when the position is unknown.
func frameLocation(f alloc.Frame) string {
	s := f.URL
	if f.Line > 0 {
		s += ":" + strconv.Itoa(int(f.Line))
		if f.Column > 0 {
			s += ":" + strconv.Itoa(int(f.Column))
		}
	}
	return s
}

var profileColumns = []Column{
	{Key: "function", Title: "Function", Kind: Text},
	{Key: "location", Title: "Location", Kind: Text},
	{Key: "self_size", Title: "Self", Kind: Bytes},
	{Key: "self_percent", Title: "Self%", Kind: Percent},
	{Key: "total_size", Title: "Total", Kind: Bytes},
	{Key: "total_percent", Title: "Total%", Kind: Percent},
	{Key: "samples", Title: "Samples", Kind: Count},
}

// ProfileSites is `heapx sites` on a sampling heap profile at path: the
// view (SitesTop, SitesTree or SitesBottomUp) with at most limit rows per
// level (0: all). res resolves each function's place (a profile names
// its scripts itself; a source map may know better), nil to print them
// as the profile has them.
func ProfileSites(path string, p *model.SamplingProfile, res *analysis.Resolver, view string, limit int) (*Result, error) {
	t := alloc.SumProfile(p)
	total := t.Total[0]
	if res == nil {
		res = analysis.NewResolver(nil)
	}
	row := func(f alloc.Frame, self, tot uint64, samples int) []any {
		at := res.Resolve(analysis.Position{Script: f.URL, Line: f.Line, Column: f.Column})
		f.URL, f.Line, f.Column = at.Script, at.Line, at.Column
		return []any{functionName(f), frameLocation(f), self, humanize.Share(self, total), tot, humanize.Share(tot, total), samples}
	}
	r := &Result{Query: "sites", Header: []string{
		fmt.Sprintf("%s: sampling heap profile, %s allocated (V8's estimate from %s samples)", path, humanize.Size(total), humanize.Thousands(uint64(len(p.Samples)))),
	}}
	cut := func(n int) int {
		if limit > 0 && n > limit {
			return limit
		}
		return n
	}
	switch view {
	case SitesTop:
		sites := alloc.ProfileSites(p, t)
		tab := &Table{Columns: profileColumns}
		for _, s := range sites[:cut(len(sites))] {
			tab.Rows = append(tab.Rows, row(s.Frame, s.Self, s.Total, s.Samples))
		}
		r.Sections = []*Section{{Heading: "Allocation sites (self bytes)", Table: tab,
			Chart: &Chart{Label: "function", Value: "self_size"}}}
		if len(sites) > len(tab.Rows) {
			r.Notes = append(r.Notes, fmt.Sprintf("%d more functions (-n 0 shows all)", len(sites)-len(tab.Rows)))
		}
	case SitesTree:
		kids := make([][]int32, len(p.Nodes))
		for i := 1; i < len(p.Nodes); i++ {
			if par := p.Nodes[i].Parent; t.Total[i] > 0 {
				kids[par] = append(kids[par], int32(i))
			}
		}
		var build func(i int32) *TreeNode
		build = func(i int32) *TreeNode {
			n := &TreeNode{Values: row(alloc.ProfileFrame(p, i), p.Nodes[i].SelfSize, t.Total[i], t.Samples[i])}
			ks := kids[i]
			sortByTotal(ks, t.Total)
			for _, k := range ks[:cut(len(ks))] {
				n.Children = append(n.Children, build(k))
			}
			return n
		}
		tree := &Tree{Columns: profileColumns}
		ks := kids[0]
		sortByTotal(ks, t.Total)
		for _, k := range ks[:cut(len(ks))] {
			tree.Roots = append(tree.Roots, build(k))
		}
		r.Sections = []*Section{{Heading: "Call tree (top-down)", Tree: tree}}
	case SitesBottomUp:
		var build func(b *alloc.BottomUpNode) *TreeNode
		build = func(b *alloc.BottomUpNode) *TreeNode {
			n := &TreeNode{Values: row(b.Frame, b.Self, b.Self, b.Samples)}
			for _, c := range b.Children {
				n.Children = append(n.Children, build(c))
			}
			return n
		}
		// Below a function, a row is the bytes the function allocated
		// when called through that chain: self and total are the same.
		tree := &Tree{Columns: profileColumns}
		for _, b := range alloc.ProfileBottomUp(p, t, limit) {
			tree.Roots = append(tree.Roots, build(b))
		}
		r.Sections = []*Section{{Heading: "Bottom-up: allocating functions and their callers", Tree: tree}}
	default:
		return nil, fmt.Errorf("unknown view %q (want %s, %s or %s)", view, SitesTop, SitesTree, SitesBottomUp)
	}
	if t.Outside > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d samples (%s) name a call tree node the profile does not have, so are in no row.", t.Outside, humanize.Size(t.OutsideBytes)))
	}
	r.Notes = append(r.Notes, "Sizes are V8's estimates scaled up from the samples; a sampling profile does not say which sampled objects were collected since.")
	return r, nil
}

// sortByTotal orders call tree nodes by total bytes, largest first.
func sortByTotal(ns []int32, total []uint64) {
	sort.SliceStable(ns, func(a, b int) bool { return total[ns[a]] > total[ns[b]] })
}

var allocationSiteColumns = []Column{
	{Key: "function", Title: "Function", Kind: Text},
	{Key: "location", Title: "Location", Kind: Text},
	{Key: "count", Title: "Live count", Kind: Count},
	{Key: "shallow_size", Title: "Shallow size", Kind: Bytes},
	{Key: "retained_size", Title: "Retained size", Kind: Bytes},
	{Key: "retained_percent", Title: "Retained%", Kind: Percent},
	{Key: "stack", Title: "Called from", Kind: Text},
}

// AllocationSites is `heapx sites` on a heap dump with allocation stacks:
// its live objects by allocating function (DevTools' Allocation view),
// at most limit rows (0: all). The error is alloc.ErrNoAllocationStacks
// for a dump without them.
func AllocationSites(path string, a *analysis.Analysis, limit int) (*Result, error) {
	sites, err := alloc.AllocationSites(a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	total := a.TotalSize()
	var count int
	for _, s := range sites {
		count += s.Count
	}
	tab := &Table{Columns: allocationSiteColumns}
	shown := sites
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, s := range shown {
		var stack string
		for i, f := range s.Stack {
			if i == 3 {
				stack += " < ..."
				break
			}
			if i > 0 {
				stack += " < "
			}
			stack += functionName(f)
			if l := frameLocation(f); l != "" {
				stack += " (" + l + ")"
			}
		}
		tab.Rows = append(tab.Rows, []any{functionName(s.Frame), frameLocation(s.Frame), s.Count, s.Shallow, s.Retained, humanize.Share(s.Retained, total), stack})
	}
	r := &Result{Query: "sites",
		Header: []string{fmt.Sprintf("%s: %s live objects with an allocation stack, in %d functions", path, humanize.Thousands(uint64(count)), len(sites))},
		Sections: []*Section{{Heading: "Allocation sites (live objects)", Table: tab,
			Chart: &Chart{Label: "function", Value: "retained_size"}}},
		Notes: []string{"Retained size counts each object once: objects dominated by another object of the same site are in its size."},
	}
	if len(sites) > len(shown) {
		r.Notes = append(r.Notes, fmt.Sprintf("%d more functions (-n 0 shows all)", len(sites)-len(shown)))
	}
	return r, nil
}

// AllocationChurn is `heapx sites --churn` on a dump with allocation
// stacks: per allocating function, what it allocated while V8 tracked
// allocations and what of it is alive, the functions whose allocations
// are most gone first (alloc.AllocationChurn), at most limit rows (0:
// all).
func AllocationChurn(path string, a *analysis.Analysis, limit int) (*Result, error) {
	sites, err := alloc.AllocationChurn(a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var allocated, freed uint64
	for _, s := range sites {
		allocated += s.AllocatedSize
		freed += s.FreedSize()
	}
	tab := &Table{Columns: []Column{{Key: "function", Title: "Function", Kind: Text}, {Key: "location", Title: "Location", Kind: Text},
		{Key: "allocated", Title: "Allocated", Kind: Count}, {Key: "allocated_size", Title: "Allocated size", Kind: Bytes},
		{Key: "live", Title: "Alive", Kind: Count}, {Key: "live_size", Title: "Alive size", Kind: Bytes},
		{Key: "freed_size", Title: "Gone", Kind: Bytes}, {Key: "survival_percent", Title: "Survival%", Kind: Percent}}}
	shown := sites
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	for _, s := range shown {
		tab.Rows = append(tab.Rows, []any{functionName(s.Frame), frameLocation(s.Frame), s.Allocated, s.AllocatedSize,
			s.Live, s.LiveSize, s.FreedSize(), humanize.Share(s.LiveSize, s.AllocatedSize)})
	}
	r := &Result{Query: "sites",
		Header: []string{fmt.Sprintf("%s: %s allocated while tracked, %s of it gone (V8's allocation tracker)", path, humanize.Size(allocated), humanize.Size(freed))},
		Sections: []*Section{{Heading: "Churn: allocation sites by bytes allocated and gone", Table: tab,
			Chart: &Chart{Label: "function", Value: "freed_size"}}},
		Notes: []string{"Allocated counts what V8 tracked (allocations its optimizing compiler removed are not in it); alive is the snapshot's objects of the site. An object a GC moved can lose its allocation stack, which lowers Alive."},
	}
	if len(sites) > len(shown) {
		r.Notes = append(r.Notes, fmt.Sprintf("%d more functions (-n 0 shows all)", len(sites)-len(shown)))
	}
	return r, nil
}
