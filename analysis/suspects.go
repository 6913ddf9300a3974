package analysis

import (
	"sort"

	"github.com/heapx/heapx/model"
)

// SuspectOptions tune LeakSuspects.
type SuspectOptions struct {
	// Threshold is the share of the total heap (0..1) a suspect must
	// retain; 0 means 0.1, Eclipse MAT's default.
	Threshold float64
	// BigDrop is the share of a node's retained size its largest dominated
	// child must keep for the walk down to go on; below it the memory is
	// spread out and the node is the accumulation point. 0 means 0.8, as
	// in MAT's FindLeaksQuery.
	BigDrop float64
}

// Suspect is one leak suspect: an object holding a large share of the
// heap, where its memory accumulates, and which class accumulates there.
type Suspect struct {
	// Holder is the top of the suspect's dominator chain: the object whose
	// removal would free Retained bytes (MAT's "suspect" object). It is
	// model.NoNode for a class suspect with no single big holder.
	Holder model.NodeIndex
	// Retained is Holder's retained size (or, without a holder, the
	// accumulated instances' retained sum).
	Retained uint64
	// Point is the accumulation point: walking down from Holder along the
	// largest dominated child while it keeps at least BigDrop of its
	// parent's retained size, the last node before the size spreads out.
	Point model.NodeIndex
	// Class, Count and ClassRetained describe the class whose instances,
	// dominated directly by Point, hold the most of its memory (Count is
	// 0 when no class holds at least two instances there).
	Class         uint32
	Count         int
	ClassRetained uint64
}

// LeakSuspects finds the objects and classes that retain a large share of
// the heap, after Eclipse MAT's Leak Suspects report (FindLeaksQuery):
//
//   - a node retaining at least Threshold of the total is walked down the
//     dominator tree to its accumulation point, the node below which the
//     retained size is spread over many children; the topmost node of the
//     chain that leads there is the holder (MAT's suspect), so one leak
//     reached through a long chain of wrappers is reported once;
//   - the instances directly dominated by a node that retains at least
//     Threshold are grouped by class; a class whose instances there retain
//     at least Threshold in sum is a class suspect ("1,500 instances of
//     LeakedItem accumulated in one array"), attached to the object suspect
//     whose accumulation point is that node when there is one; groups at
//     the nodes between a holder and its point are not reported again.
//
// The root and synthetic nodes are never holders: they group roots. In
// V8 graphs the user roots (global objects) are neither holders nor
// accumulation points for classes: a global holds the whole program's
// state (every module function hangs off it), so it would top every
// report; the walk starts below them. Results are sorted by retained size, largest first. Each is
// computed in one pass over the dominator column plus work proportional to
// the few nodes above the threshold.
func LeakSuspects(a *Analysis, opt SuspectOptions) []Suspect {
	g, dom := a.Graph, a.Dominators
	if opt.Threshold <= 0 {
		opt.Threshold = 0.1
	}
	if opt.BigDrop <= 0 {
		opt.BigDrop = 0.8
	}
	total := dom.Retained[g.Root]
	min := uint64(opt.Threshold * float64(total))
	if min == 0 {
		min = 1
	}
	k := newKinds(g)
	opaque := NewBits(g.NumNodes()) // nodes that are never suspects
	opaque.Set(int(g.Root))
	if isV8(g) {
		for _, u := range a.Roots.User {
			opaque.Set(int(u))
		}
	}
	isOpaque := func(v model.NodeIndex) bool {
		return opaque.Has(int(v)) || k.nodeKindOf(g, v) == kSynthetic
	}

	// Candidates: every node at or above the threshold, with its largest
	// dominated child and the class groups of its dominated children.
	slot := map[model.NodeIndex]int{}
	var cands []model.NodeIndex
	for v, r := range dom.Retained {
		if r >= min {
			slot[model.NodeIndex(v)] = len(cands)
			cands = append(cands, model.NodeIndex(v))
		}
	}
	biggest := make([]model.NodeIndex, len(cands))
	for i := range biggest {
		biggest[i] = model.NoNode
	}
	type groupKey struct {
		slot  int
		class uint32
	}
	type group struct {
		count    int
		retained uint64
	}
	groups := map[groupKey]*group{}
	for v, p := range dom.IDom {
		if p < 0 || dom.Retained[p] < min {
			continue
		}
		s := slot[p]
		if b := biggest[s]; b < 0 || dom.Retained[v] > dom.Retained[b] {
			biggest[s] = model.NodeIndex(v)
		}
		if a.Classes != nil && a.Self[v] > 0 {
			key := groupKey{s, a.Classes.Of[v]}
			gr := groups[key]
			if gr == nil {
				gr = &group{}
				groups[key] = gr
			}
			gr.count++
			gr.retained += dom.Retained[v]
		}
	}

	// Object suspects: accumulation points and the heads of their chains.
	var out []Suspect
	byPoint := map[model.NodeIndex]int{}
	// onChain marks the nodes above an accumulation point up to its
	// holder: their children's memory is that suspect's, already told.
	onChain := map[model.NodeIndex]bool{}
	for s, v := range cands {
		if isOpaque(v) {
			continue
		}
		if b := biggest[s]; b >= 0 && float64(dom.Retained[b]) >= opt.BigDrop*float64(dom.Retained[v]) {
			continue // not a point: the memory goes on down
		}
		head := v
		for {
			p := dom.IDom[head]
			if p < 0 || isOpaque(p) || dom.Retained[p] < min {
				break
			}
			if b := biggest[slot[p]]; b != head || float64(dom.Retained[head]) < opt.BigDrop*float64(dom.Retained[p]) {
				break
			}
			head = p
		}
		byPoint[v] = len(out)
		out = append(out, Suspect{Holder: head, Retained: dom.Retained[head], Point: v})
		for u := v; u != head; {
			u = dom.IDom[u]
			onChain[u] = true
		}
	}

	// Class suspects, attached to the object suspect at the same point.
	type classHit struct {
		key groupKey
		gr  *group
	}
	var hits []classHit
	for key, gr := range groups {
		// Children of a V8 global are the program's own state; only
		// the root's and synthetic nodes' children are grouped in MAT's
		// "top-level dominators by class" way.
		if p := cands[key.slot]; (p != g.Root && opaque.Has(int(p))) || onChain[p] {
			continue
		}
		if gr.count >= 2 && gr.retained >= min {
			hits = append(hits, classHit{key, gr})
		}
	}
	sort.Slice(hits, func(i, j int) bool { // largest first, then stable
		if hits[i].gr.retained != hits[j].gr.retained {
			return hits[i].gr.retained > hits[j].gr.retained
		}
		if hits[i].key.slot != hits[j].key.slot {
			return hits[i].key.slot < hits[j].key.slot
		}
		return hits[i].key.class < hits[j].key.class
	})
	for _, h := range hits {
		point := cands[h.key.slot]
		if i, ok := byPoint[point]; ok {
			if out[i].Count == 0 {
				out[i].Class, out[i].Count, out[i].ClassRetained = h.key.class, h.gr.count, h.gr.retained
			}
			continue
		}
		byPoint[point] = len(out)
		out = append(out, Suspect{Holder: model.NoNode, Retained: h.gr.retained, Point: point,
			Class: h.key.class, Count: h.gr.count, ClassRetained: h.gr.retained})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Retained > out[j].Retained })
	return out
}

// isV8 reports whether g has V8's node types.
func isV8(g *model.Graph) bool {
	for _, t := range g.NodeTypes {
		if t.Namespace == v8Namespace {
			return true
		}
	}
	return false
}
