package inspect

import (
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Collection is an array, map, set or list with its fan-out.
type Collection struct {
	Node     model.NodeIndex // the collection object
	Class    string          // its class
	Elements int             // element count (see Collections)
	Backing  model.NodeIndex // its backing store, NoNode when it holds its elements itself
	Retained uint64          // the collection's retained size
}

// backingNames are the edges from a collection object to its backing
// store: V8's "elements" (a JSArray's FixedArray) and "table" (a Map's or
// Set's OrderedHashMap), and the Java fields of java.util's collections
// (HashMap, Hashtable, ConcurrentHashMap: table; ArrayList, Vector:
// elementData; ArrayDeque: elements).
var backingNames = []string{"elements", "table", "elementData"}

// Collections lists the collections by element count, largest first (then
// by retained size, then node), at most limit. A node is a collection when
// it has element edges (model.EdgeElement) or an edge named in
// backingNames to an array-like node (model.CatArray or V8 "array"). Its
// element count is the larger of its own element edges and the slots of
// its backing store: the backing store's element edges plus its internal
// edges named by a number (V8 hash tables name their entry slots so; a
// Map keyed by numbers shows only its values, one per entry; one keyed by
// objects shows keys and values, two per entry). Backing stores are not
// listed on their own. For a Java HashMap the count is the occupied
// buckets of its table, not its size, which the dump keeps as a primitive
// field.
func Collections(a *analysis.Analysis, limit int) []Collection {
	g := a.Graph
	k := kinds.New(g)
	names := namedStrings(g, backingNames...)
	backing := func(n int32) int32 {
		s, end := g.EdgeRange(n)
		for e := s; e < end; e++ {
			t := g.Edges.Type[e]
			to := g.Edges.To[e]
			if !k.Indexed[t] && !k.Weak[t] && names.Has(int(g.Edges.Name[e])) && k.NodeOf(g, to) == kinds.Array {
				return to
			}
		}
		return model.NoNode
	}
	elements := func(n int32, slots bool) int {
		c := 0
		s, end := g.EdgeRange(n)
		for e := s; e < end; e++ {
			switch k.Edge[g.Edges.Type[e]] {
			case kinds.EdgeElement:
				c++
			case kinds.EdgeInternal:
				if slots && !k.Indexed[g.Edges.Type[e]] && isDecimal(g.EdgeName(e)) {
					c++
				}
			}
		}
		return c
	}
	isBacking := analysis.NewBits(g.NumNodes())
	for i := range g.Nodes.Type {
		if b := backing(int32(i)); b >= 0 {
			isBacking.Set(int(b))
		}
	}
	var rows []Collection
	for i := range g.Nodes.Type {
		n := int32(i)
		if isBacking.Has(i) {
			continue
		}
		b := backing(n)
		c := elements(n, false)
		if b >= 0 {
			c = max(c, elements(b, true))
		}
		if c == 0 && b < 0 {
			continue
		}
		rows = append(rows, Collection{Node: n, Class: className(a, n), Elements: c, Backing: b, Retained: a.Dominators.Retained[n]})
	}
	sort.Slice(rows, func(i, j int) bool {
		x, y := &rows[i], &rows[j]
		if x.Elements != y.Elements {
			return x.Elements > y.Elements
		}
		if x.Retained != y.Retained {
			return x.Retained > y.Retained
		}
		return x.Node < y.Node
	})
	return limitRows(rows, limit)
}

// isDecimal reports whether s is a non-empty run of decimal digits.
func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
