package analysis

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// EdgeLabel returns an edge's name as DevTools' object grids show it before
// "in"/"::": "[3]" for elements, the bare name for every other type (a
// context variable, a property, an internal field), "(empty)" when empty.
func EdgeLabel(g *model.Graph, e uint32) string {
	k := kinds.For(g)
	name := g.EdgeName(e)
	if k.Edge[g.Edges.Type[e]] == kinds.EdgeElement {
		return "[" + name + "]"
	}
	if name == "" {
		return "(empty)"
	}
	return name
}

// EdgeString returns an edge as DevTools writes it in text
// (JSHeapSnapshotEdge.toString): "->x" for a context variable, "[3]" for an
// element, "[[x]]" for a weak edge, ".x" or `["x y"]` for a property or
// shortcut, "{x}" for internal and hidden edges (and for other runtimes'
// edges of no neutral category).
func EdgeString(g *model.Graph, e uint32) string {
	k := kinds.For(g)
	name := g.EdgeName(e)
	switch k.Edge[g.Edges.Type[e]] {
	case kinds.EdgeContext:
		return "->" + name
	case kinds.EdgeElement:
		return "[" + name + "]"
	case kinds.EdgeWeak:
		return "[[" + name + "]]"
	case kinds.EdgeProperty, kinds.EdgeShortcut:
		if k.Edge[g.Edges.Type[e]] == kinds.EdgeShortcut {
			if v, ok := jsstr.ParseInt(name); ok {
				name = strconv.FormatInt(v, 10)
			}
		}
		if !strings.Contains(name, " ") {
			return "." + name
		}
		return `["` + name + `"]`
	case kinds.EdgeInternal, kinds.EdgeHidden:
		return "{" + name + "}"
	}
	if g.EdgeType(e).Namespace != kinds.V8Namespace {
		// Other runtimes' edges without a JavaScript reading (HPROF's
		// root-kind edges, "sticky class") read best as internal ones.
		return "{" + name + "}"
	}
	return "?" + name + "?"
}

// PathStep is one edge of a retainer path.
type PathStep struct {
	From model.NodeIndex // the retaining node
	Edge uint32          // the edge, an index into the graph's edge columns
	To   model.NodeIndex // the retained node
}

// Path is a chain of edges from the root to a target.
type Path struct {
	// Steps run from the root to the target; the first step is a root
	// edge.
	Steps []PathStep
	// System is true when the path does not start at a user root (DevTools
	// would show its distance as "−").
	System bool
	// Cost is the path's DevTools-style distance: its length for a path
	// from a user root, BaseSystemDistance plus its length otherwise.
	Cost int64
}

// PathOptions tune RetainerPaths.
type PathOptions struct {
	// K is the number of paths wanted; 0 means 1.
	K int
	// IgnoreNodes and IgnoreEdges are left out of every path (DevTools'
	// "Ignore this retainer"). The target itself cannot be ignored.
	IgnoreNodes []model.NodeIndex
	IgnoreEdges []uint32 // edge indexes
	// MaxExpansions bounds the search for the paths after the first, in
	// partial paths (labels) it may add; 0 means 1,000,000. The first
	// path, when there is one, is always found: the search is guided by
	// exact distances, so until then it only expands nodes on shortest
	// paths (one label per hop on a linked list of millions).
	MaxExpansions int
}

// PathFinder finds retainer paths in one graph; it precomputes the
// distances that guide the search, so reuse it for several targets with the
// same ignore lists.
type PathFinder struct {
	g        *model.Graph
	ret      retainerIndex
	roots    *Roots
	k        *kinds.Table
	opt      PathOptions
	ignNodes Bits
	ignEdges Bits
	isUser   Bits
	h        []int32 // cost from the virtual source, -1 if unreachable
	seen     Bits    // build's scratch set, empty between calls
	// hops are the plain hop counts from the root over the edges a path
	// may use, ignore lists aside (a lower bound under them), and ri the
	// runtime's marks: what Find weighs paths by.
	hops []int32
	ri   *RuntimeInternals
}

// retainerIndex is what a path search reads of the retainers: a node's
// range of them (Of), each one's edge (EdgeAt) and source (From), in
// edge order. The graph's whole index (allRetainers) serves any search;
// ShownPaths' (nearRetainers) only the nodes its searches reach.
type retainerIndex interface {
	Of(n model.NodeIndex) (start, end uint32)
	EdgeAt(i uint32) uint32
	From(i uint32) model.NodeIndex
}

// allRetainers is the graph's retainer index (model.BuildRetainers) as
// a retainerIndex.
type allRetainers struct{ *model.Retainers }

// EdgeAt returns retaining edge i.
func (r allRetainers) EdgeAt(i uint32) uint32 { return r.Edge[i] }

// NewPathFinder prepares path searches over g with retainer index ret
// (model.BuildRetainers).
func NewPathFinder(g *model.Graph, ret *model.Retainers, roots *Roots, opt PathOptions) *PathFinder {
	n := g.NumNodes()
	pf := &PathFinder{g: g, ret: allRetainers{ret}, roots: roots, k: kinds.New(g), opt: opt,
		ignNodes: NewBits(n), ignEdges: NewBits(g.NumEdges()), isUser: NewBits(n)}
	if pf.opt.K <= 0 {
		pf.opt.K = 1
	}
	if pf.opt.MaxExpansions <= 0 {
		pf.opt.MaxExpansions = 1000000
	}
	for _, v := range opt.IgnoreNodes {
		pf.ignNodes.Set(int(v))
	}
	for _, e := range opt.IgnoreEdges {
		pf.ignEdges.Set(int(e))
	}
	for _, u := range roots.User {
		pf.isUser.Set(int(u))
	}
	pf.h = pf.costs()
	pf.hops = plainHops(g, pf.k, nil)
	pf.ri = NewRuntimeInternals(g)
	return pf
}

// plainHops is a BFS from g's root over its edges but weak ones: each
// node's hop count from the root, whatever root its path starts at, -1
// where none reaches it. sc lends the queue and gives the column (nil:
// fresh ones).
func plainHops(g *model.Graph, k *kinds.Table, sc *scratch) []int32 {
	h := sc.take(g.NumNodes())
	rootBFS(g, &Roots{Root: g.Root}, h, func(e uint32, _ int32) bool { return e == NoParent || !k.Weak[g.Edges.Type[e]] }, nil, sc)
	return h
}

// With returns a PathFinder for opt (its K, MaxExpansions and ignore
// lists, added to pf's) that shares pf's distances instead of walking
// the graph again. Leaving nodes and edges out never makes a node nearer,
// so pf's distances still never overestimate along an edge (a consistent
// heuristic), and Shortest returns paths of the same costs, in cost
// order, as a PathFinder made with the ignore lists (of paths of equal
// cost, it may find others first); its search may only expand more
// partial paths. Find returns the same paths as such a PathFinder. pf
// is not changed; the two may be used from different goroutines.
func (pf *PathFinder) With(opt PathOptions) *PathFinder {
	q := &PathFinder{g: pf.g, ret: pf.ret, roots: pf.roots, k: pf.k, opt: pf.opt, isUser: pf.isUser, h: pf.h,
		ignNodes: pf.ignNodes, ignEdges: pf.ignEdges, hops: pf.hops, ri: pf.ri}
	q.opt.K, q.opt.MaxExpansions = max(opt.K, 1), opt.MaxExpansions
	if q.opt.MaxExpansions <= 0 {
		q.opt.MaxExpansions = 1000000
	}
	if len(opt.IgnoreNodes) > 0 {
		q.ignNodes = slices.Clone(pf.ignNodes)
		for _, v := range opt.IgnoreNodes {
			q.ignNodes.Set(int(v))
		}
		q.opt.IgnoreNodes = append(slices.Clone(pf.opt.IgnoreNodes), opt.IgnoreNodes...)
	}
	if len(opt.IgnoreEdges) > 0 {
		q.ignEdges = slices.Clone(pf.ignEdges)
		for _, e := range opt.IgnoreEdges {
			q.ignEdges.Set(int(e))
		}
		q.opt.IgnoreEdges = append(slices.Clone(pf.opt.IgnoreEdges), opt.IgnoreEdges...)
	}
	return q
}

// allowed reports whether a path may use edge e into t.
func (pf *PathFinder) allowed(e uint32, t int32) bool {
	return !pf.k.Weak[pf.g.Edges.Type[e]] && !pf.ignEdges.Has(int(e)) && !pf.ignNodes.Has(int(t))
}

// costs is a two-phase BFS like DevTools' distances but over exactly the
// edges paths may use: user roots cost 1, the root BaseSystemDistance (0
// without user roots). It is the exact remaining cost, so the search below
// is A* with a consistent heuristic and finds paths in cost order.
func (pf *PathFinder) costs() []int32 {
	h := make([]int32, pf.g.NumNodes())
	rootBFS(pf.g, pf.roots, h, func(e uint32, t int32) bool {
		if e == NoParent { // a user root
			return !pf.ignNodes.Has(int(t))
		}
		return pf.allowed(e, t)
	}, nil, nil)
	return h
}

// NoParent marks a node without a BFS tree edge (a start of the walk).
const NoParent = ^uint32(0)

// rootBFS is the two-phase BFS of PathFinder.costs and ShortestPaths: from
// the user roots at cost 1 (those allowed admits with edge NoParent),
// then from the root at BaseSystemDistance (0 without user roots), over
// the edges allowed admits; h receives each node's cost, -1 where none
// reaches it. With parent it records each reached node's BFS tree edge
// (NoParent for the starts): a BFS reaches every node first by a cheapest
// path. Costs fit an int32 as the search's labels' do: BaseSystemDistance
// plus a path's length. Each node is queued once, so the queue is one
// buffer of N entries, taken from sc (nil: a fresh one): grown by
// appending, it left twice its size behind on a 14M-node graph.
func rootBFS(g *model.Graph, roots *Roots, h []int32, allowed func(e uint32, t int32) bool, parent []uint32, sc *scratch) {
	for i := range h {
		h[i] = -1
	}
	if len(h) == 0 {
		return
	}
	queue := sc.get(len(h), false)[:0]
	defer func() { sc.put(queue) }()
	reach := func(t int32, cost int32, e uint32) {
		h[t] = cost
		if parent != nil {
			parent[t] = e
		}
		queue = append(queue, t)
	}
	bfs := func() {
		for i := 0; i < len(queue); i++ {
			v := queue[i]
			s, end := g.EdgeRange(v)
			for e := s; e < end; e++ {
				if t := g.Edges.To[e]; h[t] < 0 && allowed(e, t) {
					reach(t, h[v]+1, e)
				}
			}
		}
	}
	for _, u := range roots.User {
		if h[u] < 0 && allowed(NoParent, u) {
			reach(u, 1, NoParent)
		}
	}
	bfs()
	queue = queue[:0]
	if len(roots.User) > 0 {
		reach(g.Root, BaseSystemDistance, NoParent)
	} else {
		reach(g.Root, 0, NoParent)
	}
	bfs()
}

// PathFinder returns a PathFinder over a's graph for opt. Its
// distances are those of the tree ShortestPaths reads paths off (the
// same walk over the same edges), and the finder they make is kept with
// the analysis, so a front end or a report that asks for paths again and
// again (heapx serve, heapx report) walks the graph once and keeps one
// copy of them; the finder for opt is derived from it (With).
func (a *Analysis) PathFinder(opt PathOptions) *PathFinder {
	a.finderOnce.Do(func() { a.finder = a.treeFinder(allRetainers{a.Retainers()}) })
	return a.finder.With(opt)
}

// treeFinder is a PathFinder over a's graph without ignore lists that
// reads retainers from ret, its distances the shortest-path tree's.
func (a *Analysis) treeFinder(ret retainerIndex) *PathFinder {
	cost, _ := a.ShortestPathTree()
	n := a.Graph.NumNodes()
	pf := &PathFinder{g: a.Graph, ret: ret, roots: a.Roots, k: kinds.New(a.Graph), opt: PathOptions{K: 1, MaxExpansions: 1000000},
		ignNodes: NewBits(n), ignEdges: NewBits(a.Graph.NumEdges()), isUser: NewBits(n), h: cost,
		hops: a.plainHops(), ri: a.RuntimeInternals()}
	for _, u := range a.Roots.User {
		pf.isUser.Set(int(u))
	}
	return pf
}

// ShortestPaths returns one shortest retainer path to each target, with
// the preferences of PathFinder.Shortest (a path from a user root before one
// from elsewhere at the root, then the shortest), without a retainer
// index: one forward BFS from the roots records each node's tree edge, the
// first time any paths are asked for, and every later call reads paths off
// that tree. It costs 8 bytes per node where PathFinder needs the
// retainer index (4 bytes per edge and per node) and a BFS per search, so it is the one to
// use for paths to many objects of a large heap. Each path is built
// whole, 12 bytes a hop, so ask for the few that are shown: the paths to
// the K items of a list are K²/2 hops (MergedPaths merges the paths of
// any number of targets without building them; the leak traces of Leaks
// share a trie). An unreachable target gets a Path with Cost -1 and no
// steps; the root gets an empty system path, as from Shortest. Safe for
// concurrent use.
func (a *Analysis) ShortestPaths(targets []model.NodeIndex) []Path {
	g := a.Graph
	k := kinds.New(g)
	h, parent := a.ShortestPathTree()
	out := make([]Path, len(targets))
	for i, t := range targets {
		if h[t] < 0 {
			out[i] = Path{Cost: -1}
			continue
		}
		p := Path{Cost: int64(h[t])}
		v := t
		for parent[v] != NoParent {
			e := parent[v]
			from := EdgeSource(g, e)
			p.Steps = append(p.Steps, PathStep{From: from, Edge: e, To: v})
			v = from
		}
		if v != g.Root {
			// A user root: the path starts with the root's edge to it.
			s, end := g.EdgeRange(g.Root)
			for e := s; e < end; e++ {
				if g.Edges.To[e] == v && !k.Weak[g.Edges.Type[e]] {
					p.Steps = append(p.Steps, PathStep{From: g.Root, Edge: e, To: v})
					break
				}
			}
		} else {
			p.System = true
		}
		slices.Reverse(p.Steps)
		out[i] = p
	}
	return out
}

// plainHops returns each node's plain hop count from the root
// (plainHops), computed on first use and kept.
func (a *Analysis) plainHops() []int32 {
	a.hopsOnce.Do(func() { a.hops = plainHops(a.Graph, kinds.New(a.Graph), a.sc) })
	return a.hops
}

// ShortestPathTree returns the BFS tree ShortestPaths reads paths off:
// each node's cost (-1 where no path reaches it) and tree edge (NoParent
// at the root and the user roots), computed on first use.
func (a *Analysis) ShortestPathTree() (cost []int32, parent []uint32) {
	a.treeOnce.Do(func() {
		a.collectGarbage()
		g := a.Graph
		k := kinds.New(g)
		n := g.NumNodes()
		// The columns are kept, in memory the analysis's passes left
		// (scratch.take): the dominator pass's predecessor array, which
		// the Summary's dominator-tree children reuse before them in a
		// report (one asking for both after them allocates its own).
		a.treeCost = a.sc.take(n)
		a.treeEdge = asUint32(a.sc.take(n))
		clear(a.treeEdge) // the BFS sets only the reached nodes' edges
		rootBFS(g, a.Roots, a.treeCost, func(e uint32, _ int32) bool { return e == NoParent || !k.Weak[g.Edges.Type[e]] }, a.treeEdge, a.sc)
	})
	return a.treeCost, a.treeEdge
}

// RootBFS is rootBFS over a's graph from its root and user roots: the
// cost of the cheapest path to each node over the edges allowed accepts
// and, with parent, each node's BFS tree edge.
func (a *Analysis) RootBFS(cost []int32, allowed func(e uint32, to int32) bool, parent []uint32) {
	rootBFS(a.Graph, a.Roots, cost, allowed, parent, a.sc)
}

// EdgeSource returns the node whose edge range holds edge e.
func EdgeSource(g *model.Graph, e uint32) int32 {
	fe := g.Nodes.FirstEdge
	return int32(sort.Search(g.NumNodes(), func(i int) bool { return fe[i+1] > e }))
}

// Distance returns the cost of the cheapest path to n, or -1 when no path
// reaches it.
func (pf *PathFinder) Distance(n model.NodeIndex) int64 { return int64(pf.h[n]) }

// pathLabel is a partial path of the search, from node to the target. It
// is 20 bytes: the path to the last item of a list of millions is a label
// per hop.
type pathLabel struct {
	node     int32
	edge     uint32 // edge from node towards the target (unused at the target)
	prev     int32  // label index towards the target, -1 at the target
	cost     int32  // edges from node to the target (plus BaseSystemDistance when terminal and system)
	terminal bool   // the path is complete: node is where it starts
	system   bool
}

type labelQueue struct {
	labels []pathLabel
	idx    []int32
	h      []int32
}

// f is label i's priority: its exact cost when complete, else its cost so
// far plus the remaining distance.
func (q *labelQueue) f(i int32) int64 {
	l := &q.labels[i]
	if l.terminal {
		return int64(l.cost)
	}
	return int64(l.cost) + int64(q.h[l.node])
}

// less orders the queue: by priority, ties to the older label, so the
// search is deterministic.
func (q *labelQueue) less(a, b int32) bool {
	fa, fb := q.f(a), q.f(b)
	if fa != fb {
		return fa < fb
	}
	return a < b
}

// push adds label l to the queue. The binary heap is kept by hand, not
// with container/heap, whose interface boxes every index: an allocation
// per label, millions of them on the path through a long list.
func (q *labelQueue) push(l pathLabel) {
	q.labels = append(q.labels, l)
	q.idx = append(q.idx, int32(len(q.labels)-1))
	for i := len(q.idx) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(q.idx[i], q.idx[p]) {
			break
		}
		q.idx[i], q.idx[p] = q.idx[p], q.idx[i]
		i = p
	}
}

// pop removes and returns the index of the first label.
func (q *labelQueue) pop() int32 {
	top := q.idx[0]
	n := len(q.idx) - 1
	q.idx[0] = q.idx[n]
	q.idx = q.idx[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && q.less(q.idx[c+1], q.idx[c]) {
			c++
		}
		if !q.less(q.idx[c], q.idx[i]) {
			break
		}
		q.idx[i], q.idx[c] = q.idx[c], q.idx[i]
		i = c
	}
	return top
}

// Shortest returns up to K shortest simple retainer paths from the root
// to target, cheapest first, in DevTools' order: paths from a user root
// (through the root's edge to it) before paths that start elsewhere at
// the root, shorter before longer. Weak edges are never used. It returns
// nil when target is unreachable. Find, the paths heapx shows, starts
// from its first.
func (pf *PathFinder) Shortest(target model.NodeIndex) []Path {
	g := pf.g
	if pf.h[target] < 0 && target != g.Root {
		return nil
	}
	q := &labelQueue{h: pf.h}
	q.push(pathLabel{node: target, prev: -1})
	// pops counts each node's expansions (at most K, so a byte each).
	pops := make([]uint8, g.NumNodes())
	var out []Path
	sysCost := int32(0)
	if len(pf.roots.User) > 0 {
		sysCost = BaseSystemDistance
	}
	root := g.Root
	// limit is the labels the search may hold: unbounded until the first
	// path is found, then MaxExpansions more, checked at every label (one
	// node can have millions of retainers: the map of a list's items).
	limit := math.MaxInt
	for len(q.idx) > 0 && len(out) < pf.opt.K && len(q.labels) < limit {
		li := q.pop()
		l := q.labels[li]
		if l.terminal {
			if p, ok := pf.build(q.labels, li); ok {
				out = append(out, p)
				if len(out) == 1 {
					limit = len(q.labels) + pf.opt.MaxExpansions
				}
			}
			continue
		}
		if int(pops[l.node]) >= pf.opt.K {
			continue
		}
		pops[l.node]++
		if l.node == root {
			q.push(pathLabel{node: root, prev: l.prev, edge: l.edge, cost: l.cost + sysCost, terminal: true, system: true})
			continue
		}
		if pf.isUser.Has(int(l.node)) {
			// Complete the path with the root's edge to this user root.
			s, end := g.EdgeRange(root)
			for e := s; e < end; e++ {
				if g.Edges.To[e] == l.node && pf.allowed(e, l.node) {
					q.push(pathLabel{node: root, edge: e, prev: li, cost: l.cost + 1, terminal: true})
					break
				}
			}
		}
		s, end := pf.ret.Of(l.node)
		for r := s; r < end && len(q.labels) < limit; r++ {
			e := pf.ret.EdgeAt(r)
			if !pf.allowed(e, l.node) {
				continue
			}
			// The source is searched for only for an edge a path may use.
			u := pf.ret.From(r)
			if pf.ignNodes.Has(int(u)) || pf.h[u] < 0 {
				continue
			}
			if u == root && pf.isUser.Has(int(l.node)) {
				continue // handled above
			}
			if pf.onPath(q.labels, li, u) {
				continue
			}
			q.push(pathLabel{node: u, edge: e, prev: li, cost: l.cost + 1})
		}
	}
	return out
}

// onPathWindow is how many nodes back onPath looks. Retainer cycles are
// mostly short (an object and its back pointer, the neighbours in a
// doubly linked list), so a bounded look keeps the search linear on a
// chain of millions (looking all the way back made it quadratic: a 3M
// linked list's tail took minutes); the rare path that closes a longer
// cycle is dropped when it completes (build).
const onPathWindow = 64

// onPath reports whether node u occurs among the last onPathWindow nodes
// of the partial path that label li heads, keeping paths simple.
func (pf *PathFinder) onPath(labels []pathLabel, li int32, u int32) bool {
	for i, n := li, 0; i >= 0 && n < onPathWindow; i, n = labels[i].prev, n+1 {
		if labels[i].node == u {
			return true
		}
	}
	return false
}

// build turns a terminal label into a Path; ok is false when the path
// visits a node twice (a cycle longer than onPath looks back).
func (pf *PathFinder) build(labels []pathLabel, li int32) (p Path, ok bool) {
	t := labels[li]
	p = Path{System: t.system, Cost: int64(t.cost)}
	if t.prev < 0 {
		return p, true // the target is the root
	}
	// The terminal label's edge leads from the root to its prev label.
	from, e := pf.g.Root, t.edge
	if pf.seen == nil {
		pf.seen = NewBits(pf.g.NumNodes())
	}
	n := 0
	for i := t.prev; i >= 0; i = labels[i].prev {
		n++
	}
	p.Steps = make([]PathStep, 0, n)
	ok = true
	for i := t.prev; i >= 0; i = labels[i].prev {
		if pf.seen.Has(int(labels[i].node)) {
			ok = false
			break
		}
		pf.seen.Set(int(labels[i].node))
		p.Steps = append(p.Steps, PathStep{From: from, Edge: e, To: labels[i].node})
		from, e = labels[i].node, labels[i].edge
	}
	for _, s := range p.Steps {
		pf.seen.Clear(int(s.To))
	}
	if !ok {
		return Path{}, false
	}
	return p, true
}

// RetainerPaths returns up to opt.K retainer paths from the root to
// target, the paths heapx shows (see PathFinder.Find). ret is g's retainer index
// (model.BuildRetainers).
func RetainerPaths(g *model.Graph, ret *model.Retainers, roots *Roots, target model.NodeIndex, opt PathOptions) []Path {
	return NewPathFinder(g, ret, roots, opt).Find(target)
}

// MaxRepeatPeriod is the longest block of hops that folds where it
// repeats, in leak traces, merged paths and path tables. Longer cycles
// are rare in heaps, and each period tried costs a comparison per hop.
const MaxRepeatPeriod = 3

// RepeatPeriod returns k when the newest of depth+1 steps completes a
// repeat of the block of k steps before it (k at most MaxRepeatPeriod, the
// shortest such k), else 0. same(i, j) compares the steps i and j steps
// back from the newest (0 is the newest); a repeat of k is same(i, i+k)
// for every i below k, which needs depth at least 2k-1.
func RepeatPeriod(depth int, same func(i, j int) bool) int {
	for k := 1; k <= MaxRepeatPeriod && depth >= 2*k-1; k++ {
		ok := true
		for i := 0; i < k && ok; i++ {
			ok = same(i, i+k)
		}
		if ok {
			return k
		}
	}
	return 0
}

// NoWeakFinder finds the paths heapx paths --no-weak shows: MAT's "Path
// to GC roots excluding weak/soft references", made for every runtime.
// Its paths never take a weak edge (as no path does: on HPROF these are
// java.lang.ref.Reference.referent, of every weak, soft, phantom and
// finalizer reference) nor an ephemeron edge (a WeakMap's or WeakSet's
// table to a value, which lives only as long as its key: the key's own
// retainers are what keeps it). And they take none of the
// runtime-internal edges (Analysis.IsRuntimeInternalEdge) where the
// object has such a path. In a V8 heap most objects have none: the
// runtime holds the program's code and objects (a module through the
// module loader, an emitter's listeners through the EventEmitter object,
// a callback through a timer list), so left out, they would leave 90-99%
// of a Node heap and all of a page's without a path. An object without
// one gets the paths heapx shows (PathFinder.Find), which take the fewest
// such edges, and Find says so.
type NoWeakFinder struct {
	program *PathFinder // without weak, ephemeron and runtime-internal edges
	strong  *PathFinder // without weak and ephemeron edges
}

// NoWeakFinder returns a's NoWeakFinder, made on first use (two walks of
// the graph and a bit per edge for each of its two edge sets) and kept;
// derive finders for other K and ignore lists with With.
func (a *Analysis) NoWeakFinder() *NoWeakFinder {
	a.noWeakOnce.Do(func() {
		g := a.Graph
		k := kinds.For(g)
		ri := a.RuntimeInternals()
		ephemeral, internal := NewBits(g.NumEdges()), NewBits(g.NumEdges())
		for v := range g.NumNodes() {
			s, end := g.EdgeRange(int32(v))
			for e := s; e < end; e++ {
				switch {
				case k.Ephem[g.Edges.Type[e]]:
					ephemeral.Set(int(e))
					internal.Set(int(e))
				case ri.Edge(int32(v), e):
					internal.Set(int(e))
				}
			}
		}
		a.noWeak = &NoWeakFinder{program: a.finderWithout(internal), strong: a.finderWithout(ephemeral)}
	})
	return a.noWeak
}

// finderWithout is a PathFinder over a's graph that never takes the
// edges in skip, its distances (the search's guide) over the others.
func (a *Analysis) finderWithout(skip Bits) *PathFinder {
	n := a.Graph.NumNodes()
	pf := &PathFinder{g: a.Graph, ret: allRetainers{a.Retainers()}, roots: a.Roots, k: kinds.For(a.Graph), opt: PathOptions{K: 1, MaxExpansions: 1000000},
		ignNodes: NewBits(n), ignEdges: skip, isUser: NewBits(n), hops: a.plainHops(), ri: a.RuntimeInternals()}
	for _, u := range a.Roots.User {
		pf.isUser.Set(int(u))
	}
	pf.h = pf.costs()
	return pf
}

// With returns a NoWeakFinder for opt's K, MaxExpansions and ignore
// lists (PathFinder.With); f is not changed.
func (f *NoWeakFinder) With(opt PathOptions) *NoWeakFinder {
	return &NoWeakFinder{program: f.program.With(opt), strong: f.strong.With(opt)}
}

// Find returns up to K retainer paths from the root to target without
// weak and ephemeron edges: those with none of the runtime-internal
// edges when there are any (throughRuntime false), else the paths
// PathFinder.Find shows over the edges left (throughRuntime true: each
// takes at least one runtime-internal edge, and as few as such a path
// within PathSlack hops of the shortest does). It returns nil when only
// weak and ephemeron edges reach target.
func (f *NoWeakFinder) Find(target model.NodeIndex) (paths []Path, throughRuntime bool) {
	if paths := f.program.Find(target); len(paths) > 0 {
		return paths, false
	}
	paths = f.strong.Find(target)
	return paths, len(paths) > 0
}
