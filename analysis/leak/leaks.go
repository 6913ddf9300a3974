package leak

import (
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// LeakOptions tune Leaks.
type LeakOptions struct {
	// MinRetained is memlab's --trace-object-size-above: an object is
	// reported only when its retained size in the final snapshot exceeds
	// it. 0 is memlab's --trace-all-objects (any retained size above 0).
	MinRetained uint64
	// MaxPathLength drops objects whose trace has more steps than this,
	// as memlab drops traces longer than 100; 0 means 100. A trace's
	// repeated hops count once (see traceShapes), so the items of a long
	// linked list are not dropped for its length.
	MaxPathLength int
	// Examples is how many reported objects each cluster lists (node
	// indexes in the final snapshot, in node order); 0 lists none.
	Examples int
	// Internals keeps the leaks of the engine's own objects (see Leaks).
	Internals bool
}

// LeakClass counts a cluster's leaked objects of one class.
type LeakClass struct {
	Class uint32 // index into the final snapshot's Classes.Names
	Name  string
	Count int
	// Reported counts those of them that are reported objects (the
	// cluster's traced objects, not dominated by another leaked one).
	Reported int
	// Shallow sums their shallow sizes in the final snapshot.
	Shallow uint64
	// Origin says whose code made the class's objects (the program's
	// first); Largest is the cluster's object of the class with the
	// largest retained size.
	Origin  analysis.Origin
	Largest model.NodeIndex
}

// LeakCluster is one leak: leaked objects whose retainer traces are
// similar, with the leaked objects they dominate.
type LeakCluster struct {
	// Count is the number of reported objects: the leaked objects no other
	// leaked object dominates, whose traces were clustered.
	Count int
	// Objects counts the leaked objects of the cluster: the reported ones
	// and those they dominate (memlab's cluster count, which lists both as
	// traces of one cluster).
	Objects int
	// Retained is the sum of the reported objects' retained sizes in the
	// final snapshot. No reported object dominates another, so nothing is
	// counted twice (memlab's aggregateDominatorMetrics).
	Retained uint64
	// Representative is the cluster's object of the first of Classes
	// with the largest retained size (the one with the shortest trace,
	// then the first in node order on ties): an object of the program's
	// own class where the cluster has one. Path is its trace in the final
	// snapshot (the shortest path memlab clusters by; the path heapx
	// shows for it is PathFinder.Find's).
	Representative model.NodeIndex
	Path           analysis.Path
	// Classes counts the cluster's objects by class, the classes of the
	// most reported objects first (see leakClasses).
	Classes []LeakClass
	// Examples are the first LeakOptions.Examples reported objects.
	Examples []model.NodeIndex
	// Site is where most of the reported objects were allocated in the
	// final snapshot; nil when it has no allocation stacks.
	Site *alloc.SiteShare
}

// LeakResult is the outcome of Leaks.
type LeakResult struct {
	// Matching is MatchByID when the snapshots' ids match objects (one V8
	// process, one numbering: SeriesCheck.MatchesObjects). With
	// MatchByClass nothing can be told about single objects and there are
	// no clusters (see ClassLeaks). IDOverlap is the share of the
	// baseline's ids found in the target.
	Matching  Matching
	IDOverlap float64
	// Allocated counts the target's nodes whose id is not in the
	// baseline; Leaked those of them still in the final snapshot.
	Allocated, Leaked int
	// Trivial counts leaked numbers, strings, VM-internal ("hidden") nodes
	// and compiled code, which memlab never reports; Small the other
	// leaked objects whose retained size is not above MinRetained; NoPath
	// the objects left whose reported object has no retainer trace, or
	// one longer than MaxPathLength; Internal those left out because the
	// leaked object at their top is the engine's own (an object shape,
	// "system / ..." objects other than closure contexts) and
	// LeakOptions.Internals is off.
	Trivial, Small, NoPath, Internal int
	// Clusters are sorted by retained size, largest first.
	Clusters []LeakCluster
}

// Leaks finds objects allocated between the baseline and the target
// snapshot that are still alive in the final one, as memlab's find-leaks
// does with --baseline, --target, --final and --trace-all-objects (on a
// Node.js heap memlab's default filter reports nothing: it looks for
// detached DOM elements and React fibers):
//
//   - leaked: the final snapshot's nodes whose id is in the target and not
//     in the baseline;
//   - filtered as memlab's FilterTrivialNode rule does: heap numbers,
//     strings of every representation and VM-internal nodes (V8 "hidden")
//     are not leaks, nor is compiled code (memlab's path finder never
//     enters it, so it never reports it); then, as its
//     FilterOverSizedNodeAsLeak rule, nor is an object whose retained size
//     is not above MinRetained;
//   - a leaked object dominated (in the final snapshot) by another leaked
//     object belongs to that one's leak: its every retainer path runs
//     through the dominator, so its trace has the dominator's as a prefix,
//     which memlab's similarity scores 1. Only the leaked objects no other
//     leaked object dominates (the reported ones) are traced and
//     clustered, which also keeps a leaked linked list linear: its first
//     leaked item dominates the rest;
//   - each reported object's trace is its shortest retainer path in the
//     final snapshot over the edges memlab's path finder follows (see
//     leakTree), from a user root if there is one, as `paths` does;
//   - traces with the same shape are one group: the same edge types and
//     names and the same node types and names from the root, numeric
//     edge names (element indexes, hash-table slots) matched as memlab
//     matches them, and repeated hops (a linked list's .next.next...)
//     folded into one (see traceShapes);
//   - groups are clustered by memlab's trace similarity (traceSimilarity,
//     threshold 0.8) where they hang in the same structure (sameHolders):
//     traces that differ in a key (a string-keyed cache's
//     `byToken.tok_1f3a`, a list's next or previous hop) or in the class
//     of the leaked objects join; structures side by side, which memlab's
//     similarity alone scores alike when the way to them is long (it
//     weighs most), stay apart. memlab joins each trace to the first
//     cluster whose representative is similar enough, in the order it
//     found the objects, so its clusters change with that order; here the
//     groups are taken largest first (then in node order) and each joins
//     the first similar cluster, so the outcome depends only on the
//     snapshot and a group only starts a cluster when no larger one is
//     similar. On the leak series of testdata/leaks each leak is one
//     cluster, where memlab makes one to three of it, and one of two
//     different leaks (testdata/golden/README.md).
//
// With Internals off, clusters whose reported object is the engine's own
// (an object shape, a "system / ..." object other than a closure context:
// feedback vectors, allocation sites, the JIT's maps) are left out: they
// come from code being optimised, not from the program's data, and a user
// can do nothing about them. So are the entries of a page's performance
// timeline that the browser records by itself (browserTimingEntries).
//
// Retained sizes are those of the final Analysis (DevTools' policy and
// shallow sizes, where memlab uses raw self sizes). Of the baseline and
// the target only their ids are needed: they come as digests (the
// target's made after the baseline's), so their graphs need not stay in
// memory. The final analysis needs classes (Leaks returns nil without)
// and the ids must be stable.
func Leaks(baseline, target *Digest, final *analysis.Analysis, opt LeakOptions) *LeakResult {
	if final.Classes == nil {
		return nil
	}
	if opt.MaxPathLength <= 0 {
		opt.MaxPathLength = 100
	}
	bIDs, tIDs := baseline.Sorted, target.Sorted
	r := &LeakResult{IDOverlap: sharedShare(bIDs, tIDs)}
	if !CheckDigests([]*Digest{baseline, target}, final.Graph).MatchesObjects() {
		r.Matching = MatchByClass
		return r
	}
	r.Allocated = countNew(bIDs, tIDs)
	s := &leakSearch{a: final, g: final.Graph, k: kinds.New(final.Graph), opt: opt, r: r}
	s.findCandidates(bIDs, tIDs)
	s.findTops()
	groups := s.groupByTrace()
	clusters := s.clusterGroups(groups)
	s.buildClusters(groups, clusters)
	s.dropBrowserBookkeeping()
	sortClusters(r.Clusters)
	return r
}

// dropBrowserBookkeeping leaves out, without Internals, the clusters of
// nothing but a browser's bookkeeping: its timing entries
// (browserTimingEntries), the internal vector that grew to hold them,
// whose top is that vector (an InternalNode), not an entry, and Blink's
// own C++ objects (blinkInternal), such as a layout or hit-test cache
// entry Chromium 156 keeps from the last click.
func (s *leakSearch) dropBrowserBookkeeping() {
	if s.opt.Internals {
		return
	}
	kept := s.r.Clusters[:0]
	for _, c := range s.r.Clusters {
		if onlyBookkeeping(c.Classes) {
			s.r.Internal += c.Objects
			continue
		}
		kept = append(kept, c)
	}
	s.r.Clusters = kept
}

// onlyBookkeeping reports whether a cluster's classes are all a browser's
// timing entries, internal nodes and Blink's own objects.
func onlyBookkeeping(classes []LeakClass) bool {
	for _, x := range classes {
		name := strings.TrimPrefix(x.Name, "Detached ")
		if name != "InternalNode" && !browserTimingEntries[name] && !blinkInternal(name) {
			return false
		}
	}
	return true
}

// blinkInternal reports whether a class is one of Blink's C++ objects
// (blink::LayoutResult, blink::HitTestData): the page reaches them only
// through its DOM nodes and JavaScript objects, which a leak of its own
// always has among its classes, so a cluster of nothing else is the
// browser's.
func blinkInternal(class string) bool {
	return strings.HasPrefix(class, "blink::") || strings.HasPrefix(class, "cppgc::")
}

// countNew counts the ids of tIDs that are not in bIDs: the objects
// allocated between the baseline and the target.
func countNew(bIDs, tIDs []uint64) int {
	n := 0
	for _, id := range tIDs {
		if !hasID(bIDs, id) {
			n++
		}
	}
	return n
}

// leakSearch holds what Leaks' phases share.
type leakSearch struct {
	a   *analysis.Analysis // the final snapshot
	g   *model.Graph
	k   *kinds.Table
	opt LeakOptions
	r   *LeakResult
	// The candidates: the leaked objects that are neither trivial nor
	// small, in node order, and the same as a set.
	cands []model.NodeIndex
	cand  analysis.Bits
	// top[i] is the candidate index of candidate i's top, the outermost
	// leaked object dominating it (itself when none does); size[i] counts
	// the candidates under top i.
	top  []int32
	size []int32
	// The traces of the tops and their shapes.
	tree   *leakTree
	shapes *traceShapes
}

// findCandidates counts the objects of the final snapshot that are in
// the target and not in the baseline, and keeps those that are neither
// trivial nor too small as candidates.
func (s *leakSearch) findCandidates(bIDs, tIDs []uint64) {
	g, r := s.g, s.r
	s.cand = analysis.NewBits(g.NumNodes())
	for v := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(v)
		if !hasID(tIDs, id) || hasID(bIDs, id) {
			continue
		}
		r.Leaked++
		switch {
		case isTrivialLeak(s.k, g, int32(v)):
			r.Trivial++
		case s.a.Dominators.Retained[v] <= s.opt.MinRetained:
			r.Small++
		default:
			s.cand.Set(v)
			s.cands = append(s.cands, int32(v))
		}
	}
}

// candIndex returns the index of node v among the candidates, -1 when it
// is none.
func (s *leakSearch) candIndex(v int32) int {
	i := sort.Search(len(s.cands), func(i int) bool { return s.cands[i] >= v })
	if i < len(s.cands) && s.cands[i] == v {
		return i
	}
	return -1
}

// findTops finds each candidate's top, the outermost leaked object
// dominating it (itself when none does), and counts the candidates under
// each top.
func (s *leakSearch) findTops() {
	cands := s.cands
	near := analysis.NearestMarkedDominators(s.a.Dominators.IDom, s.cand, cands, func(v int32) int32 { return v })
	s.top = make([]int32, len(cands))
	top := s.top
	for i := range top {
		top[i] = -1
	}
	var stack []int
	for i := range cands {
		j := i
		for top[j] < 0 && near[j] >= 0 {
			stack = append(stack, j)
			j = s.candIndex(near[j])
		}
		if top[j] < 0 {
			top[j] = int32(j)
		}
		for _, k := range stack {
			top[k] = top[j]
		}
		stack = stack[:0]
	}
	s.size = make([]int32, len(cands))
	for _, t := range top {
		s.size[t]++
	}
}

// traceGroup is the tops whose traces have one shape.
type traceGroup struct {
	shape int32
	tops  []int // candidate indexes, in node order
	count int   // objects
}

// isEngineObject reports whether v is the engine's own (an object shape,
// a "system / ..." object other than a closure context) or a browser's
// (an entry of the page's performance timeline the browser recorded),
// left out without Internals.
func (s *leakSearch) isEngineObject(v int32) bool {
	switch s.k.NodeOf(s.g, v) {
	case kinds.Shape:
		return true
	case kinds.Object:
		name := s.g.NodeName(v)
		return strings.HasPrefix(name, "system / ") && !analysis.IsContextName(name)
	case kinds.Native:
		return browserTimingEntries[strings.TrimPrefix(s.g.NodeName(v), "Detached ")]
	}
	return false
}

// browserTimingEntries are the classes of the performance timeline's
// entries that Chromium records by itself, a page doing nothing for them:
// slow and first inputs, resources loaded, long frames and tasks, paints
// and layout shifts. A timeline keeps them in buffers the page does not
// see grow (150 event timings, 250 resource timings), so they stay after
// an action undone, as a small leak of the browser's in every scenario
// that clicks or loads something. A page's own marks and measures are
// not among them.
var browserTimingEntries = map[string]bool{
	"PerformanceEventTiming": true, "PerformanceResourceTiming": true, "PerformanceNavigationTiming": true,
	"PerformancePaintTiming": true, "PerformanceLongAnimationFrameTiming": true, "PerformanceScriptTiming": true,
	"PerformanceLongTaskTiming": true, "TaskAttributionTiming": true, "LargestContentfulPaint": true,
	"LayoutShift": true, "LayoutShiftAttribution": true, "PerformanceElementTiming": true, "VisibilityStateEntry": true,
	"PerformanceServerTiming": true,
	// Chromium 156's soft navigations: the paint after an interaction.
	"InteractionContentfulPaint": true, "SoftNavigationEntry": true, "PerformanceSoftNavigation": true,
}

// groupByTrace traces the tops and groups them by trace shape, counting
// those of the engine's own objects and those without a short enough
// trace apart.
func (s *leakSearch) groupByTrace() []traceGroup {
	r := s.r
	s.tree = newLeakTree(s.a)
	s.shapes = newTraceShapes(s.tree)
	groupOf := map[int32]int32{} // shape -> group
	var groups []traceGroup
	for i, v := range s.cands {
		if s.top[i] != int32(i) {
			continue
		}
		if !s.opt.Internals && s.isEngineObject(v) {
			r.Internal += int(s.size[i])
			continue
		}
		if s.tree.cost[v] < 0 {
			r.NoPath += int(s.size[i])
			continue
		}
		sh := s.shapes.shape(v)
		if int(s.shapes.depth[sh]) > s.opt.MaxPathLength {
			r.NoPath += int(s.size[i])
			continue
		}
		gi, ok := groupOf[sh]
		if !ok {
			gi = int32(len(groups))
			groupOf[sh] = gi
			groups = append(groups, traceGroup{shape: sh})
		}
		groups[gi].tops = append(groups[gi].tops, i)
		groups[gi].count += int(s.size[i])
	}
	return groups
}

// traceCluster is the groups of similar traces: the first group's trace
// represents them.
type traceCluster struct {
	trace  []traceElem
	groups []int
}

// clusterGroups sorts the groups largest first and clusters them, each
// joining the first cluster whose representative trace is similar.
func (s *leakSearch) clusterGroups(groups []traceGroup) []traceCluster {
	sort.SliceStable(groups, func(a, b int) bool {
		if groups[a].count != groups[b].count {
			return groups[a].count > groups[b].count
		}
		return groups[a].tops[0] < groups[b].tops[0]
	})
	var clusters []traceCluster
	for gi := range groups {
		tr := s.shapes.elements(groups[gi].shape)
		joined := false
		for ci := range clusters {
			if ci >= maxClusterComparisons {
				break
			}
			if traceSimilarity(clusters[ci].trace, tr) >= similarTraceThreshold && sameHolders(clusters[ci].trace, tr) {
				clusters[ci].groups = append(clusters[ci].groups, gi)
				joined = true
				break
			}
		}
		if !joined {
			clusters = append(clusters, traceCluster{trace: tr, groups: []int{gi}})
		}
	}
	return clusters
}

// buildClusters makes the result's clusters: their tops, the classes of
// every candidate under them, and each one's representative, trace and
// allocation site.
func (s *leakSearch) buildClusters(groups []traceGroup, clusters []traceCluster) {
	tops := s.clusterTops(groups, clusters)
	hist := s.classHistograms(tops)
	sites := alloc.NewSiteFinder(s.a)
	for ci := range s.r.Clusters {
		s.describeCluster(&s.r.Clusters[ci], tops[ci], hist[ci], sites)
	}
}

// clusterTops fills in each cluster's count of tops, their retained size
// and the examples, and returns each cluster's tops in node order.
func (s *leakSearch) clusterTops(groups []traceGroup, clusters []traceCluster) [][]int {
	s.r.Clusters = make([]LeakCluster, len(clusters))
	tops := make([][]int, len(clusters))
	for ci, c := range clusters {
		lc := &s.r.Clusters[ci]
		for _, gi := range c.groups {
			tops[ci] = append(tops[ci], groups[gi].tops...)
		}
		sort.Ints(tops[ci])
		for _, i := range tops[ci] {
			v := s.cands[i]
			lc.Count++
			lc.Retained += s.a.Dominators.Retained[v]
			if len(lc.Examples) < s.opt.Examples {
				lc.Examples = append(lc.Examples, v)
			}
		}
	}
	return tops
}

// classHistograms counts, per cluster, every candidate under its tops by
// class (and the cluster's objects), the tops themselves as reported.
func (s *leakSearch) classHistograms(tops [][]int) []map[uint32]LeakClass {
	clusterOfTop := make([]int32, len(s.cands))
	for i := range clusterOfTop {
		clusterOfTop[i] = -1
	}
	hist := make([]map[uint32]LeakClass, len(tops))
	for ci := range tops {
		for _, i := range tops[ci] {
			clusterOfTop[i] = int32(ci)
		}
		hist[ci] = map[uint32]LeakClass{}
	}
	for i, v := range s.cands {
		ci := clusterOfTop[s.top[i]]
		if ci < 0 {
			continue
		}
		s.r.Clusters[ci].Objects++
		cl := s.a.Classes.Of[v]
		h, seen := hist[ci][cl]
		h.Count++
		if s.top[i] == int32(i) {
			h.Reported++
		}
		h.Shallow += s.a.Self.At(int(v))
		if !seen || s.larger(v, h.Largest) {
			h.Largest = v
		}
		hist[ci][cl] = h
	}
	return hist
}

// larger reports whether candidate v is a better example than w: a
// larger retained size, then a shorter trace, then the first in node
// order.
func (s *leakSearch) larger(v, w model.NodeIndex) bool {
	ret := s.a.Dominators.Retained
	if ret[v] != ret[w] {
		return ret[v] > ret[w]
	}
	if s.tree.cost[v] != s.tree.cost[w] {
		return s.tree.cost[v] < s.tree.cost[w]
	}
	return v < w
}

// describeCluster sets a cluster's classes, its representative and its
// trace, and the allocation site most of its tops share (sites nil: the
// dump has no allocation stacks).
func (s *leakSearch) describeCluster(lc *LeakCluster, tops []int, hist map[uint32]LeakClass, sites *alloc.SiteFinder) {
	lc.Classes = leakClasses(s.a, s.k, hist)
	// The representative is of the cluster's leading class, the
	// program's own before builtins and the engine's, so it and its path
	// show what leaked (a RequestContext, not the closure that holds it
	// or a Map's store), and its largest object.
	lc.Representative = lc.Classes[0].Largest
	lc.Path = s.tree.path(lc.Representative)
	if sites != nil {
		reported := make([]model.NodeIndex, len(tops))
		for j, i := range tops {
			reported[j] = s.cands[i]
		}
		if site, ok := sites.Dominant(reported); ok {
			lc.Site = &site
		}
	}
}

// sortClusters orders clusters by retained size, then objects, largest
// first.
func sortClusters(cs []LeakCluster) {
	sort.SliceStable(cs, func(a, b int) bool {
		x, y := &cs[a], &cs[b]
		if x.Retained != y.Retained {
			return x.Retained > y.Retained
		}
		if x.Objects != y.Objects {
			return x.Objects > y.Objects
		}
		return x.Representative < y.Representative
	})
}

// maxClusterComparisons bounds the clusters a trace group is compared
// with: past it, a group that matched none of the first ones starts a
// cluster of its own, so thousands of unrelated leaks cost at most
// groups x maxClusterComparisons comparisons.
const maxClusterComparisons = 1000

// isTrivialLeak is memlab's FilterTrivialNode: numbers, strings and
// VM-internal ("hidden") nodes are never leaks; nor is compiled code,
// which memlab's path finder never reaches.
func isTrivialLeak(k *kinds.Table, g *model.Graph, v int32) bool {
	switch k.NodeOf(g, v) {
	case kinds.Number, kinds.String, kinds.ConsString, kinds.SlicedString, kinds.Hidden, kinds.Code:
		return true
	}
	return false
}

// leakClasses turns a class histogram into LeakClass rows: the classes of
// the program's code first, then the library's (builtins, the runtime's),
// then the engine's (analysis.ClassOrigin), so a leaked RequestContext is
// never behind the Function that holds it or a Map's store; within each, the
// classes of the reported objects first (the leak's own objects before
// what they hold: a list's Item before the data of its 300,000 items),
// then by count, then by name. A class of JavaScript objects comes before
// the browser's native ones of the same origin: a page's leaked Dialog
// names what leaked better than the detached Text nodes it holds, and
// those before Blink's own objects (blink::UniqueElementData).
func leakClasses(a *analysis.Analysis, k *kinds.Table, h map[uint32]LeakClass) []LeakClass {
	rows := make([]LeakClass, 0, len(h))
	for c, x := range h {
		x.Class, x.Name = c, a.Classes.Names[c]
		x.Origin = analysis.ClassOrigin(a, c, x.Largest)
		rows = append(rows, x)
	}
	native := func(x LeakClass) bool { return k.NodeOf(a.Graph, x.Largest) == kinds.Native }
	sort.Slice(rows, func(x, y int) bool {
		if rows[x].Origin != rows[y].Origin {
			return rows[x].Origin < rows[y].Origin
		}
		if nx, ny := native(rows[x]), native(rows[y]); nx != ny {
			return ny
		}
		// Of the browser's objects, the DOM nodes a page made before
		// Blink's own that hang from them.
		if bx, by := blinkInternal(strings.TrimPrefix(rows[x].Name, "Detached ")), blinkInternal(strings.TrimPrefix(rows[y].Name, "Detached ")); bx != by {
			return by
		}
		if rows[x].Reported != rows[y].Reported {
			return rows[x].Reported > rows[y].Reported
		}
		if rows[x].Count != rows[y].Count {
			return rows[x].Count > rows[y].Count
		}
		if rows[x].Name != rows[y].Name {
			return rows[x].Name < rows[y].Name
		}
		return rows[x].Class < rows[y].Class
	})
	return rows
}
