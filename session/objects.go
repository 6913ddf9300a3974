package session

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// RootRef names the dominator tree's root in requests, besides its id.
const RootRef = "root"

// lookup returns the file's node that ref names: its id as heapx and
// DevTools write it (query.ParseID: "12345", "@12345", "0x7f3a10"), or
// RootRef.
func (s *Session) lookup(ref string) (int32, error) {
	if err := s.notForTrace("objects"); err != nil {
		return 0, err
	}
	if strings.TrimSpace(ref) == RootRef {
		return s.g.Root, nil
	}
	id, err := query.ParseID(ref)
	if err != nil {
		return 0, invalid("%s", err)
	}
	s.prepare()
	ids := s.g.Nodes.ID
	i, found := slices.BinarySearchFunc(s.byID, id, func(n int32, id uint64) int { return cmp.Compare(ids.At(int(n)), id) })
	if !found {
		return 0, notFound("no object with id %s in %s", query.IDText(s.g, id), s.file.Path)
	}
	return s.byID[i], nil
}

// idIndex lists g's nodes by id (then index), so that finding an id is a
// binary search, not a scan of every node (33 ms on 14 million); one
// int32 per node.
func idIndex(a *analysis.Analysis) []int32 {
	ids := a.Graph.Nodes.ID
	byID := a.Spare(ids.Len())
	for i := range byID {
		byID[i] = int32(i)
	}
	slices.SortFunc(byID, func(x, y int32) int {
		if c := cmp.Compare(ids.At(int(x)), ids.At(int(y))); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	return byID
}

// maxChain bounds the dominator chain an object's details list.
const maxChain = 100

// ObjectJSON is what the inspector shows of one object.
type ObjectJSON struct {
	SchemaVersion int            `json:"schema_version"`
	Object        query.NodeJSON `json:"object"`
	// Category is the neutral kind of the object's type ("object",
	// "closure", "flat string", ...).
	Category string `json:"category"`
	// Class is the Summary row of the object's class; absent for objects
	// the Summary does not count (no shallow size).
	Class *ClassRow `json:"class,omitempty"`
	// Dominators are the object's dominators, the immediate one first,
	// up to the root (at most 100; DominatorDepth counts them all).
	Dominators     []query.NodeJSON `json:"dominators"`
	DominatorDepth int              `json:"dominator_depth"`
	// References and Retainers count the edges from and to the object;
	// Children counts the objects it dominates.
	References int `json:"references"`
	Retainers  int `json:"retainers"`
	Children   int `json:"children"`
	// AllocationStack is the call stack that allocated the object,
	// allocating function first (DevTools' Allocation stack pane), when
	// the dump has one for it.
	AllocationStack []query.FrameJSON `json:"allocation_stack,omitempty"`
}

// Object returns the details of the object ref names.
func (s *Session) Object(ref string) (*ObjectJSON, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	g := s.g
	o := &ObjectJSON{SchemaVersion: SchemaVersion, Object: s.node(n), Category: g.NodeType(n).Category.String(), Dominators: []query.NodeJSON{}}
	s.prepare()
	if c := s.a.Classes.Of[n]; s.rowOf[c] >= 0 && s.a.Self.At(int(n)) != 0 {
		row := s.classRow(s.classes[s.rowOf[c]])
		o.Class = &row
	}
	chain := s.a.DominatorChain(n)[1:]
	o.DominatorDepth = len(chain)
	for _, d := range chain[:min(len(chain), maxChain)] {
		o.Dominators = append(o.Dominators, s.node(d))
	}
	st, end := g.EdgeRange(n)
	o.References = int(end - st)
	rs, re := s.a.Retainers().Of(n)
	o.Retainers = int(re - rs)
	o.Children = len(s.dominated(n))
	o.AllocationStack = query.StackJSON(alloc.AllocationStack(s.a, n))
	return o, nil
}

// EdgeJSON is one reference: paths --json's step (edge_type, edge_name,
// edge) with the edge's strength and the object at its other end (To for
// a reference, From for a retainer).
type EdgeJSON struct {
	EdgeType string `json:"edge_type"`
	EdgeName string `json:"edge_name"`
	Edge     string `json:"edge"`
	// Strength is "strong", "weak", "shortcut" or "ephemeron": only
	// strong edges keep an object alive on their own.
	Strength string          `json:"strength"`
	To       *query.NodeJSON `json:"to,omitempty"`
	From     *query.NodeJSON `json:"from,omitempty"`
}

// EdgePage is a page of an object's references or retainers.
type EdgePage struct {
	SchemaVersion int            `json:"schema_version"`
	Object        query.NodeJSON `json:"object"`
	Total         int            `json:"total"`
	Offset        int            `json:"offset"`
	Edges         []EdgeJSON     `json:"edges"`
}

func (s *Session) edge(e uint32) EdgeJSON {
	g := s.g
	return EdgeJSON{EdgeType: g.EdgeType(e).Name, EdgeName: g.EdgeName(e), Edge: analysis.EdgeString(g, e), Strength: g.EdgeType(e).Strength.String()}
}

// References returns a page of the edges from the object ref names, in
// the dump's order (DevTools' Containment).
func (s *Session) References(ref string, offset, limit int) (*EdgePage, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	st, end := s.g.EdgeRange(n)
	lo, hi, err := page(offset, limit, int(end-st))
	if err != nil {
		return nil, err
	}
	p := &EdgePage{SchemaVersion: SchemaVersion, Object: s.node(n), Total: int(end - st), Offset: lo, Edges: []EdgeJSON{}}
	for e := st + uint32(lo); e < st+uint32(hi); e++ {
		ej := s.edge(e)
		to := s.node(s.g.Edges.To[e])
		ej.To = &to
		p.Edges = append(p.Edges, ej)
	}
	return p, nil
}

// Retainers returns a page of the edges to the object ref names, weak
// ones included (marked by their strength), nearest to a root first as
// DevTools' Retainers view orders them: the root, then by the retaining
// object's distance, then strong before weak, then in edge order.
func (s *Session) Retainers(ref string, offset, limit int) (*EdgePage, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	ret := s.a.Retainers()
	order := s.lists.get("ret:"+itoa(int(n)), func() []int32 {
		st, end := ret.Of(n)
		idx := make([]int32, 0, end-st)
		// ranks[r-st] is retainer r's rank: the root, where every path
		// starts, comes first (its own distance is that of a system
		// object), then by distance. Found once per retainer, not per
		// comparison: each is a search for the retainer's source.
		ranks := make([]int64, end-st)
		for r := st; r < end; r++ {
			idx = append(idx, int32(r))
			if from := ret.From(r); from == s.g.Root {
				ranks[r-st] = -1
			} else {
				ranks[r-st] = distanceRank(s.a.Distances[from])
			}
		}
		rank := func(r int32) int64 { return ranks[uint32(r)-st] }
		weak := func(r int32) bool { return s.g.EdgeType(ret.Edge[r]).Strength != model.Strong }
		slices.SortStableFunc(idx, func(x, y int32) int {
			if c := cmp.Compare(rank(x), rank(y)); c != 0 {
				return c
			}
			if wx, wy := weak(x), weak(y); wx != wy {
				if wy {
					return -1
				}
				return 1
			}
			return cmp.Compare(x, y)
		})
		return idx
	})
	lo, hi, err := page(offset, limit, len(order))
	if err != nil {
		return nil, err
	}
	p := &EdgePage{SchemaVersion: SchemaVersion, Object: s.node(n), Total: len(order), Offset: lo, Edges: []EdgeJSON{}}
	for _, r := range order[lo:hi] {
		ej := s.edge(ret.Edge[r])
		from := s.node(ret.From(uint32(r)))
		ej.From = &from
		p.Edges = append(p.Edges, ej)
	}
	return p, nil
}

// MaxPaths bounds the paths one request asks for.
const MaxPaths = 20

// maxExpansions bounds the search for the paths after the first, in
// partial paths: a tenth of heapx paths' million, which takes about a
// second on an object that has fewer than k paths (a global, 0.7 s for
// five), where a click must answer at once. The first path is always
// found.
const maxExpansions = 100000

// maxPathSteps bounds the steps a path lists: the path to the last item
// of a linked list of millions keeps its first and last halves of this,
// and says how many hops it leaves out between.
const maxPathSteps = 200

// PathJSON is one retainer path as paths --json writes it, with the hops
// left out of a very long one.
type PathJSON struct {
	query.PathJSON
	// Elided, when not nil, says that Steps leaves out Hops hops after
	// its first After steps.
	Elided *Elision `json:"elided,omitempty"`
}

// Elision is a run of hops a path leaves out.
type Elision struct {
	After int `json:"after"`
	Hops  int `json:"hops"`
}

// PathsJSON is paths --json's output, paths elided as PathJSON says.
type PathsJSON struct {
	SchemaVersion int            `json:"schema_version"`
	File          string         `json:"file"`
	Target        query.NodeJSON `json:"target"`
	// Ignored are the objects the paths avoid (DevTools' "ignore this
	// retainer").
	Ignored []query.NodeJSON `json:"ignored"`
	// NoWeak says the paths take no weak or ephemeron edge, and
	// ThroughRuntime that each takes runtime-internal ones, as every
	// such path does (paths --no-weak).
	NoWeak         bool       `json:"no_weak,omitempty"`
	ThroughRuntime bool       `json:"through_runtime,omitempty"`
	Paths          []PathJSON `json:"paths"`
}

// Paths returns up to k retainer paths to the object ref names, the
// paths heapx shows (analysis.PathFinder.Find), avoiding the objects
// ignore names; with noWeak, paths --no-weak's
// (analysis.NoWeakFinder).
func (s *Session) Paths(ref string, k int, ignore []string, noWeak bool) (*PathsJSON, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	if k < 1 || k > MaxPaths {
		return nil, invalid("the number of paths must be 1 to %d, not %d", MaxPaths, k)
	}
	out := &PathsJSON{SchemaVersion: 1, File: s.file.Path, Target: s.node(n), Ignored: []query.NodeJSON{}, NoWeak: noWeak, Paths: []PathJSON{}}
	var ign []int32
	for _, r := range ignore {
		v, err := s.lookup(r)
		if err != nil {
			return nil, err
		}
		if v == n || v == s.g.Root {
			continue // neither the target nor the root can be left out
		}
		ign = append(ign, v)
		out.Ignored = append(out.Ignored, s.node(v))
	}
	// A finder of the request's own, which shares the kept one's
	// distances: no walk of the heap per click, "ignore" included.
	opt := analysis.PathOptions{K: k, IgnoreNodes: ign, MaxExpansions: maxExpansions}
	var paths []analysis.Path
	if noWeak {
		paths, out.ThroughRuntime = s.a.NoWeakFinder().With(opt).Find(n)
	} else {
		paths = s.finder().With(opt).Find(n)
	}
	for _, p := range paths {
		pj := PathJSON{PathJSON: query.PathJSON{Distance: p.Cost, System: p.System, Root: s.node(s.g.Root), Steps: []query.StepJSON{}}}
		steps := p.Steps
		if len(steps) > maxPathSteps {
			half := maxPathSteps / 2
			pj.Elided = &Elision{After: half, Hops: len(steps) - maxPathSteps}
			steps = append(steps[:half:half], steps[len(steps)-half:]...)
		}
		for _, st := range steps {
			pj.Steps = append(pj.Steps, query.StepJSON{EdgeType: s.g.EdgeType(st.Edge).Name, EdgeName: s.g.EdgeName(st.Edge),
				Edge: analysis.EdgeString(s.g, st.Edge), To: s.node(st.To)})
		}
		out.Paths = append(out.Paths, pj)
	}
	return out, nil
}

// finder returns the PathFinder the session keeps, made on first use:
// the retainer index and the distances a path search needs, which cost
// a walk of the heap to make.
func (s *Session) finder() *analysis.PathFinder {
	s.finderOnce.Do(func() { s.pathFinder = s.a.PathFinder(analysis.PathOptions{}) })
	return s.pathFinder
}

// dominated returns the children of n in the dominator tree, largest
// retained size first (then in node order).
func (s *Session) dominated(n int32) []int32 {
	return s.lists.get("dom:"+itoa(int(n)), func() []int32 {
		var kids []int32
		for v, d := range s.a.Dominators.IDom {
			if d == n {
				kids = append(kids, int32(v))
			}
		}
		ret := s.a.Dominators.Retained
		slices.SortStableFunc(kids, func(x, y int32) int { return cmp.Compare(ret[y], ret[x]) })
		return kids
	})
}

// ChildPage is a page of an object's children in the dominator tree.
type ChildPage struct {
	Object query.NodeJSON `json:"object"`
	// Class, when the page is of one class's children, is its index.
	Class *int `json:"class,omitempty"`
	ObjectPage
}

// Children returns a page of the children of the object ref names in the
// dominator tree (MAT's Dominator Tree, one level), largest retained size
// first; with class >= 0 only those of that class index.
func (s *Session) Children(ref string, class, offset, limit int) (*ChildPage, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	kids := s.dominated(n)
	p := &ChildPage{Object: s.node(n)}
	if class >= 0 {
		if class >= len(s.a.Classes.Names) {
			return nil, notFound("no class with index %d", class)
		}
		var of []int32
		for _, v := range kids {
			if int(s.a.Classes.Of[v]) == class {
				of = append(of, v)
			}
		}
		kids = of
		p.Class = &class
	}
	op, err := s.objectPage(kids, offset, limit)
	if err != nil {
		return nil, err
	}
	p.ObjectPage = *op
	return p, nil
}

// ChildClassJSON is the children of one class of an object in the
// dominator tree (dominators --by-class's rows).
type ChildClassJSON struct {
	Index        int            `json:"index"`
	Constructor  string         `json:"constructor"`
	Count        int            `json:"count"`
	ShallowSize  uint64         `json:"shallow_size"`
	RetainedSize uint64         `json:"retained_size"`
	Largest      query.NodeJSON `json:"largest"`
}

// ChildClassPage is a page of an object's dominator-tree children
// grouped by class.
type ChildClassPage struct {
	SchemaVersion int              `json:"schema_version"`
	Object        query.NodeJSON   `json:"object"`
	Total         int              `json:"total"`
	Offset        int              `json:"offset"`
	Classes       []ChildClassJSON `json:"classes"`
}

// ChildClasses returns a page of the children of the object ref names in
// the dominator tree grouped by class (MAT's "group by class"), largest
// retained size first.
func (s *Session) ChildClasses(ref string, offset, limit int) (*ChildClassPage, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	kids := s.dominated(n)
	row := map[uint32]int{}
	var groups []ChildClassJSON
	var largest []int32
	ret := s.a.Dominators.Retained
	for _, v := range kids { // largest first, so a group's first is its largest
		c := s.a.Classes.Of[v]
		i, ok := row[c]
		if !ok {
			i = len(groups)
			row[c] = i
			groups = append(groups, ChildClassJSON{Index: int(c), Constructor: s.a.Classes.Names[c]})
			largest = append(largest, v)
		}
		gr := &groups[i]
		gr.Count++
		gr.ShallowSize += s.a.Self.At(int(v))
		gr.RetainedSize += ret[v]
	}
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(groups[y].RetainedSize, groups[x].RetainedSize); c != 0 {
			return c
		}
		return strings.Compare(groups[x].Constructor, groups[y].Constructor)
	})
	lo, hi, err := page(offset, limit, len(groups))
	if err != nil {
		return nil, err
	}
	p := &ChildClassPage{SchemaVersion: SchemaVersion, Object: s.node(n), Total: len(groups), Offset: lo, Classes: []ChildClassJSON{}}
	for _, i := range order[lo:hi] {
		gr := groups[i]
		gr.Largest = s.node(largest[i])
		p.Classes = append(p.Classes, gr)
	}
	return p, nil
}

// FlameBoxJSON is a box of the retained-size flame graph
// (inspect.FlameBox): the objects of one class that its parent box's
// objects dominate directly.
type FlameBoxJSON struct {
	// Class is the box's class name; ClassIndex its index (-1 for the
	// root's box), the step of Path that leads to it.
	Class      string `json:"class"`
	ClassIndex int32  `json:"class_index"`
	// Path names the box in a request (flame?path=, flame/objects?path=).
	Path         []int32        `json:"path"`
	Count        int            `json:"count"`
	RetainedSize uint64         `json:"retained_size"`
	Children     []FlameBoxJSON `json:"children"`
	// More says the box has children that were not sent: a request with
	// its path sends them.
	More bool `json:"more"`
}

// FlameJSON is the flame graph from an object, down a path of classes.
type FlameJSON struct {
	SchemaVersion int            `json:"schema_version"`
	Root          query.NodeJSON `json:"root"`
	// PathClasses are the class names of the path's steps.
	PathClasses []string     `json:"path_classes"`
	Depth       int          `json:"depth"`
	MinShare    float64      `json:"min_share"`
	Box         FlameBoxJSON `json:"box"`
}

// Flame bounds: the tree a request builds is at most MaxFlameDepth levels
// of boxes at least MinFlameShare of the box asked for, so at most
// MaxFlameDepth/MinFlameShare boxes however large the dump.
const (
	MaxFlameDepth = 12
	MinFlameShare = 0.001
)

// Flame returns the box of the retained-size flame graph at path (class
// indices) under the object ref names, with depth levels of children
// that retain at least minShare of it.
func (s *Session) Flame(ref string, path []int32, depth int, minShare float64) (*FlameJSON, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	if depth < 1 || depth > MaxFlameDepth {
		return nil, invalid("depth=%d: give 1 to %d levels", depth, MaxFlameDepth)
	}
	if !(minShare >= MinFlameShare && minShare <= 1) {
		return nil, invalid("min=%g: give a share of the box from %g to 1", minShare, MinFlameShare)
	}
	if err := s.flamePath(path); err != nil {
		return nil, err
	}
	first, kids := s.domChildren()
	box, err := inspect.FlameTree(s.a, first, kids, n, path, depth, minShare)
	if err != nil {
		return nil, notFound("%s", err)
	}
	names := make([]string, len(path))
	for i, c := range path {
		names[i] = s.a.Classes.Names[c]
	}
	return &FlameJSON{SchemaVersion: SchemaVersion, Root: s.node(n), PathClasses: names, Depth: depth, MinShare: minShare,
		Box: s.flameBox(box)}, nil
}

// FlameObjects returns a page of the objects of the flame graph's box at
// path under ref, largest retained size first.
func (s *Session) FlameObjects(ref string, path []int32, offset, limit int) (*ObjectPage, error) {
	n, err := s.lookup(ref)
	if err != nil {
		return nil, err
	}
	if err := s.flamePath(path); err != nil {
		return nil, err
	}
	// Kept, as a dominator-tree level is: a box's objects are paged
	// through, and a box can hold millions.
	key := fmt.Sprint("flame:", n, path)
	objs := s.lists.get(key, func() []int32 {
		first, kids := s.domChildren()
		objs, err := inspect.FlameObjects(s.a, first, kids, n, path)
		if err != nil {
			return nil
		}
		return objs
	})
	if len(objs) == 0 {
		return nil, notFound("no box at path %v under %s: a step names a class that none of the objects before it dominates", path, ref)
	}
	return s.objectPage(objs, offset, limit)
}

// flamePath checks that path's steps are class indices.
func (s *Session) flamePath(path []int32) error {
	if len(path) > 1000 {
		return invalid("a path of %d classes: at most 1,000", len(path))
	}
	for _, c := range path {
		if c < 0 || int(c) >= len(s.a.Classes.Names) {
			return invalid("path: no class with index %d", c)
		}
	}
	return nil
}

func (s *Session) flameBox(b inspect.FlameBox) FlameBoxJSON {
	j := FlameBoxJSON{ClassIndex: b.Class, Path: b.Path, Count: b.Count, RetainedSize: b.Retained, More: b.Cut,
		Children: make([]FlameBoxJSON, len(b.Children))}
	if b.Class >= 0 {
		j.Class = s.a.Classes.Names[b.Class]
	}
	for i, c := range b.Children {
		j.Children[i] = s.flameBox(c)
	}
	return j
}

// domChildren returns the dominator tree's children index, built on the
// first flame graph request (8 bytes a node, kept for the next clicks).
func (s *Session) domChildren() (first []uint32, kids []int32) {
	s.domOnce.Do(func() { s.domFirst, s.domKids = analysis.DominatorChildren(s.a.Dominators) })
	return s.domFirst, s.domKids
}
