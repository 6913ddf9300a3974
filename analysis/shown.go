package analysis

import (
	"math"
	"slices"

	"github.com/heapx/heapx/model"
)

// PathSlack is how many hops longer than the shortest path a path heapx
// shows may be (Find): enough to go around a runtime structure (a timer
// list, a module's scope) through the program's own references, not so
// many that a path wanders.
const PathSlack = 3

// Find returns up to K retainer paths from the root to target, the paths
// heapx shows for an object (heapx paths, the report's leaks and
// suspects, the web UI, the MCP tools): among the simple paths no more
// than PathSlack hops longer than the shortest (Shortest's first, in
// DevTools' order), those not from V8's GC root categories first (see
// rootRank), then those with the fewest runtime-internal hops
// (RuntimeInternals.Edge), then the shorter, then those from a user root,
// each path differing from the ones before it in its part of
// the program's (the hops after its last runtime-internal one), not only
// in how the runtime keeps that part alive. So
// an object a module-scope Map of an HTTP server holds is explained
// through the server's handler and the module's scope, not through the
// timer list that also reaches the server. This is memlab's preference
// (it postpones the runtime's structures in its path search) made a
// rule with a bound: a person reads the program's references first.
//
// Distances stay DevTools': each path's Cost is its DevTools cost (its
// length from a user root, BaseSystemDistance plus its length from
// elsewhere at the root). Weak edges are never used. It returns nil when
// target is unreachable. Should the search give up before it finds a
// path (twice the shortest path's hops and MaxExpansions more partial
// paths: a path down a list of millions is a partial path a hop),
// Shortest's paths are returned.
func (pf *PathFinder) Find(target model.NodeIndex) []Path {
	first := pf.With(PathOptions{K: 1, MaxExpansions: pf.opt.MaxExpansions}).Shortest(target)
	if len(first) == 0 || len(first[0].Steps) == 0 {
		return first
	}
	n := len(first[0].Steps)
	out := pf.readable(target, int32(n)+PathSlack, 2*n+pf.opt.MaxExpansions)
	if len(out) == 0 {
		return pf.Shortest(target)
	}
	return out
}

// shownLabel is a partial path of Find's search, from node to the
// target.
type shownLabel struct {
	node     int32
	edge     uint32 // edge from node towards the target (unused at the target)
	prev     int32  // label index towards the target, -1 at the target
	hops     int32  // edges from node to the target
	internal int32  // runtime-internal edges among them
	terminal bool   // node is the root: the path is complete
	system   bool   // a complete path that does not start at a user root
	rank     uint8  // a complete path's rootRank
}

// shownQueue orders Find's labels by (root rank, internal hops, hops at
// least, system), a complete label's exact, a partial label's with the
// best rank and the fewest hops that could complete it (plain hop counts
// from the root); ties to the older label.
type shownQueue struct {
	labels []shownLabel
	idx    []int32
	hops   []int32
}

func (q *shownQueue) key(i int32) (uint8, int32, int32, bool) {
	l := &q.labels[i]
	if l.terminal {
		return l.rank, l.internal, l.hops, l.system
	}
	return 0, l.internal, l.hops + q.hops[l.node], false
}

func (q *shownQueue) less(a, b int32) bool {
	ra, ia, ha, sa := q.key(a)
	rb, ib, hb, sb := q.key(b)
	switch {
	case ra != rb:
		return ra < rb
	case ia != ib:
		return ia < ib
	case ha != hb:
		return ha < hb
	case sa != sb:
		return !sa
	}
	return a < b
}

// push and pop keep a binary heap by hand, as labelQueue does.
func (q *shownQueue) push(l shownLabel) {
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

func (q *shownQueue) pop() int32 {
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

// expansionsPerPath is how many partial paths through one node Find
// keeps per path wanted: paths that differ only in the runtime's hops
// are found and passed over.
const expansionsPerPath = 4

// readable is Find's search: backwards from target over its retainers,
// best first by (internal hops, hops), only through nodes from which the
// root is near enough for the path to stay within budget hops, each
// node expanded a bounded number of times (K shortest simple paths' way),
// giving up after maxLabels partial paths without a complete one.
func (pf *PathFinder) readable(target model.NodeIndex, budget int32, maxLabels int) []Path {
	g := pf.g
	root := g.Root
	q := &shownQueue{hops: pf.hops}
	q.push(shownLabel{node: target, prev: -1})
	perNode := min(expansionsPerPath*pf.opt.K, math.MaxUint8)
	pops := make([]uint8, g.NumNodes())
	var out []Path
	var shown [][]uint32 // each path's signature
	limit := maxLabels
	for len(q.idx) > 0 && len(out) < pf.opt.K && len(q.labels) < limit {
		li := q.pop()
		l := q.labels[li]
		if l.terminal {
			p, ok := pf.buildShown(q.labels, li)
			if !ok {
				continue
			}
			sig := pf.signature(p)
			if slices.ContainsFunc(shown, func(s []uint32) bool { return sameExplanation(s, sig) }) {
				continue
			}
			shown = append(shown, sig)
			out = append(out, p)
			if len(out) == 1 {
				limit = len(q.labels) + pf.opt.MaxExpansions
			}
			continue
		}
		if int(pops[l.node]) >= perNode {
			continue
		}
		pops[l.node]++
		s, end := pf.ret.Of(l.node)
		for r := s; r < end && len(q.labels) < limit; r++ {
			e := pf.ret.EdgeAt(r)
			if !pf.allowed(e, l.node) {
				continue
			}
			u := pf.ret.From(r)
			if pf.ignNodes.Has(int(u)) || pf.hops[u] < 0 || l.hops+1+pf.hops[u] > budget {
				continue
			}
			if pf.onShownPath(q.labels, li, u) {
				continue
			}
			next := shownLabel{node: u, edge: e, prev: li, hops: l.hops + 1, internal: l.internal}
			if pf.ri.Edge(u, e) {
				next.internal++
			}
			if u == root {
				next.terminal = true
				next.system = !pf.isUser.Has(int(l.node))
				next.rank = pf.rootRank(q.labels, li)
			}
			q.push(next)
		}
	}
	return out
}

// Root ranks: a path from V8's GC root categories is shown only when no
// path from elsewhere is within the bound, and one through the running
// code's temporaries (its stack, its handle scopes) last of all: they
// keep what the code that ran as the snapshot was taken happened to
// hold (the inspector's, or v8.writeHeapSnapshot()'s caller's), not what
// the program keeps, and memlab too passes them over for any other path.
const (
	rankProgram   = iota // from a user root or an embedder's (Node's handles, the DOM)
	rankGCRoots          // through a GC root category: global handles, the string table, ...
	rankTemporary        // through "(Stack roots)" or "(Handle scope)"
)

// rootRank is the rank of the path whose first hop leads from the root to
// the node of label li, the next one to the node of its prev label.
func (pf *PathFinder) rootRank(labels []shownLabel, li int32) uint8 {
	g := pf.g
	first := labels[li].node
	if !pf.k.NodeV8[g.Nodes.Type[first]] || g.NodeName(first) != "(GC roots)" {
		return rankProgram
	}
	if next := labels[li].prev; next >= 0 {
		switch g.NodeName(labels[next].node) {
		case "(Stack roots)", "(Handle scope)":
			return rankTemporary
		}
	}
	return rankGCRoots
}

// onShownPath reports whether node u is among the last onPathWindow
// nodes of the partial path label li heads.
func (pf *PathFinder) onShownPath(labels []shownLabel, li int32, u int32) bool {
	for i, n := li, 0; i >= 0 && n < onPathWindow; i, n = labels[i].prev, n+1 {
		if labels[i].node == u {
			return true
		}
	}
	return false
}

// buildShown turns a terminal label into a Path with its DevTools cost;
// ok is false when the path visits a node twice.
func (pf *PathFinder) buildShown(labels []shownLabel, li int32) (p Path, ok bool) {
	t := labels[li]
	p = Path{System: t.system, Cost: int64(t.hops)}
	if t.system && len(pf.roots.User) > 0 {
		p.Cost += int64(BaseSystemDistance)
	}
	if pf.seen == nil {
		pf.seen = NewBits(pf.g.NumNodes())
	}
	p.Steps = make([]PathStep, 0, t.hops)
	from, e := t.node, t.edge
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
	return p, ok
}

// signature is what tells a path Find shows from another: its part of
// the program's, the edges after its last runtime-internal hop (at
// least its last edge, the target's own retainer). Paths whose parts of
// the program's are the same, or one the end of the other, differ only
// in how the runtime keeps that part alive (a listening socket's handle
// or a timer keeping one Server; global.setTimeout or
// global.clearTimeout into one timer list; a property store): they are
// one explanation (sameExplanation).
func (pf *PathFinder) signature(p Path) []uint32 {
	from := max(len(p.Steps)-1, 0)
	for i := len(p.Steps) - 1; i >= 0; i-- {
		if pf.ri.Edge(p.Steps[i].From, p.Steps[i].Edge) {
			from = min(i+1, len(p.Steps)-1)
			break
		}
		from = i
	}
	sig := make([]uint32, 0, len(p.Steps)-from)
	for _, s := range p.Steps[from:] {
		sig = append(sig, s.Edge)
	}
	return sig
}

// sameExplanation reports whether two paths' signatures say the same:
// one is the end of the other.
func sameExplanation(a, b []uint32) bool {
	if len(a) < len(b) {
		a, b = b, a
	}
	return slices.Equal(a[len(a)-len(b):], b)
}
