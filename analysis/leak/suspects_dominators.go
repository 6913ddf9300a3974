package leak

import (
	"cmp"
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
	// Functions are grouped by function (their code, which the closures
	// of one function expression share): a listener array holds many
	// closures of one function, a library's namespace many functions,
	// one of each, which is no accumulation.
	type groupKey struct {
		slot  int
		class uint32
		code  model.NodeIndex
	}
	keyOf := func(v int32, p int32) groupKey {
		key := groupKey{slot[p], a.Classes.Of[v], model.NoNode}
		if f.v8 && f.k.NodeOf(f.g, v) == kinds.Closure {
			key.code = f.namedEdge(v, "shared")
		}
		return key
	}
	groups := map[groupKey]*classGroup{}
	for v, p := range doms.IDom {
		if p < 0 || !grouped.Has(int(p)) || a.Self.At(int(v)) == 0 {
			continue
		}
		key := keyOf(int32(v), p)
		gr := groups[key]
		if gr == nil {
			gr = &classGroup{class: key.class, example: model.NodeIndex(v)}
			groups[key] = gr
		}
		gr.count++
		gr.retained += doms.Retained[v]
		gr.largest = max(gr.largest, doms.Retained[v])
	}

	// At each parent, the groups that could be part of its accumulation,
	// largest first: at least two objects, none of them most of what they
	// retain; at a point, of the program's classes, collection internals
	// or the runtime's machinery holding the program's objects (unfold
	// looks through both); at an opaque node, retaining the threshold,
	// of the program's data only (see shared): not its functions, which
	// the modules that define them hold from several sides, nor DOM
	// nodes, which a live document holds from their parents, siblings and
	// itself. Module scopes are opaque but no structure shares what they
	// hold: they are not tried.
	tries := make([][]*classGroup, len(parents))
	for key, gr := range groups {
		if gr.count < 2 || f.bigDrop(gr.largest, gr.retained) {
			continue
		}
		if p := parents[key.slot]; f.isOpaque(p) {
			kind := f.k.NodeOf(f.g, gr.example)
			if f.modules.Has(int(p)) || gr.retained < f.min || kind == kinds.Closure || kind == kinds.Native || f.internal(gr.example) || f.plumbing(gr.example) {
				continue
			}
		} else if !f.machinery(gr.example) && f.internal(gr.example) {
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
		if p < 0 || !grouped.Has(int(p)) || a.Self.At(int(v)) == 0 {
			continue
		}
		if gr := groups[keyOf(int32(v), p)]; gr != nil && gr.try {
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
		if fs, ok := f.atPoint(biggest, v, tries[s]); ok {
			accumulated.Set(int(v))
			// Several nodes can lead to one collection (a TreeMap's
			// subtrees, an object and its property store).
			i := slices.IndexFunc(out, func(o found) bool { return o.Point == fs.Point })
			switch {
			case i < 0:
				out = append(out, fs)
			case fs.total > out[i].total:
				out[i] = fs
			}
		}
	}
	out = append(out, f.lists(biggest, accumulated)...)
	return append(out, f.shared(sharedTries)...)
}

// atPoint makes the suspect of point v, whose dominated children include
// the groups tries: they are its accumulation, together, when they
// retain the threshold or half of what v does (the holder retains the
// threshold: the accumulation need not, when it is most of it; a cache's
// keys and values are one accumulation of two classes). What they hold
// is unfolded to the program's classes; where v is collection internals
// (a TreeMap's subtree of entries) the whole collection is.
func (f *suspectFinder) atPoint(biggest []int32, v model.NodeIndex, tries []*classGroup) (found, bool) {
	doms := f.a.Dominators
	var union uint64
	var items []int32
	via := NoClass
	for _, gr := range tries {
		union += gr.retained
		items = append(items, gr.nodes...)
		if via == NoClass && f.plumbing(gr.example) {
			via = gr.class
		}
	}
	if union < f.min && 2*union < doms.Retained[v] {
		return found{}, false
	}
	point := f.collection(v)
	holder := f.holder(biggest, v, point)
	if holder < 0 {
		return found{}, false
	}
	var u unfolded
	if point != v && slices.ContainsFunc(tries, func(gr *classGroup) bool { return f.plumbing(gr.example) }) {
		u = f.unfold([]int32{point}, true)
	} else {
		u = f.unfold(items, false)
	}
	if 4*u.retained < union {
		// What the items hold is not what makes them large: a
		// prototype's methods (their code), closures capturing little.
		// The items themselves are the accumulation (functions by
		// function).
		u = unfolded{}
		for _, gr := range tries {
			if f.internal(gr.example) {
				continue
			}
			c := SuspectClass{Class: gr.class, Count: gr.count, Retained: gr.retained, Example: gr.example,
				Function: f.functionOf(gr.example), User: f.userClass(gr.example)}
			if c.Function >= 0 {
				c.Location = f.location(c.Function)
			}
			u.classes = append(u.classes, c)
			u.retained += gr.retained
		}
		slices.SortFunc(u.classes, func(x, y SuspectClass) int { return cmp.Compare(y.Retained, x.Retained) })
		if len(u.classes) > 0 {
			u.objs = slices.Clone(tries[slices.IndexFunc(tries, func(gr *classGroup) bool { return gr.example == u.classes[0].Example })].nodes)
		}
	}
	return f.made(Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point, Via: via}, u, union)
}

// made completes suspect s with what unfold found in its accumulation:
// its classes, or where the program's objects in it are too few to be
// one (functions capturing nothing, an async function's chain holding
// numbers) the functions it holds; total is what the accumulation
// retains. It fails when there is neither.
func (f *suspectFinder) made(s Suspect, u unfolded, total uint64) (found, bool) {
	s.Classes, s.Through = u.classes, u.through
	objs := u.objs
	if len(s.Classes) == 0 {
		if len(u.through) == 0 {
			return found{}, false
		}
		s.Classes, s.Through = u.through, nil
		objs = nil
	}
	c := s.Classes[0]
	s.Class, s.Count, s.ClassRetained = c.Class, c.Count, c.Retained
	// The functions holding the objects: one per object or so (a
	// listener per view), not a few that hold some of them.
	s.Through = slices.DeleteFunc(slices.Clone(s.Through), func(fn SuspectClass) bool { return 2*fn.Count < c.Count })
	if len(s.Through) == 0 {
		s.Through = nil
	}
	return found{Suspect: s, objs: objs, total: total}, true
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
