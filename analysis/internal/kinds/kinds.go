// Package kinds resolves each node and edge type of a graph to the role it
// plays in the DevTools rules (a hidden node, an element edge, a weak
// edge...), once per type-table entry, so the passes of the analysis
// packages test a node or an edge with one array load instead of string
// comparisons. Types of other runtimes get their roles from their neutral
// categories.
package kinds

import (
	"sync/atomic"
	"weak"

	"github.com/heapx/heapx/model"
)

// V8Namespace is the namespace V8 readers record their node and edge types
// under; the DevTools rules apply to types of this namespace.
const V8Namespace = "v8"

// HPROFNamespace is the namespace of the HPROF reader's node and edge types.
const HPROFNamespace = "hprof"

// NodeKind is the role a node type plays in the DevTools rules. Resolving
// it once per type-table entry keeps per-node checks to one array load.
type NodeKind uint8

const (
	Other NodeKind = iota
	Hidden
	Array
	String
	Object
	Code
	Closure
	RegExp
	Number
	Native
	Synthetic
	ConsString
	SlicedString
	Symbol
	BigInt
	Shape
)

// EdgeKind is the role an edge type plays in the DevTools rules.
type EdgeKind uint8

const (
	EdgeOther EdgeKind = iota
	EdgeContext
	EdgeElement
	EdgeProperty
	EdgeInternal
	EdgeHidden
	EdgeShortcut
	EdgeWeak
)

// Table caches, per type-table entry, the node and edge roles and edge
// strengths, so hot loops index small arrays instead of comparing strings.
type Table struct {
	Node    [256]NodeKind
	NodeV8  [256]bool // the type is a V8 type, so DevTools naming applies
	Edge    [256]EdgeKind
	Weak    [256]bool // Strength Weak: never retains
	Short   [256]bool // Strength Shortcut
	Ephem   [256]bool // Strength Ephemeron (WeakMap table -> value)
	Indexed [256]bool
}

var v8NodeKinds = map[string]NodeKind{
	"hidden": Hidden, "array": Array, "string": String, "object": Object,
	"code": Code, "closure": Closure, "regexp": RegExp, "number": Number,
	"native": Native, "synthetic": Synthetic, "concatenated string": ConsString,
	"sliced string": SlicedString, "symbol": Symbol, "bigint": BigInt,
	"object shape": Shape,
}

var v8EdgeKinds = map[string]EdgeKind{
	"context": EdgeContext, "element": EdgeElement, "property": EdgeProperty,
	"internal": EdgeInternal, "hidden": EdgeHidden, "shortcut": EdgeShortcut, "weak": EdgeWeak,
}

// categoryKinds maps neutral categories to roles for types of other
// runtimes, so reachability and naming still work on them.
var categoryKinds = [...]NodeKind{
	model.CatObject: Object, model.CatArray: Array, model.CatString: String,
	model.CatConsString: ConsString, model.CatSlicedString: SlicedString,
	model.CatCode: Code, model.CatClosure: Closure, model.CatRegExp: RegExp,
	model.CatHeapNumber: Number, model.CatNative: Native, model.CatSymbol: Symbol,
	model.CatBigInt: BigInt, model.CatSynthetic: Synthetic, model.CatInternal: Hidden,
	model.CatShape: Shape, model.CatFunctionInfo: Other, model.CatDate: Object,
	model.CatOddball: Other, model.CatOther: Other,
}

// New resolves the roles of g's type tables.
func New(g *model.Graph) *Table {
	k := &Table{}
	for i, t := range g.NodeTypes {
		if i >= 256 {
			break
		}
		if t.Namespace == V8Namespace {
			k.Node[i] = v8NodeKinds[t.Name]
			k.NodeV8[i] = true
		} else if int(t.Category) < len(categoryKinds) {
			k.Node[i] = categoryKinds[t.Category]
		}
	}
	for i, t := range g.EdgeTypes {
		if i >= 256 {
			break
		}
		if t.Namespace == V8Namespace {
			k.Edge[i] = v8EdgeKinds[t.Name]
		} else {
			switch t.Category {
			case model.EdgeContext:
				k.Edge[i] = EdgeContext
			case model.EdgeElement:
				k.Edge[i] = EdgeElement
			case model.EdgeProperty:
				k.Edge[i] = EdgeProperty
			case model.EdgeInternal:
				k.Edge[i] = EdgeInternal
			}
			switch t.Strength {
			case model.Weak:
				k.Edge[i] = EdgeWeak
			case model.Shortcut:
				k.Edge[i] = EdgeShortcut
			}
		}
		k.Weak[i] = t.Strength == model.Weak
		k.Short[i] = t.Strength == model.Shortcut
		k.Ephem[i] = t.Strength == model.Ephemeron
		k.Indexed[i] = t.Indexed
	}
	return k
}

// NodeOf returns the role of node n.
func (k *Table) NodeOf(g *model.Graph, n int32) NodeKind { return k.Node[g.Nodes.Type[n]] }

// cachedKinds is the last graph's kinds for the per-edge helpers
// (EdgeString, EdgeLabel), which would otherwise rebuild them on every
// call: the steps of a 900,000-hop path spent a quarter of their time
// there. The graph is held weakly, so the cache keeps no graph alive.
type cachedKinds struct {
	g      weak.Pointer[model.Graph]
	nn, ne int
	k      *Table
}

var lastKinds atomic.Pointer[cachedKinds]

// For returns g's table, from the cache when g and its type tables
// are the last ones asked for.
func For(g *model.Graph) *Table {
	if c := lastKinds.Load(); c != nil && c.g.Value() == g && c.nn == len(g.NodeTypes) && c.ne == len(g.EdgeTypes) {
		return c.k
	}
	k := New(g)
	lastKinds.Store(&cachedKinds{g: weak.Make(g), nn: len(g.NodeTypes), ne: len(g.EdgeTypes), k: k})
	return k
}

// IsV8 reports whether g has V8's node types.
func IsV8(g *model.Graph) bool {
	for _, t := range g.NodeTypes {
		if t.Namespace == V8Namespace {
			return true
		}
	}
	return false
}

// SpiderMonkeyNamespace is the namespace of the SpiderMonkey reader's
// node and edge types.
const SpiderMonkeyNamespace = "spidermonkey"

// IsSpiderMonkey reports whether g has SpiderMonkey's node types.
func IsSpiderMonkey(g *model.Graph) bool {
	for _, t := range g.NodeTypes {
		if t.Namespace == SpiderMonkeyNamespace {
			return true
		}
	}
	return false
}
