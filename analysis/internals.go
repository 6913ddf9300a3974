package analysis

import (
	"strings"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// RuntimeInternals tells the runtime's own machinery from the program's
// in a V8 heap: the objects, functions and scopes that belong to Node's
// or the engine's code rather than to the program, so that the path a
// person reads goes through the program's code where it can (see
// IsRuntimeInternalEdge). The marks are made once, in one pass over the
// nodes and the locations; other runtimes' heaps have none.
type RuntimeInternals struct {
	g     *model.Graph
	k     *kinds.Table
	owned Bits
}

// NewRuntimeInternals marks the runtime-owned nodes of g:
//
//   - V8's synthetic nodes but the root: the GC root categories
//     ("(GC roots)", "(Internalized strings)", "(Handle scope)",
//     "(Global handles)", ...) and the embedder's roots ("Node /
//     TCPServerWrap", "C++ roots");
//   - the engine's internals: hidden and code nodes, object shapes, the
//     native context ("system / NativeContext"), and the stores of an
//     object's properties and elements ("(object properties)", "(object
//     elements)", "system / PropertyArray"), whose members V8 also
//     reports as the object's own properties and elements;
//   - the embedder's own objects: Node's ("Node / Environment", "Node /
//     AsyncHooks", ...) and Blink's bookkeeping ("InternalNode",
//     "Pending activities", as memlab counts them);
//   - functions of the runtime's code: builtins (a SharedFunctionInfo
//     without a script) and functions of a runtime script (IsRuntimeScript:
//     "node:internal/timers", ...);
//   - the scopes (contexts) only the runtime's functions use: a context
//     is the runtime's when runtime functions close over it, or over a
//     context inside it, and no function of the program does;
//   - objects whose constructor is runtime code, by their location
//     (Timeout, TimersList, Server, Socket, Module, BuiltinModule, ...).
//
// An object the program made from a builtin constructor (a Map, an
// Array, a plain object) is the program's wherever it is.
func NewRuntimeInternals(g *model.Graph) *RuntimeInternals {
	ri := &RuntimeInternals{g: g, k: kinds.New(g), owned: NewBits(g.NumNodes())}
	if !kinds.IsV8(g) {
		return ri
	}
	k := ri.k
	n := g.NumNodes()
	var closures []model.NodeIndex
	for v := 0; v < n; v++ {
		nv := model.NodeIndex(v)
		t := g.Nodes.Type[v]
		if !k.NodeV8[t] || nv == g.Root {
			continue
		}
		switch k.Node[t] {
		case kinds.Synthetic, kinds.Hidden, kinds.Code, kinds.Shape:
			ri.owned.Set(v)
		case kinds.Closure:
			if runtimeFunction(g, nv) {
				ri.owned.Set(v)
			}
			closures = append(closures, nv)
		case kinds.Native, kinds.Object:
			if embedderInternal(g.NodeName(nv)) {
				ri.owned.Set(v)
			}
		case kinds.Array:
			if name := g.NodeName(nv); name == "(object properties)" || name == "(object elements)" {
				ri.owned.Set(v)
			}
		}
	}
	ri.markContexts(closures)
	ri.markRuntimeClasses()
	return ri
}

// runtimeFunction reports whether closure v is the runtime's code: a
// builtin (a SharedFunctionInfo without a script) or a function of a
// runtime script. A bound function (no SharedFunctionInfo) is not.
func runtimeFunction(g *model.Graph, v model.NodeIndex) bool {
	shared := namedEdge(g, v, "shared")
	if shared == model.NoNode {
		return false
	}
	script := namedEdge(g, shared, "script", "script_or_debug_info")
	if script == model.NoNode {
		return true
	}
	return IsRuntimeScript(g.NodeName(script))
}

// embedderInternal reports whether an object or native node is the
// embedder's or the engine's bookkeeping, by name.
func embedderInternal(name string) bool {
	switch name {
	case "system / NativeContext", "InternalNode", "Pending activities", "StyleEngine":
		return true
	}
	return strings.HasPrefix(name, "Node / ")
}

// markContexts marks the contexts only runtime functions close over.
// Each function's context and the chain of contexts around it
// ("previous") are used by its code; a context used by a function of the
// program is the program's, one used only by runtime functions the
// runtime's.
func (ri *RuntimeInternals) markContexts(closures []model.NodeIndex) {
	g := ri.g
	n := g.NumNodes()
	user, runtime := NewBits(n), NewBits(n)
	for _, c := range closures {
		marks := user
		if ri.owned.Has(int(c)) {
			marks = runtime
		}
		for ctx := namedEdge(g, c, "context"); ctx != model.NoNode && !marks.Has(int(ctx)); ctx = namedEdge(g, ctx, "previous") {
			marks.Set(int(ctx))
		}
	}
	for v := range n {
		if runtime.Has(v) && !user.Has(v) {
			ri.owned.Set(v)
		}
	}
}

// markRuntimeClasses marks the objects whose location (their
// constructor's place) is in a runtime script.
func (ri *RuntimeInternals) markRuntimeClasses() {
	g := ri.g
	if len(g.Locations) == 0 {
		return
	}
	names := NewResolver(g)
	runtime := map[uint32]bool{}
	for id, s := range names.scripts {
		runtime[id] = IsRuntimeScript(s.URL)
	}
	for _, l := range g.Locations {
		if runtime[l.ScriptID] && ri.k.Node[g.Nodes.Type[l.Node]] == kinds.Object {
			ri.owned.Set(int(l.Node))
		}
	}
}

// Owned reports whether node n is the runtime's (see NewRuntimeInternals).
func (ri *RuntimeInternals) Owned(n model.NodeIndex) bool { return ri.owned.Has(int(n)) }

// Edge reports whether edge e, an out-edge of node from, is a hop
// through the runtime's machinery: an edge out of a runtime-owned node
// (a timer list's links, a runtime module's variables, Node's async
// hooks' resources, a GC root category's members), an edge from the root
// into a runtime-owned node (a GC root category, an embedder root), or
// an edge into a runtime-owned node that is no object (a runtime
// function, as global.setTimeout; the engine's internals; a property
// store). Edges between the program's objects, into its functions and
// scopes, and into the objects the runtime made for it (a Server, a
// Timeout) are not.
func (ri *RuntimeInternals) Edge(from model.NodeIndex, e uint32) bool {
	to := ri.g.Edges.To[e]
	if ri.owned.Has(int(from)) {
		return true
	}
	if !ri.owned.Has(int(to)) {
		return false
	}
	return from == ri.g.Root || ri.k.Node[ri.g.Nodes.Type[to]] != kinds.Object
}

// RuntimeInternals returns the runtime-owned marks of a's heap, made on
// first use.
func (a *Analysis) RuntimeInternals() *RuntimeInternals {
	a.internalsOnce.Do(func() { a.internals = NewRuntimeInternals(a.Graph) })
	return a.internals
}

// IsRuntimeInternalEdge reports whether edge e, out of node from, is a
// hop through the runtime's machinery rather than the program's code:
// timer lists, async hooks' resources (execution_async_resources), the
// microtask queue, the module loader, a runtime module's scope, the GC
// root categories ("(Internalized strings)", "(Handle scope)", ...)
// and the embedder's bookkeeping (RuntimeInternals.Edge says exactly
// which). The path heapx shows for an object is the one with the fewest
// such hops among the nearly shortest (PathFinder.Find). Always false
// outside V8 heaps.
func (a *Analysis) IsRuntimeInternalEdge(from model.NodeIndex, e uint32) bool {
	return a.RuntimeInternals().Edge(from, e)
}

// Origin says whose code made a class of objects.
type Origin uint8

// Origins, the program's first: the order in which heapx lists the
// classes of a leak.
const (
	// ProgramOrigin: a class of the program's own code (RequestContext),
	// or a DOM element's.
	ProgramOrigin Origin = iota
	// LibraryOrigin: a class of JavaScript's builtins (Object and object
	// shapes like {id, url}, Array, Map, Function for closures, ...) or of
	// the runtime's library (a Timeout, a Server): the program makes them
	// through the library, and one can be what leaks (an interval nobody
	// clears).
	LibraryOrigin
	// EngineOrigin: the engine's own objects: scopes ("system /
	// Context"), internal arrays ("(array)"), code, strings, numbers.
	EngineOrigin
)

// builtinClasses are JavaScript's builtin constructors whose objects a
// program makes.
var builtinClasses = map[string]bool{
	"Object": true, "Array": true, "Function": true, "Map": true, "Set": true, "WeakMap": true, "WeakSet": true,
	"WeakRef": true, "FinalizationRegistry": true, "Promise": true, "Error": true, "TypeError": true, "RangeError": true,
	"Date": true, "RegExp": true, "ArrayBuffer": true, "SharedArrayBuffer": true, "DataView": true, "Uint8Array": true,
	"Int8Array": true, "Uint8ClampedArray": true, "Uint16Array": true, "Int16Array": true, "Uint32Array": true,
	"Int32Array": true, "Float32Array": true, "Float64Array": true, "BigInt64Array": true, "BigUint64Array": true,
	"Buffer": true, "String": true, "Number": true, "Boolean": true, "Symbol": true, "Arguments": true,
	"Generator": true, "AsyncGenerator": true,
}

// ClassOrigin says whose code made class c of a's heap (an index into
// a.Classes.Names), example one of its objects (model.NoNode if none):
// the engine's by name ("(array)", "system / Context"), the library's by
// name (JavaScript's builtins, object shapes) or by the runtime's marks
// on example (an object of a runtime script's class: RuntimeInternals),
// the program's otherwise (without locations, a dump cannot tell a
// runtime library's class from the program's: it counts as the
// program's).
func ClassOrigin(a *Analysis, c uint32, example model.NodeIndex) Origin {
	name := a.Classes.Names[c]
	switch {
	case strings.HasPrefix(name, "(") || strings.HasPrefix(name, "system / "):
		return EngineOrigin
	case builtinClasses[name] || strings.HasPrefix(name, "{"):
		return LibraryOrigin
	case example != model.NoNode && a.RuntimeInternals().Owned(example):
		return LibraryOrigin
	}
	return ProgramOrigin
}
