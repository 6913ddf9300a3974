package leak

import (
	"slices"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// leakTree is the shortest-path tree leak traces are read from: one
// two-phase BFS from the roots (user roots first, as PathFinder) over the
// edges memlab's path finder follows (TraceFinder.annotateShortestPaths
// with Utils.isMeaningfulEdge): no weak edges, no internal "code" edges and
// no code objects, no hidden "sloppy_function_map" edges, no edges into
// "system / NativeContext", "system / SourcePositionTableWithFrameCache",
// "(map descriptors)" or "system / PropertyCell", no "feedback_cell"
// edges. So no leak is traced through compiled code or the JIT's feedback,
// which a program does not control, and code objects are never reached.
type leakTree struct {
	g      *model.Graph
	roots  *analysis.Roots
	cost   []int32  // edges from the start (user roots 1), -1 if unreached
	parent []uint32 // tree edge into each reached node; NoParent at starts
	k      *kinds.Table
}

// newLeakTree runs the BFS over a's graph.
func newLeakTree(a *analysis.Analysis) *leakTree {
	g := a.Graph
	n := g.NumNodes()
	t := &leakTree{g: g, roots: a.Roots, cost: make([]int32, n), parent: make([]uint32, n), k: kinds.New(g)}
	v8 := kinds.IsV8(g)
	meaningless := func(v int32) bool {
		if t.k.NodeOf(g, v) == kinds.Code {
			return true
		}
		if !v8 {
			return false
		}
		switch g.NodeName(v) {
		case "system / NativeContext", "system / SourcePositionTableWithFrameCache",
			"(map descriptors)", "system / PropertyCell":
			return true
		}
		return false
	}
	a.RootBFS(t.cost, func(e uint32, to int32) bool {
		if meaningless(to) {
			return false
		}
		if e == analysis.NoParent {
			return true
		}
		et := g.Edges.Type[e]
		if t.k.Weak[et] {
			return false
		}
		if !v8 || t.k.Indexed[et] {
			return true
		}
		switch g.Strings.At(g.Edges.Name[e]) {
		case "code":
			return t.k.Edge[et] != kinds.EdgeInternal
		case "sloppy_function_map":
			return t.k.Edge[et] != kinds.EdgeHidden
		case "feedback_cell":
			return false
		}
		return true
	}, t.parent)
	return t
}

// source returns the node whose edge range holds e.
func (t *leakTree) source(e uint32) int32 { return analysis.EdgeSource(t.g, e) }

// startEdge returns the root's edge to the user root u, or NoParent when u
// is the root itself or the root has no such edge.
func (t *leakTree) startEdge(u int32) uint32 {
	g := t.g
	if u == g.Root {
		return analysis.NoParent
	}
	s, end := g.EdgeRange(g.Root)
	for e := s; e < end; e++ {
		if g.Edges.To[e] == u && !t.k.Weak[g.Edges.Type[e]] {
			return e
		}
	}
	return analysis.NoParent
}

// path returns the tree path from the root to v (v must be reached).
func (t *leakTree) path(v int32) analysis.Path {
	p := analysis.Path{Cost: int64(t.cost[v])}
	for t.parent[v] != analysis.NoParent {
		e := t.parent[v]
		from := t.source(e)
		p.Steps = append(p.Steps, analysis.PathStep{From: from, Edge: e, To: v})
		v = from
	}
	if e := t.startEdge(v); e != analysis.NoParent {
		p.Steps = append(p.Steps, analysis.PathStep{From: t.g.Root, Edge: e, To: v})
	} else {
		p.System = true
	}
	slices.Reverse(p.Steps)
	return p
}

// traceStep is one step of a leak trace as memlab compares them: the edge
// (its type and name) and the node it reaches (its type and name).
// Numeric edge names (element indexes, a hash table's slots) are kept as
// wild: memlab takes two numeric names as the same when their referrers
// are (ClusterUtilsHelper's isSameEdge), and the referrer is the previous
// step's node, part of the same key.
type traceStep struct {
	edgeType uint8
	nodeType uint8
	numeric  bool
	edgeName uint32 // a StringID, or wild when numeric
	nodeName uint32 // a StringID
}

const wild = ^uint32(0)

// traceShapes interns leak traces as a trie of traceSteps, so the traces
// of many objects share their common prefixes and each tree node's shape
// is computed once, from its parent's: the traces of a 1M-item linked list
// cost 1M steps, not 1M^2/2. A step that repeats the block of up to
// MaxRepeatPeriod steps before it is folded into it (the hops of a linked list,
// of a timer list), so every item of one list has the same shape, as
// memlab finds all of them similar (one trace a prefix of the other).
type traceShapes struct {
	t      *leakTree
	parent []int32 // trie node -> its parent, -1 at the root
	step   []traceStep
	depth  []int32
	child  map[trieKey]int32
	of     []int32 // graph node -> its shape, -1 until computed
	numStr map[uint32]bool
}

type trieKey struct {
	parent int32
	step   traceStep
}

func newTraceShapes(t *leakTree) *traceShapes {
	s := &traceShapes{t: t, child: map[trieKey]int32{}, of: make([]int32, t.g.NumNodes()), numStr: map[uint32]bool{}}
	for i := range s.of {
		s.of[i] = -1
	}
	// Trie node 0 is the root's: a trace starts at the root node.
	s.parent = append(s.parent, -1)
	s.step = append(s.step, traceStep{nodeType: t.g.Nodes.Type[t.g.Root], nodeName: t.g.Nodes.Name[t.g.Root], edgeName: wild})
	s.depth = append(s.depth, 0)
	s.of[t.g.Root] = 0
	return s
}

// stepOf returns the trace step of edge e into node v.
func (s *traceShapes) stepOf(e uint32, v int32) traceStep {
	g := s.t.g
	st := traceStep{edgeType: g.Edges.Type[e], nodeType: g.Nodes.Type[v], nodeName: g.Nodes.Name[v], edgeName: g.Edges.Name[e]}
	if s.t.k.Indexed[st.edgeType] || s.numericName(st.edgeName) {
		st.numeric, st.edgeName = true, wild
	}
	return st
}

// numericName reports whether string id is a numeric name (representsNumber).
func (s *traceShapes) numericName(id uint32) bool {
	if v, ok := s.numStr[id]; ok {
		return v
	}
	v := representsNumber(s.t.g.Strings.At(id))
	s.numStr[id] = v
	return v
}

// representsNumber is memlab's test of an edge name that is a number in
// string form: it is one if JavaScript prints the number it parses to as
// the same text ("12", "3.5"; not "08" or "1e3").
func representsNumber(name string) bool {
	if i, err := strconv.ParseInt(name, 10, 64); err == nil {
		return strconv.FormatInt(i, 10) == name
	}
	if f, err := strconv.ParseFloat(name, 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64) == name
	}
	return false
}

// extend returns the shape of trace p followed by step st.
func (s *traceShapes) extend(p int32, st traceStep) int32 {
	// st completes a repeat of the block of k steps before it: fold it
	// into that block.
	stepBack := func(i int) traceStep { // i steps back from st
		if i == 0 {
			return st
		}
		return s.step[s.ancestor(p, i-1)]
	}
	if k := analysis.RepeatPeriod(int(s.depth[p]), func(i, j int) bool { return stepBack(i) == stepBack(j) }); k > 0 {
		return s.ancestor(p, k-1)
	}
	key := trieKey{p, st}
	if c, ok := s.child[key]; ok {
		return c
	}
	c := int32(len(s.parent))
	s.parent = append(s.parent, p)
	s.step = append(s.step, st)
	s.depth = append(s.depth, s.depth[p]+1)
	s.child[key] = c
	return c
}

// ancestor returns the trie node i levels above p.
func (s *traceShapes) ancestor(p int32, i int) int32 {
	for ; i > 0; i-- {
		p = s.parent[p]
	}
	return p
}

// shape returns node v's shape (v must be reached by the tree).
func (s *traceShapes) shape(v int32) int32 {
	if s.of[v] >= 0 {
		return s.of[v]
	}
	t := s.t
	var stack []int32
	u := v
	for s.of[u] < 0 {
		stack = append(stack, u)
		e := t.parent[u]
		if e == analysis.NoParent {
			break // a start: its shape is the root's plus the root's edge
		}
		u = t.source(e)
	}
	for i := len(stack) - 1; i >= 0; i-- {
		w := stack[i]
		if e := t.parent[w]; e != analysis.NoParent {
			s.of[w] = s.extend(s.of[t.source(e)], s.stepOf(e, w))
		} else if e := t.startEdge(w); e != analysis.NoParent {
			s.of[w] = s.extend(0, s.stepOf(e, w))
		} else {
			s.of[w] = 0
		}
	}
	return s.of[v]
}

// traceElem is one element of a trace in memlab's form: nodes and edges
// alternate, starting with the root node.
type traceElem struct {
	edge    bool
	typ     uint8
	numeric bool
	name    string
}

// elements returns shape p as memlab's alternating trace.
func (s *traceShapes) elements(p int32) []traceElem {
	g := s.t.g
	out := make([]traceElem, 2*s.depth[p]+1)
	for i := len(out) - 1; p >= 0; p = s.parent[p] {
		st := s.step[p]
		out[i] = traceElem{typ: st.nodeType, name: g.Strings.At(st.nodeName)}
		i--
		if i >= 0 {
			out[i] = traceElem{edge: true, typ: st.edgeType, numeric: st.numeric}
			if !st.numeric {
				out[i].name = g.Strings.At(st.edgeName)
			}
			i--
		}
	}
	return out
}

// similarTraceThreshold is memlab's SIMILAR_TRACE_THRESHOLD.
const similarTraceThreshold = 0.8

// traceSimilarity is memlab's trace similarity
// (ClusterUtilsHelper.getSimilarityByTraceElementList, with its default
// heuristics: no stop words, no similar-word patterns, no decay factors):
// the two traces are compared element by element from the root, each
// position weighing less than the one before (towards the leaked object
// the weight falls from 1 to about 0.1), and the score is the matched
// share of the weight. When the shorter trace ends with a score above 0.9
// the rest is not looked at, so a trace that is a prefix of the other
// scores 1.
func traceSimilarity(t1, t2 []traceElem) float64 {
	l1, l2 := len(t1), len(t2)
	delta1, delta2 := 0.9/float64(l1), 0.9/float64(l2)
	w1, w2 := 1.0, 1.0
	l := max(l1, l2)
	var matched, total float64
	for i := 0; i < l; i++ {
		if sameTraceElem(t1, t2, i) {
			matched += w1 + w2
		}
		total += w1 + w2
		const decay = 0.99
		w1, w2, delta1, delta2 = w1*decay, w2*decay, delta1*decay, delta2*decay
		if w1-delta1 >= 0 {
			w1 -= delta1
		}
		if w2-delta2 >= 0 {
			w2 -= delta2
		}
		if i+1 >= l1 || i+1 >= l2 {
			if sim := matched / (total + 0.0001); sim > 0.9 {
				return sim
			}
		}
	}
	return matched / (total + 0.0001)
}

// sameTraceElem is memlab's isSameOrSimilarElement at position i: nodes
// of the same type and name; edges of the same type and name, where two
// numeric names are the same when the nodes before them are.
func sameTraceElem(t1, t2 []traceElem, i int) bool {
	if i >= len(t1) || i >= len(t2) {
		return false
	}
	a, b := t1[i], t2[i]
	if a.edge != b.edge || a.typ != b.typ {
		return false
	}
	if a.edge && a.numeric && b.numeric {
		return i > 0 && t1[i-1].typ == t2[i-1].typ && t1[i-1].name == t2[i-1].name
	}
	if !a.edge && strings.HasPrefix(a.name, "Window / ") && strings.HasPrefix(b.name, "Window / ") {
		return true
	}
	return a.numeric == b.numeric && a.name == b.name
}

// sameHolders reports whether two similar traces can be one leak: they
// differ only in keys, so the objects hang in the same structure. An edge
// may differ in its name, not its type (a key of a cache object, the next
// or the previous hop of a list), where the nodes it leads to are alike;
// the leaked objects at the ends may differ in class where nothing else
// differs but the edge into them (the values of one Map or one cache
// object, of two classes); every other node must be alike, up to the end
// of the shorter trace.
//
// memlab's similarity alone weighs the trace from the root most, so two
// structures side by side (`exports.buckets[3][8]` and `exports.byNum`)
// share a long prefix and score above its threshold: whether memlab keeps
// them apart depends on which trace it met first (a longer one, of an
// object they hold, scores lower). Separate structures are separate leaks
// to a user, so they are kept apart here whatever the order.
func sameHolders(t1, t2 []traceElem) bool {
	keys, lastKey := 0, -1 // edges that differ, and where the last one is
	for i := 0; i < min(len(t1), len(t2)); i++ {
		switch {
		case sameTraceElem(t1, t2, i):
		case t1[i].edge && t2[i].edge && t1[i].typ == t2[i].typ:
			keys, lastKey = keys+1, i
		case t1[i].edge:
			return false // another kind of reference
		case i != len(t1)-1 || i != len(t2)-1:
			return false // a node on the way
		case keys > 1 || keys == 1 && lastKey != i-1:
			return false // the leaked objects, in different places
		}
	}
	return true
}
