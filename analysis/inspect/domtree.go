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
		r.Shallow += a.Self.At(int(v))
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
	// Largest is the object of the box that retains the most.
	Largest model.NodeIndex
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
	members, err := flamePath(a, first, kids, root, path)
	if err != nil {
		return FlameBox{}, err
	}
	box := FlameBox{Class: -1, Path: path, Count: len(members)}
	if len(path) > 0 {
		box.Class = path[len(path)-1]
	} else {
		box.Path = []int32{}
	}
	ret := a.Dominators.Retained
	box.Largest = members[0]
	for _, m := range members {
		box.Retained += ret[m]
		if ret[m] > ret[box.Largest] {
			box.Largest = m
		}
	}
	if depth <= 0 {
		box.Cut = hasChildren(first, members)
		return box, nil
	}
	n := len(a.Classes.Names)
	sc := &flameScratch{a: a, first: first, kids: kids, count: make([]int32, n), sum: make([]uint64, n), more: make([]bool, n),
		slot: make([]int32, n), largest: make([]int32, n)}
	sc.fill(&box, members, depth, uint64(minShare*float64(box.Retained)))
	return box, nil
}

// FlameObjects returns the objects of the box at path under root, largest
// retained size first.
func FlameObjects(a *analysis.Analysis, first []uint32, kids []int32, root model.NodeIndex, path []int32) ([]int32, error) {
	members, err := flamePath(a, first, kids, root, path)
	if err != nil {
		return nil, err
	}
	ret := a.Dominators.Retained
	slices.SortStableFunc(members, func(x, y int32) int { return cmp.Compare(ret[y], ret[x]) })
	return members, nil
}

// flamePath returns the objects of the box at path under root: at each
// step, what the objects so far dominate directly of that class.
func flamePath(a *analysis.Analysis, first []uint32, kids []int32, root model.NodeIndex, path []int32) ([]int32, error) {
	members := []int32{int32(root)}
	for i, c := range path {
		var next []int32
		for _, m := range members {
			for _, v := range kids[first[m]:first[m+1]] {
				if int32(a.Classes.Of[v]) == c {
					next = append(next, v)
				}
			}
		}
		if len(next) == 0 {
			return nil, fmt.Errorf("no objects of class %d at step %d of the path under the root", c, i+1)
		}
		members = next
	}
	return members, nil
}

// flameScratch is what building a flame tree reuses from box to box: per
// class, the tallies of one box's children, and where its objects go.
// Tallying first means the boxes too narrow to send, and those at the
// last level, never have their objects listed.
type flameScratch struct {
	a           *analysis.Analysis
	first       []uint32
	kids        []int32
	count, slot []int32
	sum         []uint64
	more        []bool
	largest     []int32
	touched     []int32
}

// flameGroup is the tally of one class of a box's children: how many,
// what they retain, the largest, whether any dominates something.
type flameGroup struct {
	class   int32
	count   int
	sum     uint64
	largest int32
	more    bool
}

// groups tallies what members dominate directly, by class.
func (sc *flameScratch) groups(members []int32) []flameGroup {
	ret, of := sc.a.Dominators.Retained, sc.a.Classes.Of
	for _, m := range members {
		for _, v := range sc.kids[sc.first[m]:sc.first[m+1]] {
			c := of[v]
			if sc.count[c] == 0 {
				sc.touched = append(sc.touched, int32(c))
				sc.largest[c] = v
			} else if ret[v] > ret[sc.largest[c]] {
				sc.largest[c] = v
			}
			sc.count[c]++
			sc.sum[c] += ret[v]
			if sc.first[v+1] > sc.first[v] {
				sc.more[c] = true
			}
		}
	}
	out := make([]flameGroup, len(sc.touched))
	for i, c := range sc.touched {
		out[i] = flameGroup{class: c, count: int(sc.count[c]), sum: sc.sum[c], largest: sc.largest[c], more: sc.more[c]}
		sc.count[c], sc.sum[c], sc.more[c] = 0, 0, false
	}
	sc.touched = sc.touched[:0]
	return out
}

// collect lists, in one pass, what members dominate directly of each
// class of gs.
func (sc *flameScratch) collect(members []int32, gs []flameGroup) [][]int32 {
	lists := make([][]int32, len(gs))
	for i, g := range gs {
		sc.slot[g.class] = int32(i) + 1
		lists[i] = make([]int32, 0, g.count)
	}
	of := sc.a.Classes.Of
	for _, m := range members {
		for _, v := range sc.kids[sc.first[m]:sc.first[m+1]] {
			if s := sc.slot[of[v]]; s > 0 {
				lists[s-1] = append(lists[s-1], v)
			}
		}
	}
	for _, g := range gs {
		sc.slot[g.class] = 0
	}
	return lists
}

// fill builds box's children, depth levels down, from its objects,
// members, leaving out those retaining less than minRetained.
func (sc *flameScratch) fill(box *FlameBox, members []int32, depth int, minRetained uint64) {
	var keep []flameGroup
	for _, g := range sc.groups(members) {
		if g.sum < minRetained || g.sum == 0 {
			box.Cut = true
			continue
		}
		keep = append(keep, g)
	}
	slices.SortFunc(keep, func(x, y flameGroup) int { return cmp.Or(cmp.Compare(y.sum, x.sum), cmp.Compare(x.class, y.class)) })
	var lists [][]int32
	if depth > 1 {
		lists = sc.collect(members, keep)
	}
	box.Children = make([]FlameBox, len(keep))
	for i, g := range keep {
		child := &box.Children[i]
		*child = FlameBox{Class: g.class, Path: append(slices.Clip(box.Path), g.class), Count: g.count, Retained: g.sum,
			Largest: g.largest, Cut: g.more}
		if depth > 1 {
			child.Cut = false
			sc.fill(child, lists[i], depth-1, minRetained)
			lists[i] = nil
		}
	}
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
