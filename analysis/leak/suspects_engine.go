package leak

import (
	"strings"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// engineRules tells the runtime's own structures from the program's data,
// which differs by runtime (see owns).
type engineRules struct {
	v8, hprof bool
}

func engineRulesFor(g *model.Graph) engineRules {
	r := engineRules{v8: kinds.IsV8(g)}
	for _, t := range g.NodeTypes {
		r.hprof = r.hprof || t.Namespace == kinds.HPROFNamespace
	}
	return r
}

// owns reports whether v is the runtime's own structure: compiled code,
// hidden and synthetic nodes, V8's maps and internal arrays and
// "system / ..." objects, SpiderMonkey's shapes, Blink's and Node's C++
// objects. A user can act on none of them, so they are neither leak
// suspects nor what grows in a report.
func (r engineRules) owns(g *model.Graph, k *kinds.Table, v model.NodeIndex) bool {
	switch kind := k.NodeOf(g, v); kind {
	case kinds.Synthetic, kinds.Code, kinds.Hidden, kinds.Other:
		return true
	case kinds.Shape:
		return !r.hprof // V8 maps, SpiderMonkey shapes; a Java class object holds static fields
	case kinds.Array:
		return r.v8 // V8's internal arrays; Java's arrays are the program's
	case kinds.Object, kinds.Native:
		if !r.v8 {
			return false
		}
		name := g.NodeName(v)
		if strings.HasPrefix(name, "system / ") {
			return true
		}
		// Blink's C++ objects (blink::ComputedStyle) and Node's
		// embedder objects (Node / BindingData), not the DOM.
		return kind == kinds.Native && (strings.Contains(name, "::") || strings.HasPrefix(name, "Node / "))
	}
	return false
}

// plumbing reports whether v is collection internals to look through:
// V8's internal arrays and hidden nodes (an Array's elements store, a
// Map's hash table), Java's object arrays (an ArrayList's Object[]) and
// the entry classes of java.util's collections (HashMap$Node).
func (f *suspectFinder) plumbing(v model.NodeIndex) bool {
	c := f.a.Classes.Of[v]
	if f.plumb[c] == 0 {
		is := false
		switch {
		case f.v8:
			kind := f.k.NodeOf(f.g, v)
			is = kind == kinds.Array || kind == kinds.Hidden
		case f.hprof:
			is = f.g.NodeType(v).Name == "object array" || javaEntryClass(f.a.Classes.Names[c])
		}
		f.plumb[c] = 2
		if is {
			f.plumb[c] = 1
		}
	}
	return f.plumb[c] == 1
}

// collection returns the collection v is part of: v itself, or where v
// is collection internals (a V8 Map's table, an Array's elements store, a
// HashMap's HashMap$Node[], a subtree of a TreeMap's entries), the nearest
// dominator that is not, unless that is opaque.
func (f *suspectFinder) collection(v model.NodeIndex) model.NodeIndex {
	idom := f.a.Dominators.IDom
	for f.plumbing(v) && idom[v] >= 0 && !f.isOpaque(idom[v]) {
		v = idom[v]
	}
	return v
}

// javaEntryClass reports whether a Java class is one java.util's
// collections keep their elements in: HashMap$Node, HashMap$TreeNode,
// LinkedHashMap$Entry, Hashtable$Entry, TreeMap$Entry, LinkedList$Node,
// ConcurrentHashMap$Node and $TreeBin, ConcurrentSkipListMap$Index...
func javaEntryClass(name string) bool {
	i := strings.LastIndexByte(name, '$')
	if !strings.HasPrefix(name, "java.util.") || i < 0 {
		return false
	}
	switch name[i+1:] {
	case "Node", "TreeNode", "Entry", "TreeBin", "ForwardingNode", "Index":
		return true
	}
	return false
}
