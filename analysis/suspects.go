package analysis

import (
	"cmp"
	"slices"
	"sort"
	"strings"

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
	// Class, Count and ClassRetained describe the accumulation: Count (at
	// least two) objects of Class below Point, retaining ClassRetained.
	// For detached DOM, Count is the trees and Class their roots' class.
	Class         uint32
	Count         int
	ClassRetained uint64
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
	Site *SiteShare
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
func LeakSuspects(a *Analysis, opt SuspectOptions) []Suspect {
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
	var out []Suspect
	for _, fs := range f.outermost(found) {
		f.describe(&fs.Suspect, fs.objs)
		out = append(out, fs.Suspect)
	}
	if f.memo != nil {
		f.a.sc.put(f.memo)
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
	a   *Analysis
	g   *model.Graph
	k   *kinds
	opt SuspectOptions
	min uint64
	engineRules
	opaque  Bits   // never holders nor points: the root, V8 user roots, global objects
	globals Bits   // JavaScript global objects
	plumb   []int8 // per class: 0 unknown, 1 collection internals, 2 not
	// memo and touched serve fields' walks (see fields).
	memo    []int32 // from a.sc, returned by LeakSuspects
	touched []int32
	sites   *SiteFinder // nil without allocation stacks
}

func newSuspectFinder(a *Analysis, opt SuspectOptions) *suspectFinder {
	g := a.Graph
	k := newKinds(g)
	f := &suspectFinder{a: a, g: g, k: k, opt: opt, engineRules: engineRulesFor(g),
		opaque: NewBits(g.NumNodes()), globals: NewBits(g.NumNodes()), plumb: make([]int8, len(a.Classes.Names)),
		sites: a.SiteFinder()}
	f.min = max(uint64(opt.Threshold*float64(a.Dominators.Retained[g.Root])), 1)
	f.opaque.Set(int(g.Root))
	if f.v8 {
		for _, u := range a.Roots.User {
			f.opaque.Set(int(u))
		}
	}
	if f.v8 || isSpiderMonkey(g) { // for other runtimes globalObjects are class objects: holders
		for _, u := range a.globalObjects(k) {
			f.opaque.Set(int(u))
			f.globals.Set(int(u))
		}
	}
	return f
}

// hprofNamespace is the namespace of the HPROF reader's node and edge types.
const hprofNamespace = "hprof"

// isOpaque reports whether v is never a holder nor a point.
func (f *suspectFinder) isOpaque(v model.NodeIndex) bool {
	return f.opaque.Has(int(v)) || f.k.nodeKindOf(f.g, v) == kSynthetic
}

// internal reports whether v is the runtime's own structure rather than
// the program's data, so it is neither a holder nor an accumulated class.
func (f *suspectFinder) internal(v model.NodeIndex) bool { return f.owns(f.g, f.k, v) }

// engineRules tells the runtime's own structures from the program's data,
// which differs by runtime (see owns).
type engineRules struct {
	v8, hprof bool
}

func engineRulesFor(g *model.Graph) engineRules {
	r := engineRules{v8: isV8(g)}
	for _, t := range g.NodeTypes {
		r.hprof = r.hprof || t.Namespace == hprofNamespace
	}
	return r
}

// owns reports whether v is the runtime's own structure: compiled code,
// hidden and synthetic nodes, V8's maps and internal arrays and
// "system / ..." objects, SpiderMonkey's shapes, Blink's and Node's C++
// objects. A user can act on none of them, so they are neither leak
// suspects nor what grows in a report.
func (r engineRules) owns(g *model.Graph, k *kinds, v model.NodeIndex) bool {
	switch kind := k.nodeKindOf(g, v); kind {
	case kSynthetic, kCode, kHidden, kOther:
		return true
	case kShape:
		return !r.hprof // V8 maps, SpiderMonkey shapes; a Java class object holds static fields
	case kArray:
		return r.v8 // V8's internal arrays; Java's arrays are the program's
	case kObject, kNative:
		if !r.v8 {
			return false
		}
		name := g.NodeName(v)
		if strings.HasPrefix(name, "system / ") {
			return true
		}
		// Blink's C++ objects (blink::ComputedStyle) and Node's
		// embedder objects (Node / BindingData), not the DOM.
		return kind == kNative && (strings.Contains(name, "::") || strings.HasPrefix(name, "Node / "))
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
			kind := f.k.nodeKindOf(f.g, v)
			is = kind == kArray || kind == kHidden
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

// found is a suspect with its accumulated objects, before describe.
type found struct {
	Suspect
	objs []int32
}

// outermost drops the suspects inside another one's accumulation: a
// suspect whose holder is one of another suspect's accumulated objects,
// or dominated by one (at a low threshold each of 400 sessions would
// otherwise be a suspect of its own next to the 400 sessions, as would
// each of 20 detached trees next to the 20 trees). MAT gets the same by
// starting only from the root's dominator-tree children.
func (f *suspectFinder) outermost(all []found) []found {
	idom := f.a.Dominators.IDom
	owner := f.a.sc.get(f.g.NumNodes(), true) // 1 + the suspect whose object a node is
	defer f.a.sc.put(owner)
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

// accumulations finds the suspects at accumulation points (at most one
// per point, the one whose objects retain the most), the linked lists
// the walk down leads into (lists) and the accumulations no object
// dominates (shared).
func (f *suspectFinder) accumulations() []found {
	a, doms := f.a, f.a.Dominators
	n := f.g.NumNodes()
	// biggest[v] is 1 + v's largest dominated child, for v at or above
	// the threshold (0: none). A column, not a map: most items of a
	// leaked linked list are above the threshold (890,000 of 1M).
	biggest := a.sc.get(n, true)
	defer a.sc.put(biggest)
	for v, p := range doms.IDom {
		if p >= 0 && doms.Retained[p] >= f.min {
			if b := biggest[p]; b == 0 || doms.Retained[v] > doms.Retained[b-1] {
				biggest[p] = int32(v) + 1
			}
		}
	}
	// The nodes whose dominated children are grouped by class: the points
	// (nodes at or above the threshold whose largest child keeps less
	// than BigDrop; a few hundred at most, as each retains a share of the
	// heap) and the opaque nodes at or above the threshold, for shared.
	slot := map[model.NodeIndex]int{}
	var parents []model.NodeIndex
	grouped := NewBits(n)
	for v, r := range doms.Retained {
		if r < f.min {
			continue
		}
		if b := biggest[v]; f.isOpaque(int32(v)) || b == 0 || !f.bigDrop(doms.Retained[b-1], r) {
			slot[model.NodeIndex(v)] = len(parents)
			parents = append(parents, model.NodeIndex(v))
			grouped.Set(v)
		}
	}
	type groupKey struct {
		slot  int
		class uint32
	}
	groups := map[groupKey]*classGroup{}
	for v, p := range doms.IDom {
		if p < 0 || !grouped.Has(int(p)) || a.Self[v] == 0 {
			continue
		}
		key := groupKey{slot[p], a.Classes.Of[v]}
		gr := groups[key]
		if gr == nil {
			gr = &classGroup{class: key.class, example: model.NodeIndex(v)}
			groups[key] = gr
		}
		gr.count++
		gr.retained += doms.Retained[v]
		gr.largest = max(gr.largest, doms.Retained[v])
	}

	// At each parent, the groups that could be its accumulation, largest
	// first: at least two objects retaining the threshold, none of them
	// most of it; at a point, of the program's classes or collection
	// internals to look through; at an opaque node, of the program's
	// data only (see shared): not its functions, which the modules that
	// define them hold from several sides, nor DOM nodes, which a live
	// document holds from their parents, siblings and itself.
	tries := make([][]*classGroup, len(parents))
	for key, gr := range groups {
		if gr.count < 2 || gr.retained < f.min || f.bigDrop(gr.largest, gr.retained) {
			continue
		}
		if f.isOpaque(parents[key.slot]) {
			if kind := f.k.nodeKindOf(f.g, gr.example); kind == kClosure || kind == kNative || f.internal(gr.example) || f.plumbing(gr.example) {
				continue
			}
		} else if !f.plumbing(gr.example) && f.internal(gr.example) {
			continue
		}
		tries[key.slot] = append(tries[key.slot], gr)
		gr.try = true
	}
	for _, t := range tries {
		sort.Slice(t, func(i, j int) bool {
			if t[i].retained != t[j].retained {
				return t[i].retained > t[j].retained
			}
			return t[i].class < t[j].class
		})
	}
	for v, p := range doms.IDom { // collect the groups' objects
		if p < 0 || !grouped.Has(int(p)) || a.Self[v] == 0 {
			continue
		}
		if gr := groups[groupKey{slot[p], a.Classes.Of[v]}]; gr != nil && gr.try {
			gr.nodes = append(gr.nodes, int32(v))
		}
	}

	var out []found
	accumulated := NewBits(n) // the points with a suspect
	var sharedTries []*classGroup
	for s, v := range parents {
		if len(tries[s]) == 0 {
			continue
		}
		if f.isOpaque(v) {
			sharedTries = append(sharedTries, tries[s]...)
			continue
		}
		point := f.collection(v)
		holder := f.holder(biggest, v, point)
		if holder < 0 {
			continue
		}
		for _, gr := range tries[s] {
			sus := Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point, Via: NoClass,
				Class: gr.class, Count: gr.count, ClassRetained: gr.retained}
			objs := gr.nodes
			if f.plumbing(gr.example) {
				// Look through from the collection, which holds all
				// of it where v holds a part (a TreeMap's subtree).
				from := gr.nodes
				if point != v {
					from = []int32{point}
				}
				var ok bool
				if sus.Class, objs, sus.ClassRetained, ok = f.lookThrough(from); !ok {
					continue
				}
				sus.Via, sus.Count = gr.class, len(objs)
			}
			accumulated.Set(int(v))
			// Several nodes can lead to one collection (a TreeMap's
			// subtrees, an object and its property store).
			i := slices.IndexFunc(out, func(o found) bool { return o.Point == sus.Point })
			switch {
			case i < 0:
				out = append(out, found{Suspect: sus, objs: objs})
			case sus.ClassRetained > out[i].ClassRetained:
				out[i] = found{Suspect: sus, objs: objs}
			}
			break
		}
	}
	out = append(out, f.lists(biggest, accumulated)...)
	return append(out, f.shared(sharedTries)...)
}

// chainTop returns the top of the chain v is on: the topmost node the
// walk down the dominator tree goes from to v.
func (f *suspectFinder) chainTop(biggest []int32, v model.NodeIndex) model.NodeIndex {
	for p := f.a.Dominators.IDom[v]; f.chained(biggest, p, v); p = f.a.Dominators.IDom[v] {
		v = p
	}
	return v
}

// holder returns the suspect's holder for a walk down that led to v,
// whose collection is point (v, or a dominator of v): the topmost of the
// program's objects on the chain from its top down to point, where the
// chain is v's, or point's where the collection is above the top of v's
// chain (it holds all of it); NoNode when all of them are the runtime's.
func (f *suspectFinder) holder(biggest []int32, v, point model.NodeIndex) model.NodeIndex {
	idom := f.a.Dominators.IDom
	top := f.chainTop(biggest, v)
	for u := v; u != point; u = idom[u] {
		if u == top {
			top = f.chainTop(biggest, point)
		}
	}
	holder := model.NoNode
	for u := point; ; u = idom[u] {
		if !f.internal(u) {
			holder = u
		}
		if u == top {
			return holder
		}
	}
}

// linkHop is one hop of a chain of dominators, as paths fold them: the
// edge's type and name (0 for an indexed edge, whose index does not
// count) and the class it leads to. class is NoClass where the
// dominator has no edge to the node it dominates (they are joined by
// two or more paths): such a hop repeats nothing.
type linkHop struct {
	class uint32
	etype uint8
	name  uint32
}

// linkHopOf returns the hop over edge e.
func (f *suspectFinder) linkHopOf(e uint32) linkHop {
	g := f.g
	h := linkHop{class: f.a.Classes.Of[g.Edges.To[e]], etype: g.Edges.Type[e], name: g.Edges.Name[e]}
	if f.k.indexed[h.etype] {
		h.name = 0
	}
	return h
}

// link returns u's first edge that makes hop h to a node u dominates, or
// noParent.
func (f *suspectFinder) link(u model.NodeIndex, h linkHop) uint32 {
	g := f.g
	s, end := g.EdgeRange(u)
	for e := s; e < end; e++ {
		t := g.Edges.To[e]
		if g.Edges.Type[e] == h.etype && f.a.Dominators.IDom[t] == u && f.a.Classes.Of[t] == h.class &&
			(f.k.indexed[h.etype] || g.Edges.Name[e] == h.name) {
			return e
		}
	}
	return noParent
}

// edgeTo returns u's first edge to v that is not weak, or noParent.
func (f *suspectFinder) edgeTo(u, v model.NodeIndex) uint32 {
	g := f.g
	s, end := g.EdgeRange(u)
	for e := s; e < end; e++ {
		if g.Edges.To[e] == v && !f.k.weak[g.Edges.Type[e]] {
			return e
		}
	}
	return noParent
}

// lists finds the suspects that are linked lists. A leaked list held by
// its head is a chain of dominators, each item dominating the rest, so
// the walk down (MAT's) goes along it item by item and finds no point;
// yet the memory accumulates there, in the items. So each chain of the
// walk (from a node above the threshold that does not continue its
// parent's chain, down along the largest child while it keeps BigDrop)
// is read as paths fold hops (repeatPeriod): where the chain ends in a
// run of hops repeating a block of up to MaxRepeatPeriod hops (.next
// into Item, or .next into Link then .next into Item), and its last node
// is no point with an accumulation, the run is a list; it is followed
// past the threshold to its tail (see list). Each node above the
// threshold is on one chain, so this is one pass over them, plus one
// over each list's items.
func (f *suspectFinder) lists(biggest []int32, accumulated Bits) []found {
	doms := f.a.Dominators
	const ring = 2 * MaxRepeatPeriod // the hops repeatPeriod looks back at
	var hops [ring]linkHop
	var nodes [ring]model.NodeIndex // the node each hop leaves
	var out []found
	for v, r := range doms.Retained {
		start := model.NodeIndex(v)
		if r < f.min || f.isOpaque(start) || f.chained(biggest, doms.IDom[start], start) {
			continue
		}
		period, head := 0, model.NoNode // the run the chain ends in: its period and first node
		var block []linkHop             // its first period hops
		c := start
		for j := 0; ; j++ {
			b := biggest[c] - 1
			if b < 0 || !f.chained(biggest, c, b) {
				break
			}
			h := linkHop{class: NoClass}
			if e := f.edgeTo(c, b); e != noParent {
				h = f.linkHopOf(e)
			}
			hops[j%ring], nodes[j%ring] = h, c
			p := 0
			if h.class != NoClass {
				p = repeatPeriod(j, func(x, y int) bool {
					hx := hops[(j-x)%ring]
					return hx.class != NoClass && hx == hops[(j-y)%ring]
				})
			}
			if p != period {
				period, head, block = p, model.NoNode, block[:0]
				if p > 0 {
					first := j - 2*p + 1
					head = nodes[first%ring]
					for i := range p {
						block = append(block, hops[(first+i)%ring])
					}
				}
			}
			c = b
		}
		if period == 0 || accumulated.Has(int(c)) {
			continue
		}
		if fs, ok := f.list(biggest, head, block); ok {
			out = append(out, fs)
		}
	}
	return out
}

// list makes the suspect of the linked list whose first item is head, on
// a chain of the walk down (biggest, see accumulations): the items are
// head and the nodes reached from it by the hops of block in turn, each
// dominated by the one before, to the tail. It is a suspect when none of the items keeps most of the
// list's memory apart from the items after it (where one does, the
// chain is the way to that item's memory, not an accumulation) and the
// items are of the program's classes; a list of collection internals
// (a ConcurrentLinkedQueue's nodes) is looked through to what they hold,
// as at a point.
func (f *suspectFinder) list(biggest []int32, head model.NodeIndex, block []linkHop) (found, bool) {
	doms := f.a.Dominators
	items := []int32{head}
	for cur := head; ; {
		e := f.link(cur, block[(len(items)-1)%len(block)])
		if e == noParent {
			break
		}
		cur = f.g.Edges.To[e]
		items = append(items, cur)
	}
	if len(items) < 2*len(block)+1 { // link found other nodes than the chain's
		return found{}, false
	}
	var largest uint64 // the most an item retains apart from the items after it
	for i, v := range items {
		own := doms.Retained[v]
		if i+1 < len(items) {
			own -= doms.Retained[items[i+1]]
		}
		largest = max(largest, own)
	}
	if f.bigDrop(largest, doms.Retained[head]) {
		return found{}, false
	}
	// The items of the program's classes: all, or those at the block's
	// positions that are not collection internals.
	objs, mixed := items, false
	for _, v := range items[:len(block)] {
		if f.internal(v) && !f.plumbing(v) {
			return found{}, false
		}
		mixed = mixed || f.plumbing(v)
	}
	if mixed {
		objs = nil
		for _, v := range items {
			if !f.plumbing(v) {
				objs = append(objs, v)
			}
		}
	}
	if len(objs) == 0 { // the collection's own list: look through it
		point := f.collection(head)
		if point == head {
			return found{}, false
		}
		class, objs, retained, ok := f.lookThrough([]int32{point})
		holder := f.holder(biggest, head, point)
		if !ok || holder < 0 {
			return found{}, false
		}
		return found{Suspect: Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point,
			Class: class, Count: len(objs), ClassRetained: retained, Via: f.a.Classes.Of[head]}, objs: objs}, true
	}
	point := objs[0]
	holder := f.holder(biggest, point, point)
	i := slices.Index(items, point) // below len(block)
	if len(objs) < 2 || holder < 0 || i+len(block) >= len(items) {
		return found{}, false
	}
	// The edges of one block of hops from point.
	var links []uint32
	for x := range block {
		links = append(links, f.link(items[i+x], block[(i+x)%len(block)]))
	}
	return found{Suspect: Suspect{Holder: holder, Retained: doms.Retained[holder], Point: point, Via: NoClass,
		Class: f.a.Classes.Of[point], Count: len(objs), ClassRetained: doms.Retained[point], Links: links}, objs: objs}, true
}

// shared finds the suspects among the accumulations no object
// dominates: groups (tries) of objects of one program class whose
// immediate dominator is the root, a user root or a global object
// because several structures hold each of them (jshell's pts list and
// byDist map hold the same 50,000 Points, so each Point hangs right
// under the root). MAT reports such groups by class alone ("50,000
// instances of Point"), which names nothing to fix; here the structures
// are named: every retainer of the objects that a path from the roots
// reaches (garbage holds nothing) is taken to the structure it is part
// of (structure), and the structures holding at least half of the
// objects are the suspect's fields, the one holding the most its holder
// and point. A group no one structure holds half of (a program's
// functions, held by the global object, their modules and each other)
// is no suspect. The cost is one pass over the edges, when there is a
// group to try.
func (f *suspectFinder) shared(tries []*classGroup) []found {
	if len(tries) == 0 {
		return nil
	}
	g := f.g
	cost, _ := f.a.shortestPathTree()
	member := f.a.sc.get(g.NumNodes(), true) // 1 + the try a node is an object of
	defer f.a.sc.put(member)
	for i, gr := range tries {
		for _, v := range gr.nodes {
			member[v] = int32(i + 1)
		}
	}
	type held struct{ try, structure, obj int32 }
	var pairs []held
	memo := map[model.NodeIndex]model.NodeIndex{}
	for u := range int32(g.NumNodes()) {
		if cost[u] < 0 {
			continue
		}
		s, end := g.EdgeRange(u)
		for e := s; e < end; e++ {
			t := g.Edges.To[e]
			if i := member[t]; i != 0 && member[u] != i && !f.k.weak[g.Edges.Type[e]] {
				if st := f.structure(u, memo); st >= 0 {
					pairs = append(pairs, held{i - 1, st, t})
				}
			}
		}
	}
	slices.SortFunc(pairs, func(x, y held) int {
		return cmp.Or(cmp.Compare(x.try, y.try), cmp.Compare(x.structure, y.structure), cmp.Compare(x.obj, y.obj))
	})
	pairs = slices.Compact(pairs)
	var out []found
	type holds struct {
		structure model.NodeIndex
		count     int
	}
	for len(pairs) > 0 {
		i := pairs[0].try
		var counts []holds
		for len(pairs) > 0 && pairs[0].try == i {
			if n := len(counts); n > 0 && counts[n-1].structure == pairs[0].structure {
				counts[n-1].count++
			} else {
				counts = append(counts, holds{pairs[0].structure, 1})
			}
			pairs = pairs[1:]
		}
		gr := tries[i]
		sort.SliceStable(counts, func(x, y int) bool { return counts[x].count > counts[y].count })
		var fields []SuspectField
		for _, c := range counts {
			if 2*c.count < gr.count {
				break
			}
			if sf, ok := f.holding(c.structure, c.count); ok {
				fields = append(fields, sf)
			}
		}
		if len(fields) == 0 {
			continue
		}
		point := counts[0].structure
		out = append(out, found{Suspect: Suspect{Holder: point, Retained: f.a.Dominators.Retained[point], Point: point,
			Fields: fields, Class: gr.class, Count: gr.count, ClassRetained: gr.retained, Via: NoClass, Shared: true},
			objs: gr.nodes})
	}
	return out
}

// structure returns the structure node u is part of, for shared: u, or
// where u is collection internals or sits in them (an ArrayList's
// Object[], a HashMap's nodes and the lists they hold as values), the
// nearest dominator that is neither; NoNode where that is opaque, the
// runtime's own, a DOM node or still collection internals. memo keeps
// the answers for every node walked, so the walks cost one step per node.
func (f *suspectFinder) structure(u model.NodeIndex, memo map[model.NodeIndex]model.NodeIndex) model.NodeIndex {
	idom := f.a.Dominators.IDom
	var walked []model.NodeIndex
	res := model.NoNode
	for v := u; ; {
		if r, ok := memo[v]; ok {
			res = r
			break
		}
		walked = append(walked, v)
		if p := idom[v]; p >= 0 && !f.isOpaque(p) && (f.plumbing(v) || f.plumbing(p)) {
			v = p
			continue
		}
		if !f.isOpaque(v) && !f.internal(v) && !f.plumbing(v) && f.k.nodeKindOf(f.g, v) != kNative {
			res = v
		}
		break
	}
	for _, w := range walked {
		memo[w] = res
	}
	return res
}

// lookThrough finds the objects a group of collection internals holds:
// the dominator-tree descendants of insts reached through collection
// internals only (a HashMap$Node's value, and those of the nodes chained
// to it by .next), grouped by class; the class retaining the most is the
// answer, with its objects and their retained sum. It fails when that
// class is no accumulation of the program's objects.
func (f *suspectFinder) lookThrough(insts []int32) (class uint32, objs []int32, retained uint64, ok bool) {
	idom := f.a.Dominators.IDom
	n := f.g.NumNodes()
	in, known := NewBits(n), NewBits(n) // in: insts and internals below them
	for _, v := range insts {
		in.Set(int(v))
		known.Set(int(v))
	}
	var stack []int32
	holds := func(v int32) bool {
		u := v
		for !known.Has(int(u)) && f.plumbing(u) && idom[u] >= 0 {
			stack = append(stack, u)
			u = idom[u]
		}
		res := known.Has(int(u)) && in.Has(int(u))
		known.Set(int(u))
		for _, s := range stack {
			known.Set(int(s))
			if res {
				in.Set(int(s))
			}
		}
		stack = stack[:0]
		return in.Has(int(v))
	}
	type sum struct {
		count    int
		retained uint64
		example  int32
	}
	sums := map[uint32]*sum{}
	for v, p := range idom {
		if p < 0 || in.Has(v) || f.plumbing(int32(v)) || !holds(p) {
			continue
		}
		c := f.a.Classes.Of[v]
		s := sums[c]
		if s == nil {
			s = &sum{example: int32(v)}
			sums[c] = s
		}
		s.count++
		s.retained += f.a.Dominators.Retained[v]
	}
	var best *sum
	for c, s := range sums {
		if best == nil || s.retained > best.retained || (s.retained == best.retained && c < class) {
			best, class = s, c
		}
	}
	if best == nil || best.count < 2 || f.internal(best.example) {
		return 0, nil, 0, false
	}
	for v, p := range idom {
		if p >= 0 && in.Has(int(p)) && !in.Has(v) && f.a.Classes.Of[v] == class && !f.plumbing(int32(v)) {
			objs = append(objs, int32(v))
		}
	}
	return class, objs, best.retained, true
}

// detachedTrees finds the suspects of detached DOM: the trees of
// DetachedDOM grouped by the object that dominates them (looked through
// to a collection), or each tree on its own where that object is no
// holder; a group is a suspect when it retains a tenth of the threshold,
// unless an accumulation suspect already tells it (have).
func (f *suspectFinder) detachedTrees(have []found) []found {
	doms := f.a.Dominators
	type group struct {
		holder   model.NodeIndex
		roots    []int32
		retained uint64
		nodes    int
	}
	var groups []*group
	byHolder := map[model.NodeIndex]*group{}
	for _, t := range f.a.DetachedDOM(DetachedOptions{}).Trees {
		if t.Retained == 0 || f.internal(t.Root) {
			continue
		}
		// Look through wrappers: objects that hold the tree and little
		// else (Firefox's reflector, a JS object per <section>, between
		// each tree and the array holding all 20).
		h, held := doms.IDom[t.Root], t.Retained
		for h >= 0 && !f.isOpaque(h) && !f.internal(h) && doms.IDom[h] >= 0 && doms.Retained[h]-held <= held/16 {
			held = doms.Retained[h]
			h = doms.IDom[h]
		}
		if h >= 0 {
			h = f.collection(h)
		}
		if h < 0 || f.isOpaque(h) || f.internal(h) {
			h = t.Root
		}
		gr := byHolder[h]
		if gr == nil {
			gr = &group{holder: h}
			byHolder[h] = gr
			groups = append(groups, gr)
		}
		gr.roots = append(gr.roots, t.Root)
		gr.retained += t.Retained
		gr.nodes += t.Nodes
	}
	var out []found
	for _, gr := range groups {
		if gr.retained < max(f.min/10, 1) {
			continue
		}
		counts := map[uint32]int{}
		class := f.a.Classes.Of[gr.roots[0]]
		for _, r := range gr.roots {
			c := f.a.Classes.Of[r]
			counts[c]++
			if counts[c] > counts[class] || (counts[c] == counts[class] && c < class) {
				class = c
			}
		}
		if slices.ContainsFunc(have, func(s found) bool { return s.Point == gr.holder && s.Class == class }) {
			continue
		}
		sus := Suspect{Holder: gr.holder, Retained: doms.Retained[gr.holder], Point: gr.holder, Via: NoClass,
			Class: class, Count: len(gr.roots), ClassRetained: gr.retained, Detached: true, DetachedNodes: gr.nodes}
		out = append(out, found{sus, gr.roots})
	}
	return out
}

// describe fills in the fields holding a suspect's accumulated objects
// objs and, for a generic class, their shape.
func (f *suspectFinder) describe(s *Suspect, objs []int32) {
	if site, ok := f.sites.Dominant(objs); ok {
		s.Site = &site
	}
	switch {
	case s.Shared: // shared named them
	case s.Links != nil: // the field holding the head
		if sf, ok := f.holding(s.Point, s.Count); ok {
			s.Fields = []SuspectField{sf}
		}
	default:
		s.Fields = f.fields(s.Point, objs)
	}
	if f.a.Classes.Names[s.Class] != "Object" {
		return
	}
	sn := newShapeNames(f.g, f.k)
	counts := map[string]int{}
	var buf []string
	best := ""
	for _, v := range objs {
		buf = sn.names(v, buf)
		key := strings.Join(buf, "\x00")
		counts[key]++
		if c, b := counts[key], counts[best]; c > b || (c == b && key < best) {
			best = key
		}
	}
	if counts[best] > 0 && best != "" {
		s.Shape, s.ShapeCount = strings.Split(best, "\x00"), counts[best]
	}
}

// fields finds the fields holding objs, which point dominates (see
// LeakSuspects): the first edges below point on their shortest paths,
// read off ShortestPaths' BFS tree, where named fields other than those
// leading to collection internals (a HashMap's table) hold at least half
// of them, else the field holding point.
func (f *suspectFinder) fields(point model.NodeIndex, objs []int32) []SuspectField {
	g := f.g
	_, parent := f.a.shortestPathTree()
	if f.memo == nil {
		f.memo = f.a.sc.get(g.NumNodes(), true)
	}
	// memo[v] is 0 before v is seen, -1 when v's path misses point, else
	// 1 + the slot of the edge below point it runs through; the entries
	// set are cleared again at the end, for the next suspect.
	memo := f.memo
	var edges []uint32
	var counts []int
	slotOf := map[uint32]int32{}
	var stack []int32
	for _, o := range objs {
		v, res := o, int32(-1)
		for v != point {
			if m := memo[v]; m != 0 {
				res = m
				break
			}
			e := parent[v]
			if e == noParent {
				break
			}
			stack = append(stack, v)
			u := edgeSource(g, e)
			if u == point {
				sl, ok := slotOf[e]
				if !ok {
					sl = int32(len(edges))
					slotOf[e] = sl
					edges = append(edges, e)
					counts = append(counts, 0)
				}
				res = sl + 1
				break
			}
			v = u
		}
		for _, s := range stack {
			memo[s] = res
		}
		f.touched = append(f.touched, stack...)
		stack = stack[:0]
		if res > 0 {
			counts[res-1]++
		}
	}
	for _, v := range f.touched {
		memo[v] = 0
	}
	f.touched = f.touched[:0]

	var named []SuspectField
	total := 0
	for i, e := range edges {
		if counts[i] >= 2 && f.isField(e) && !f.plumbing(f.g.Edges.To[e]) {
			named = append(named, f.field(point, e, counts[i]))
			total += counts[i]
		}
	}
	if 2*total >= len(objs) && total > 0 {
		sort.SliceStable(named, func(i, j int) bool { return named[i].Count > named[j].Count })
		return named
	}
	// Else point is a container: the field is the one holding it.
	if sf, ok := f.holding(point, len(objs)); ok {
		return []SuspectField{sf}
	}
	return nil
}

// holding returns the field holding v, for count objects: the first
// named field on v's shortest path back from it, past the slots of
// arrays and collection internals on the way (the global variable holding
// an Array, not the Array's [3] holding a Map), or the root's edge to it;
// false when v is unreachable.
func (f *suspectFinder) holding(v model.NodeIndex, count int) (SuspectField, bool) {
	g := f.g
	_, parent := f.a.shortestPathTree()
	first := model.NoNode
	var firstEdge uint32
	for range 16 {
		e, u := parent[v], model.NodeIndex(0)
		if e == noParent {
			// A root holds v (a V8 user root, a JVM's GC root): the
			// field is the root's edge, as ShortestPaths spells it.
			if e = f.edgeTo(g.Root, v); e == noParent {
				break
			}
			u = g.Root
		} else {
			u = edgeSource(g, e)
		}
		if first < 0 {
			first, firstEdge = u, e
		}
		if f.isField(e) || f.isOpaque(u) {
			first, firstEdge = u, e
			break
		}
		v = u
	}
	if first < 0 {
		return SuspectField{}, false
	}
	return f.field(first, firstEdge, count), true
}

// field makes the SuspectField of edge e of owner, with its Base and
// Access: up to maxAccess named fields back along owner's shortest path
// to a global object or a Java class.
func (f *suspectFinder) field(owner model.NodeIndex, e uint32, count int) SuspectField {
	const maxAccess = 4
	_, parent := f.a.shortestPathTree()
	sf := SuspectField{Owner: owner, Edge: e, Count: count, Base: model.NoNode}
	var access []uint32
	for u := owner; len(access) <= maxAccess; {
		if f.globals.Has(int(u)) || (f.hprof && f.k.nodeKindOf(f.g, u) == kShape) {
			slices.Reverse(access)
			sf.Base, sf.Access = u, access
			break
		}
		pe := parent[u]
		if pe == noParent || !f.isField(pe) {
			break
		}
		access = append(access, pe)
		u = edgeSource(f.g, pe)
	}
	return sf
}

// isField reports whether edge e is a named field: a property, a static
// or instance field or a closure variable whose name is an identifier,
// not an element, an engine slot ("objectElements[3]", "{table}") or a
// key of an object used as a map ("user:42").
func (f *suspectFinder) isField(e uint32) bool {
	t := f.g.Edges.Type[e]
	switch f.k.edge[t] {
	case eProperty, eContext:
		return !f.k.indexed[t] && isIdentifier(f.g.EdgeName(e))
	}
	return false
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
