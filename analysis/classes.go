package analysis

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// SourceLocation is a script position, as V8 writes it (zero-based).
type SourceLocation struct {
	ScriptID, Line, Column uint32 // V8's script id, line and column
}

// Classes assigns every node a class: the "Constructor" of DevTools'
// Summary view.
type Classes struct {
	// Of is the class of each node, an index into Names.
	Of []uint32
	// Names is each class's display name.
	Names []string
	// Loc is each class's allocation site, for `object` classes that
	// DevTools splits by source location; HasLoc says which have one.
	Loc    []SourceLocation // per class; meaningful where HasLoc
	HasLoc []bool           // per class: split by allocation site
	// Interfaces are the object shapes DevTools inferred for plain
	// `Object`s, most popular first (see ClassifyNodes).
	Interfaces []Interface
}

// Interface is an inferred interface for plain objects: its name is
// "{a, b, c}" and an object matches when it has all the properties.
type Interface struct {
	Name       string   // "{a, b, c}", the class name objects get
	Properties []string // the property names, in the order first seen
}

// Key returns DevTools' class key for class c, the string that identifies a
// Summary row across snapshots: "," + name, or
// "scriptId,line,column,name" for classes split by location.
func (c *Classes) Key(class uint32) string {
	if c.HasLoc[class] {
		l := c.Loc[class]
		return strconv.FormatUint(uint64(l.ScriptID), 10) + "," + strconv.FormatUint(uint64(l.Line), 10) + "," +
			strconv.FormatUint(uint64(l.Column), 10) + "," + c.Names[class]
	}
	return "," + c.Names[class]
}

// Name returns the class name of node n.
func (c *Classes) Name(n model.NodeIndex) string { return c.Names[c.Of[n]] }

// Limits of DevTools' interface inference (HeapSnapshot.ts).
const (
	maxInterfaceNameLength     = 120
	minObjectCountPerInterface = 2
	minObjectProportion        = 1000
)

// ClassifyNodes computes every node's class as DevTools does
// (calculateObjectNames, inferInterfaceDefinitions,
// applyInterfaceDefinitions, classKeyInternal):
//
//   - hidden: "(system)"; code: "(compiled code)"; closure: "Function";
//     regexp: "RegExp";
//   - object and native: the node name, where a name starting with "<" or
//     "Detached <" is cut at its first space ("<div id=x>" -> "<div>"), and
//     detached native nodes carry the "Detached " prefix (ds);
//   - any other type: "(" + type + ")", e.g. "(string)", "(array)";
//   - plain objects (type object named "Object") get the best matching
//     inferred interface "{a, b, c}": candidates are the first property
//     names of each plain object (not __proto__, up to 120 characters);
//     those shared by at least max(2, plain objects/1000) objects are kept,
//     most popular first; an object matches an interface whose properties
//     it all has, preferring more properties, then the earlier interface;
//   - object nodes with an allocation site (g.Locations) form a separate
//     class per site, as DevTools' class key includes it.
//
// Types of other runtimes are classed by node name ("(" + type + ")" when
// the name is empty), except string types, whose nodes are named by their
// contents (HPROF's java.lang.String): they all get the type's name as
// class. ds may be nil (no "Detached " renaming).
//
// DevTools keys classes by string-table index, so two different strings
// with the same text would be two rows there (and then collide in its
// summary's key map); here classes are keyed by text. That happens in real
// bundles: esbuild's ESM interop (__toESM) gives the namespace object of a
// CommonJS module exporting a function Function.prototype as prototype,
// V8 names such objects "Function", and DevTools keys them by that name's
// string while closures get a "Function" string of their own; both keys
// become ",Function" and its Summary keeps whichever class it met later,
// showing "Function ×8" and hiding every closure. heapx shows one
// "Function" row with the closures and those objects, a deliberate
// deviation (docs/devtools-deviations.md; testdata/devtools-quirks).
func ClassifyNodes(g *model.Graph, ds *DOMState) *Classes {
	n := g.NumNodes()
	k := kinds.New(g)
	c := &Classes{Of: make([]uint32, n)}
	byName := map[string]uint32{}
	class := func(name string) uint32 {
		if id, ok := byName[name]; ok {
			return id
		}
		id := uint32(len(c.Names))
		c.Names = append(c.Names, name)
		c.Loc = append(c.Loc, SourceLocation{})
		c.HasLoc = append(c.HasLoc, false)
		byName[name] = id
		return id
	}
	// Fixed classes per node type; -1 where the node name decides.
	fixed := make([]int64, len(g.NodeTypes))
	for t, nt := range g.NodeTypes {
		fixed[t] = -1
		if t >= 256 {
			continue
		}
		if !k.NodeV8[t] {
			if nt.Category.IsString() {
				fixed[t] = int64(class(nt.Name))
			}
			continue
		}
		switch k.Node[t] {
		case kinds.Hidden:
			fixed[t] = int64(class("(system)"))
		case kinds.Object, kinds.Native:
		case kinds.Code:
			fixed[t] = int64(class("(compiled code)"))
		case kinds.Closure:
			fixed[t] = int64(class("Function"))
		case kinds.RegExp:
			fixed[t] = int64(class("RegExp"))
		default:
			fixed[t] = int64(class("(" + nt.Name + ")"))
		}
	}
	byString := make([]int32, g.Strings.Len())
	for i := range byString {
		byString[i] = -1
	}
	renamed := map[model.StringID]uint32{}
	nameTypes := g.Nodes.Type
	for i := 0; i < n; i++ {
		t := nameTypes[i]
		if f := fixed[t]; f >= 0 {
			c.Of[i] = uint32(f)
			continue
		}
		sid := g.Nodes.Name[i]
		if ds.isRenamed(int32(i)) {
			id, ok := renamed[sid]
			if !ok {
				id = class(v8ClassName(DetachedPrefix + g.Strings.At(sid)))
				renamed[sid] = id
			}
			c.Of[i] = id
			continue
		}
		if id := byString[sid]; id >= 0 {
			c.Of[i] = uint32(id)
			continue
		}
		name := g.Strings.At(sid)
		if k.NodeV8[t] {
			name = v8ClassName(name)
		} else if name == "" {
			name = "(" + g.NodeTypes[t].Name + ")"
		}
		id := class(name)
		byString[sid] = int32(id)
		c.Of[i] = id
	}
	c.inferInterfaces(g, k, class)
	c.splitByLocation(g, k)
	return c
}

// v8ClassName applies DevTools' cut of "<tag attr…>" names to "<tag>".
func v8ClassName(name string) string {
	if strings.HasPrefix(name, "<") {
		if i := strings.IndexByte(name, ' '); i >= 0 {
			return name[:i] + ">"
		}
		return name
	}
	if strings.HasPrefix(name, "Detached <") {
		if i := strings.IndexByte(name[10:], ' '); i >= 0 {
			return name[:10+i] + ">"
		}
	}
	return name
}

// propTable interns property names by text, so plain objects' property
// lists compare as small integers.
type propTable struct {
	g        *model.Graph
	byString []int32 // StringID -> property id, -1 until seen
	byText   map[string]int32
	text     []string
	fmtd     []string // PropertyName(text)
	fmtLen   []int    // Len(fmtd)
}

func (p *propTable) id(s model.StringID) int32 {
	if id := p.byString[s]; id >= 0 {
		return id
	}
	t := p.g.Strings.At(s)
	id, ok := p.byText[t]
	if !ok {
		id = int32(len(p.text))
		p.byText[t] = id
		p.text = append(p.text, t)
		f := jsstr.PropertyName(t)
		p.fmtd = append(p.fmtd, f)
		p.fmtLen = append(p.fmtLen, jsstr.Len(f))
	}
	p.byString[s] = id
	return id
}

// inferInterfaces runs DevTools' interface inference and application on
// plain objects (V8 type object named "Object"): the commonest property
// lists become interfaces ("{a, b}"), and each plain object takes the
// class of the interface it best matches.
func (c *Classes) inferInterfaces(g *model.Graph, k *kinds.Table, class func(string) uint32) {
	in := &interfaceInference{g: g, k: k, p: newPropTable(g)}
	cands, total := in.candidates()
	if total == 0 {
		return
	}
	defs := selectInterfaces(cands, total)
	for _, d := range defs {
		iface := Interface{Name: d.name}
		for _, pid := range d.props {
			iface.Properties = append(iface.Properties, in.p.text[pid])
		}
		c.Interfaces = append(c.Interfaces, iface)
	}
	if len(defs) == 0 {
		return
	}
	t := in.propertyTree(defs)
	defClass := make([]uint32, len(defs))
	for i, d := range defs {
		defClass[i] = class(d.name)
	}
	in.apply(t, func(i int, def int32) { c.Of[i] = defClass[def] })
}

// interfaceInference holds what inferInterfaces' phases share.
type interfaceInference struct {
	g *model.Graph
	k *kinds.Table
	p *propTable
}

// interfaceCandidate is a property list of plain objects: its interface
// name ("{a, b}"), its properties and how many objects have it.
type interfaceCandidate struct {
	name  string
	props []int32
	count int
}

func newPropTable(g *model.Graph) *propTable {
	p := &propTable{g: g, byString: make([]int32, g.Strings.Len()), byText: map[string]int32{}}
	for i := range p.byString {
		p.byString[i] = -1
	}
	return p
}

// isPlain reports whether node i is a plain object, which interfaces
// name.
func (in *interfaceInference) isPlain(i int) bool {
	g, k := in.g, in.k
	t := g.Nodes.Type[i]
	return k.NodeV8[t] && k.Node[t] == kinds.Object && g.Strings.At(g.Nodes.Name[i]) == "Object"
}

// candidates collects the property lists of the plain objects, in first
// seen order, cut where the interface name would pass
// maxInterfaceNameLength, and counts the plain objects.
func (in *interfaceInference) candidates() (cands []interfaceCandidate, total int) {
	g, k, p := in.g, in.k, in.p
	fe, typ, ename := g.Nodes.FirstEdge, g.Edges.Type, g.Edges.Name
	candIndex := map[string]int{}
	var nameBuf []byte
	var props []int32
	for i := 0; i < g.NumNodes(); i++ {
		if !in.isPlain(i) {
			continue
		}
		total++
		nameBuf = append(nameBuf[:0], '{')
		nameLen := 1
		props = props[:0]
		stopped := false
		for e := fe[i]; e < fe[i+1]; e++ {
			if k.Edge[typ[e]] != kinds.EdgeProperty {
				continue
			}
			if stopped {
				break
			}
			pid := p.id(ename[e])
			if p.text[pid] == "__proto__" {
				continue
			}
			fl := p.fmtLen[pid]
			if nameLen > 1 && nameLen+fl > maxInterfaceNameLength {
				stopped = true
				continue
			}
			if nameLen != 1 {
				nameBuf = append(nameBuf, ", "...)
				nameLen += 2
			}
			nameBuf = append(nameBuf, p.fmtd[pid]...)
			nameLen += fl
			props = append(props, pid)
		}
		if len(props) == 0 {
			continue
		}
		nameBuf = append(nameBuf, '}')
		if j, ok := candIndex[string(nameBuf)]; ok {
			cands[j].count++
			continue
		}
		candIndex[string(nameBuf)] = len(cands)
		cands = append(cands, interfaceCandidate{name: string(nameBuf), props: append([]int32(nil), props...), count: 1})
	}
	return cands, total
}

// selectInterfaces keeps the candidates common enough to be interfaces,
// the commonest first: those of at least a minObjectProportion-th of the
// plain objects and at least minObjectCountPerInterface.
func selectInterfaces(cands []interfaceCandidate, total int) []interfaceCandidate {
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].count > cands[b].count })
	minCount := float64(total) / minObjectProportion
	if minCount < minObjectCountPerInterface {
		minCount = minObjectCountPerInterface
	}
	var defs []interfaceCandidate
	for _, cd := range cands {
		if float64(cd.count) < minCount {
			break
		}
		defs = append(defs, cd)
	}
	return defs
}

// propertyTree is the tree of the interfaces' sorted property lists that
// plain objects are matched against. Only names that occur in some
// interface need a place in it; every other name is placed between two of
// them ("half ranks": 2i for the i-th tree name in JavaScript's sort
// order, odd numbers between), which is all the matching compares.
type propertyTree struct {
	p         *propTable
	treeNames []int32            // property ids of the tree names, in JavaScript's order
	halfRank  []int32            // StringID -> half rank + 2, 0 until computed
	nodes     []propertyTreeNode // nodes[0] is the root
	next      map[uint64]int32   // state<<32 | half rank -> state
}

type propertyTreeNode struct {
	match    int32 // interface index, -1 for none
	count    int32 // its property count
	greatest int32 // half rank of the greatest outgoing property, -1 if none
}

// propertyTree builds the tree of the interfaces defs.
func (in *interfaceInference) propertyTree(defs []interfaceCandidate) *propertyTree {
	p := in.p
	treeOf := make([]int32, len(p.text)) // property id -> tree name index, -1 if none
	for i := range treeOf {
		treeOf[i] = -1
	}
	t := &propertyTree{p: p, halfRank: make([]int32, in.g.Strings.Len()),
		nodes: []propertyTreeNode{{match: -1, greatest: -1}}, next: map[uint64]int32{}}
	for _, d := range defs {
		for _, pid := range d.props {
			if treeOf[pid] < 0 {
				treeOf[pid] = 0
				t.treeNames = append(t.treeNames, pid)
			}
		}
	}
	// Property names are distinct texts, so the order is total.
	slices.SortFunc(t.treeNames, func(a, b int32) int { return jsstr.Compare(p.text[a], p.text[b]) })
	for i, pid := range t.treeNames {
		treeOf[pid] = int32(i)
	}
	var sorted []int32
	for di, d := range defs {
		sorted = sorted[:0]
		for _, pid := range d.props {
			sorted = append(sorted, 2*treeOf[pid])
		}
		slices.Sort(sorted)
		cur := int32(0)
		for _, r := range sorted {
			key := uint64(cur)<<32 | uint64(uint32(r))
			nx, ok := t.next[key]
			if !ok {
				nx = int32(len(t.nodes))
				t.nodes = append(t.nodes, propertyTreeNode{match: -1, greatest: -1})
				t.next[key] = nx
				if t.nodes[cur].greatest < r {
					t.nodes[cur].greatest = r
				}
			}
			cur = nx
		}
		if t.nodes[cur].match < 0 {
			t.nodes[cur].match = int32(di)
			t.nodes[cur].count = int32(len(sorted))
		}
	}
	return t
}

// rank returns the half rank of property name sid.
func (t *propertyTree) rank(g *model.Graph, sid model.StringID) int32 {
	if r := t.halfRank[sid]; r != 0 {
		return r - 2
	}
	text := g.Strings.At(sid)
	lb := sort.Search(len(t.treeNames), func(i int) bool { return jsstr.Compare(t.p.text[t.treeNames[i]], text) >= 0 })
	r := int32(2*lb - 1)
	if lb < len(t.treeNames) && t.p.text[t.treeNames[lb]] == text {
		r = int32(2 * lb)
	}
	t.halfRank[sid] = r + 2
	return r
}

// betterMatch is DevTools' selectBetterMatch: more properties win, then
// the earlier interface; -1 is the fallback "Object" (0 properties,
// index ∞).
func betterMatch(a, aCount, b, bCount int32) (int32, int32) {
	if b < 0 || aCount > bCount {
		return a, aCount
	}
	if bCount > aCount {
		return b, bCount
	}
	if a >= 0 && a <= b {
		return a, aCount
	}
	return b, bCount
}

// apply matches every plain object's sorted property names against the
// tree and calls set with the objects that match an interface.
func (in *interfaceInference) apply(t *propertyTree, set func(i int, def int32)) {
	g, k := in.g, in.k
	fe, typ, ename := g.Nodes.FirstEdge, g.Edges.Type, g.Edges.Name
	tree := t.nodes
	var props, states, snapshot []int32
	for i := 0; i < g.NumNodes(); i++ {
		if !in.isPlain(i) {
			continue
		}
		props = props[:0]
		for e := fe[i]; e < fe[i+1]; e++ {
			if k.Edge[typ[e]] == kinds.EdgeProperty {
				props = append(props, t.rank(g, ename[e]))
			}
		}
		if len(props) > 24 {
			slices.Sort(props)
		} else {
			for a := 1; a < len(props); a++ { // objects have few properties
				x := props[a]
				b := a
				for b > 0 && props[b-1] > x {
					props[b] = props[b-1]
					b--
				}
				props[b] = x
			}
		}
		states = append(states[:0], 0)
		match, count := betterMatch(-1, 0, tree[0].match, tree[0].count)
		for _, r := range props {
			snapshot = append(snapshot[:0], states...)
			for _, st := range snapshot {
				if gr := tree[st].greatest; gr < 0 || r >= gr {
					states = removeState(states, st)
				}
				if r&1 != 0 {
					continue // not a tree name: no transition
				}
				if nx, ok := t.next[uint64(st)<<32|uint64(uint32(r))]; ok {
					states = addState(states, nx)
					match, count = betterMatch(match, count, tree[nx].match, tree[nx].count)
				}
			}
		}
		if match >= 0 {
			set(i, match)
		}
	}
}

func removeState(s []int32, x int32) []int32 {
	for i, v := range s {
		if v == x {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

func addState(s []int32, x int32) []int32 {
	for _, v := range s {
		if v == x {
			return s
		}
	}
	return append(s, x)
}

// splitByLocation gives object nodes with an allocation site a class of
// their own per (class name, site), as DevTools' classKeyInternal does.
// When a node has several locations the last one counts, as in DevTools'
// location map.
func (c *Classes) splitByLocation(g *model.Graph, k *kinds.Table) {
	if len(g.Locations) == 0 {
		return
	}
	type locKey struct {
		class uint32
		loc   SourceLocation
	}
	byLoc := map[locKey]uint32{}
	done := NewBits(g.NumNodes())
	for i := len(g.Locations) - 1; i >= 0; i-- {
		l := g.Locations[i]
		nd := l.Node
		if done.Has(int(nd)) {
			continue
		}
		done.Set(int(nd))
		t := g.Nodes.Type[nd]
		if !k.NodeV8[t] || k.Node[t] != kinds.Object {
			continue
		}
		key := locKey{c.Of[nd], SourceLocation{l.ScriptID, l.Line, l.Column}}
		id, ok := byLoc[key]
		if !ok {
			id = uint32(len(c.Names))
			c.Names = append(c.Names, c.Names[key.class])
			c.Loc = append(c.Loc, key.loc)
			c.HasLoc = append(c.HasLoc, true)
			byLoc[key] = id
		}
		c.Of[nd] = id
	}
}
