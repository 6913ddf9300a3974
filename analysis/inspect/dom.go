package inspect

import (
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// DetachedTree is one detached DOM tree: a detached node whose immediate
// dominator is not detached, with the detached nodes it dominates.
type DetachedTree struct {
	Root model.NodeIndex // the tree's root (DevTools name "Detached <div ...>")
	Name string          // the root's display name (Namer)
	// Elements counts the tree's elements, as DevTools does: the nodes
	// named after their tag ("Detached <p>"), those DOM-state propagation
	// marks (made by innerHTML, without a wrapper) as well as those Blink
	// marked itself; or Firefox's element nodes (not #text, #comment).
	Elements int
	Nodes    int           // detached nodes with the text and data DOM-state propagation adds
	Retained uint64        // the root's retained size
	Path     analysis.Path // the root's shortest retainer path
}

// DOMSource says what a dump can tell about detached DOM nodes, so a view
// that cannot apply can say why instead of reporting none.
type DOMSource uint8

const (
	// NoDOM: the heap has no DOM nodes (a Node.js or JVM heap), so nothing
	// can be detached.
	NoDOM DOMSource = iota
	// DOMDetachedness: the dump marks each DOM node attached or detached
	// (Blink writes V8's detachedness field).
	DOMDetachedness
	// DOMChildEdges: the dump has each DOM node's child and parent edges
	// (Firefox), so a node no document reaches over child edges is
	// detached.
	DOMChildEdges
	// DOMNamesOnly: the dump has DOM nodes but does not say which are
	// detached (old V8 snapshots): only nodes the runtime already named
	// "Detached ..." are found.
	DOMNamesOnly
)

// DetachedOptions tune DetachedDOM.
type DetachedOptions struct {
	// Limit bounds the trees returned (0 or less: all).
	Limit int
	// Internals keeps the embedder's own objects that V8 marks detached
	// (Node.js's "Node / BindingData" and the like), which are not DOM.
	Internals bool
}

// DetachedDOMResult is what DetachedDOM found.
type DetachedDOMResult struct {
	Source DOMSource
	// Trees are the trees, largest retained size first, at most
	// DetachedOptions.Limit; Total counts them all.
	Trees []DetachedTree
	Total int
	// Internal counts the detached nodes of the embedder's own objects
	// left out (0 with DetachedOptions.Internals).
	Internal int
	// BlinkInternal counts the detached nodes of the trees of no element
	// whose root is one of Blink's own objects, left out likewise.
	BlinkInternal int
}

// DetachedDOM groups the detached DOM nodes into trees: a detached node is
// a tree root when its immediate dominator is not detached, and every
// other detached node belongs to the tree of its nearest root dominator.
// Trees come largest retained size first (then by root index), each with
// its root's shortest retainer path.
//
// Dominators rather than DOM edges delimit the trees so that the trees'
// retained sizes add up and every detached node is in exactly one tree; a
// node that JavaScript also holds from outside its tree becomes a root of
// its own.
//
// Where the states come from (Source): V8 (Blink) writes a detachedness per
// node, and DevTools' propagation (a.DOM) also marks the native nodes
// those reach (elements made by innerHTML, text nodes, attribute
// storage); Elements counts the elements among them, as DevTools names
// them ("Detached <p>"), Nodes all. Firefox writes no detachedness, but each
// DOM node (nsIContent) has its "Child Node" and "Parent Node" edges, so
// the nodes no Document reaches over child edges are detached: the
// attached DOM hangs from its document, a removed subtree from nothing.
// Old V8 dumps only name detached natives "Detached ...". A heap without
// DOM nodes (Node.js, Java) has Source NoDOM and no trees.
//
// Node.js has no DOM, yet V8 marks a few of its own binding objects
// detached ("Detached Node / BindingData" in DevTools' Summary). DevTools
// and memlab list them as detached DOM; here a tree whose root is such an
// embedder object ("Node / ...") is left out unless opt.Internals, and
// counted in Internal: a user can neither act on it nor is it DOM. So is
// a tree of no element whose root is one of Blink's own objects, counted
// in BlinkInternal.
func DetachedDOM(a *analysis.Analysis, opt DetachedOptions) *DetachedDOMResult {
	g, idom := a.Graph, a.Dominators.IDom
	res := &DetachedDOMResult{Source: DetachednessSource(a)}
	detachedSet, element := detachedNodes(a, res.Source)
	if detachedSet == nil {
		return res
	}
	detached := func(v int32) bool { return v >= 0 && detachedSet.Has(int(v)) }
	// tree[v] is 1 + the row of v's tree, filled by walking up the
	// dominator chain and then labelling the walked nodes, so each node is
	// walked once.
	tree := make([]int32, g.NumNodes())
	var rows []DetachedTree
	var chain []int32
	for w, word := range detachedSet {
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
	for w, word := range detachedSet {
		for ; word != 0; word &= word - 1 {
			v := w<<6 + bits.TrailingZeros64(word)
			r := &rows[tree[v]-1]
			r.Nodes++
			if element(int32(v)) {
				r.Elements++
			}
		}
	}
	if !opt.Internals {
		kept := rows[:0]
		for _, r := range rows {
			switch {
			case embedderObject(g, r.Root):
				res.Internal += r.Nodes
				continue
			case r.Elements == 0 && blinkObject(g, r.Root):
				res.BlinkInternal += r.Nodes
				continue
			}
			kept = append(kept, r)
		}
		rows = kept
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Retained != rows[j].Retained {
			return rows[i].Retained > rows[j].Retained
		}
		return rows[i].Root < rows[j].Root
	})
	res.Total = len(rows)
	rows = limitRows(rows, opt.Limit)
	nm := analysis.NewNamer(g, a.DOM)
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
	res.Trees = rows
	return res
}

// embedderPrefix starts the names of Node.js's own native objects (its
// C++ embedder graph: "Node / BindingData", "Node / Environment").
const embedderPrefix = "Node / "

// embedderObject reports whether n is one of the embedder's own native
// objects rather than a DOM node.
func embedderObject(g *model.Graph, n model.NodeIndex) bool {
	return strings.HasPrefix(strings.TrimPrefix(g.NodeName(n), analysis.DetachedPrefix), embedderPrefix)
}

// blinkObject reports whether n is one of Blink's own C++ objects
// ("Detached blink::SpaceSplitString::Data", an element's class list
// storage Chromium 156 keeps detached once its element is gone): a tree of
// such objects holds no element a page could let go of.
func blinkObject(g *model.Graph, n model.NodeIndex) bool {
	return strings.HasPrefix(strings.TrimPrefix(g.NodeName(n), analysis.DetachedPrefix), "blink::")
}

// Firefox's DOM in a core dump: nsIContent nodes linked by "Child Node"
// edges below a Document node.
const (
	firefoxDOMNodeType  = "nsIContent"
	firefoxDocumentType = "Document"
	firefoxChildEdge    = "Child Node"
)

// DetachednessSource finds out what the dump can tell about detached DOM nodes.
func DetachednessSource(a *analysis.Analysis) DOMSource {
	g := a.Graph
	k := kinds.For(g)
	var v8, firefoxDOM, firefoxDocument bool
	for t, nt := range g.NodeTypes {
		if t >= 256 {
			break
		}
		v8 = v8 || k.NodeV8[t]
		if nt.Namespace == kinds.SpiderMonkeyNamespace {
			firefoxDOM = firefoxDOM || nt.Name == firefoxDOMNodeType
			firefoxDocument = firefoxDocument || nt.Name == firefoxDocumentType
		}
	}
	// Readers add a type on its first node, so a listed type has nodes.
	switch {
	case firefoxDOM && firefoxDocument:
		return DOMChildEdges
	case firefoxDOM:
		return DOMNamesOnly
	case v8 && g.Detachedness != nil:
		// Blink marks its DOM nodes attached or detached; Node.js marks
		// none but a few embedder objects.
		for i, s := range g.Detachedness {
			if s&3 != analysis.DOMUnknown && !embedderObject(g, int32(i)) {
				return DOMDetachedness
			}
		}
	case v8:
		// Without the column, natives other than Node.js's and V8's own
		// backing stores ("system / JSArrayBufferData") are Blink's.
		for i, t := range g.Nodes.Type {
			if k.Node[t] == kinds.Native && !embedderObject(g, int32(i)) && !strings.HasPrefix(g.NodeName(int32(i)), "system / ") {
				return DOMNamesOnly
			}
		}
	}
	return NoDOM
}

// detachedNodes returns the detached DOM nodes as src finds them (nil when
// there are none) and which of them are elements. Without DOM they are
// the embedder's objects V8 marks detached.
func detachedNodes(a *analysis.Analysis, src DOMSource) (analysis.Bits, func(int32) bool) {
	g := a.Graph
	if src == DOMChildEdges {
		// Firefox names element nodes by tag ("DIV") and the others
		// "#text", "#comment", "#document-fragment".
		return unreachedFromDocuments(a), func(v int32) bool { return !strings.HasPrefix(g.NodeName(v), "#") }
	}
	if a.DOM == nil {
		return nil, nil
	}
	// An element is a node Blink names after its tag ("<p>", "<section
	// id=x>"), as DevTools counts them ("Detached <p>"): the elements
	// made by innerHTML inside a detached tree, which have no wrapper and
	// so no detachedness of their own, are elements too.
	return a.DOM.Detached, func(v int32) bool {
		return strings.HasPrefix(strings.TrimPrefix(g.NodeName(v), analysis.DetachedPrefix), "<")
	}
}

// unreachedFromDocuments marks Firefox's DOM nodes that no Document
// reaches over "Child Node" edges (nil when there are none).
func unreachedFromDocuments(a *analysis.Analysis) analysis.Bits {
	g := a.Graph
	var domType, docType [256]bool
	for t, nt := range g.NodeTypes {
		if t < 256 && nt.Namespace == kinds.SpiderMonkeyNamespace {
			domType[t] = nt.Name == firefoxDOMNodeType
			docType[t] = nt.Name == firefoxDocumentType
		}
	}
	child := namedStrings(g, firefoxChildEdge)
	attached := analysis.NewBits(g.NumNodes())
	var queue []int32
	for v, t := range g.Nodes.Type {
		if docType[t] {
			attached.Set(v)
			queue = append(queue, int32(v))
		}
	}
	fe, to, name := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Name
	for len(queue) > 0 {
		v := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for e := fe[v]; e < fe[v+1]; e++ {
			if u := to[e]; child.Has(int(name[e])) && domType[g.Nodes.Type[u]] && !attached.Has(int(u)) {
				attached.Set(int(u))
				queue = append(queue, u)
			}
		}
	}
	var detached analysis.Bits
	for v, t := range g.Nodes.Type {
		if domType[t] && !attached.Has(v) {
			if detached == nil {
				detached = analysis.NewBits(g.NumNodes())
			}
			detached.Set(v)
		}
	}
	return detached
}

// PathGroup is a set of retainer paths with one shape: as long as each
// other and, hop by hop, through edges of one type and name except for an
// index (V8's element and hidden edges, or a "[7]" inside a name as in
// Firefox's "objectElements[7]"), to objects of one class. Ten detached
// trees held in one array's elements [0] to [9] are one group.
type PathGroup struct {
	// Members index the grouped paths, in input order.
	Members []int
	// Low and High are, per step, the edges with the smallest and largest
	// index among the members at that step; they are the same edge
	// wherever the members do not differ.
	Low, High []uint32
}

// GroupPaths groups paths by shape (PathGroup), groups in the order of
// their first member. Paths with no steps (targets no root reaches) form
// one group.
func GroupPaths(a *analysis.Analysis, paths []analysis.Path) []PathGroup {
	g := a.Graph
	k := kinds.For(g)
	var groups []PathGroup
	byShape := map[string]int{}
	var key []byte
	for i, p := range paths {
		key = key[:0]
		for _, s := range p.Steps {
			t := g.Edges.Type[s.Edge]
			key = append(key, t)
			if !k.Indexed[t] {
				name, _, _ := indexInName(g.Strings.At(model.StringID(g.Edges.Name[s.Edge])))
				key = append(key, name...)
			}
			key = append(key, 0)
			key = strconv.AppendUint(key, uint64(classOf(a, s.To)), 10)
			key = append(key, 0)
		}
		gi, ok := byShape[string(key)]
		if !ok {
			gi = len(groups)
			byShape[string(key)] = gi
			low := make([]uint32, len(p.Steps))
			for j, s := range p.Steps {
				low[j] = s.Edge
			}
			groups = append(groups, PathGroup{Low: low, High: append([]uint32(nil), low...)})
		}
		gr := &groups[gi]
		gr.Members = append(gr.Members, i)
		for j, s := range p.Steps {
			x := edgeIndex(a, s.Edge)
			if x < edgeIndex(a, gr.Low[j]) {
				gr.Low[j] = s.Edge
			}
			if x > edgeIndex(a, gr.High[j]) {
				gr.High[j] = s.Edge
			}
		}
	}
	return groups
}

// classOf is node n's class, or its name's string id when classes were
// not computed.
func classOf(a *analysis.Analysis, n model.NodeIndex) uint32 {
	if a.Classes != nil {
		return a.Classes.Of[n]
	}
	return uint32(a.Graph.Nodes.Name[n])
}

// edgeIndex is the index an edge names: its number for indexed edge
// types, the number in brackets for a name such as "objectElements[7]",
// else -1.
func edgeIndex(a *analysis.Analysis, e uint32) int64 {
	g := a.Graph
	if t := g.Edges.Type[e]; kinds.For(g).Indexed[t] {
		return int64(g.Edges.Name[e])
	}
	_, x, ok := indexInName(g.Strings.At(model.StringID(g.Edges.Name[e])))
	if !ok {
		return -1
	}
	return x
}

// indexInName splits a name ending in a bracketed number ("items[12]")
// into the name without the number ("items[]") and the number.
func indexInName(name string) (string, int64, bool) {
	if !strings.HasSuffix(name, "]") {
		return name, 0, false
	}
	open := strings.LastIndexByte(name, '[')
	if open < 0 {
		return name, 0, false
	}
	x, err := strconv.ParseInt(name[open+1:len(name)-1], 10, 64)
	if err != nil || x < 0 {
		return name, 0, false
	}
	return name[:open+1] + "]", x, true
}
