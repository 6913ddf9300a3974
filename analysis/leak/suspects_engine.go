package leak

import (
	"strings"

	"github.com/heapx/heapx/analysis"
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

// machinery reports whether v is what unfold looks through to reach the
// program's objects: collection internals (plumbing), and in V8 the
// runtime's machinery that holds them for the program: closures (what a
// listener or a callback holds is what its context captured),
// "system / Context"s, promises (their reactions, or their result),
// the objects of suspended async functions and generators (their frames'
// values), Node's timers (their callbacks) and the collections (Array,
// Map, Set) in an accumulation. Cached per class.
func (f *suspectFinder) machinery(v model.NodeIndex) bool {
	if f.plumbing(v) {
		return true
	}
	if !f.v8 {
		return false
	}
	c := f.a.Classes.Of[v]
	if f.mach[c] == 0 {
		is := false
		switch name := f.a.Classes.Names[c]; {
		case f.k.NodeOf(f.g, v) == kinds.Closure, analysis.IsContextName(name), name == "Promise", name == "Timeout", name == "Immediate":
			is = true
		case name == "Array" || name == "Map" || name == "Set":
			// The program's collections inside an accumulation (a
			// Map of topics to Sets of subscribers) hold what
			// accumulates; a class's own arrays are inside its objects,
			// never looked through.
			is = f.k.NodeOf(f.g, v) == kinds.Object
		default:
			is = f.k.NodeOf(f.g, v) == kinds.Object && f.namedEdge(v, "parameters_and_registers") >= 0
		}
		f.mach[c] = 2
		if is {
			f.mach[c] = 1
		}
	}
	return f.mach[c] == 1
}

// isScope reports whether v is a V8 scope: a "system / Context" holding
// the variables closures capture (a module's top level, a function's
// call). A suspect's holder is below the first scope above its
// accumulation: what holds a scope (its closures, the objects holding
// them) holds everything the scope does, so it names nothing.
func (f *suspectFinder) isScope(v model.NodeIndex) bool {
	return f.v8 && f.k.NodeOf(f.g, v) == kinds.Object && analysis.IsContextName(f.g.NodeName(v))
}

// moduleScope reports whether scope v is the top-level scope of a
// script or module: its outer scope is the native context itself (a
// CommonJS module's wrapper, an ES module, a classic script's top-level
// function).
func (f *suspectFinder) moduleScope(v model.NodeIndex) bool {
	p := f.namedEdge(v, "previous")
	return p >= 0 && strings.HasPrefix(f.g.NodeName(p), "system / NativeContext")
}

// moduleExports returns, where v is a CommonJS module's record (Node's
// Module: its exports, filename, paths and loaded flag), its exports
// object, else NoNode. Both are a module's globals, as its scope is: the
// module's API, holding its state.
func (f *suspectFinder) moduleExports(v model.NodeIndex) model.NodeIndex {
	if f.k.NodeOf(f.g, v) != kinds.Object || f.a.Classes.Names[f.a.Classes.Of[v]] != "Module" {
		return model.NoNode
	}
	exports := f.namedEdge(v, "exports")
	if exports < 0 || f.namedEdge(v, "filename") < 0 || f.namedEdge(v, "paths") < 0 {
		return model.NoNode
	}
	return exports
}

// located reports whether v has a source location.
func (f *suspectFinder) located(v model.NodeIndex) bool {
	_, n := f.locs.Dominant([]model.NodeIndex{v})
	return n > 0
}

// userClass reports whether v's class is the program's own: in V8, its
// constructor (v's prototype's "constructor", or v itself for a
// function) is defined in a script of the program (userScript); in Java,
// a class outside the JDK's packages. Cached per class, but for
// functions, which share one.
func (f *suspectFinder) userClass(v model.NodeIndex) bool {
	if f.v8 && f.k.NodeOf(f.g, v) == kinds.Closure {
		return userScript(f.location(v).URL)
	}
	c := f.a.Classes.Of[v]
	if f.user[c] == 0 {
		is := false
		switch {
		case f.v8:
			if proto := f.namedEdge(v, "__proto__"); proto >= 0 {
				if ctor := f.namedEdge(proto, "constructor"); ctor >= 0 && f.k.NodeOf(f.g, ctor) == kinds.Closure {
					is = userScript(f.location(ctor).URL)
				}
			}
		case f.hprof:
			is = javaUserClass(f.a.Classes.Names[c])
		}
		f.user[c] = 2
		if is {
			f.user[c] = 1
		}
	}
	return f.user[c] == 1
}

// userScript reports whether a script is the program's: it has a name
// and is not Node.js's own (node:..., internal/...).
func userScript(url string) bool {
	return url != "" && !strings.HasPrefix(url, "node:") && !strings.HasPrefix(url, "internal/")
}

// javaUserClass reports whether a Java class is the program's: neither
// the JDK's (java., javax., jdk., sun., com.sun.) nor an array of
// primitives.
func javaUserClass(name string) bool {
	if strings.HasSuffix(name, "[]") && !strings.Contains(name, ".") {
		return false
	}
	for _, jdk := range []string{"java.", "javax.", "jdk.", "sun.", "com.sun."} {
		if strings.HasPrefix(name, jdk) {
			return false
		}
	}
	return true
}
