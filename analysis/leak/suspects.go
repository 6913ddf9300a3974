package leak

import (
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// SuspectOptions tune LeakSuspects.
type SuspectOptions struct {
	// Threshold is the share of the total heap (0..1) a suspect must
	// retain; 0 means 0.1, Eclipse MAT's default. Detached DOM trees need
	// a tenth of it (see LeakSuspects).
	Threshold float64
	// BigDrop is the share of a node's retained size its largest dominated
	// child must keep for the walk down to go on; below it the memory is
	// spread out and the node is the accumulation point. 0 means 0.8, as
	// in MAT's FindLeaksQuery.
	BigDrop float64
}

// NoClass is a class index that names no class (Suspect.Via when no
// collection internals were looked through).
const NoClass = ^uint32(0)

// SuspectField is a field through which a suspect's accumulated objects
// are held: a static field of a Java class, a property of an object, a
// global variable, a closure variable.
type SuspectField struct {
	Owner model.NodeIndex // the object the field belongs to
	Edge  uint32          // the field: an edge of Owner
	// Count is how many of the accumulated objects the field holds:
	// those whose shortest path runs through it, or for a shared
	// accumulation those its structure holds; a linked list's field
	// holds its head, and Count is the list's items.
	Count int
	// Base and Access say how a program names Owner, where its shortest
	// path reaches it from a JavaScript global object or a Java class
	// over a few named fields (globalThis.fixture.customers): Base is the
	// global object or class, Access the fields from it to Owner,
	// outermost first (none when Owner is Base). Base is model.NoNode
	// when Owner is reached otherwise (through a closure, an array).
	Base   model.NodeIndex
	Access []uint32
	// Function is, for a variable (Edge a V8 context edge, Owner the
	// scope holding it), a function that captures it, NoNode when none
	// is known or Owner is a module's top-level scope (Module). Location
	// is where Function is defined, or for a module scope the script's
	// name alone; zero when the dump does not say.
	Function model.NodeIndex
	Module   bool
	Location alloc.Frame
}

// Suspect is one leak suspect: an object holding a large share of the
// heap, where its memory accumulates, the fields that hold it there, and
// which class accumulates.
type Suspect struct {
	// Holder is the top of the suspect's dominator chain: the object whose
	// removal would free Retained bytes (MAT's "suspect" object). It is
	// always an object of the program, never the root, a synthetic node,
	// a global object or the runtime's own structure.
	Holder model.NodeIndex
	// Retained is Holder's retained size.
	Retained uint64
	// Point is the accumulation point: walking down from Holder along the
	// largest dominated child while it keeps at least BigDrop of its
	// parent's retained size, the last node before the size spreads out;
	// where that is a collection's backing store (a V8 Map's table, a
	// Java HashMap's HashMap$Node[]), the collection itself.
	Point model.NodeIndex
	// Fields hold the accumulation, most objects first: Point's own
	// fields when the objects sit in several named fields of it (a Java
	// class's static fields), else the one field that holds Point (the
	// global variable holding a Map).
	Fields []SuspectField
	// Class, Count and ClassRetained describe the accumulation's first
	// class (Classes[0]): Count (at least two) objects of Class below
	// Point, retaining ClassRetained. For detached DOM, Count is the
	// trees and Class their roots' class.
	Class         uint32
	Count         int
	ClassRetained uint64
	// Classes are every class the accumulation is made of, the program's
	// own classes first, then by retained size: a cache's values and its
	// keys, a pending request's context, its IncomingMessage and its
	// ServerResponse. They are what the program put there, found through
	// collection internals and the runtime's machinery (see unfold).
	Classes []SuspectClass
	// Through are the functions that hold the objects of Classes, by
	// retained size: the listener closures of an emitter, the suspended
	// async functions chained on a pending promise, timers' callbacks;
	// nil when no function does.
	Through []SuspectClass
	// Via is the class of the collection internals the objects were found
	// in (java.util.HashMap$Node, V8's "(object elements)"), looked
	// through to Class; NoClass when they sit at Point themselves.
	Via uint32
	// Shape is, when Class is a generic "Object" (SpiderMonkey records no
	// constructor names), the property names of the most common shape
	// among the Count objects, sorted; ShapeCount is how many have it.
	Shape      []string
	ShapeCount int
	// Detached says the accumulation is detached DOM trees (Class is
	// their roots' class), of DetachedNodes nodes in all.
	Detached      bool
	DetachedNodes int
	// Links is set when the accumulation is a linked list: Point is its
	// head, of Class, and Links the edges from it to the next item and
	// on through one block of the hops that repeat (one edge in a list
	// of one class, two in a list of two classes in turn); every item
	// after them is reached over the same edges in turn. Count is the
	// items from the head to the tail, ClassRetained the head's
	// retained size (the whole list).
	Links []uint32
	// Shared says that no object dominates the accumulated objects:
	// several structures hold each of them (jshell's list pts and map
	// byDist hold the same 50,000 Points), each named in Fields with the
	// objects it holds. Holder and Point are the structure holding the
	// most, and Retained, its retained size, leaves the objects out: no
	// one object frees them.
	Shared bool
	// Site is where most of the accumulated objects were allocated; nil
	// when the dump has no allocation stacks.
	Site *alloc.SiteShare
	// HolderField is the variable or field holding Holder, as the program
	// names it (see nameHolders); nil when none does (a root holds it).
	HolderField *SuspectField
	// Machinery is the runtime's structure Holder holds the accumulation
	// through, and Event, for Listeners, the event's name, for Timers the
	// list's duration in milliseconds.
	Machinery Machinery
	Event     string
}

// LeakSuspects finds where the memory of the heap accumulates in objects
// a user can act on, after Eclipse MAT's Leak Suspects report
// (FindLeaksQuery):
//
//   - a node retaining at least Threshold of the total is walked down the
//     dominator tree to its accumulation point, the node below which the
//     retained size is spread over many children; the topmost node of the
//     chain that leads there is the holder (MAT's suspect), so one leak
//     reached through a long chain of wrappers is reported once;
//   - the point must hold an accumulation: at least two objects of one
//     class among the point's dominator-tree children, retaining at least
//     Threshold together, none of them most of it (BigDrop). A point
//     without one is no suspect: "the memory of X is spread over its
//     children" names nothing to fix. MAT reports such single objects
//     anyway; here a 2 MB script source or Firefox's document node
//     would top the list;
//   - collection internals are looked through: a point that is a
//     collection's backing store is shown as the collection, and an
//     accumulation of entry objects (java.util.HashMap$Node and the like,
//     Java object arrays, V8's internal arrays) is replaced by the class
//     the entries hold most memory in (12,000 Ticket, not 7,404
//     HashMap$Node). MAT stops at the HashMap$Node[] and its entries: the
//     collection's plumbing, not what the program put in it;
//   - the fields holding the accumulation are named (MAT leaves that to
//     its merged paths): for each accumulated object the first edge of its
//     shortest path below the point; where at least half of them run
//     through named fields (a class's static fields SESSIONS and
//     LISTENERS) those are the fields, else the point is a container (an
//     array, a map, an object used as a string-keyed cache) and the field
//     is the one holding the point;
//   - a generic class ("Object") is described by its objects' commonest
//     shape, as the shapes inspection groups them;
//   - a linked list held by its head is a chain of dominators, which
//     the walk goes down item by item without ever finding a point: a
//     chain that ends in hops repeating a block of up to MaxRepeatPeriod
//     hops (.next into Item; .next into Item, then into Link), as paths
//     fold them, is a list, followed to its tail (see lists), unless one
//     item holds most of its memory apart from the items after it;
//   - objects of one class that no object dominates (two structures
//     hold each of them, so they hang under the root) are a shared
//     suspect when one structure holds at least half of them; the
//     structures that do are named (see shared);
//   - detached DOM trees held by one object (looked through to a
//     collection) are a suspect when they retain a tenth of Threshold:
//     detached DOM is garbage the page still holds, a leak by definition
//     (memlab reports every detached element), so its share of the heap
//     need not be as large as that of live data to matter.
//
// Never suspects: the root and synthetic nodes, V8 user roots and the
// JavaScript global objects (a global holds the whole program's state, so
// the walk starts below it) are neither holders nor points; the runtime's
// own structures (compiled code, V8 maps, hidden and "system / ..."
// objects, internal arrays, Blink's and Node's C++ objects, SpiderMonkey
// shapes and scripts) are never holders nor accumulated classes. MAT also
// groups the root's dominator-tree children by class ("2,560 instances of
// Function"); where no structure of the program holds most of them there
// is nothing to act on, and they are not reported. "No suspect" is an
// answer: the heap holds no accumulation that large.
//
// Results are sorted by retained size (a shared suspect's: its objects'),
// largest first. The passes are a few over the dominator column, one
// over the nodes above the threshold and the items of each list, one
// more per collection looked through, one over the edges when a shared
// accumulation is tried, and the walks up the shortest-path tree from
// the accumulated objects; the memory, a few columns of the node count.
func LeakSuspects(a *analysis.Analysis, opt SuspectOptions) []Suspect {
	if a.Classes == nil {
		return nil
	}
	if opt.Threshold <= 0 {
		opt.Threshold = 0.1
	}
	if opt.BigDrop <= 0 {
		opt.BigDrop = 0.8
	}
	f := newSuspectFinder(a, opt)
	found := f.accumulations()
	found = append(found, f.detachedTrees(found)...)
	kept := f.outermost(found)
	var fields []*SuspectField
	for i := range kept {
		f.machineryOf(&kept[i].Suspect)
	}
	f.nameHolders(kept)
	for i := range kept {
		fs := &kept[i]
		f.describe(&fs.Suspect, fs.objs)

		for j := range fs.Fields {
			fields = append(fields, &fs.Fields[j])
		}
		if fs.HolderField != nil {
			fields = append(fields, fs.HolderField)
		}
	}
	f.placeScopes(fields)
	var out []Suspect
	for _, fs := range kept {
		if !f.runtimes(&fs.Suspect) {
			out = append(out, fs.Suspect)
		}
	}
	if f.memo != nil {
		f.a.ReturnScratch(f.memo)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Size() > out[j].Size() })
	return out
}

// Size is the memory the suspect stands for: its holder's retained size,
// or, for a shared suspect, its objects' (which no one holder retains).
func (s Suspect) Size() uint64 {
	if s.Shared {
		return s.ClassRetained
	}
	return s.Retained
}

// suspectFinder holds what LeakSuspects' steps share.
type suspectFinder struct {
	a   *analysis.Analysis
	g   *model.Graph
	k   *kinds.Table
	opt SuspectOptions
	min uint64
	engineRules
	opaque  analysis.Bits // never holders nor points: the root, V8 user roots, global objects, module scopes
	globals analysis.Bits // JavaScript global objects
	modules analysis.Bits // V8 module scopes (see moduleScope)
	plumb   []int8        // per class: 0 unknown, 1 collection internals, 2 not
	mach    []int8        // per class: 0 unknown, 1 machinery (see machinery), 2 not
	user    []int8        // per class: 0 unknown, 1 the program's own (see userClass), 2 not
	locs    alloc.NodeLocations
	// memo and touched serve fields' walks (see fields).
	memo    []int32 // from a.BorrowScratch, returned by LeakSuspects
	touched []int32
	sites   *alloc.SiteFinder // nil without allocation stacks
}

func newSuspectFinder(a *analysis.Analysis, opt SuspectOptions) *suspectFinder {
	g := a.Graph
	k := kinds.New(g)
	f := &suspectFinder{a: a, g: g, k: k, opt: opt, engineRules: engineRulesFor(g),
		opaque: analysis.NewBits(g.NumNodes()), globals: analysis.NewBits(g.NumNodes()), modules: analysis.NewBits(g.NumNodes()), plumb: make([]int8, len(a.Classes.Names)),
		mach: make([]int8, len(a.Classes.Names)), user: make([]int8, len(a.Classes.Names)),
		locs: alloc.NewNodeLocations(a), sites: alloc.NewSiteFinder(a)}
	f.min = max(uint64(opt.Threshold*float64(a.Dominators.Retained[g.Root])), 1)
	f.opaque.Set(int(g.Root))
	if f.v8 {
		for _, u := range a.Roots.User {
			f.opaque.Set(int(u))
		}
	}
	if f.v8 {
		// A module's top-level scope is its globals: like a global
		// object, it holds the module's whole state (and everything
		// holding one of its functions holds all of it), so the walk
		// starts below it and the variables in it name what they hold.
		for v := range int32(g.NumNodes()) {
			if f.isScope(v) && f.moduleScope(v) {
				f.opaque.Set(int(v))
				f.modules.Set(int(v))
			}
			if exports := f.moduleExports(v); exports >= 0 {
				f.opaque.Set(int(v))
				f.opaque.Set(int(exports))
			}
		}
	}
	if f.v8 || kinds.IsSpiderMonkey(g) { // for other runtimes GlobalObjects are class objects: holders
		for _, u := range inspect.GlobalObjects(a, k) {
			f.opaque.Set(int(u))
			f.globals.Set(int(u))
		}
	}
	return f
}

// isOpaque reports whether v is never a holder nor a point.
func (f *suspectFinder) isOpaque(v model.NodeIndex) bool {
	return f.opaque.Has(int(v)) || f.k.NodeOf(f.g, v) == kinds.Synthetic
}

// internal reports whether v is the runtime's own structure rather than
// the program's data, so it is neither a holder nor an accumulated class.
func (f *suspectFinder) internal(v model.NodeIndex) bool { return f.owns(f.g, f.k, v) }

// found is a suspect with its accumulated objects, before describe.
type found struct {
	Suspect
	objs  []int32
	total uint64 // what the accumulation retains
}

// outermost drops the suspects inside another one's accumulation: a
// suspect whose holder is one of another suspect's accumulated objects,
// or dominated by one (at a low threshold each of 400 sessions would
// otherwise be a suspect of its own next to the 400 sessions, as would
// each of 20 detached trees next to the 20 trees). MAT gets the same by
// starting only from the root's dominator-tree children.
func (f *suspectFinder) outermost(all []found) []found {
	idom := f.a.Dominators.IDom
	owner := f.a.BorrowScratch(f.g.NumNodes(), true) // 1 + the suspect whose object a node is
	defer f.a.ReturnScratch(owner)
	for i, fs := range all {
		for _, v := range fs.objs {
			owner[v] = int32(i + 1)
		}
	}
	var out []found
	for i, fs := range all {
		inside := false
		for u := fs.Holder; u >= 0 && !inside; u = idom[u] {
			inside = owner[u] != 0 && owner[u] != int32(i+1)
		}
		if !inside {
			out = append(out, fs)
		}
	}
	return out
}

// classGroup is the dominator-tree children of one node of one class.
type classGroup struct {
	class    uint32
	count    int
	retained uint64
	largest  uint64          // the largest retained size among them
	example  model.NodeIndex // one of them
	try      bool            // it could be a point's accumulation, or a shared one
	nodes    []int32         // all of them, when try
}

// bigDrop reports whether part keeps at least BigDrop of whole: the walk
// down the dominator tree goes on, and a group with such a member is no
// accumulation.
func (f *suspectFinder) bigDrop(part, whole uint64) bool {
	return float64(part) >= f.opt.BigDrop*float64(whole)
}

// chained reports whether v continues the chain of p (p is v's immediate
// dominator): p is at or above the threshold and may be walked down, and
// v is p's largest dominated child (biggest, see accumulations) and keeps
// BigDrop of it.
func (f *suspectFinder) chained(biggest []int32, p, v model.NodeIndex) bool {
	doms := f.a.Dominators
	return p >= 0 && !f.isOpaque(p) && doms.Retained[p] >= f.min && biggest[p] == v+1 && f.bigDrop(doms.Retained[v], doms.Retained[p])
}
