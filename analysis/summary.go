package analysis

import (
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/analysis/internal/parallel"
	"github.com/heapx/heapx/model"
)

// ClassSummary is one row of DevTools' Summary view.
type ClassSummary struct {
	// Class indexes Classes.Names; Name is the "Constructor" column and
	// Key DevTools' class key (see Classes.Key).
	Class uint32
	Name  string // "Constructor"
	Key   string // DevTools' class key
	// Count is the number of instances with a non-zero shallow size.
	Count int
	// Shallow is the sum of their shallow (adjusted self) sizes.
	Shallow uint64
	// Retained is DevTools' maxRet: the retained sizes of the instances
	// that have no other instance of the class above them in the dominator
	// tree, so nested instances are not counted twice.
	Retained uint64
	// Distance is the smallest distance of an instance a root reaches
	// (see Distances), NoDistance when no root reaches any.
	Distance int32
}

// Summarize computes DevTools' Summary view (buildAggregates and
// calculateClassesRetainedSize): one row per class that has an instance
// with a non-zero shallow size, sorted by retained size, then shallow
// size (both descending), then by first instance in node order. self is
// the shallow size column (ShallowSizes); dist may be nil (Distance is then
// 0).
//
// One deviation from DevTools: a class's distance is the minimum over the
// instances a root reaches. DevTools takes the minimum over all
// instances, so a single unreachable one (distance -5) turns the class's
// distance into "−", which its grid also shows for "reached only from
// internal roots": a JVM heap's byte[] and String, whose few unreachable
// instances sit beside 50,000 reachable ones, would read as VM internals.
// V8 writes few unreachable objects, and those of the fixtures have no
// shallow size, so on V8 dumps the column equals DevTools'.
func Summarize(g *model.Graph, cls *Classes, self model.Uint64s, doms *Dominators, dist []int32) []ClassSummary {
	return summarize(g, cls, self, doms, dist, nil, nil)
}

// summarize is Summarize over the nodes in keep (all nodes when nil), as
// DevTools' aggregatesWithFilter: rows count only kept nodes, and a kept
// instance's retained size counts unless a kept instance of its class
// dominates it.
func summarize(g *model.Graph, cls *Classes, self model.Uint64s, doms *Dominators, dist []int32, keep Bits, sc *scratch) []ClassSummary {
	n := g.NumNodes()
	nc := len(cls.Names)
	row := make([]int32, nc) // class -> row index + 1
	var rows []ClassSummary
	// Other runtimes' roots group the GC roots and can have a size
	// (Firefox's JS::ubi::RootList has 1 byte): a row for the root would
	// top every summary at 100%. V8's root has none, as DevTools expects.
	root := -1
	if !kinds.IsV8(g) {
		root = int(g.Root)
	}
	for i := 0; i < n; i++ {
		size := self.At(i)
		if size == 0 || i == root || keep != nil && !keep.Has(i) {
			continue
		}
		c := cls.Of[i]
		r := row[c]
		var d int32
		if dist != nil {
			d = dist[i]
		}
		if r == 0 {
			rows = append(rows, ClassSummary{Class: c, Name: cls.Names[c], Key: cls.Key(c), Distance: d})
			r = int32(len(rows))
			row[c] = r
		}
		s := &rows[r-1]
		s.Count++
		s.Shallow += size
		if d != NoDistance && (d < s.Distance || s.Distance == NoDistance) {
			s.Distance = d
		}
	}
	if doms != nil && len(doms.IDom) == n && n > 0 {
		maxRet := classRetained(cls, self, doms, keep, sc)
		for i := range rows {
			rows[i].Retained = maxRet[rows[i].Class]
		}
	}
	// Rows were created in the node order of their first instance, as
	// DevTools' aggregates are; a stable sort keeps that order for ties,
	// as the DevTools drivers' sort does.
	sort.SliceStable(rows, func(a, b int) bool {
		x, y := &rows[a], &rows[b]
		if x.Retained != y.Retained {
			return x.Retained > y.Retained
		}
		return x.Shallow > y.Shallow
	})
	return rows
}

// DominatorChildren returns the dominator tree's children lists in CSR
// form: the children of n are Kids[First[n]:First[n+1]], in node order.
func DominatorChildren(doms *Dominators) (first []uint32, kids []int32) {
	return dominatorChildren(doms, nil)
}

func dominatorChildren(doms *Dominators, sc *scratch) (first []uint32, kids []int32) {
	n := len(doms.IDom)
	// One buffer for both arrays: first's n+1 offsets, then the children.
	buf := sc.get(2*n, false)
	fb := buf[:n+1]
	clear(fb)
	first = unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(fb))), n+1)
	for _, p := range doms.IDom {
		if p >= 0 {
			first[p+1]++
		}
	}
	for i := 1; i <= n; i++ {
		first[i] += first[i-1]
	}
	// Fill backwards, using first[p+1] (p's end) as p's cursor, so no
	// cursor array is needed; children stay in node order. Afterwards
	// first[p+1] is p's start, so shift the array down by one.
	kids = buf[n+1 : n+1+int(first[n])]
	for v := n - 1; v >= 0; v-- {
		if p := doms.IDom[v]; p >= 0 {
			first[p+1]--
			kids[first[p+1]] = int32(v)
		}
	}
	copy(first[:n], first[1:])
	first[n] = uint32(len(kids))
	return first, kids
}

// classRetained computes maxRet per class: a node with a non-zero shallow
// size (and in keep, unless nil) counts unless an ancestor of the same
// class already counted.
func classRetained(cls *Classes, self model.Uint64s, doms *Dominators, keep Bits, sc *scratch) []uint64 {
	return groupRetained(doms, func(v int32) int32 {
		if self.At(int(v)) == 0 || keep != nil && !keep.Has(int(v)) {
			return -1
		}
		return int32(cls.Of[v])
	}, len(cls.Names), sc)
}

// groupRetained sums per group the retained sizes of its members that no
// other member of the group dominates, so nested members are not counted
// twice; groupOf gives a node's group, -1 for none (it must be safe to
// call from several goroutines). Walks of the dominator tree with explicit
// stacks; active[g] counts the members of g on the walk's path.
//
// The walk is split over the cores: the nodes that retain more than
// 1/splitShare of the root are walked first, on this goroutine, and the
// subtrees of their other children are handed out as tasks, runs of
// siblings that retain about 1/taskShare of the root each, with the
// groups active on the path above them; a task's walk starts with those
// groups active. Sums are added up at the end, so the result does not
// depend on the schedule.
func groupRetained(doms *Dominators, groupOf func(v int32) int32, groups int, sc *scratch) []uint64 {
	first, kids := dominatorChildren(doms, sc)
	// Both live in one buffer of 2n that starts where first does: given
	// back whole, not cut to the children (fewer than n-1 when nodes are
	// unreachable), so that it still holds two columns of n (scratch.take).
	defer sc.put(unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(first))), 2*(len(first)-1)))
	ret := doms.Retained
	big := ret[doms.Root]/splitShare + 1
	taskSize := ret[doms.Root]/taskShare + 1
	w := groupWalker{first: first, kids: kids, ret: ret, groupOf: groupOf, sums: make([]uint64, groups), active: make([]int32, groups)}
	// The path's active groups as a list, for the tasks' snapshots.
	var path []int32
	pos := make([]int32, groups) // index in path + 1
	var tasks []groupTask
	var snaps []int32
	type frame struct {
		node  int32
		next  uint32
		group int32
		snap  int32 // this node's snapshot in snaps + 1, 0 until taken
	}
	enter := func(v int32) frame {
		gr := w.enter(v)
		if gr >= 0 && w.active[gr] == 1 {
			pos[gr] = int32(len(path)) + 1
			path = append(path, gr)
		}
		return frame{node: v, next: first[v], group: gr}
	}
	stack := []frame{enter(doms.Root)}
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		end := first[f.node+1]
		if f.next < end {
			v := kids[f.next]
			if ret[v] >= big {
				f.next++
				stack = append(stack, enter(v))
				continue
			}
			// A run of small siblings: a task.
			if f.snap == 0 {
				f.snap = int32(len(snaps)) + 1
				snaps = append(snaps, int32(len(path)))
				snaps = append(snaps, path...)
			}
			lo := f.next
			var size uint64
			for f.next < end && ret[kids[f.next]] < big && size < taskSize {
				size += ret[kids[f.next]]
				f.next++
			}
			tasks = append(tasks, groupTask{lo: lo, hi: f.next, snap: f.snap - 1})
			continue
		}
		if gr := f.group; gr >= 0 {
			if w.active[gr]--; w.active[gr] == 0 {
				// Remove it from the path list, moving the last in.
				i := pos[gr] - 1
				last := path[len(path)-1]
				path[i], pos[last] = last, i+1
				path = path[:len(path)-1]
				pos[gr] = 0
			}
		}
		stack = stack[:len(stack)-1]
	}
	sums := w.sums
	var mu sync.Mutex
	var next atomic.Int64
	parallel.OnEveryCore(func() {
		tw := groupWalker{first: first, kids: kids, ret: ret, groupOf: groupOf, sums: make([]uint64, groups), active: make([]int32, groups)}
		for {
			i := int(next.Add(1)) - 1
			if i >= len(tasks) {
				break
			}
			t := tasks[i]
			snap := snaps[t.snap+1 : t.snap+1+snaps[t.snap]]
			for _, gr := range snap {
				tw.active[gr] = 1
			}
			for _, v := range kids[t.lo:t.hi] {
				tw.walk(v)
			}
			for _, gr := range snap {
				tw.active[gr] = 0
			}
		}
		mu.Lock()
		for i, x := range tw.sums {
			sums[i] += x
		}
		mu.Unlock()
	})
	return sums
}

// Shares of the root's retained size from which groupRetained walks a node
// on its own goroutine (splitShare), and which its tasks hold at most
// (taskShare) unless a single subtree does.
const (
	splitShare = 64
	taskShare  = 256
)

// groupTask is a run of siblings in a dominator tree's children lists
// (kids[lo:hi]) whose subtrees a worker walks, with the groups active
// above them: snaps[snap] of them, listed after it.
type groupTask struct {
	lo, hi uint32
	snap   int32
}

// groupWalker walks dominator subtrees for groupRetained, into its own
// sums and active counts.
type groupWalker struct {
	first   []uint32
	kids    []int32
	ret     []uint64
	groupOf func(v int32) int32
	sums    []uint64
	active  []int32
	stack   []walkFrame
}

type walkFrame struct {
	node  int32
	next  uint32
	group int32
}

// enter counts v in its group, and in the group's sum if none of the
// group is active above it, and returns the group.
func (w *groupWalker) enter(v int32) int32 {
	gr := w.groupOf(v)
	if gr >= 0 {
		if w.active[gr] == 0 {
			w.sums[gr] += w.ret[v]
		}
		w.active[gr]++
	}
	return gr
}

// walk walks the dominator subtree of v.
func (w *groupWalker) walk(v int32) {
	stack := append(w.stack[:0], walkFrame{node: v, next: w.first[v], group: w.enter(v)})
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if f.next < w.first[f.node+1] {
			c := w.kids[f.next]
			f.next++
			stack = append(stack, walkFrame{node: c, next: w.first[c], group: w.enter(c)})
			continue
		}
		if f.group >= 0 {
			w.active[f.group]--
		}
		stack = stack[:len(stack)-1]
	}
	w.stack = stack
}

// TopRetained returns the n nodes with the largest retained sizes, the
// root excluded, largest first (ties by node index).
func TopRetained(doms *Dominators, n int) []int32 {
	if n <= 0 {
		return nil
	}
	r := doms.Retained
	less := func(a, b int32) bool { // a ranks after b
		if r[a] != r[b] {
			return r[a] < r[b]
		}
		return a > b
	}
	// A min-heap of the best n so far, worst on top.
	h := make([]int32, 0, n)
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			m := l
			if l+1 < len(h) && less(h[l+1], h[l]) {
				m = l + 1
			}
			if !less(h[m], h[i]) {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for v := int32(0); v < int32(len(r)); v++ {
		if v == doms.Root {
			continue
		}
		if len(h) < n {
			h = append(h, v)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !less(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if less(h[0], v) {
			h[0] = v
			down(0)
		}
	}
	sort.Slice(h, func(a, b int) bool { return less(h[b], h[a]) })
	return h
}

// GroupRetained sums per group the retained sizes of its members that no
// other member of the group dominates, over a's dominator tree (see
// groupRetained); groupOf gives a node's group, -1 for none.
func (a *Analysis) GroupRetained(groupOf func(v int32) int32, groups int) []uint64 {
	return groupRetained(a.Dominators, groupOf, groups, a.sc)
}
