package inspect

import (
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
