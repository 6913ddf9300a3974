package analysis

import (
	"unsafe"

	"github.com/heapx/heapx/analysis/internal/parallel"
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
	// Self is the self size used for each node: g's sizes, or the
	// redistributed sizes of ShallowSizes when the policy asks for them
	// (DevTools' "Shallow size"), in 32 bits a value while they fit.
	Self model.Uint64s
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
// there. ds supplies the "Detached " renaming that the redistribution
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
//     Retained) until those are written, and the offsets array becomes
//     the Self column (32 bits a value) at the end, the DFS order's
//     pages beside it being given back;
//   - semidominators and then immediate dominators are kept in the
//     predecessor offsets array, whose entries die as the passes move on;
//   - self sizes are computed after the tree, straight into Retained,
//     and copied into the Self column before Retained adds them up.
//
// Everything is iterative: a 10^6-long chain needs no deeper Go stack. The
// size redistribution uses all cores; the result does not depend on its
// schedule. The rest runs on one, Analyze giving the other the distances
// and classes.
func ComputeDominators(g *model.Graph, roots *Roots, p Policy, ds *DOMState) *Dominators {
	buf := newDomBuffers(g.NumNodes())
	go buf.populate()
	return computeDominators(g, roots, p, ds, buf, nil, nil)
}

// domBuffers are the arrays ComputeDominators writes: the two outputs and
// vp, which holds the DFS order and the predecessor offsets, and then the
// Self column in the offsets' place. Allocating them up front lets their pages be faulted in on
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
	parallel.Chunks(int(size), chunk, func(lo, hi int) {
		if !populate(unsafe.Add(p, lo), uintptr(hi-lo)) {
			touchPages(unsafe.Add(p, lo), uintptr(hi-lo))
		}
	})
}

// computeDominators is ComputeDominators writing into buf; it leaves the
// predecessor array in sc (if not nil) for later passes, its pages given
// back to the system, and then calls afterSemis (if not nil): the pass
// holds the most memory until then. It runs the phases of a dominatorPass
// in order.
func computeDominators(g *model.Graph, roots *Roots, p Policy, ds *DOMState, buf *domBuffers, sc *scratch, afterSemis func()) *Dominators {
	doms := &Dominators{Root: g.Root}
	if g.NumNodes() == 0 {
		return doms
	}
	dp := newDominatorPass(g, newEdgeFilter(g, roots, p), buf, doms)
	derive := p.SkipIntoPageOwned && roots != nil && roots.PageOwned == nil && len(roots.seeds) > 0
	dp.number(roots, derive)
	dp.pred = fillPredecessors(g, dp.f, dp.num, dp.pf, dp.numbered)
	dp.semidominators()
	if pb := dp.pred.buf; len(pb) > 0 {
		release(unsafe.Pointer(&pb[0]), uintptr(len(pb))*4)
	}
	sc.put(dp.pred.buf)
	dp.pred = nil
	if afterSemis != nil {
		afterSemis()
	}
	dp.immediateDominators()
	redistributed := p.RedistributeShallow && roots != nil && roots.HasUserRoots()
	dp.retainedSizes(redistributed, roots, ds)
	return doms
}

// dominatorPass is one run of computeDominators, as phases: number,
// fillPredecessors, semidominators, immediateDominators, retainedSizes and
// Self. Its slices are views of the three domBuffers arrays, each
// holding in turn what the phase at hand needs (ComputeDominators says
// why); each phase says what it finds in them and what it leaves:
//
//	buf.idom      num (node -> DFS number + 1, 0 if unreached), then
//	              parent (DFS number -> DFS parent), then the output IDom
//	buf.retained  pb (DFS number -> DFS parent, then forest ancestor;
//	              best semidominator candidate), then self sizes, then
//	              the output Retained
//	buf.vp        vertex (DFS number -> node) in its first n words and pf
//	              (DFS number -> higher-predecessor count, then offset,
//	              semidominator, immediate dominator; then the
//	              redistribution's scratch) in the next n+1; then the
//	              output Self's 32-bit words in pf's place
type dominatorPass struct {
	g    *model.Graph
	f    *edgeFilter
	buf  *domBuffers
	doms *Dominators // the result, filled in phase by phase
	n    int
	root int32
	fe   []uint32
	to   []model.NodeIndex
	typ  []uint8

	num    []int32  // buf.idom while numbering: node -> DFS number + 1
	parent []int32  // buf.idom after numbering: DFS number -> DFS parent
	pb     []int32  // buf.retained: DFS number i -> parent, then forest ancestor, at 2i; best at 2i+1
	vertex []int32  // buf.vp's first n words: DFS number -> node
	pf     []uint32 // buf.vp's next n+1 words, indexed by DFS number

	// numbered counts the numbered nodes: the next DFS number while
	// numbering.
	numbered int32
	stack    []uint32 // the DFS's edge cursor per level
	// leftovers marks the nodes no search reached, nil if none.
	leftovers Bits
	pred      *predecessors // the higher predecessors, for semidominators
	cstack    []int32       // eval's path

	// While the page-owned set is derived: seeding says the seeds are
	// searched, extraSeeds are the targets of the non-weak edges the
	// search may not follow, rootPage that a seed reaches the root.
	seeding, rootPage bool
	extraSeeds        []int32
}

func newDominatorPass(g *model.Graph, f *edgeFilter, buf *domBuffers, doms *Dominators) *dominatorPass {
	n := g.NumNodes()
	vpw := unsafe.Slice((*uint32)(unsafe.Pointer(&buf.vp[0])), 2*n+2)
	return &dominatorPass{
		g: g, f: f, buf: buf, doms: doms, n: n, root: g.Root,
		fe: g.Nodes.FirstEdge, to: g.Edges.To, typ: g.Edges.Type,
		num:    buf.idom,
		pb:     unsafe.Slice((*int32)(unsafe.Pointer(&buf.retained[0])), 2*n),
		vertex: unsafe.Slice((*int32)(unsafe.Pointer(&buf.vp[0])), n),
		pf:     vpw[n : 2*n+1],
	}
}

// dfs numbers the nodes reachable from start over essential edges, with
// start a child of DFS number parent. For each edge v -> w it meets, it
// folds v into w's semidominator candidate best[w] when v is numbered
// lower (tree and forward edges) and counts v as a higher predecessor of
// w in pf otherwise (cross and back edges). While seeding, it also notes
// the targets of non-weak edges it may not follow, for the page-owned
// set. It writes num, vertex, pb and pf (see number).
func (dp *dominatorPass) dfs(start int32, parent int32) {
	f, fe, to, typ, root := dp.f, dp.fe, dp.to, dp.typ, dp.root
	num, vertex, pb, pf := dp.num, dp.vertex, dp.pb, dp.pf
	next, stack := dp.numbered, dp.stack
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
				if dp.seeding && !f.weak[typ[e]] {
					if num[w] == 0 {
						dp.extraSeeds = append(dp.extraSeeds, w)
					} else if w == root {
						dp.rootPage = true
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
				if dw == 0 && dp.seeding {
					dp.rootPage = true
				}
			}
		}
		if descended {
			continue
		}
		stack = stack[:top]
		cur = pb[2*cur]
	}
	dp.numbered, dp.stack = next, stack
}

// rootEdges searches the root's children (those in only, if not nil) one
// by one, which is a DFS of the root with the edges taken in a chosen
// order: any depth-first numbering gives the same dominators.
func (dp *dominatorPass) rootEdges(only Bits) {
	f, fe, to, typ, root := dp.f, dp.fe, dp.to, dp.typ, dp.root
	for e := fe[root]; e < fe[root+1]; e++ {
		w := to[e]
		if (only != nil && !only.Has(int(w))) || !f.ok(srcRoot, root, typ[e], w) {
			continue
		}
		if dp.num[w] == 0 {
			dp.dfs(w, 0)
		} else if dw := dp.num[w] - 1; dw > 0 {
			dp.pb[2*dw+1] = 0 // a forward edge from the root
		}
	}
}

// numberPageOwned numbers what the page-owned seeds reach first, deriving
// the page-owned set on the way, and stores it in roots.PageOwned.
// DevTools' page-owned set is everything reachable
// over non-weak edges from the seeds (the targets of the root's shortcut
// edges, and "(Document DOM trees)"). Searching the seeds first numbers
// most of it, as the page-owned rule never applies to edges from
// page-owned nodes; the rest hangs off the non-weak edges the search may
// not follow (inner shortcuts, WeakMap table edges). That saves
// FindRoots' separate pass over the graph.
//
// Until the set is fixed, the filter reads page ownership from num.
func (dp *dominatorPass) numberPageOwned(roots *Roots) {
	f, fe, to, typ, root := dp.f, dp.fe, dp.to, dp.typ, dp.root
	num := dp.num
	f.derivePageOwned(num)
	seeds := NewBits(dp.n)
	for _, s := range roots.seeds {
		seeds.Set(int(s))
	}
	dp.seeding = true
	dp.rootEdges(seeds)
	dp.seeding = false
	// Seeds are page-owned even when the root's edge to them is not
	// essential (the root itself can be one, by a shortcut self edge).
	for _, s := range roots.seeds {
		if s == root {
			dp.rootPage = true
		} else if num[s] == 0 {
			dp.extraSeeds = append(dp.extraSeeds, s)
		}
	}
	extra := NewBits(dp.n)
	rootDone := false
	for len(dp.extraSeeds) > 0 || (dp.rootPage && !rootDone) {
		if dp.rootPage && !rootDone {
			// A seed reaches the root, so all the root reaches is
			// page-owned as well.
			rootDone = true
			for e := fe[root]; e < fe[root+1]; e++ {
				if !f.weak[typ[e]] {
					dp.extraSeeds = append(dp.extraSeeds, to[e])
				}
			}
			continue
		}
		v := dp.extraSeeds[len(dp.extraSeeds)-1]
		dp.extraSeeds = dp.extraSeeds[:len(dp.extraSeeds)-1]
		if num[v] != 0 || extra.Has(int(v)) {
			if v == root {
				dp.rootPage = true
			}
			continue
		}
		extra.Set(int(v))
		for e := fe[v]; e < fe[v+1]; e++ {
			if w := to[e]; !f.weak[typ[e]] && num[w] == 0 && !extra.Has(int(w)) {
				dp.extraSeeds = append(dp.extraSeeds, w)
			} else if w == root && !f.weak[typ[e]] {
				dp.rootPage = true
			}
		}
	}
	if dp.rootPage {
		// The root is numbered but is page-owned only if a seed
		// reaches it.
		extra.Set(int(root))
	}
	// From now on the filter reads the set as bits: 1/32 of the memory of
	// the DFS numbers, so it stays in cache.
	roots.PageOwned = pageOwnedBits(num, dp.numbered, extra)
	f.seedsDone(roots.PageOwned)
}

// number numbers the nodes depth-first (dfs), the root 0: what the root
// reaches (with derive, what the page-owned seeds reach first: see
// numberPageOwned), then, as DevTools' flow graph has an edge from the
// root to each of them, the nodes still unreached without an essential
// retainer, in node order. It counts what each search reached in doms and
// marks the nodes still unreached in leftovers.
//
// It finds the buffers zero and leaves, for the numbered nodes: num
// (buf.idom) their DFS numbers + 1, vertex (buf.vp) the node of each DFS
// number, pb (buf.retained) the DFS parent and the smallest lower
// predecessor (the semidominator candidate) of each DFS number, and pf
// (buf.vp) the count of its higher predecessors.
func (dp *dominatorPass) number(roots *Roots, derive bool) {
	dp.numbered = 1
	dp.num[dp.root] = 1
	dp.vertex[0] = dp.root
	if derive {
		dp.numberPageOwned(roots)
	}
	dp.rootEdges(nil)
	doms, n, num := dp.doms, dp.n, dp.num
	doms.Reached = int(dp.numbered)
	if int(dp.numbered) < n {
		hasRet := essentialRetained(dp.g, dp.f)
		for v := int32(0); v < int32(n); v++ {
			if num[v] == 0 && !hasRet.Has(int(v)) {
				before := dp.numbered
				dp.dfs(v, 0)
				doms.WeakOnly++
				doms.WeakOnlyReached += int(dp.numbered - before)
			}
		}
	}
	if int(dp.numbered) < n {
		dp.leftovers = NewBits(n)
		for v := 0; v < n; v++ {
			if num[v] == 0 {
				dp.leftovers.Set(v)
				doms.Leftover++
			}
		}
	}
}

// eval returns the smallest semidominator on the forest path from the
// linked node v up to its highest linked ancestor, compressing the path.
// Nodes numbered above w are the linked ones. It is called once per
// stored predecessor, and mostly finds v's ancestor unlinked: that case
// is kept small enough to be inlined.
func (dp *dominatorPass) eval(v, w int32) int32 {
	if dp.pb[2*v] <= w {
		return dp.pb[2*v+1]
	}
	return dp.compress(v, w)
}

// compress is eval for a v whose ancestor is linked.
func (dp *dominatorPass) compress(v, w int32) int32 {
	pb := dp.pb
	cstack := dp.cstack[:0]
	x := v
	for pb[2*x] > w {
		cstack = append(cstack, x)
		x = pb[2*x]
	}
	p := x
	pbest := pb[2*p+1]
	for i := len(cstack) - 1; i >= 0; i-- {
		y := cstack[i]
		pb[2*y] = pb[2*p]
		if pbest < pb[2*y+1] {
			pb[2*y+1] = pbest
		} else {
			pbest = pb[2*y+1]
		}
		p = y
	}
	dp.cstack = cstack
	return pb[2*v+1]
}

// semidominators computes the semidominator of every numbered node but
// the root, in decreasing DFS order: the smallest of its candidate in pb
// and what eval finds from each higher predecessor.
//
// It finds num dead, pb as number left it, pf holding the offsets of each
// DFS number's slots in pred (fillPredecessors). The DFS parents move to
// idom's memory (parent), and pb's parent slots become the path-compressed
// ancestors of the link-eval forest, which start as the parents: eval
// reads a node's ancestor and best candidate from one pair, in one cache
// line, where with the ancestors in an array of their own it missed the
// cache twice (4-7% of this loop's time on the synthetic snapshots). It
// leaves each DFS number's semidominator in pf (and in pb's best), the
// parents in parent, and pred free.
func (dp *dominatorPass) semidominators() {
	cnt, pb, pf, pred := dp.numbered, dp.pb, dp.pf, dp.pred
	dp.parent = dp.buf.idom[:cnt]
	dp.num = nil
	for w := int32(0); w < cnt; w++ {
		dp.parent[w] = pb[2*w]
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
				if c := dp.eval(u, w); c < s {
					s = c
				}
			}
		} else {
			for _, u := range pred.wide[start:end] {
				if c := dp.eval(u, w); c < s {
					s = c
				}
			}
		}
		pb[2*w+1] = s
		pf[w] = uint32(s) // semi[w]
		end = start
	}
}

// immediateDominators turns the semidominators in pf into immediate
// dominators, in DFS numbers and in place: the nearest dominator-tree
// ancestor of the DFS parent that is not below the semidominator. Then
// parent is dead and idom becomes the output IDom, by node (through
// vertex); unreached nodes get the root.
func (dp *dominatorPass) immediateDominators() {
	cnt, parent, pf, vertex, idom, root := dp.numbered, dp.parent, dp.pf, dp.vertex, dp.buf.idom, dp.root
	pf[0] = 0
	for w := int32(1); w < cnt; w++ {
		sd := int32(pf[w])
		c := parent[w]
		for c > sd {
			c = int32(pf[c])
		}
		pf[w] = uint32(c)
	}
	dp.parent = nil
	for i := range idom {
		idom[i] = root
	}
	for w := int32(1); w < cnt; w++ {
		idom[vertex[w]] = vertex[pf[w]]
	}
	idom[root] = model.NoNode
	dp.doms.IDom = idom
}

// retainedSizes writes the output Retained into retained, pb being dead:
// the self sizes first (ShallowSizes' redistribution when redistributed,
// with pf, dead as well, as its scratch, then copied into pf's memory as
// the output Self; else g's sizes, which are Self), then, in
// decreasing DFS order (vertex), each node's added to its immediate
// dominator's, and the leftovers' to the root.
func (dp *dominatorPass) retainedSizes(redistributed bool, roots *Roots, ds *DOMState) {
	g, n, retained, idom, vertex, root := dp.g, dp.n, dp.buf.retained, dp.buf.idom, dp.vertex, dp.root
	dp.pb = nil
	if redistributed {
		redistribute(g, roots, ds, dp.pf[:n], retained)
		dp.doms.Self = model.Uint64sOver(dp.pf[:n:n])
		for v, s := range retained {
			dp.doms.Self.Set(v, s)
		}
	} else {
		g.Nodes.Size.CopyTo(retained, 0)
		// The graph's own column: nothing changes it after the read.
		dp.doms.Self = g.Nodes.Size
	}
	dp.pf = nil
	for w := dp.numbered - 1; w >= 1; w-- {
		v := vertex[w]
		retained[idom[v]] += retained[v]
	}
	// The DFS order is dead: its pages go back to the system, so only
	// Self's half of vp stays resident (-4 bytes a node under all that
	// runs after the pass; Go would return them only with all of vp).
	dp.vertex = nil
	release(unsafe.Pointer(&vertex[0]), uintptr(n)*4)
	if dp.leftovers != nil {
		for v := 0; v < n; v++ {
			if dp.leftovers.Has(v) {
				retained[root] += retained[v]
			}
		}
	}
	dp.doms.Retained = retained
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

// set stores v in slot i.
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
// afterwards w's higher predecessors are slots pf[w] to pf[w+1]-1. It runs
// on one core: split across two by source ranges, with slots claimed by
// atomic decrements, it took as long (each atomic waits for its cache
// miss, where plain stores overlap theirs) and twice the CPU, which the
// distances running beside the pass on the other core then lacked (on the
// 1 GB synthetic snapshot, 0.25-0.27 s against 0.24-0.25 s wall, 0.26
// against 0.39-0.42 CPU s).
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
	for v := int32(0); v < int32(n); v++ {
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
				pf[dw]--
				pred.set(pf[dw], dv)
			}
		}
	}
	return pred
}

// NearestMarkedDominators returns, for each item, the nearest strict
// dominator of its node that is marked, or -1. Results for the nodes on
// the way are cached in one int32 per graph node, so every dominator chain
// is walked once in all.
func NearestMarkedDominators[T any](idom []int32, marked Bits, items []T, node func(T) int32) []int32 {
	const unknown = -2
	near := make([]int32, len(idom))
	for i := range near {
		near[i] = unknown
	}
	var stack []int32
	res := make([]int32, len(items))
	for i, it := range items {
		v := node(it)
		// Climb until a node whose answer is known (or the root).
		for near[v] == unknown {
			p := idom[v]
			if p < 0 {
				near[v] = -1
				break
			}
			if marked.Has(int(p)) {
				near[v] = p
				break
			}
			stack = append(stack, v)
			v = p
		}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			near[u] = near[v]
			v = u
		}
		res[i] = near[node(it)]
	}
	return res
}
