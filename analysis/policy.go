package analysis

import (
	"runtime"
	"sort"
	"sync"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Policy decides which edges retain their targets (the "essential" edges
// that dominators and retained sizes are computed over) and whether self
// sizes are redistributed before retained sizes are summed.
//
// Weak edges (model.Weak) never retain anything, under every policy.
type Policy struct {
	// Name identifies the policy in output ("devtools", "raw").
	Name string
	// SkipEphemeronEdges ignores model.Ephemeron edges: the WeakMap
	// table -> value edge, so a value is dominated by its key.
	SkipEphemeronEdges bool
	// SkipSelfEdges ignores edges from a node to itself.
	SkipSelfEdges bool
	// SkipInnerShortcuts ignores model.Shortcut edges except those leaving
	// the root (which mark the user roots).
	SkipInnerShortcuts bool
	// SkipIntoPageOwned ignores edges from a node that is not page-owned
	// to a page-owned one (Roots.PageOwned), except edges from the root.
	SkipIntoPageOwned bool
	// RedistributeShallow moves the self size of internal nodes to their
	// single owner before retained sizes are computed (see ShallowSizes);
	// it applies only to graphs with user roots.
	RedistributeShallow bool
}

// DevToolsPolicy is Chrome DevTools' retained-size policy
// (HeapSnapshot.computeIsEssentialEdge, chrome-devtools-frontend
// 1.0.1705227). An edge from F to T is not essential when any of:
//
//  1. it is the WeakMap table -> value edge: an internal edge named
//     "<i> / part of key (… @K) -> value (… @V) pair in WeakMap (table @T)"
//     leaving the node whose id is T (the V8 reader marks exactly these
//     model.Ephemeron); the key -> value edge is kept, so a WeakMap value
//     is dominated by its key;
//  2. it is weak;
//  3. F == T;
//  4. F is not the root and the edge is a shortcut (the root's shortcut
//     edges are kept: they mark user globals);
//  5. F is not the root, T is page-owned and F is not ("skipping the edges
//     from non-page-owned nodes to page-owned nodes, otherwise the
//     dominators of objects also retained by the debugger would be
//     affected").
//
// Nodes that no essential path reaches are handled as DevTools' dominator
// pass does: every unreached node without any essential retainer (only
// "weak" ones, in the broad sense of the rules above) becomes a child of
// the root, in node order, together with what it reaches; whatever is
// still unreached after that (cycles retained only by each other) is
// attached directly under the root. See ComputeDominators.
//
// With user roots, self sizes are first redistributed (ShallowSizes).
var DevToolsPolicy = Policy{
	Name:                "devtools",
	SkipEphemeronEdges:  true,
	SkipSelfEdges:       true,
	SkipInnerShortcuts:  true,
	SkipIntoPageOwned:   true,
	RedistributeShallow: true,
}

// RawPolicy keeps every non-weak edge except self edges and keeps the
// runtime's self sizes: the plain dominator tree of the strong graph.
var RawPolicy = Policy{Name: "raw", SkipSelfEdges: true}

// DefaultPolicy returns DevToolsPolicy for V8 graphs and, for other
// runtimes, a policy with the rules that are not V8-specific (weak,
// ephemeron, self and inner shortcut edges are skipped; no page-owned rule,
// no size redistribution).
//
// On every runtime the edges out of objects no strong path reaches still
// count, as in DevTools, though Eclipse MAT drops such objects before its
// dominator tree by default. VisualVM, the oracle of the HPROF fixtures,
// counts them: without those edges every retained size that differs from
// its own moves further away (LeakDemo's Object[] by class: 6,912,360 ->
// 6,927,952 bytes against its 6,909,816) and jshell's LambdaForm leaves
// its 5%. Half of those objects in the fixtures' live dumps are held by
// Soft- and WeakReferences, alive to the JVM, so what they point at is
// shared indeed. Firefox writes only what its walk from the roots reached:
// the rule changes nothing there.
func DefaultPolicy(g *model.Graph) Policy {
	if kinds.IsV8(g) {
		return DevToolsPolicy
	}
	return Policy{Name: "default", SkipEphemeronEdges: true, SkipSelfEdges: true, SkipInnerShortcuts: true}
}

// Essential is the result of applying a Policy to a graph.
type Essential struct {
	// Edges has a bit set for every edge that retains its target.
	Edges Bits
	// Retained has a bit set for every node with at least one essential
	// retaining edge; DevTools treats unreached nodes without one as having
	// "only weak retainers".
	Retained Bits
}

// EssentialEdges applies p to g and materializes the result. roots
// supplies the page-owned set for SkipIntoPageOwned; when it is nil but
// has seeds (roots from FromResults), it is derived and stored in roots
// first. ComputeDominators does
// not need it (it applies the policy on the fly); it is for callers that
// ask why an edge does or does not retain. The work is split across cores
// by edge ranges aligned to 64-bit words, so the result does not depend on
// the number of workers.
func (p Policy) EssentialEdges(g *model.Graph, roots *Roots) *Essential {
	n, m := g.NumNodes(), g.NumEdges()
	ess := &Essential{Edges: NewBits(m), Retained: NewBits(n)}
	if n == 0 {
		return ess
	}
	if p.SkipIntoPageOwned && roots != nil && roots.PageOwned == nil && len(roots.seeds) > 0 {
		// Roots from FromResults leave the set to whoever needs it;
		// without it the page-owned rule would silently not apply.
		roots.PageOwned = reachFrom(g, kinds.New(g), roots.seeds)
	}
	f := newEdgeFilter(g, roots, p)
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	words := len(ess.Edges)
	workers := runtime.GOMAXPROCS(0)
	if words < 1<<12 {
		workers = 1
	}
	retained := make([]Bits, workers)
	retained[0] = ess.Retained
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		if w > 0 {
			retained[w] = NewBits(n)
		}
		w0, w1 := words*w/workers, words*(w+1)/workers
		wg.Add(1)
		go func(w, w0, w1 int) {
			defer wg.Done()
			eb, rb := ess.Edges, retained[w]
			e0, e1 := uint32(w0*64), uint32(w1*64)
			if int(e1) > m {
				e1 = uint32(m)
			}
			if e0 >= e1 {
				return
			}
			// The source of edge e0: the last node whose range starts at or
			// before it.
			src := int32(sort.Search(n, func(i int) bool { return fe[i+1] > e0 }))
			st := f.source(src)
			for e := e0; e < e1; e++ {
				for fe[src+1] <= e {
					src++
					st = f.source(src)
				}
				dst := to[e]
				if !f.ok(st, src, typ[e], dst) {
					continue
				}
				eb[e>>6] |= 1 << (e & 63)
				rb[dst>>6] |= 1 << (uint32(dst) & 63)
			}
		}(w, w0, w1)
	}
	wg.Wait()
	for w := 1; w < workers; w++ {
		for i, x := range retained[w] {
			ess.Retained[i] |= x
		}
	}
	return ess
}
