package leak

import (
	"slices"
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// describe fills in the fields holding a suspect's accumulated objects
// objs and, for a generic class, their shape.
func (f *suspectFinder) describe(s *Suspect, objs []int32) {
	if site, ok := f.sites.Dominant(objs); ok {
		s.Site = &site
	}
	switch {
	case s.Shared: // shared named them
	case s.Links != nil: // the field holding the head
		if sf, ok := f.pointField(s, s.Count); ok {
			s.Fields = []SuspectField{sf}
		}
	default:
		s.Fields = f.fields(s, objs)
	}
	if f.a.Classes.Names[s.Class] != "Object" {
		return
	}
	sn := inspect.NewShapeNames(f.g, f.k)
	counts := map[string]int{}
	var buf []string
	best := ""
	for _, v := range objs {
		buf = sn.Names(v, buf)
		key := strings.Join(buf, "\x00")
		counts[key]++
		if c, b := counts[key], counts[best]; c > b || (c == b && key < best) {
			best = key
		}
	}
	if counts[best] > 0 && best != "" {
		s.Shape, s.ShapeCount = strings.Split(best, "\x00"), counts[best]
	}
}

// pointField returns the field holding s's point, for count objects:
// the holder's (HolderField) where the point is the holder, else the one
// holding finds.
func (f *suspectFinder) pointField(s *Suspect, count int) (SuspectField, bool) {
	if s.HolderField != nil && s.Holder == s.Point {
		sf := *s.HolderField
		sf.Count = count
		return sf, true
	}
	return f.holding(s.Point, count, s.Holder)
}

// fields finds the fields holding objs, which s's point dominates (see
// LeakSuspects): the first edges below the point on their shortest
// paths, read off ShortestPaths' BFS tree, where named fields other than
// those leading to collection internals (a HashMap's table) hold at
// least half of them, else the field holding the point.
func (f *suspectFinder) fields(s *Suspect, objs []int32) []SuspectField {
	g, point := f.g, s.Point
	_, parent := f.a.ShortestPathTree()
	if f.memo == nil {
		f.memo = f.a.BorrowScratch(g.NumNodes(), true)
	}
	// memo[v] is 0 before v is seen, -1 when v's path misses point, else
	// 1 + the slot of the edge below point it runs through; the entries
	// set are cleared again at the end, for the next suspect.
	memo := f.memo
	var edges []uint32
	var counts []int
	slotOf := map[uint32]int32{}
	var stack []int32
	for _, o := range objs {
		v, res := o, int32(-1)
		for v != point {
			if m := memo[v]; m != 0 {
				res = m
				break
			}
			e := parent[v]
			if e == analysis.NoParent {
				break
			}
			stack = append(stack, v)
			u := analysis.EdgeSource(g, e)
			if u == point {
				sl, ok := slotOf[e]
				if !ok {
					sl = int32(len(edges))
					slotOf[e] = sl
					edges = append(edges, e)
					counts = append(counts, 0)
				}
				res = sl + 1
				break
			}
			v = u
		}
		for _, s := range stack {
			memo[s] = res
		}
		f.touched = append(f.touched, stack...)
		stack = stack[:0]
		if res > 0 {
			counts[res-1]++
		}
	}
	for _, v := range f.touched {
		memo[v] = 0
	}
	f.touched = f.touched[:0]

	var named []SuspectField
	total := 0
	for i, e := range edges {
		if counts[i] >= 2 && f.isField(e) && !f.plumbing(f.g.Edges.To[e]) {
			named = append(named, f.field(point, e, counts[i]))
			total += counts[i]
		}
	}
	// A few fields holding most (a class's SESSIONS and LISTENERS); more
	// than maxFields each holding a part make the point a container (a
	// library's namespace of color schemes), named by what holds it.
	const maxFields = 4
	if 2*total >= len(objs) && total > 0 && len(named) <= maxFields {
		sort.SliceStable(named, func(i, j int) bool { return named[i].Count > named[j].Count })
		return named
	}
	// Else point is a container: the field is the one holding it.
	if sf, ok := f.pointField(s, len(objs)); ok {
		return []SuspectField{sf}
	}
	return nil
}

// holding returns the field holding v, for count objects: the first
// named field on v's shortest path back from it, past the slots of
// arrays and collection internals on the way (the global variable holding
// an Array, not the Array's [3] holding a Map), or the root's edge to it;
// but never above holder (NoNode: no bound), whose edge on the path is
// the field when no named one comes first (a WeakMap's value, held by
// its key); false when v is unreachable.
func (f *suspectFinder) holding(v model.NodeIndex, count int, holder model.NodeIndex) (SuspectField, bool) {
	g := f.g
	_, parent := f.a.ShortestPathTree()
	first := model.NoNode
	var firstEdge uint32
	for range 16 {
		e, u := parent[v], model.NodeIndex(0)
		if e == analysis.NoParent {
			// A root holds v (a V8 user root, a JVM's GC root): the
			// field is the root's edge, as ShortestPaths spells it.
			if e = f.edgeTo(g.Root, v); e == analysis.NoParent {
				break
			}
			u = g.Root
		} else {
			u = analysis.EdgeSource(g, e)
		}
		if first < 0 {
			first, firstEdge = u, e
		}
		if f.isField(e) || f.isOpaque(u) || u == holder {
			first, firstEdge = u, e
			break
		}
		v = u
	}
	if first < 0 {
		return SuspectField{}, false
	}
	return f.field(first, firstEdge, count), true
}

// field makes the SuspectField of edge e of owner, with its Base and
// Access: up to maxAccess named fields back along owner's shortest path
// to a global object or a Java class.
func (f *suspectFinder) field(owner model.NodeIndex, e uint32, count int) SuspectField {
	const maxAccess = 4
	_, parent := f.a.ShortestPathTree()
	sf := SuspectField{Owner: owner, Edge: e, Count: count, Base: model.NoNode, Function: model.NoNode}
	var access []uint32
	for u := owner; len(access) <= maxAccess; {
		if f.globals.Has(int(u)) || (f.hprof && f.k.NodeOf(f.g, u) == kinds.Shape) {
			slices.Reverse(access)
			sf.Base, sf.Access = u, access
			break
		}
		pe := parent[u]
		if pe == analysis.NoParent || !f.isField(pe) {
			break
		}
		access = append(access, pe)
		u = analysis.EdgeSource(f.g, pe)
	}
	return sf
}

// isField reports whether edge e is a named field: a property, a static
// or instance field or a closure variable whose name is an identifier,
// not an element, an engine slot ("objectElements[3]", "{table}") or a
// key of an object used as a map ("user:42").
func (f *suspectFinder) isField(e uint32) bool {
	t := f.g.Edges.Type[e]
	switch f.k.Edge[t] {
	case kinds.EdgeProperty, kinds.EdgeContext:
		return !f.k.Indexed[t] && inspect.IsIdentifier(f.g.EdgeName(e))
	}
	return false
}
