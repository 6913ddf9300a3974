package analysis

import (
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/heapx/heapx/model"
)

// Options select what Analyze computes.
type Options struct {
	// Policy decides which edges retain; nil means DefaultPolicy(g)
	// (DevToolsPolicy for V8 graphs).
	Policy *Policy
	// NoDistances and NoClasses skip those columns (and the Summary, which
	// needs classes) when a caller only wants retained sizes.
	NoDistances bool // skip Distances
	NoClasses   bool // skip Classes (and so the Summary)
}

// Analysis holds every column DevTools' Memory panel shows for a graph.
type Analysis struct {
	Graph  *model.Graph // the analysed graph
	Policy Policy       // the retained-size policy used
	Roots  *Roots       // user roots and page-owned nodes
	DOM    *DOMState    // propagated DOM states, for "Detached" names
	// Self is the "Shallow size" column: self sizes after the policy's
	// redistribution (g's sizes when there is none), in 32 bits a value
	// while they fit.
	Self model.Uint64s
	// Dominators holds IDom and the "Retained size" column.
	Dominators *Dominators
	// Distances is the "Distance" column; nil with Options.NoDistances.
	Distances []int32
	// Classes gives the "Constructor" column; nil with Options.NoClasses.
	Classes *Classes

	sc      *scratch // buffers earlier passes left for later ones
	retOnce sync.Once
	ret     *model.Retainers
	// The BFS tree ShortestPaths reads paths off: each node's cost and
	// tree edge, computed on first use.
	treeOnce sync.Once
	treeCost []int32
	treeEdge []uint32
	// computedDistances says Distances were computed here, not read
	// from a file; refused are then the nodes the search found behind
	// edges its filter refused (see distances).
	computedDistances bool
	refused           []int32
	// The Resolver of the dump's positions, made on first use.
	resolverOnce sync.Once
	resolver     *Resolver
	// The index ContextName reads, made on first use.
	linksOnce sync.Once
	links     *links
	// The runtime-owned marks, made on first use.
	internalsOnce sync.Once
	internals     *RuntimeInternals
	// Plain hop counts from the root, for the paths shown, and the
	// PathFinder made of them and the tree's costs, made on first use.
	hopsOnce   sync.Once
	hops       []int32
	finderOnce sync.Once
	finder     *PathFinder
	// The finders of paths --no-weak, made on first use.
	noWeakOnce sync.Once
	noWeak     *NoWeakFinder
	// The Unreachable report, computed on first use.
	unreachOnce sync.Once
	unreach     *UnreachableReport
}

// ErrEmptyGraph is returned for a graph without nodes.
var ErrEmptyGraph = errors.New("analysis: graph has no nodes")

// Analyze runs the DevTools pipeline on g: roots and page-owned marking,
// DOM state, shallow-size redistribution, essential edges, dominators and
// retained sizes, distances and classes.
func Analyze(g *model.Graph, opt Options) (*Analysis, error) {
	n := g.NumNodes()
	if n == 0 {
		return nil, ErrEmptyGraph
	}
	if g.Root < 0 || int(g.Root) >= n {
		return nil, fmt.Errorf("analysis: root node %d not in the %d nodes", g.Root, n)
	}
	a := &Analysis{Graph: g, sc: &scratch{}}
	if opt.Policy != nil {
		a.Policy = *opt.Policy
	} else {
		a.Policy = DefaultPolicy(g)
	}
	// Two cores: while one runs the dominator pass (its DFS and
	// semidominator loop are sequential), the other first faults in the
	// pass's arrays, then computes distances and classes, which do not
	// depend on it. The classes wait for the pass's semidominators, after
	// which its predecessor array is given back: beside it, during the
	// predecessor fill, their column made the peak (+57 MB on a 1 GB
	// snapshot of 14.3M nodes), and the distances, which run from the
	// pass's start, are done by then.
	buf := newDomBuffers(n)
	populated := make(chan struct{})
	go func() {
		defer close(populated)
		buf.populate()
	}()
	// The page-owned set is derived by the dominator pass (see
	// computeDominators), which saves a walk over the whole graph.
	a.Roots = FindRootsWith(g, !a.Policy.SkipIntoPageOwned)
	a.DOM = PropagateDOMState(g)
	semis := make(chan struct{})
	var semisOnce sync.Once
	semisDone := func() { semisOnce.Do(func() { close(semis) }) }
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-populated
		if n >= collectAfter {
			// What the read, the roots and the DOM states left behind
			// is garbage that no collection has returned yet (the next
			// comes at twice the live heap): returned now, it is not
			// beside the predecessor fill, the pass's peak (-5 MB on a
			// 300 MB snapshot).
			debug.FreeOSMemory()
		}
		if !opt.NoDistances {
			a.Distances, a.refused = distances(g, a.Roots, nil)
			a.computedDistances = true
		}
		if !opt.NoClasses {
			<-semis
			a.Classes = ClassifyNodes(g, a.DOM)
			if n >= collectAfter {
				// The class pass's tables by string (about 35 MB on
				// a 1 GB snapshot of 14.3M nodes) are garbage now:
				// given back to the system they do not add to the
				// peak of what comes next.
				debug.FreeOSMemory()
			}
		}
	}()
	a.Dominators = computeDominators(g, a.Roots, a.Policy, a.DOM, buf, a.sc, semisDone)
	semisDone()
	a.Self = a.Dominators.Self
	wg.Wait()
	if n >= collectAfter {
		// The passes leave temporaries behind (the distances' tables of
		// WeakMap names, the Summary's would-be memory), and on a heap
		// this size the next collection comes only at twice the live
		// heap: what runs next (the Summary's dominator-tree children, a
		// report's inspections and paths) would take fresh memory beside
		// them. Collected and given back to the system, they leave room
		// under the peak for what comes next (-15 MB at the peak of heapx
		// summary on a 1.15 GB snapshot of 14.3M nodes; a report's
		// inspections reuse them as before). The columns hold no
		// pointers, so a collection costs milliseconds.
		debug.FreeOSMemory()
	}
	return a, nil
}

// collectAfter is the node count from which Analyze ends with a garbage
// collection.
const collectAfter = 1 << 20

// collectGarbage returns the garbage of what ran before to the system,
// on a graph of collectAfter nodes or more, before a pass that keeps
// columns of a node each (the shortest-path tree, the plain hop counts):
// on a heap this size the next collection comes only at twice the live
// heap, so the columns would take fresh memory beside the garbage (a
// report's parts beside the suspects leave tens of megabytes), where
// returned first it is what they reuse. The columns hold no pointers, so
// a collection costs milliseconds.
func (a *Analysis) collectGarbage() {
	if a.Graph.NumNodes() >= collectAfter {
		debug.FreeOSMemory()
	}
}

// FromResults builds an Analysis of g from results a dump file carried
// (docs/format.md, section 4; formats.ReadOptions.Results), so reopening
// an analysed dump skips the dominator and distance passes: Dominators'
// IDom and Retained and Distances are r's columns, not copies, Self a copy
// of r.Shallow in 32 bits a value while they fit. Only what a file does not persist and is cheap is computed: the
// user roots (from the root's edges alone), the DOM states and, unless
// opt.NoClasses, the classes. Every method of Analysis then answers as
// after Analyze on the same graph, except that the Dominators' counts
// (Reached, WeakOnly, ...) are zero and Roots.PageOwned is nil (only the
// dominator pass needs it; Policy.EssentialEdges derives it when asked).
//
// Results are used only when they fit g (r.Check) and were computed under
// the policy Analyze would apply (opt.Policy, else DefaultPolicy(g), by
// name), as the format requires of a consumer; otherwise, or with r nil,
// FromResults runs Analyze(g, opt). opt.NoDistances does
// not matter when the results are used: distances cost nothing.
func FromResults(g *model.Graph, r *model.Results, opt Options) (*Analysis, error) {
	n := g.NumNodes()
	if n == 0 {
		return nil, ErrEmptyGraph
	}
	if g.Root < 0 || int(g.Root) >= n {
		return nil, fmt.Errorf("analysis: root node %d not in the %d nodes", g.Root, n)
	}
	p := DefaultPolicy(g)
	if opt.Policy != nil {
		p = *opt.Policy
	}
	// Check guarantees one entry per node and a dominator tree rooted at
	// g.Root whose retained sizes add up: results that lie are recomputed.
	if r == nil || r.Policy != p.Name || r.Check(g) != nil {
		return Analyze(g, opt)
	}
	self := model.NewUint64s(r.Shallow...)
	a := &Analysis{Graph: g, Policy: p, sc: &scratch{}, Self: self, Distances: r.Distance}
	a.Dominators = &Dominators{Root: g.Root, IDom: r.Dominator, Self: self, Retained: r.Retained}
	a.Roots = FindRootsWith(g, false)
	a.DOM = PropagateDOMState(g)
	if !opt.NoClasses {
		a.Classes = ClassifyNodes(g, a.DOM)
	}
	return a, nil
}

// Results returns a's columns as the results a dump file persists
// (docs/format.md, section 4; formats.WriteOptions.Results): the way
// back to FromResults, so an analysis saved with a dump (heapx convert
// --analyze) is not computed again when the dump is reopened. The
// columns are a's, not copies, but for Shallow, Self in 64 bits a value.
// After Options.NoDistances, Distance is nil
// and the results fail model.Results.Check: analyse with distances what
// is to be stored.
func (a *Analysis) Results() *model.Results {
	return &model.Results{Policy: a.Policy.Name, Shallow: a.Self.Slice(), Retained: a.Dominators.Retained,
		Dominator: a.Dominators.IDom, Distance: a.Distances}
}

// TotalSize is DevTools' total size: the root's retained size plus
// extra_native_bytes.
func (a *Analysis) TotalSize() uint64 { return TotalSize(a.Graph, a.Dominators) }

// Summary returns DevTools' Summary view (see Summarize).
func (a *Analysis) Summary() []ClassSummary {
	if a.Classes == nil {
		return nil
	}
	return summarize(a.Graph, a.Classes, a.Self, a.Dominators, a.Distances, nil, a.sc)
}

// SummaryOf is Summary restricted to the nodes in keep, as DevTools'
// Summary view with a filter ("Objects allocated between Snapshot 1 and
// Snapshot 2"): rows count the kept instances, and a kept instance's
// retained size counts in its class's unless a kept instance of the
// class dominates it (calculateClassesRetainedSize with a filter).
func (a *Analysis) SummaryOf(keep Bits) []ClassSummary {
	if a.Classes == nil {
		return nil
	}
	return summarize(a.Graph, a.Classes, a.Self, a.Dominators, a.Distances, keep, a.sc)
}

// NodeRow describes one node with the columns of DevTools' object grids.
type NodeRow struct {
	Node model.NodeIndex // the node's index in the graph
	// ID is the runtime's node id (DevTools shows it as "@id").
	ID uint64
	// Type is the runtime's node type name.
	Type string
	// Name is the display name (Namer); Class the "Constructor".
	Name, Class string
	// Description says in words what the node is where its name does
	// not: a V8 context's scope (ContextName), "" for any other node.
	Description string
	// Shallow and Retained are the size columns.
	Shallow, Retained uint64
	// Distance is DevTools' distance (0 when not computed).
	Distance int32
	// Dominator is the immediate dominator (model.NoNode for the root).
	Dominator model.NodeIndex
}

// Row returns the grid columns of node n.
func (a *Analysis) Row(nm *Namer, n model.NodeIndex) NodeRow {
	g := a.Graph
	r := NodeRow{
		Node: n, ID: g.NodeID(n), Type: g.NodeType(n).Name, Name: nm.Name(n),
		Shallow: a.Self.At(int(n)), Retained: a.Dominators.Retained[n], Dominator: a.Dominators.IDom[n],
	}
	if a.Classes != nil {
		r.Class = a.Classes.Name(n)
	}
	if a.Distances != nil {
		r.Distance = a.Distances[n]
	}
	if IsContextName(r.Name) {
		r.Description = a.ContextName(n)
	}
	return r
}

// Top returns the n nodes with the largest retained sizes (root excluded).
func (a *Analysis) Top(n int) []NodeRow {
	nm := NewNamer(a.Graph, a.DOM)
	var rows []NodeRow
	for _, v := range TopRetained(a.Dominators, n) {
		rows = append(rows, a.Row(nm, v))
	}
	return rows
}

// NodeByID returns the node with runtime id id (DevTools' "@id"), or false.
func (a *Analysis) NodeByID(id uint64) (model.NodeIndex, bool) {
	for i := range a.Graph.Nodes.ID.Len() {
		x := a.Graph.Nodes.ID.At(i)
		if x == id {
			return model.NodeIndex(i), true
		}
	}
	return model.NoNode, false
}

// Spare returns a buffer of n int32s, of undefined contents, for an index
// a caller builds after the analysis and keeps: part of a buffer the
// analysis's passes left and no longer use (the dominator pass's
// predecessor array, a search's queue) when one is large enough, else a
// new one. The analysis keeps those buffers for the passes that run on
// demand (the Summary, the suspects), so an index of one int32 per node
// built in them costs no fresh memory (heapx serve's id and instance
// indexes: 114 MB on a 14M-node heap). The buffer is the caller's.
func (a *Analysis) Spare(n int) []int32 { return a.sc.take(n) }

// DropSpare gives the buffers the analysis keeps for passes that run on
// demand (see Spare) to the garbage collector, for a caller that has
// built what it keeps and would rather have their memory reused by what
// it allocates next than kept: such a pass then allocates its own, and
// keeps them in turn.
func (a *Analysis) DropSpare() { a.sc.drop() }

// Retainers returns the graph's retainer index, built on first use (it
// costs 4 bytes per edge and per node, so only the commands that walk
// retainers pay).
func (a *Analysis) Retainers() *model.Retainers {
	a.retOnce.Do(func() { a.ret = model.BuildRetainers(a.Graph) })
	return a.ret
}

// Paths returns up to opt.K retainer paths from the root to target, the
// paths heapx shows (PathFinder.Find), through a.PathFinder.
func (a *Analysis) Paths(target model.NodeIndex, opt PathOptions) []Path {
	return a.PathFinder(opt).Find(target)
}

// DominatorChain returns n and its dominators up to the root, n first
// (DevTools' getDominatorsOf). The chain stops after as many steps as
// there are nodes: a dominator column read from a file (FromResults) may
// hold a cycle, which must not make this loop forever.
func (a *Analysis) DominatorChain(n model.NodeIndex) []model.NodeIndex {
	var chain []model.NodeIndex
	for v := n; v >= 0 && len(chain) < len(a.Dominators.IDom); v = a.Dominators.IDom[v] {
		chain = append(chain, v)
	}
	return chain
}

// Unreachable reports the nodes the root does not reach over non-weak
// edges, by class, with their shallow sizes. It needs classes. The report
// is computed on first use and shared (the summary and the report's
// overview both want it); do not modify it.
func (a *Analysis) Unreachable() *UnreachableReport {
	if a.Classes == nil {
		return nil
	}
	a.unreachOnce.Do(func() {
		// The distances search went over the same edges: what it reached
		// saves a search of the whole graph, when it was done here.
		var reach Bits
		if a.computedDistances {
			reach = reachableFromDistances(a.Graph, a.Roots, a.Distances, a.refused)
		}
		if reach == nil {
			reach = Reachable(a.Graph)
		}
		a.unreach = Unreachable(a.Graph, reach, a.Classes, a.Self)
	})
	return a.unreach
}

// Statistics returns DevTools' Statistics view.
func (a *Analysis) Statistics() *Statistics {
	return ComputeStatistics(a.Graph, a.Self, a.Dominators, a.DOM)
}
