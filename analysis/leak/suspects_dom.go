package leak

import (
	"slices"

	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/model"
)

// detachedTrees finds the suspects of detached DOM: the trees of
// DetachedDOM grouped by the object that dominates them (looked through
// to a collection), or each tree on its own where that object is no
// holder; a group is a suspect when it retains a tenth of the threshold,
// unless an accumulation suspect already tells it (have).
func (f *suspectFinder) detachedTrees(have []found) []found {
	doms := f.a.Dominators
	type group struct {
		holder   model.NodeIndex
		roots    []int32
		retained uint64
		nodes    int
	}
	var groups []*group
	byHolder := map[model.NodeIndex]*group{}
	for _, t := range inspect.DetachedDOM(f.a, inspect.DetachedOptions{}).Trees {
		if t.Retained == 0 || f.internal(t.Root) {
			continue
		}
		// Look through wrappers: objects that hold the tree and little
		// else (Firefox's reflector, a JS object per <section>, between
		// each tree and the array holding all 20).
		h, held := doms.IDom[t.Root], t.Retained
		for h >= 0 && !f.isOpaque(h) && !f.internal(h) && doms.IDom[h] >= 0 && doms.Retained[h]-held <= held/16 {
			held = doms.Retained[h]
			h = doms.IDom[h]
		}
		if h >= 0 {
			h = f.collection(h)
		}
		if h < 0 || f.isOpaque(h) || f.internal(h) {
			h = t.Root
		}
		gr := byHolder[h]
		if gr == nil {
			gr = &group{holder: h}
			byHolder[h] = gr
			groups = append(groups, gr)
		}
		gr.roots = append(gr.roots, t.Root)
		gr.retained += t.Retained
		gr.nodes += t.Nodes
	}
	var out []found
	for _, gr := range groups {
		if gr.retained < max(f.min/10, 1) {
			continue
		}
		counts := map[uint32]int{}
		class := f.a.Classes.Of[gr.roots[0]]
		for _, r := range gr.roots {
			c := f.a.Classes.Of[r]
			counts[c]++
			if counts[c] > counts[class] || (counts[c] == counts[class] && c < class) {
				class = c
			}
		}
		if slices.ContainsFunc(have, func(s found) bool { return s.Point == gr.holder && s.Class == class }) {
			continue
		}
		sus := Suspect{Holder: gr.holder, Retained: doms.Retained[gr.holder], Point: gr.holder, Via: NoClass,
			Class: class, Count: len(gr.roots), ClassRetained: gr.retained, Detached: true, DetachedNodes: gr.nodes}
		sus.Classes = []SuspectClass{{Class: class, Count: len(gr.roots), Retained: gr.retained, Example: gr.roots[0], Function: model.NoNode}}
		out = append(out, found{Suspect: sus, objs: gr.roots, total: gr.retained})
	}
	return out
}
