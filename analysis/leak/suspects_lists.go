package leak

import (
	"slices"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// linkHop is one hop of a chain of dominators, as paths fold them: the
// edge's type and name (0 for an indexed edge, whose index does not
// count) and the class it leads to. class is NoClass where the
// dominator has no edge to the node it dominates (they are joined by
// two or more paths): such a hop repeats nothing.
type linkHop struct {
	class uint32
	etype uint8
	name  uint32
}

// linkHopOf returns the hop over edge e.
func (f *suspectFinder) linkHopOf(e uint32) linkHop {
	g := f.g
	h := linkHop{class: f.a.Classes.Of[g.Edges.To[e]], etype: g.Edges.Type[e], name: g.Edges.Name[e]}
	if f.k.Indexed[h.etype] {
		h.name = 0
	}
	return h
}

// link returns u's first edge that makes hop h to a node u dominates, or
// NoParent.
func (f *suspectFinder) link(u model.NodeIndex, h linkHop) uint32 {
	g := f.g
	s, end := g.EdgeRange(u)
	for e := s; e < end; e++ {
		t := g.Edges.To[e]
		if g.Edges.Type[e] == h.etype && f.a.Dominators.IDom[t] == u && f.a.Classes.Of[t] == h.class &&
			(f.k.Indexed[h.etype] || g.Edges.Name[e] == h.name) {
			return e
		}
	}
	return analysis.NoParent
}

// edgeTo returns u's first edge to v that is not weak, or NoParent.
func (f *suspectFinder) edgeTo(u, v model.NodeIndex) uint32 {
	g := f.g
	s, end := g.EdgeRange(u)
	for e := s; e < end; e++ {
		if g.Edges.To[e] == v && !f.k.Weak[g.Edges.Type[e]] {
			return e
		}
	}
	return analysis.NoParent
}

// lists finds the suspects that are linked lists. A leaked list held by
// its head is a chain of dominators, each item dominating the rest, so
// the walk down (MAT's) goes along it item by item and finds no point;
// yet the memory accumulates there, in the items. So each chain of the
// walk (from a node above the threshold that does not continue its
// parent's chain, down along the largest child while it keeps BigDrop)
// is read as paths fold hops (RepeatPeriod): where the chain ends in a
// run of hops repeating a block of up to MaxRepeatPeriod hops (.next
// into Item, or .next into Link then .next into Item), and its last node
// is no point with an accumulation, the run is a list; it is followed
// past the threshold to its tail (see list). Each node above the
// threshold is on one chain, so this is one pass over them, plus one
// over each list's items.
func (f *suspectFinder) lists(biggest []int32, accumulated analysis.Bits) []found {
	doms := f.a.Dominators
	const ring = 2 * analysis.MaxRepeatPeriod // the hops RepeatPeriod looks back at
	var hops [ring]linkHop
	var nodes [ring]model.NodeIndex // the node each hop leaves
	var out []found
	for v, r := range doms.Retained {
		start := model.NodeIndex(v)
		if r < f.min || f.isOpaque(start) || f.chained(biggest, doms.IDom[start], start) {
			continue
		}
		period, head := 0, model.NoNode // the run the chain ends in: its period and first node
		var block []linkHop             // its first period hops
		c := start
		for j := 0; ; j++ {
			b := biggest[c] - 1
			if b < 0 || !f.chained(biggest, c, b) {
				break
			}
			h := linkHop{class: NoClass}
			if e := f.edgeTo(c, b); e != analysis.NoParent {
				h = f.linkHopOf(e)
			}
			hops[j%ring], nodes[j%ring] = h, c
			p := 0
			if h.class != NoClass {
				p = analysis.RepeatPeriod(j, func(x, y int) bool {
					hx := hops[(j-x)%ring]
					return hx.class != NoClass && hx == hops[(j-y)%ring]
				})
			}
			if p != period {
				period, head, block = p, model.NoNode, block[:0]
				if p > 0 {
					first := j - 2*p + 1
					head = nodes[first%ring]
					for i := range p {
						block = append(block, hops[(first+i)%ring])
					}
				}
			}
			c = b
		}
		if period == 0 || accumulated.Has(int(c)) {
			continue
		}
		if fs, ok := f.list(biggest, head, block); ok {
			out = append(out, fs)
		}
	}
	return out
}

// list makes the suspect of the linked list whose first item is head, on
// a chain of the walk down (biggest, see accumulations): the items are
// head and the nodes reached from it by the hops of block in turn, each
// dominated by the one before, to the tail. It is a suspect when none of the items keeps most of the
// list's memory apart from the items after it (where one does, the
// chain is the way to that item's memory, not an accumulation) and the
// items are of the program's classes; a list of collection internals
// (a ConcurrentLinkedQueue's nodes) is looked through to what they hold,
// as at a point.
func (f *suspectFinder) list(biggest []int32, head model.NodeIndex, block []linkHop) (found, bool) {
	doms := f.a.Dominators
	items := []int32{head}
	for cur := head; ; {
		e := f.link(cur, block[(len(items)-1)%len(block)])
		if e == analysis.NoParent {
			break
		}
		cur = f.g.Edges.To[e]
		items = append(items, cur)
	}
	if len(items) < 2*len(block)+1 { // link found other nodes than the chain's
		return found{}, false
	}
	var largest uint64 // the most an item retains apart from the items after it
	for i, v := range items {
		own := doms.Retained[v]
		if i+1 < len(items) {
			own -= doms.Retained[items[i+1]]
		}
		largest = max(largest, own)
	}
	if f.bigDrop(largest, doms.Retained[head]) {
		return found{}, false
	}
	// The items of the program's classes: all, or those at the block's
	// positions that are not collection internals nor the runtime's
	// machinery (a closure and its context, between one object and the
	// next, in the shared-context leak).
	objs, mixed := items, false
	for _, v := range items[:len(block)] {
		if f.internal(v) && !f.machinery(v) {
			return found{}, false
		}
		mixed = mixed || f.machinery(v)
	}
	if mixed {
		objs = nil
		for _, v := range items {
			if !f.machinery(v) {
				objs = append(objs, v)
			}
		}
	}
	if len(objs) == 0 { // the collection's own list, or the runtime's: look through it
		point := f.collection(head)
		holder := f.holder(biggest, head, point)
		if holder < 0 {
			return found{}, false
		}
		u := f.unfold(items, false)
		if point != head {
			u = f.unfold([]int32{point}, true)
		}
		return f.made(Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point, Via: f.a.Classes.Of[head]}, u, doms.Retained[head])
	}
	point := objs[0]
	holder := f.holder(biggest, point, point)
	i := slices.Index(items, point) // below len(block)
	if len(objs) < 2 || holder < 0 || i+len(block) >= len(items) {
		return found{}, false
	}
	// The edges of one block of hops from point.
	var links []uint32
	for x := range block {
		links = append(links, f.link(items[i+x], block[(i+x)%len(block)]))
	}
	// The items are one class, retaining what the head does (each
	// retains the rest of the list); what the machinery between them
	// holds comes after.
	u := f.unfold(items, false)
	first := SuspectClass{Class: f.a.Classes.Of[point], Count: len(objs), Retained: doms.Retained[point], Example: point,
		Function: f.functionOf(point), User: f.userClass(point)}
	if first.Function >= 0 {
		first.Location = f.location(first.Function)
	}
	itemClass := map[uint32]bool{}
	for _, v := range objs[:min(len(block), len(objs))] {
		itemClass[f.a.Classes.Of[v]] = true
	}
	u.classes = append([]SuspectClass{first}, slices.DeleteFunc(u.classes, func(c SuspectClass) bool { return itemClass[c.Class] })...)
	u.objs = objs
	fs, ok := f.made(Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point, Via: NoClass, Links: links}, u, doms.Retained[point])
	return fs, ok
}
