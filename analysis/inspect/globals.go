package inspect

import (
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// GlobalVariable is one property of a global object (or, for Java, one
// static field of a class).
type GlobalVariable struct {
	Owner    model.NodeIndex // the global object or class
	Name     string          // the property name; "Class.field" for a static field
	Edge     uint32          // the edge from Owner
	Node     model.NodeIndex // the value
	Class    string          // the value's class
	Retained uint64          // the value's retained size
}

// builtinGlobals are the names a JavaScript runtime puts on its global
// object before user code runs and that the structural rules of
// GlobalVariables do not already recognise: ECMAScript's global
// properties, Node.js's globals (Node's own functions are JavaScript with
// script locations, so they need naming) and browser globals that are
// plain objects rather than native functions or accessors.
var builtinGlobals = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range strings.Fields(`
		globalThis Infinity NaN undefined eval isFinite isNaN parseFloat parseInt decodeURI
		decodeURIComponent encodeURI encodeURIComponent escape unescape AggregateError Array ArrayBuffer
		Atomics BigInt BigInt64Array BigUint64Array Boolean DataView Date Error EvalError
		FinalizationRegistry Float16Array Float32Array Float64Array Function Int8Array Int16Array
		Int32Array Intl Iterator JSON Map Math Number Object Promise Proxy RangeError ReferenceError
		Reflect RegExp Set SharedArrayBuffer String Symbol SyntaxError TypeError Uint8Array
		Uint8ClampedArray Uint16Array Uint32Array URIError WeakMap WeakRef WeakSet WebAssembly
		DisposableStack AsyncDisposableStack SuppressedError console
		global process Buffer setTimeout setInterval setImmediate clearTimeout clearInterval
		clearImmediate queueMicrotask structuredClone atob btoa fetch crypto performance navigator
		URL URLSearchParams Event EventTarget CustomEvent AbortController AbortSignal
		window self document location top parent frames opener chrome CSS netscape InstallTrigger`) {
		m[s] = true
	}
	return m
}()

// GlobalVariables lists the user-defined global variables with the
// retained size of their values, largest first (then by name), at most
// limit (memlab's global-variable analysis).
//
// V8: the global objects are what the "global_object" or "extension"
// edges of the native contexts ("system / NativeContext") lead to (Node's
// `global`, Chrome's "Window [JSGlobalObject]"). Their property edges are
// kept unless the name is a builtin (builtinGlobals, "__proto__", a
// "<symbol ...>" or a "get "/"set " accessor half) or the value is a V8
// internal (hidden, internal array, heap number, "system / ..." such as an
// AccessorPair) or a function without a source location (a native or API
// function: Chrome's ~1000 Web IDL interfaces).
//
// SpiderMonkey: the global objects are what the "baseshape_global" edges
// of the shapes lead to (a page's Window). A property is kept unless its
// name is a builtin or not an identifier (the engine's own slots, such as
// "CLASS_OBJECT(Object)" or "global-lexical-env"), or its value is an
// accessor (js::GetterSetter: the DOM's attributes), an engine structure
// (the object's shape) or a function without a script (a native one).
//
// Other runtimes (HPROF): every class object (model.CatShape) is an owner
// and its property edges are its static fields, named "Class.field".
func GlobalVariables(a *analysis.Analysis, limit int) []GlobalVariable {
	g := a.Graph
	k := kinds.New(g)
	var rows []GlobalVariable
	add := func(owner model.NodeIndex, e uint32, name string) {
		v := g.Edges.To[e]
		rows = append(rows, GlobalVariable{Owner: owner, Name: name, Edge: e, Node: v,
			Class: className(a, v), Retained: a.Dominators.Retained[v]})
	}
	located := analysis.NewBits(g.NumNodes())
	for _, l := range g.Locations {
		located.Set(int(l.Node))
	}
	for _, owner := range GlobalObjects(a, k) {
		s, end := g.EdgeRange(owner)
		for e := s; e < end; e++ {
			if k.Edge[g.Edges.Type[e]] != kinds.EdgeProperty {
				continue
			}
			name := g.EdgeName(e)
			if k.NodeV8[g.Nodes.Type[owner]] && builtinGlobal(a, k, located, name, g.Edges.To[e]) {
				continue
			}
			if g.NodeType(owner).Namespace == kinds.SpiderMonkeyNamespace && builtinSpiderMonkeyGlobal(a, name, g.Edges.To[e]) {
				continue
			}
			if g.NodeType(owner).Category == model.CatShape {
				name = g.NodeName(owner) + "." + name
			}
			add(owner, e, name)
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Retained != rows[j].Retained {
			return rows[i].Retained > rows[j].Retained
		}
		return rows[i].Name < rows[j].Name
	})
	return limitRows(rows, limit)
}

// GlobalObjects returns the V8 global objects, or for other runtimes the
// class objects, in node order.
func GlobalObjects(a *analysis.Analysis, k *kinds.Table) []model.NodeIndex {
	g := a.Graph
	var out []model.NodeIndex
	v8 := false
	for t := range g.NodeTypes {
		v8 = v8 || (t < 256 && k.NodeV8[t])
	}
	if !v8 && kinds.IsSpiderMonkey(g) {
		link := namedStrings(g, "baseshape_global")
		seen := analysis.NewBits(g.NumNodes())
		for e, to := range g.Edges.To {
			if !k.Indexed[g.Edges.Type[e]] && link.Has(int(g.Edges.Name[e])) && !seen.Has(int(to)) {
				seen.Set(int(to))
				out = append(out, to)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	if !v8 {
		for i, t := range g.Nodes.Type {
			if g.NodeTypes[t].Category == model.CatShape {
				out = append(out, int32(i))
			}
		}
		return out
	}
	link := namedStrings(g, "global_object", "extension")
	seen := analysis.NewBits(g.NumNodes())
	for i := range g.Nodes.Type {
		if !strings.HasPrefix(g.NodeName(int32(i)), "system / NativeContext") {
			continue
		}
		s, end := g.EdgeRange(int32(i))
		for e := s; e < end; e++ {
			to := g.Edges.To[e]
			if k.Edge[g.Edges.Type[e]] == kinds.EdgeInternal && link.Has(int(g.Edges.Name[e])) && !seen.Has(int(to)) {
				seen.Set(int(to))
				out = append(out, to)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// builtinGlobal reports whether property name of a V8 global object,
// holding v, is the runtime's rather than the program's.
// located marks the nodes with an allocation site (g.Locations).
func builtinGlobal(a *analysis.Analysis, k *kinds.Table, located analysis.Bits, name string, v model.NodeIndex) bool {
	g := a.Graph
	if builtinGlobals[name] || name == "__proto__" || strings.HasPrefix(name, "<symbol") ||
		strings.HasPrefix(name, "get ") || strings.HasPrefix(name, "set ") {
		return true
	}
	switch k.NodeOf(g, v) {
	case kinds.Hidden, kinds.Array, kinds.Number:
		return true
	case kinds.Closure:
		if !located.Has(int(v)) {
			return true
		}
	}
	return strings.HasPrefix(g.NodeName(v), "system / ")
}

// builtinSpiderMonkeyGlobal reports whether property name of a
// SpiderMonkey global, holding v, is the browser's rather than the page's
// (see GlobalVariables).
func builtinSpiderMonkeyGlobal(a *analysis.Analysis, name string, v model.NodeIndex) bool {
	g := a.Graph
	if builtinGlobals[name] || strings.HasPrefix(name, "on") || !IsIdentifier(name) {
		return true
	}
	switch t := g.NodeType(v); {
	case t.Name == "js::GetterSetter", t.Category == model.CatShape, t.Category == model.CatInternal:
		return true // a DOM attribute's accessors, the object's own shape
	}
	if g.NodeType(v).Category != model.CatClosure {
		return false
	}
	s, end := g.EdgeRange(v)
	for e := s; e < end; e++ {
		switch g.NodeType(g.Edges.To[e]).Category {
		case model.CatFunctionInfo, model.CatCode:
			return false // it has a script: the page's function
		}
	}
	return true
}

// IsIdentifier reports whether s is a JavaScript identifier (ASCII
// letters, digits, '_' and '$', not starting with a digit).
func IsIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return s != ""
}
