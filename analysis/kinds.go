package analysis

import (
	"sync/atomic"
	"weak"

	"github.com/heapx/heapx/model"
)

// v8Namespace is the namespace V8 readers record their node and edge types
// under; the DevTools rules apply to types of this namespace.
const v8Namespace = "v8"

// nodeKind is the role a node type plays in the DevTools rules. Resolving
// it once per type-table entry keeps per-node checks to one array load.
type nodeKind uint8

const (
	kOther nodeKind = iota
	kHidden
	kArray
	kString
	kObject
	kCode
	kClosure
	kRegExp
	kNumber
	kNative
	kSynthetic
	kConsString
	kSlicedString
	kSymbol
	kBigInt
	kShape
)

// edgeKind is the role an edge type plays in the DevTools rules.
type edgeKind uint8

const (
	eOther edgeKind = iota
	eContext
	eElement
	eProperty
	eInternal
	eHidden
	eShortcut
	eWeak
)

// kinds caches, per type-table entry, the node and edge roles and edge
// strengths, so hot loops index small arrays instead of comparing strings.
type kinds struct {
	node    [256]nodeKind
	nodeV8  [256]bool // the type is a V8 type, so DevTools naming applies
	edge    [256]edgeKind
	weak    [256]bool // Strength Weak: never retains
	short   [256]bool // Strength Shortcut
	ephem   [256]bool // Strength Ephemeron (WeakMap table -> value)
	indexed [256]bool
}

var v8NodeKinds = map[string]nodeKind{
	"hidden": kHidden, "array": kArray, "string": kString, "object": kObject,
	"code": kCode, "closure": kClosure, "regexp": kRegExp, "number": kNumber,
	"native": kNative, "synthetic": kSynthetic, "concatenated string": kConsString,
	"sliced string": kSlicedString, "symbol": kSymbol, "bigint": kBigInt,
	"object shape": kShape,
}

var v8EdgeKinds = map[string]edgeKind{
	"context": eContext, "element": eElement, "property": eProperty,
	"internal": eInternal, "hidden": eHidden, "shortcut": eShortcut, "weak": eWeak,
}

// categoryKinds maps neutral categories to roles for types of other
// runtimes, so reachability and naming still work on them.
var categoryKinds = [...]nodeKind{
	model.CatObject: kObject, model.CatArray: kArray, model.CatString: kString,
	model.CatConsString: kConsString, model.CatSlicedString: kSlicedString,
	model.CatCode: kCode, model.CatClosure: kClosure, model.CatRegExp: kRegExp,
	model.CatHeapNumber: kNumber, model.CatNative: kNative, model.CatSymbol: kSymbol,
	model.CatBigInt: kBigInt, model.CatSynthetic: kSynthetic, model.CatInternal: kHidden,
	model.CatShape: kShape, model.CatFunctionInfo: kOther, model.CatDate: kObject,
	model.CatOddball: kOther, model.CatOther: kOther,
}

func newKinds(g *model.Graph) *kinds {
	k := &kinds{}
	for i, t := range g.NodeTypes {
		if i >= 256 {
			break
		}
		if t.Namespace == v8Namespace {
			k.node[i] = v8NodeKinds[t.Name]
			k.nodeV8[i] = true
		} else if int(t.Category) < len(categoryKinds) {
			k.node[i] = categoryKinds[t.Category]
		}
	}
	for i, t := range g.EdgeTypes {
		if i >= 256 {
			break
		}
		if t.Namespace == v8Namespace {
			k.edge[i] = v8EdgeKinds[t.Name]
		} else {
			switch t.Category {
			case model.EdgeContext:
				k.edge[i] = eContext
			case model.EdgeElement:
				k.edge[i] = eElement
			case model.EdgeProperty:
				k.edge[i] = eProperty
			case model.EdgeInternal:
				k.edge[i] = eInternal
			}
			switch t.Strength {
			case model.Weak:
				k.edge[i] = eWeak
			case model.Shortcut:
				k.edge[i] = eShortcut
			}
		}
		k.weak[i] = t.Strength == model.Weak
		k.short[i] = t.Strength == model.Shortcut
		k.ephem[i] = t.Strength == model.Ephemeron
		k.indexed[i] = t.Indexed
	}
	return k
}

// nodeKindOf returns the role of node n.
func (k *kinds) nodeKindOf(g *model.Graph, n int32) nodeKind { return k.node[g.Nodes.Type[n]] }

// cachedKinds is the last graph's kinds for the per-edge helpers
// (EdgeString, EdgeLabel), which would otherwise rebuild them on every
// call: the steps of a 900,000-hop path spent a quarter of their time
// there. The graph is held weakly, so the cache keeps no graph alive.
type cachedKinds struct {
	g      weak.Pointer[model.Graph]
	nn, ne int
	k      *kinds
}

var lastKinds atomic.Pointer[cachedKinds]

// kindsFor returns g's kinds, from the cache when g and its type tables
// are the last ones asked for.
func kindsFor(g *model.Graph) *kinds {
	if c := lastKinds.Load(); c != nil && c.g.Value() == g && c.nn == len(g.NodeTypes) && c.ne == len(g.EdgeTypes) {
		return c.k
	}
	k := newKinds(g)
	lastKinds.Store(&cachedKinds{g: weak.Make(g), nn: len(g.NodeTypes), ne: len(g.EdgeTypes), k: k})
	return k
}

// isV8 reports whether g has V8's node types.
func isV8(g *model.Graph) bool {
	for _, t := range g.NodeTypes {
		if t.Namespace == v8Namespace {
			return true
		}
	}
	return false
}
