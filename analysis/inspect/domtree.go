package inspect

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// DominatedBy returns the children of n in the dominator tree (the nodes n
// is the immediate dominator of), largest retained size first (then by
// node index), at most limit of them: one level of MAT's dominator tree.
// It scans the dominator column once instead of building the tree's
// children index (DominatorChildren), which would cost 8 bytes per node for
// one level.
func DominatedBy(a *analysis.Analysis, n model.NodeIndex, limit int) []analysis.NodeRow {
	kids := dominatedBy(a, n)
	ret := a.Dominators.Retained
	sort.Slice(kids, func(i, j int) bool {
		if ret[kids[i]] != ret[kids[j]] {
			return ret[kids[i]] > ret[kids[j]]
		}
		return kids[i] < kids[j]
	})
	kids = limitRows(kids, limit)
	nm := analysis.NewNamer(a.Graph, a.DOM)
	rows := make([]analysis.NodeRow, len(kids))
	for i, v := range kids {
		rows[i] = a.Row(nm, v)
	}
	return rows
}

// dominatedBy lists n's dominator-tree children in node order.
func dominatedBy(a *analysis.Analysis, n model.NodeIndex) []int32 {
	var kids []int32
	for v, d := range a.Dominators.IDom {
		if d == n {
			kids = append(kids, int32(v))
		}
	}
	return kids
}

// ClassGroup aggregates nodes of one class.
type ClassGroup struct {
	Class    string          // the class ("Constructor")
	Count    int             // nodes of the class
	Shallow  uint64          // their shallow sizes
	Retained uint64          // their retained sizes (siblings never nest, so this adds up)
	Example  model.NodeIndex // the largest of them by retained size
}

// DominatedByClass aggregates the dominator-tree children of n by class
// (MAT's "dominator tree grouped by class"; n = the root gives the
// top-level view): largest retained sum first (then by class name), at
// most limit rows. It needs classes (nil without them).
func DominatedByClass(a *analysis.Analysis, n model.NodeIndex, limit int) []ClassGroup {
	if a.Classes == nil {
		return nil
	}
	row := make([]int32, len(a.Classes.Names)) // class -> row + 1
	var rows []ClassGroup
	ret := a.Dominators.Retained
	for _, v := range dominatedBy(a, n) {
		c := a.Classes.Of[v]
		if row[c] == 0 {
			rows = append(rows, ClassGroup{Class: a.Classes.Names[c], Example: v})
			row[c] = int32(len(rows))
		}
		r := &rows[row[c]-1]
		r.Count++
		r.Shallow += a.Self[v]
		r.Retained += ret[v]
		if ret[v] > ret[r.Example] {
			r.Example = v
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Retained != rows[j].Retained {
			return rows[i].Retained > rows[j].Retained
		}
		return rows[i].Class < rows[j].Class
	})
	return limitRows(rows, limit)
}

// FlameBox is one box of the retained-size flame graph, an icicle drawn
// over the dominator tree (Perfetto's heap graph flame graph): the
// objects of one class that the objects of its parent box dominate
// directly, as wide as what they retain. A box's children are what its
// objects dominate, grouped by class again, so the boxes under a box
// never retain more than it does, and the gap they leave is its objects'
// own sizes and the boxes too narrow to send.
type FlameBox struct {
	// Class is the class index of the box's objects (-1 for the root's
	// box, which is one object of any class).
	Class int32
	// Path is the classes from the request's root down to this box: the
	// box's name in the next request (FlameObjects).
	Path []int32
	// Count is how many objects the box holds, Retained what they retain
	// together (siblings in the dominator tree never nest, so this adds
	// up).
	Count    int
	Retained uint64
	// Children are the boxes under it, widest first; Cut says some were
	// not built (the depth bound, or narrower than the minimum), so a
	// request for this box's path has more.
	Children []FlameBox
	Cut      bool
}

// FlameTree returns the flame graph's box at path (class indices) under
// node root, with its children down to depth levels below it, leaving
// out boxes that retain less than minShare of it (0.005: half a
// percent, a few pixels of a page's width). first and kids are the
// dominator tree's children index (analysis.DominatorChildren). It costs
// the objects of the boxes it builds, not the heap: a click on a box of a
// 1 GB dump builds only what is under it.
func FlameTree(a *analysis.Analysis, first []uint32, kids []int32, root model.NodeIndex, path []int32, depth int, minShare float64) (FlameBox, error) {
	members := []int32{int32(root)}
	box := FlameBox{Class: -1, Path: []int32{}}
	for i, c := range path {
		members = flameChildren(a, first, kids, members)[c]
		if len(members) == 0 {
			return FlameBox{}, fmt.Errorf("no objects of class %d at step %d of the path under the root", c, i+1)
		}
		box.Class, box.Path = c, path[:i+1]
	}
	var total uint64
	for _, m := range members {
		total += a.Dominators.Retained[m]
	}
	flameFill(a, first, kids, &box, members, depth, uint64(minShare*float64(total)))
	return box, nil
}

// FlameObjects returns the objects of the box at path under root, largest
// retained size first.
func FlameObjects(a *analysis.Analysis, first []uint32, kids []int32, root model.NodeIndex, path []int32) ([]int32, error) {
	members := []int32{int32(root)}
	for i, c := range path {
		members = flameChildren(a, first, kids, members)[c]
		if len(members) == 0 {
			return nil, fmt.Errorf("no objects of class %d at step %d of the path under the root", c, i+1)
		}
	}
	ret := a.Dominators.Retained
	slices.SortStableFunc(members, func(x, y int32) int { return cmp.Compare(ret[y], ret[x]) })
	return members, nil
}

// flameChildren groups what members dominate directly by class.
func flameChildren(a *analysis.Analysis, first []uint32, kids []int32, members []int32) map[int32][]int32 {
	by := map[int32][]int32{}
	for _, m := range members {
		for _, v := range kids[first[m]:first[m+1]] {
			c := int32(a.Classes.Of[v])
			by[c] = append(by[c], v)
		}
	}
	return by
}

// flameFill sets box's count and retained size from its objects, members,
// and builds its children depth levels down.
func flameFill(a *analysis.Analysis, first []uint32, kids []int32, box *FlameBox, members []int32, depth int, minRetained uint64) {
	ret := a.Dominators.Retained
	box.Count = len(members)
	for _, m := range members {
		box.Retained += ret[m]
	}
	if depth <= 0 {
		box.Cut = hasChildren(first, members)
		return
	}
	groups := flameChildren(a, first, kids, members)
	for c, vs := range groups {
		var sum uint64
		for _, v := range vs {
			sum += ret[v]
		}
		if sum < minRetained || sum == 0 {
			box.Cut = true
			continue
		}
		child := FlameBox{Class: c, Path: append(slices.Clip(box.Path), c)}
		flameFill(a, first, kids, &child, vs, depth-1, minRetained)
		box.Children = append(box.Children, child)
	}
	slices.SortFunc(box.Children, func(x, y FlameBox) int {
		return cmp.Or(cmp.Compare(y.Retained, x.Retained), cmp.Compare(x.Class, y.Class))
	})
}

// hasChildren says whether any of members dominates anything.
func hasChildren(first []uint32, members []int32) bool {
	for _, m := range members {
		if first[m+1] > first[m] {
			return true
		}
	}
	return false
}
