package leak

import (
	"slices"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// accumulations finds the suspects at accumulation points (at most one
// per point, the one whose objects retain the most), the linked lists
// the walk down leads into (lists) and the accumulations no object
// dominates (shared).
func (f *suspectFinder) accumulations() []found {
	a, doms := f.a, f.a.Dominators
	n := f.g.NumNodes()
	// biggest[v] is 1 + v's largest dominated child, for v at or above
	// the threshold (0: none). A column, not a map: most items of a
	// leaked linked list are above the threshold (890,000 of 1M).
	biggest := a.BorrowScratch(n, true)
	defer a.ReturnScratch(biggest)
	for v, p := range doms.IDom {
		if p >= 0 && doms.Retained[p] >= f.min {
			if b := biggest[p]; b == 0 || doms.Retained[v] > doms.Retained[b-1] {
				biggest[p] = int32(v) + 1
			}
		}
	}
	// The nodes whose dominated children are grouped by class: the points
	// (nodes at or above the threshold whose largest child keeps less
	// than BigDrop; a few hundred at most, as each retains a share of the
	// heap) and the opaque nodes at or above the threshold, for shared.
	slot := map[model.NodeIndex]int{}
	var parents []model.NodeIndex
	grouped := analysis.NewBits(n)
	for v, r := range doms.Retained {
		if r < f.min {
			continue
		}
		if b := biggest[v]; f.isOpaque(int32(v)) || b == 0 || !f.bigDrop(doms.Retained[b-1], r) {
			slot[model.NodeIndex(v)] = len(parents)
			parents = append(parents, model.NodeIndex(v))
			grouped.Set(v)
		}
	}
	type groupKey struct {
		slot  int
		class uint32
	}
	groups := map[groupKey]*classGroup{}
	for v, p := range doms.IDom {
		if p < 0 || !grouped.Has(int(p)) || a.Self[v] == 0 {
			continue
		}
		key := groupKey{slot[p], a.Classes.Of[v]}
		gr := groups[key]
		if gr == nil {
			gr = &classGroup{class: key.class, example: model.NodeIndex(v)}
			groups[key] = gr
		}
		gr.count++
		gr.retained += doms.Retained[v]
		gr.largest = max(gr.largest, doms.Retained[v])
	}

	// At each parent, the groups that could be its accumulation, largest
	// first: at least two objects retaining the threshold, none of them
	// most of it; at a point, of the program's classes or collection
	// internals to look through; at an opaque node, of the program's
	// data only (see shared): not its functions, which the modules that
	// define them hold from several sides, nor DOM nodes, which a live
	// document holds from their parents, siblings and itself.
	tries := make([][]*classGroup, len(parents))
	for key, gr := range groups {
		if gr.count < 2 || gr.retained < f.min || f.bigDrop(gr.largest, gr.retained) {
			continue
		}
		if f.isOpaque(parents[key.slot]) {
			if kind := f.k.NodeOf(f.g, gr.example); kind == kinds.Closure || kind == kinds.Native || f.internal(gr.example) || f.plumbing(gr.example) {
				continue
			}
		} else if !f.plumbing(gr.example) && f.internal(gr.example) {
			continue
		}
		tries[key.slot] = append(tries[key.slot], gr)
		gr.try = true
	}
	for _, t := range tries {
		sort.Slice(t, func(i, j int) bool {
			if t[i].retained != t[j].retained {
				return t[i].retained > t[j].retained
			}
			return t[i].class < t[j].class
		})
	}
	for v, p := range doms.IDom { // collect the groups' objects
		if p < 0 || !grouped.Has(int(p)) || a.Self[v] == 0 {
			continue
		}
		if gr := groups[groupKey{slot[p], a.Classes.Of[v]}]; gr != nil && gr.try {
			gr.nodes = append(gr.nodes, int32(v))
		}
	}

	var out []found
	accumulated := analysis.NewBits(n) // the points with a suspect
	var sharedTries []*classGroup
	for s, v := range parents {
		if len(tries[s]) == 0 {
			continue
		}
		if f.isOpaque(v) {
			sharedTries = append(sharedTries, tries[s]...)
			continue
		}
		point := f.collection(v)
		holder := f.holder(biggest, v, point)
		if holder < 0 {
			continue
		}
		for _, gr := range tries[s] {
			sus := Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point, Via: NoClass,
				Class: gr.class, Count: gr.count, ClassRetained: gr.retained}
			objs := gr.nodes
			if f.plumbing(gr.example) {
				// Look through from the collection, which holds all
				// of it where v holds a part (a TreeMap's subtree).
				from := gr.nodes
				if point != v {
					from = []int32{point}
				}
				var ok bool
				if sus.Class, objs, sus.ClassRetained, ok = f.lookThrough(from); !ok {
					continue
				}
				sus.Via, sus.Count = gr.class, len(objs)
			}
			accumulated.Set(int(v))
			// Several nodes can lead to one collection (a TreeMap's
			// subtrees, an object and its property store).
			i := slices.IndexFunc(out, func(o found) bool { return o.Point == sus.Point })
			switch {
			case i < 0:
				out = append(out, found{Suspect: sus, objs: objs})
			case sus.ClassRetained > out[i].ClassRetained:
				out[i] = found{Suspect: sus, objs: objs}
			}
			break
		}
	}
	out = append(out, f.lists(biggest, accumulated)...)
	return append(out, f.shared(sharedTries)...)
}

// chainTop returns the top of the chain v is on: the topmost node the
// walk down the dominator tree goes from to v.
func (f *suspectFinder) chainTop(biggest []int32, v model.NodeIndex) model.NodeIndex {
	for p := f.a.Dominators.IDom[v]; f.chained(biggest, p, v); p = f.a.Dominators.IDom[v] {
		v = p
	}
	return v
}

// holder returns the suspect's holder for a walk down that led to v,
// whose collection is point (v, or a dominator of v): the topmost of the
// program's objects on the chain from its top down to point, where the
// chain is v's, or point's where the collection is above the top of v's
// chain (it holds all of it); NoNode when all of them are the runtime's.
func (f *suspectFinder) holder(biggest []int32, v, point model.NodeIndex) model.NodeIndex {
	idom := f.a.Dominators.IDom
	top := f.chainTop(biggest, v)
	for u := v; u != point; u = idom[u] {
		if u == top {
			top = f.chainTop(biggest, point)
		}
	}
	holder := model.NoNode
	for u := point; ; u = idom[u] {
		if !f.internal(u) {
			holder = u
		}
		if u == top {
			return holder
		}
	}
}
