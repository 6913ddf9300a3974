package model

// Category is the runtime-neutral kind of a node. The names follow the
// exchange-format draft's node subtypes (seed 000), plus the VM-level kinds
// every runtime has (internal structures, shapes, synthetic groupings).
type Category uint8

// Node categories.
const (
	CatOther        Category = iota // anything without a better fit
	CatObject                       // an ordinary object (JS object, Java instance)
	CatArray                        // an array of values or references
	CatString                       // a flat string
	CatConsString                   // a concatenated (rope) string
	CatSlicedString                 // a slice of another string
	CatCode                         // executable code or bytecode
	CatClosure                      // a function object with its context
	CatFunctionInfo                 // function metadata shared by closures (SharedFunctionInfo, JSScript)
	CatRegExp                       // a regular expression
	CatDate                         // a date
	CatHeapNumber                   // a boxed number
	CatNative                       // memory outside the managed heap (DOM, buffers)
	CatOddball                      // null, undefined, true, false, the hole
	CatSymbol                       // a symbol
	CatBigInt                       // a big integer
	CatSynthetic                    // a grouping node made by the dumper (roots, categories)
	CatInternal                     // a VM-internal structure (V8 hidden, system objects)
	CatShape                        // a hidden class, map, shape or Java class object
	numCategories
)

var categoryNames = [numCategories]string{
	"other", "object", "array", "flat string", "concatenated string", "sliced string",
	"code", "closure", "function metadata", "regular expression", "date", "heap number",
	"native", "oddball", "symbol", "bigint", "synthetic", "internal", "shape",
}

// String returns the category's name as the exchange format spells it.
func (c Category) String() string {
	if c < numCategories {
		return categoryNames[c]
	}
	return "other"
}

// IsString reports whether c is one of the string representations.
func (c Category) IsString() bool {
	return c == CatString || c == CatConsString || c == CatSlicedString
}

// NodeType is one entry of a graph's node type table.
type NodeType struct {
	Namespace string   // the runtime that defined the type: "v8", "spidermonkey", "hprof"
	Name      string   // the runtime's own name, exactly as the dump spells it
	Category  Category // the neutral kind analyses reason about
}

// QualifiedName is Namespace:Name, the type's unambiguous name.
func (t NodeType) QualifiedName() string { return t.Namespace + ":" + t.Name }

// EdgeCategory is the runtime-neutral kind of an edge (seed 000's edge
// subtypes plus the VM's own references).
type EdgeCategory uint8

// Edge categories.
const (
	EdgeOther    EdgeCategory = iota // a reference with no better fit
	EdgeProperty                     // an object property
	EdgeElement                      // an array element
	EdgeContext                      // a closure (context) variable
	EdgeInternal                     // a VM-internal reference
	numEdgeCategories
)

var edgeCategoryNames = [numEdgeCategories]string{"other", "object property", "array element", "closure variable", "internal"}

// String returns the category's name as the exchange format spells it.
func (c EdgeCategory) String() string {
	if c < numEdgeCategories {
		return edgeCategoryNames[c]
	}
	return "other"
}

// Strength says whether and how an edge keeps its target alive. Retained-size
// policies decide from it which edges take part in dominance.
type Strength uint8

// Edge strengths.
const (
	// Strong edges retain their target.
	Strong Strength = iota
	// Weak edges do not retain their target (V8 weak, Java Reference.referent).
	Weak
	// Shortcut edges duplicate a path that exists elsewhere (V8 shortcut);
	// they only matter when they leave the root, where they mark user roots.
	Shortcut
	// Ephemeron edges go from an ephemeron table (WeakMap) to a value; the
	// value lives through its key's edge instead, so this edge does not
	// retain it on its own.
	Ephemeron
	numStrengths
)

var strengthNames = [numStrengths]string{"strong", "weak", "shortcut", "ephemeron"}

// String returns the strength's name.
func (s Strength) String() string {
	if s < numStrengths {
		return strengthNames[s]
	}
	return "strong"
}

// EdgeType is one entry of a graph's edge type table.
type EdgeType struct {
	Namespace string // "v8", "spidermonkey", "hprof"
	Name      string // the runtime's own name, exactly as the dump spells it
	Category  EdgeCategory
	Strength  Strength
	// Indexed edges carry a numeric index in Edges.Name instead of a StringID.
	Indexed bool
}

// QualifiedName is Namespace:Name, the type's unambiguous name.
func (t EdgeType) QualifiedName() string { return t.Namespace + ":" + t.Name }
