package analysis

import (
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/heapx/heapx/model"
)

// Dominators is the dominator tree of a graph under a Policy and the
// retained sizes it implies.
type Dominators struct {
	// Root is the tree's root (the graph's root).
	Root model.NodeIndex
	// IDom is each node's immediate dominator; IDom[Root] is model.NoNode.
	// Nodes no essential path reaches have the root as dominator.
	IDom []int32
	// Self is the self size used for each node: g.Nodes.Size itself, or
	// the redistributed sizes of ShallowSizes when the policy asks for them
	// (DevTools' "Shallow size"). Treat it as read-only.
	Self []uint64
	// Retained is each node's retained size: its Self plus the Self of
	// every node it dominates.
	Retained []uint64
	// Reached counts the nodes reached from the root over essential edges.
	Reached int
	// WeakOnly counts the unreached nodes without an essential retainer,
	// which DevTools makes children of the root ("nodes with only weak
	// retainers"); WeakOnlyReached counts the nodes reached from them.
	WeakOnly, WeakOnlyReached int
	// Leftover counts the nodes still unreached after that (cycles kept
	// alive only by each other), attached directly under the root.
	Leftover int
}

// ComputeDominators builds the dominator tree of g over the edges policy p
// keeps (see DevToolsPolicy) and the retained sizes, after redistributing
// self sizes if p says so (ShallowSizes). roots supplies the user roots and
// the page-owned set (FindRoots); when p has the page-owned rule and
// roots.PageOwned is nil, the set is derived during the DFS and stored
// there. dom supplies the "Detached " renaming that the redistribution
// looks at (may be nil).
//
// The flow graph is DevTools' (HeapSnapshot.calculateDominatorsAndRetainedSizes):
// the essential edges, plus an edge from the root to every node that the
// root does not reach and that has no essential retainer (in node order);
// nodes still unreached after that are attached directly under the root.
// DevTools runs Lengauer–Tarjan on a DFS that numbers those last nodes
// without a DFS of their own; that pseudo-tree still yields exactly the
// dominator tree of the graph above (their semidominators can only point at
// other such nodes, which are numbered after every reached node, so they
// never win for a reached node, and each of them ends up under the root),
// so an exact algorithm on that graph gives DevTools' numbers.
//
// The algorithm is semi-NCA (Georgiadis; as in LLVM's SemiNCAInfo) on a
// depth-first numbering, arranged to keep memory to the outputs plus two
// N-long arrays and one array of a fraction of the edges:
//   - predecessors numbered lower than their target (tree and forward
//     edges) are folded into the target's semidominator candidate during
//     the DFS, so only cross and back edges are stored, in three bytes
//     each below 2^24 nodes;
//   - the working arrays live in the memory of the outputs (IDom and
//     Retained) until those are written, and the DFS order and offsets
//     arrays become the Self column at the end;
//   - semidominators and then immediate dominators are kept in the
//     predecessor offsets array, whose entries die as the passes move on;
//   - self sizes are computed after the tree, straight into Retained, and
//     the Self column is recovered from Retained and the tree.
//
// Everything is iterative: a 10^6-long chain needs no deeper Go stack. The
// passes that do not depend on order (the predecessor fill, the size
// redistribution) use all cores; the result does not depend on their
// schedule.
func ComputeDominators(g *model.Graph, roots *Roots, p Policy, dom *DOMState) *Dominators {
	buf := newDomBuffers(g.NumNodes())
	go buf.populate()
	return computeDominators(g, roots, p, dom, buf, nil)
}

// domBuffers are the arrays ComputeDominators writes: the two outputs and
// vp, which holds the DFS order and the predecessor offsets and becomes the
// Self column. Allocating them up front lets their pages be faulted in on
// another core.
type domBuffers struct {
	idom     []int32
	retained []uint64
	vp       []uint64
}

func newDomBuffers(n int) *domBuffers {
	if n == 0 {
		return &domBuffers{}
	}
	return &domBuffers{idom: model.Alloc[int32](n), retained: model.Alloc[uint64](n), vp: model.Alloc[uint64](n + 1)}
}

// populate faults the buffers' pages in on the calling goroutine while
// the dominator pass may already be using them (see populate), so the
// kernel's zeroing of about 300 MB for 14M nodes overlaps the
// single-threaded DFS instead of stalling it. It reports false where the
// kernel cannot do that; the pages are then faulted in by first use.
func (b *domBuffers) populate() bool {
	if len(b.idom) == 0 {
		return true
	}
	// The DFS writes idom (its node numbers) and vp (the predecessor
	// counts) at random, so those come first.
	return populate(unsafe.Pointer(&b.idom[0]), uintptr(len(b.idom))*4) &&
		populate(unsafe.Pointer(&b.vp[0]), uintptr(len(b.vp))*8) &&
		populate(unsafe.Pointer(&b.retained[0]), uintptr(len(b.retained))*8)
}

// touchPages writes a zero to every page of [p, p+size), which must be
// zeroed memory nobody else uses yet.
func touchPages(p unsafe.Pointer, size uintptr) {
	const page = 4096
	bs := unsafe.Slice((*byte)(p), size)
	for i := 0; i < len(bs); i += page {
		bs[i] = 0
	}
}

// prefault faults in [p, p+size), which must be zeroed memory nobody else
// uses yet, on all cores.
func prefault(p unsafe.Pointer, size uintptr) {
	const chunk = 4 << 20
	parallelChunks(int(size), chunk, func(lo, hi int) {
		if !populate(unsafe.Add(p, lo), uintptr(hi-lo)) {
			touchPages(unsafe.Add(p, lo), uintptr(hi-lo))
		}
	})
}

// computeDominators is ComputeDominators writing into buf; it leaves the
// predecessor array in sc (if not nil) for later passes.
func computeDominators(g *model.Graph, roots *Roots, p Policy, dom *DOMState, buf *domBuffers, sc *scratch) *Dominators {
	n := g.NumNodes()
	d := &Dominators{Root: g.Root}
	if n == 0 {
		d.Self = g.Nodes.Size
		return d
	}
	f := newEdgeFilter(g, roots, p)
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	root := g.Root
	derive := p.SkipIntoPageOwned && roots != nil && roots.PageOwned == nil && len(roots.seeds) > 0

	// Outputs, and the scratch views into them.
	idom := buf.idom
	retained := buf.retained
	pb := unsafe.Slice((*int32)(unsafe.Pointer(&retained[0])), 2*n) // DFS number -> parent, best
	num := idom                                                     // node -> DFS number + 1, 0 if unreached
	vp := buf.vp
	vpw := unsafe.Slice((*uint32)(unsafe.Pointer(&vp[0])), 2*n+2)
	vertex := unsafe.Slice((*int32)(unsafe.Pointer(&vp[0])), n) // DFS number -> node
	pf := vpw[n : 2*n+1]                                        // counts, offsets, semi, idom

	var stack []uint32 // edge cursor per DFS level
	next := int32(0)
	seeding, rootPage := false, false
	var extraSeeds []int32
	// dfs numbers the nodes reachable from start over essential edges, with
	// start a child of DFS number p. For each edge v -> w it meets, it folds
	// v into w's semidominator candidate best[w] when v is numbered lower
	// (tree and forward edges) and counts v as a higher predecessor of w
	// otherwise (cross and back edges). While seeding, it also notes the
	// targets of non-weak edges it may not follow, for the page-owned set.
	dfs := func(start int32, parent int32) {
		cur := next
		next++
		num[start] = cur + 1
		vertex[cur] = start
		pb[2*cur], pb[2*cur+1] = parent, parent
		stack = append(stack[:0], fe[start])
		for len(stack) > 0 {
			top := len(stack) - 1
			v := vertex[cur]
			st := f.source(v)
			e, end := stack[top], fe[v+1]
			descended := false
			for ; e < end; e++ {
				w := to[e]
				if !f.ok(st, v, typ[e], w) {
					if seeding && !f.weak[typ[e]] {
						if num[w] == 0 {
							extraSeeds = append(extraSeeds, w)
						} else if w == root {
							rootPage = true
						}
					}
					continue
				}
				dw := num[w] - 1
				if dw < 0 {
					stack[top] = e + 1
					dw = next
					next++
					num[w] = dw + 1
					vertex[dw] = w
					pb[2*dw], pb[2*dw+1] = cur, cur
					stack = append(stack, fe[w])
					cur = dw
					descended = true
					break
				}
				if dw > cur {
					if cur < pb[2*dw+1] {
						pb[2*dw+1] = cur
					}
				} else if dw < cur {
					pf[dw]++
					if dw == 0 && seeding {
						rootPage = true
					}
				}
			}
			if descended {
				continue
			}
			stack = stack[:top]
			cur = pb[2*cur]
		}
	}
	// The root is number 0 and its children are searched one by one, which
	// is a DFS of the root with the edges taken in a chosen order: any
	// depth-first numbering gives the same dominators.
	next = 1
	num[root] = 1
	vertex[0] = root
	rootEdges := func(only Bits) {
		for e := fe[root]; e < fe[root+1]; e++ {
			w := to[e]
			if (only != nil && !only.Has(int(w))) || !f.ok(srcRoot, root, typ[e], w) {
				continue
			}
			if num[w] == 0 {
				dfs(w, 0)
			} else if dw := num[w] - 1; dw > 0 {
				pb[2*dw+1] = 0 // a forward edge from the root
			}
		}
	}
	if derive {
		// DevTools' page-owned set is everything reachable over non-weak
		// edges from the seeds (the targets of the root's shortcut edges,
		// and "(Document DOM trees)"). Searching the seeds first numbers
		// most of it, as the page-owned rule never applies to edges from
		// page-owned nodes; the rest hangs off the non-weak edges the
		// search may not follow (inner shortcuts, WeakMap table edges).
		// That saves FindRoots' separate pass over the graph.
		f.derivePageOwned(num)
		seeds := NewBits(n)
		for _, s := range roots.seeds {
			seeds.Set(int(s))
		}
		seeding = true
		rootEdges(seeds)
		seeding = false
		// Seeds are page-owned even when the root's edge to them is not
		// essential (the root itself can be one, by a shortcut self edge).
		for _, s := range roots.seeds {
			if s == root {
				rootPage = true
			} else if num[s] == 0 {
				extraSeeds = append(extraSeeds, s)
			}
		}
		extra := NewBits(n)
		rootDone := false
		for len(extraSeeds) > 0 || (rootPage && !rootDone) {
			if rootPage && !rootDone {
				// A seed reaches the root, so all the root reaches is
				// page-owned as well.
				rootDone = true
				for e := fe[root]; e < fe[root+1]; e++ {
					if !f.weak[typ[e]] {
						extraSeeds = append(extraSeeds, to[e])
					}
				}
				continue
			}
			v := extraSeeds[len(extraSeeds)-1]
			extraSeeds = extraSeeds[:len(extraSeeds)-1]
			if num[v] != 0 || extra.Has(int(v)) {
				if v == root {
					rootPage = true
				}
				continue
			}
			extra.Set(int(v))
			for e := fe[v]; e < fe[v+1]; e++ {
				if w := to[e]; !f.weak[typ[e]] && num[w] == 0 && !extra.Has(int(w)) {
					extraSeeds = append(extraSeeds, w)
				} else if w == root && !f.weak[typ[e]] {
					rootPage = true
				}
			}
		}
		if rootPage {
			// The root is numbered but is page-owned only if a seed
			// reaches it.
			extra.Set(int(root))
		}
		// From now on the filter reads the set as bits: 1/32 of the
		// memory of the DFS numbers, so it stays in cache.
		roots.PageOwned = pageOwnedBits(num, next, extra)
		f.seedsDone(roots.PageOwned)
	}
	rootEdges(nil)
	d.Reached = int(next)
	if int(next) < n {
		hasRet := essentialRetained(g, f)
		for v := int32(0); v < int32(n); v++ {
			if num[v] == 0 && !hasRet.Has(int(v)) {
				before := next
				dfs(v, 0)
				d.WeakOnly++
				d.WeakOnlyReached += int(next - before)
			}
		}
	}
	cnt := next
	var leftovers Bits
	if int(cnt) < n {
		leftovers = NewBits(n)
		for v := 0; v < n; v++ {
			if num[v] == 0 {
				leftovers.Set(v)
				d.Leftover++
			}
		}
	}

	pred := fillPredecessors(g, f, num, pf, cnt)

	// num is dead: its memory becomes the path-compressed ancestor array
	// of the link-eval forest, starting as the DFS parents.
	anc := idom
	for w := int32(0); w < cnt; w++ {
		anc[w] = pb[2*w]
	}
	var cstack []int32
	// eval returns the smallest semidominator on the forest path from the
	// linked node v up to its highest linked ancestor, compressing the
	// path. Nodes numbered above w are the linked ones.
	eval := func(v, w int32) int32 {
		if anc[v] <= w {
			return pb[2*v+1]
		}
		cstack = cstack[:0]
		x := v
		for anc[x] > w {
			cstack = append(cstack, x)
			x = anc[x]
		}
		p := x
		pbest := pb[2*p+1]
		for i := len(cstack) - 1; i >= 0; i-- {
			y := cstack[i]
			anc[y] = anc[p]
			if pbest < pb[2*y+1] {
				pb[2*y+1] = pbest
			} else {
				pbest = pb[2*y+1]
			}
			p = y
		}
		return pb[2*v+1]
	}
	end := pf[cnt]
	for w := cnt - 1; w >= 1; w-- {
		start := pf[w]
		s := pb[2*w+1]
		if pred.packed != nil {
			// Bounds-checked once per node rather than per byte.
			ents := pred.packed[3*start : 3*end]
			for i := 0; i+2 < len(ents); i += 3 {
				u := int32(ents[i]) | int32(ents[i+1])<<8 | int32(ents[i+2])<<16
				if c := eval(u, w); c < s {
					s = c
				}
			}
		} else {
			for _, u := range pred.wide[start:end] {
				if c := eval(u, w); c < s {
					s = c
				}
			}
		}
		pb[2*w+1] = s
		pf[w] = uint32(s) // semi[w]
		end = start
	}
	sc.put(pred.buf)
	pred = nil
	// Immediate dominators in DFS numbers: the nearest dominator-tree
	// ancestor of the DFS parent that is not below the semidominator.
	pf[0] = 0
	for w := int32(1); w < cnt; w++ {
		sd := int32(pf[w])
		c := pb[2*w]
		for c > sd {
			c = int32(pf[c])
		}
		pf[w] = uint32(c)
	}
	for i := range idom {
		idom[i] = root
	}
	for w := int32(1); w < cnt; w++ {
		idom[vertex[w]] = vertex[pf[w]]
	}
	idom[root] = model.NoNode
	d.IDom = idom

	// Self sizes, straight into retained; pf is free to serve as scratch.
	redistributed := p.RedistributeShallow && roots != nil && roots.HasUserRoots()
	if redistributed {
		redistribute(g, roots, dom, pf[:n], retained)
	} else {
		copy(retained, g.Nodes.Size)
	}
	for w := cnt - 1; w >= 1; w-- {
		v := vertex[w]
		retained[idom[v]] += retained[v]
	}
	if leftovers != nil {
		for v := 0; v < n; v++ {
			if leftovers.Has(v) {
				retained[root] += retained[v]
			}
		}
	}
	d.Retained = retained
	if redistributed {
		// Recover the self sizes: a node's retained size minus its
		// children's. The DFS order array is dead, so vp holds them.
		self := vp[:n]
		copy(self, retained)
		for v := 0; v < n; v++ {
			if p := idom[v]; p >= 0 {
				self[p] -= retained[v]
			}
		}
		d.Self = self
	} else {
		d.Self = g.Nodes.Size
	}
	return d
}

// pageOwnedBits materializes the derived page-owned set: the nodes
// numbered from 1 to end-1, and extra.
func pageOwnedBits(num []int32, end int32, extra Bits) Bits {
	b := extra
	for v, x := range num {
		if x > 1 && x-1 < end { // numbered, not the root, before end
			b.Set(v)
		}
	}
	return b
}

// essentialRetained marks the nodes with at least one essential retaining
// edge (from any node, reached or not), for the "only weak retainers" test.
func essentialRetained(g *model.Graph, f *edgeFilter) Bits {
	n := g.NumNodes()
	b := NewBits(n)
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	for v := int32(0); v < int32(n); v++ {
		st := f.source(v)
		for e := fe[v]; e < fe[v+1]; e++ {
			if w := to[e]; f.ok(st, v, typ[e], w) {
				b.Set(int(w))
			}
		}
	}
	return b
}

// packLimit is the node count up to which predecessors are packed in three
// bytes (a variable so tests can try both layouts).
var packLimit int32 = 1 << 24

// predecessors holds the higher predecessors' DFS numbers, slot i for
// slot i: three bytes each when every DFS number fits in 24 bits (graphs of
// fewer than 16.7M nodes), which saves a quarter of the pass's one E-sized
// array, and four bytes otherwise.
type predecessors struct {
	buf    []int32 // the memory, handed on to later passes when done
	packed []byte  // 3-byte little-endian entries in buf, when packed
	wide   []int32 // 4-byte entries in buf, otherwise
}

// set stores v in slot i. Slots are whole bytes, so goroutines may fill
// different slots at once.
func (p *predecessors) set(i uint32, v int32) {
	if p.packed != nil {
		j := 3 * uint64(i)
		p.packed[j], p.packed[j+1], p.packed[j+2] = byte(v), byte(v>>8), byte(v>>16)
		return
	}
	p.wide[i] = v
}

// fillPredecessors turns the higher-predecessor counts in pf (indexed by
// DFS number) into offsets and stores, for every essential edge v -> w with
// num(v) > num(w), v's DFS number in w's slot range of the result:
// afterwards w's higher predecessors are slots pf[w] to pf[w+1]-1. The
// edges are split across cores by source ranges; slots are claimed with
// atomic decrements, so the order inside a range varies but its contents
// do not, and only the minimum over a range is ever used.
func fillPredecessors(g *model.Graph, f *edgeFilter, num []int32, pf []uint32, cnt int32) *predecessors {
	var total uint32
	for t := int32(0); t < cnt; t++ {
		total += pf[t]
		pf[t] = total
	}
	pf[cnt] = total
	n := g.NumNodes()
	pred := &predecessors{}
	words, bytes := int(total), uintptr(total)*4
	if cnt < packLimit {
		bytes = uintptr(total) * 3
		words = int((bytes + 3) / 4)
	}
	// The capacity is at least 2N+2 words: Analyze hands the array on to
	// the Summary, whose dominator-tree children (2N entries) then need no
	// fresh allocation. Pages beyond what is used here are not touched, so
	// they cost no memory until then.
	pred.buf = model.Alloc[int32](max(words, 2*n+2))[:words]
	if total == 0 {
		pred.wide = pred.buf
		return pred
	}
	if cnt < packLimit {
		pred.packed = unsafe.Slice((*byte)(unsafe.Pointer(&pred.buf[0])), bytes)
	} else {
		pred.wide = pred.buf
	}
	// Fault the pages in up front, on all cores: page faults taken at
	// random spots by the fill below were measured to cost twice as much.
	prefault(unsafe.Pointer(&pred.buf[0]), bytes)
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	w := workers()
	m := uint64(fe[n])
	var wg sync.WaitGroup
	for i := 0; i < w; i++ {
		// Split by edge count so the goroutines get similar work.
		e0, e1 := m*uint64(i)/uint64(w), m*uint64(i+1)/uint64(w)
		lo := sort.Search(n, func(v int) bool { return uint64(fe[v]) >= e0 })
		hi := sort.Search(n, func(v int) bool { return uint64(fe[v]) >= e1 })
		if i == w-1 {
			hi = n
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for v := int32(lo); v < int32(hi); v++ {
				dv := num[v] - 1
				if dv < 0 {
					continue
				}
				st := f.source(v)
				for e := fe[v]; e < fe[v+1]; e++ {
					t := to[e]
					if !f.ok(st, v, typ[e], t) {
						continue
					}
					if dw := num[t] - 1; dw < dv {
						pred.set(atomic.AddUint32(&pf[dw], ^uint32(0)), dv)
					}
				}
			}
		}(lo, hi)
	}
	wg.Wait()
	return pred
}
