package lifetime

import (
	"slices"
	"strings"

	"github.com/heapx/heapx/formats/memtrace"
)

// AccessPath is the shortest chain of references from a root of the
// simulated heap to one object: the first step names the root (the
// global scope, globalThis, the scope of a running or suspended call),
// the others the variables, fields and collection entries followed.
type AccessPath struct {
	ID    uint64
	Steps []string
}

// AccessPaths returns a path to every live object allocated at site, in
// the simulated heap as it is now (Analyze with Options.StopAt), found
// breadth-first from the roots; pos names the iids of scopes.
func (s *Simulator) AccessPaths(site uint64, pos func(uint64) (memtrace.Pos, bool)) []AccessPath {
	w := s.walk()
	var out []AccessPath
	for i := range s.nodes {
		nd := &s.nodes[i]
		if nd.flags&(fDead|fContext) != 0 || nd.site != site || w.from[i] == -2 || s.ids[nd.id] != int32(i) {
			continue
		}
		out = append(out, AccessPath{ID: nd.id, Steps: s.steps(w, int32(i), pos)})
	}
	return out
}

// walk is a breadth-first walk of the simulated heap from its roots: per
// node the node it was reached from (-2 unreached, -1 a root), the edge
// name it was reached by, and, for what only a suspended call reaches,
// that call's await (or yield).
type walk struct {
	from, via []int32
	suspended []uint64
	order     []int32 // nodes in the order reached
}

// walk visits the program's own roots first (the global scope and
// object, the modules, the running calls, functions held by untraced
// code), then the suspended calls: what a suspended call reaches only
// through itself is attributed to it.
func (s *Simulator) walk() *walk {
	n := len(s.nodes)
	w := &walk{from: make([]int32, n), via: make([]int32, n), suspended: make([]uint64, n)}
	for i := range w.from {
		w.from[i] = -2
	}
	head := 0
	drain := func(by uint64) {
		for ; head < len(w.order); head++ {
			i := w.order[head]
			w.suspended[i] = by
			for e := s.nodes[i].first; e >= 0; e = s.edges[e].next {
				if to := s.edges[e].to; to >= 0 && w.from[to] == -2 {
					w.from[to], w.via[to] = i, s.edges[e].name
					w.order = append(w.order, to)
				}
			}
		}
	}
	root := func(i int32) {
		if i >= 0 && w.from[i] == -2 {
			w.from[i] = -1
			w.order = append(w.order, i)
		}
	}
	root(s.globalCtx)
	root(s.ids[memtrace.GlobalObject])
	for k := len(s.stack) - 1; k >= 0; k-- {
		root(s.stack[k].ctx)
	}
	suspendedCall := func(c int32) bool { return s.nodes[c].flags&(fModule|fCallee) == 0 && s.nodes[c].flags&fContext != 0 }
	for _, c := range s.pinned {
		if !suspendedCall(c) {
			root(c)
		}
	}
	drain(0)
	for _, c := range s.pinned {
		if suspendedCall(c) {
			root(c)
			drain(s.nodes[c].site)
		}
	}
	return w
}

// steps names the path the walk took to node i, root first.
func (s *Simulator) steps(w *walk, i int32, pos func(uint64) (memtrace.Pos, bool)) []string {
	var steps []string
	for j := i; ; j = w.from[j] {
		if w.from[j] == -1 {
			steps = append(steps, s.rootName(j, pos))
			break
		}
		steps = append(steps, s.stepName(w.from[j], w.via[j]))
	}
	slices.Reverse(steps)
	return steps
}

// heldAtEnd walks the heap at the end: per node the await of the
// suspended call that alone holds it (Lifetime.Suspended), and per
// allocation site the path to its object alive then that the walk reached
// first (one of the nearest to a root).
func (s *Simulator) heldAtEnd() ([]uint64, map[uint64][]string) {
	w := s.walk()
	paths := map[uint64][]string{}
	pos := s.Positions
	if pos == nil {
		pos = func(uint64) (memtrace.Pos, bool) { return memtrace.Pos{}, false }
	}
	for _, i := range w.order {
		nd := &s.nodes[i]
		if nd.flags&(fDead|fContext) != 0 || s.ids[nd.id] != i {
			continue
		}
		if _, ok := paths[nd.site]; !ok {
			paths[nd.site] = s.steps(w, i, pos)
		}
	}
	return w.suspended, paths
}

func (s *Simulator) rootName(i int32, pos func(uint64) (memtrace.Pos, bool)) string {
	switch {
	case i == s.globalCtx:
		return "global scope"
	case s.nodes[i].id == memtrace.GlobalObject && s.nodes[i].flags&fContext == 0:
		return "globalThis"
	}
	p, _ := pos(s.nodes[i].fn)
	switch f := s.nodes[i].flags; {
	case f&fModule != 0:
		return "module scope of " + p.File
	case f&fCallee != 0:
		return "a function made by untraced code"
	case f&fPinned != 0:
		if at, ok := pos(s.nodes[i].site); ok {
			return "scope of the call of " + p.String() + " suspended at " + at.String()
		}
		return "scope of the suspended call of " + p.String()
	}
	return "scope of the running call of " + p.String()
}

// stepName names the edge name followed from node from.
func (s *Simulator) stepName(from, name int32) string {
	switch name {
	case nameParent:
		return "(enclosing scope)"
	case nameContext:
		return "(closure scope)"
	}
	text := s.nameList[name]
	if strings.HasPrefix(text, "\x00") {
		if text[1] == 'k' {
			return "(collection key " + text[2:] + ")"
		}
		return "(collection entry " + text[2:] + ")"
	}
	if s.nodes[from].flags&fContext != 0 {
		return "variable " + text
	}
	if strings.HasPrefix(text, "[") {
		return text
	}
	return "." + text
}
