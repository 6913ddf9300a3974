package inspect

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// ObjectShape is the objects of one constructor name with one set of
// property names (memlab's object-shape).
type ObjectShape struct {
	Name       string   // the objects' node name ("Object" for plain objects)
	Properties []string // the property names, sorted
	Count      int      // objects of this shape
	Shallow    uint64   // their shallow sizes
	// Retained sums the retained sizes of the objects that no other object
	// of the shape dominates, as the Summary's per-class retained size
	// does: an object nested in another of its shape is already in that
	// one's retained size, so the total is never more than the heap.
	Retained uint64
	Example  model.NodeIndex // the object with the smallest node index
}

// ObjectShapes groups the objects (model.CatObject; for V8 not the
// "system / ..." internals) by node name and the sorted set of their
// property names (model.EdgeProperty, "__proto__" left out), largest
// retained sum first (then by count, then by example), at most limit.
// Unlike Classes' inferred interfaces, which DevTools builds from the
// first property names of plain objects, all property names count.
//
// Each object hashes its name and its property names order-independently
// (a sum of per-name hashes), one sort of packed (hash, node) integers
// brings equal hashes together, and equal shapes are confirmed by
// comparing the sorted names, so no map of shapes is built. The retained
// sums take one walk of the dominator tree (groupRetained).
func ObjectShapes(a *analysis.Analysis, limit int) []ObjectShape {
	g := a.Graph
	k := kinds.New(g)
	sn := NewShapeNames(g, k)
	var objs []int32
	for i, t := range g.Nodes.Type {
		if g.NodeTypes[t].Category == model.CatObject && !(k.NodeV8[t] && strings.HasPrefix(g.NodeName(int32(i)), "system / ")) {
			objs = append(objs, int32(i))
		}
	}
	keys := hashKeys(objs, func(n int32) uint64 {
		h := maphash.String(hashSeed, g.NodeName(n))
		s, end := g.EdgeRange(n)
		for e := s; e < end; e++ {
			if sn.isProperty(e) {
				h += maphash.String(hashSeed, g.Strings.At(g.Edges.Name[e])) * 0x9e3779b97f4a7c15
			}
		}
		return h
	})
	props := sn.Names
	var px, py []string
	var rows []ObjectShape
	// shape[n] is 1 + the row of object n, 0 for nodes of no shape.
	shape := a.BorrowScratch(g.NumNodes(), true)
	defer a.ReturnScratch(shape)
	groupSorted(keys, func(x, y int32) bool {
		if g.NodeName(x) != g.NodeName(y) {
			return false
		}
		px, py = props(x, px), props(y, py)
		return slices.Equal(px, py)
	}, func(group []int32) {
		r := ObjectShape{Name: g.NodeName(group[0]), Properties: slices.Clone(props(group[0], px)), Count: len(group), Example: group[0]}
		for _, n := range group {
			r.Shallow += a.Self.At(int(n))
			shape[n] = int32(len(rows) + 1)
		}
		rows = append(rows, r)
	})
	for i, ret := range a.GroupRetained(func(v int32) int32 { return shape[v] - 1 }, len(rows)) {
		rows[i].Retained = ret
	}
	sort.Slice(rows, func(i, j int) bool {
		x, y := &rows[i], &rows[j]
		if x.Retained != y.Retained {
			return x.Retained > y.Retained
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.Example < y.Example
	})
	return limitRows(rows, limit)
}

// ShapeNames reads objects' property names as ObjectShapes groups them:
// the names of their property edges (model.EdgeProperty) but
// "__proto__", sorted, each once.
type ShapeNames struct {
	g     *model.Graph
	k     *kinds.Table
	proto analysis.Bits // the StringIDs of "__proto__"
}

// NewShapeNames reads the property names of g's objects.
func NewShapeNames(g *model.Graph, k *kinds.Table) *ShapeNames {
	return &ShapeNames{g: g, k: k, proto: namedStrings(g, "__proto__")}
}

// isProperty reports whether edge e names a property of its object.
func (sn *ShapeNames) isProperty(e uint32) bool {
	return sn.k.Edge[sn.g.Edges.Type[e]] == kinds.EdgeProperty && !sn.proto.Has(int(sn.g.Edges.Name[e]))
}

// Names returns n's property names, sorted and each once, in buf's memory.
func (sn *ShapeNames) Names(n int32, buf []string) []string {
	g := sn.g
	buf = buf[:0]
	s, end := g.EdgeRange(n)
	for e := s; e < end; e++ {
		if sn.isProperty(e) {
			buf = append(buf, g.Strings.At(g.Edges.Name[e]))
		}
	}
	slices.Sort(buf)
	return slices.Compact(buf)
}
