package analysis

import (
	"math/bits"
	"sort"

	"github.com/heapx/heapx/model"
)

// DetachedTree is one detached DOM tree: a detached node whose immediate
// dominator is not detached, with the detached nodes it dominates.
type DetachedTree struct {
	Root     model.NodeIndex // the tree's root (DevTools name "Detached <div ...>")
	Name     string          // the root's display name (Namer)
	Elements int             // nodes the runtime itself marked detached (V8: detachedness 2)
	Nodes    int             // detached nodes after DOM-state propagation (text nodes, element data...)
	Retained uint64          // the root's retained size
	Path     Path            // the root's shortest retainer path
}

// DetachedDOM groups the detached DOM nodes (a.DOM) into trees: a detached
// node is a tree root when its immediate dominator is not detached, and
// every other detached node belongs to the tree of its nearest root
// dominator. Trees come largest retained size first (then by root index),
// at most limit, each with its root's shortest retainer path.
//
// Dominators rather than DOM edges delimit the trees so that the trees'
// retained sizes add up and every detached node is in exactly one tree; a
// node that JavaScript also holds from outside its tree becomes a root of
// its own.
//
// Where the states come from: V8 (Blink) writes a detachedness per node,
// and Elements counts the nodes it marked 2; DevTools' propagation also
// marks the native nodes those reach (text nodes, attribute storage), which
// Nodes includes. Dumps without the column (SpiderMonkey, whose DOM nodes
// are native nsIContent nodes, and old V8) say nothing about detachedness:
// only native nodes already named "Detached ..." are reported, and there
// Elements equals Nodes.
func (a *Analysis) DetachedDOM(limit int) []DetachedTree {
	g, dom, idom := a.Graph, a.DOM, a.Dominators.IDom
	if dom == nil || dom.Detached == nil {
		return nil
	}
	detached := func(v int32) bool { return v >= 0 && dom.Detached.Has(int(v)) }
	// tree[v] is 1 + the row of v's tree, filled by walking up the
	// dominator chain and then labelling the walked nodes, so each node is
	// walked once.
	tree := make([]int32, g.NumNodes())
	var rows []DetachedTree
	var chain []int32
	for w, word := range dom.Detached {
		for ; word != 0; word &= word - 1 {
			v := int32(w<<6 + bits.TrailingZeros64(word))
			chain = chain[:0]
			u := v
			for tree[u] == 0 && detached(idom[u]) {
				chain = append(chain, u)
				u = idom[u]
			}
			if tree[u] == 0 {
				rows = append(rows, DetachedTree{Root: u, Retained: a.Dominators.Retained[u]})
				tree[u] = int32(len(rows))
				chain = append(chain, u)
			}
			for _, x := range chain {
				tree[x] = tree[u]
			}
		}
	}
	for w, word := range dom.Detached {
		for ; word != 0; word &= word - 1 {
			v := w<<6 + bits.TrailingZeros64(word)
			r := &rows[tree[v]-1]
			r.Nodes++
			if g.Detachedness == nil || g.Detachedness[v]&3 == DOMDetached {
				r.Elements++
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Retained != rows[j].Retained {
			return rows[i].Retained > rows[j].Retained
		}
		return rows[i].Root < rows[j].Root
	})
	rows = limitRows(rows, limit)
	nm := NewNamer(g, dom)
	roots := make([]model.NodeIndex, len(rows))
	for i := range rows {
		roots[i] = rows[i].Root
	}
	paths := a.ShortestPaths(roots)
	for i := range rows {
		rows[i].Name = nm.Name(rows[i].Root)
		if paths[i].Cost >= 0 {
			rows[i].Path = paths[i]
		}
	}
	return rows
}
