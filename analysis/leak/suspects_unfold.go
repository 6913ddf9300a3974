package leak

import (
	"cmp"
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// SuspectClass is one class of a suspect's accumulated objects, or of the
// functions they are held through (Suspect.Through).
type SuspectClass struct {
	Class    uint32          // index into Classes.Names
	Count    int             // objects of the class
	Retained uint64          // what they retain together
	Example  model.NodeIndex // one of them
	// Function is, for functions (V8 closures, and the objects of
	// suspended async functions, which run one), the function: a closure
	// named as they all are; NoNode for other objects. Location is where
	// it is defined, zero when the dump does not say.
	Function model.NodeIndex
	Location alloc.Frame
	// User says the class is the program's own: its constructor is
	// defined in a script of the program, not the runtime's (node:...)
	// nor built in; for Java, a class outside the JDK's packages.
	User bool
}

// unfolded is what an accumulation holds, as unfold finds it.
type unfolded struct {
	classes  []SuspectClass // the accumulated classes, the program's first, then by retained size
	through  []SuspectClass // the functions they are held through, by retained size
	objs     []int32        // the objects of classes[0]
	retained uint64         // what the accumulated classes retain together
}

// classKey groups objects for unfold: by class, and functions by the
// function too (every closure is of one class): its code, V8's
// SharedFunctionInfo, which the closures one function expression makes
// share.
type classKey struct {
	class uint32
	code  model.NodeIndex // the function's shared code, for functions; NoNode for other objects
}

// unfold finds what the program put in an accumulation of items: each
// item that is an object of the program is one of its objects; an item
// that is collection internals or the runtime's machinery (machinery:
// a Map's table, a listener closure and its context, a promise's
// reactions, a suspended async function, a timer), and every item of
// open, is looked through, down the dominator tree, to the first objects
// of the program below it (the values a reaction's async function holds
// in its frame, the object a listener's context captured). The objects
// are grouped by class; a class is accumulated when it has at least two
// objects, none of them most of what they retain (a listener that once
// cached a big table is no accumulation of tables), retaining a
// hundredth of what all of them do. The functions looked through are
// grouped by function. It is one pass over the nodes, each walk up the
// dominator tree memoized.
func (f *suspectFinder) unfold(items []int32, open bool) unfolded {
	a, doms := f.a, f.a.Dominators
	n := f.g.NumNodes()
	item, through := analysis.NewBits(n), analysis.NewBits(n) // through: looked-through nodes below an item
	known := analysis.NewBits(n)
	for _, v := range items {
		item.Set(int(v))
		known.Set(int(v))
		if open || f.machinery(v) {
			through.Set(int(v))
		}
	}
	var stack []int32
	// opened reports whether u is looked through: an item looked through,
	// or machinery whose dominator is.
	opened := func(u int32) bool {
		for !known.Has(int(u)) && f.machinery(u) && doms.IDom[u] >= 0 {
			stack = append(stack, u)
			u = doms.IDom[u]
		}
		res := through.Has(int(u))
		known.Set(int(u))
		for _, s := range stack {
			known.Set(int(s))
			if res {
				through.Set(int(s))
			}
		}
		stack = stack[:0]
		return res
	}
	type sum struct {
		SuspectClass
		largest uint64
		nodes   []int32
	}
	objects, functions := map[classKey]*sum{}, map[classKey]*sum{}
	add := func(m map[classKey]*sum, v int32, fn model.NodeIndex) {
		key := classKey{class: a.Classes.Of[v], code: model.NoNode}
		if fn >= 0 {
			key.code = f.namedEdge(fn, "shared")
		}
		s := m[key]
		if s == nil {
			s = &sum{SuspectClass: SuspectClass{Class: key.class, Example: v, Function: fn}}
			m[key] = s
		}
		r := doms.Retained[v]
		s.Count++
		s.Retained += r
		s.largest = max(s.largest, r)
		s.nodes = append(s.nodes, v)
	}
	var res unfolded
	for v := range int32(n) {
		var in bool
		if item.Has(int(v)) {
			in = true
		} else if p := doms.IDom[v]; p >= 0 {
			in = opened(p)
		}
		switch {
		case !in:
		case through.Has(int(v)) || (!item.Has(int(v)) && opened(v)):
			if fn := f.functionOf(v); fn >= 0 {
				add(functions, v, fn)
			}
		case f.k.NodeOf(f.g, v) == kinds.Number, !item.Has(int(v)) && f.k.NodeOf(f.g, doms.IDom[v]) == kinds.Closure:
			// Heap numbers are a timer's times, an object's doubles:
			// never what accumulates. What a function holds is what its
			// context (looked through) captured; its own prototype
			// object is part of it.
		case !f.internal(v):
			add(objects, v, f.functionOf(v))
		}
	}
	var total uint64
	for _, s := range objects {
		total += s.Retained
	}
	for _, s := range objects {
		if s.Count < 2 || f.bigDrop(s.largest, s.Retained) || 100*s.Retained < total {
			continue
		}
		s.User = f.userClass(s.Example)
		res.classes = append(res.classes, s.SuspectClass)
		res.retained += s.Retained
	}
	orderClasses(res.classes)
	if len(res.classes) > 0 {
		for _, s := range objects {
			if s.Example == res.classes[0].Example {
				res.objs = s.nodes
			}
		}
	}
	for _, s := range functions {
		// The program's functions only: Node's bound handlers and the
		// closures await makes say nothing about the leak.
		if s.Count >= 2 {
			s.Location = f.location(s.Function)
			if s.User = userScript(s.Location.URL); s.User {
				res.through = append(res.through, s.SuspectClass)
			}
		}
	}
	slices.SortFunc(res.through, func(x, y SuspectClass) int {
		return cmp.Or(cmp.Compare(y.Retained, x.Retained), cmp.Compare(x.Example, y.Example))
	})
	return res
}

// orderClasses sorts accumulated classes by retained size, largest
// first, but puts the program's own classes first among those with about
// as many objects as the largest has (nine tenths): what the program
// made once per leaked item (a request's RequestContext) before what the
// runtime made with it (its IncomingMessage, larger); not a class of a
// few small objects that happen to be the program's, nor one of fewer
// objects than a larger class the program also made (Widgets beside
// records in one array).
func orderClasses(cs []SuspectClass) {
	slices.SortFunc(cs, func(x, y SuspectClass) int {
		return cmp.Or(cmp.Compare(y.Retained, x.Retained), cmp.Compare(x.Example, y.Example))
	})
	if len(cs) == 0 {
		return
	}
	most := cs[0].Count
	first := func(c SuspectClass) bool { return c.User && 10*c.Count >= 9*most }
	slices.SortStableFunc(cs, func(x, y SuspectClass) int {
		switch fx, fy := first(x), first(y); {
		case fx && !fy:
			return -1
		case fy && !fx:
			return 1
		}
		return 0
	})
}

// functionOf returns the function v is or runs: v for a V8 closure with
// a name or a source location, the function a suspended async function's
// (or generator's) object runs, NoNode otherwise (the runtime's unnamed
// builtins, such as the closures await makes).
func (f *suspectFinder) functionOf(v model.NodeIndex) model.NodeIndex {
	if !f.v8 {
		return model.NoNode
	}
	switch f.k.NodeOf(f.g, v) {
	case kinds.Closure:
		if f.g.NodeName(v) != "" || f.located(v) {
			return v
		}
	case kinds.Object:
		if f.machinery(v) {
			if fn := f.namedEdge(v, "function"); fn >= 0 && f.k.NodeOf(f.g, fn) == kinds.Closure {
				return fn
			}
		}
	}
	return model.NoNode
}

// location returns where function fn is defined, with its name; zero
// when the dump does not say.
func (f *suspectFinder) location(fn model.NodeIndex) alloc.Frame {
	fr, n := f.locs.Dominant([]model.NodeIndex{fn})
	if n == 0 {
		return alloc.Frame{}
	}
	fr.Function = f.g.NodeName(fn)
	// Chromium names the Script nodes newer V8 gives each location
	// "system / Script / URL".
	fr.URL = strings.TrimPrefix(fr.URL, "system / Script / ")
	return fr
}

// namedEdge returns the node v's first edge named name leads to, NoNode
// when there is none.
func (f *suspectFinder) namedEdge(v model.NodeIndex, name string) model.NodeIndex {
	g := f.g
	s, end := g.EdgeRange(v)
	for e := s; e < end; e++ {
		if !f.k.Indexed[g.Edges.Type[e]] && g.EdgeName(e) == name {
			return g.Edges.To[e]
		}
	}
	return model.NoNode
}
