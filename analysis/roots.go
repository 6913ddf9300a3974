package analysis

import (
	"sort"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Roots says where retention starts in a graph, as DevTools sees it.
type Roots struct {
	// Root is the graph's single synthetic root (model.Graph.Root).
	Root model.NodeIndex
	// User lists the user roots in root-edge order: the targets of the
	// root's edges that are not synthetic, plus a synthetic
	// "(Document DOM trees)" node (DevTools JSHeapSnapshot.isUserRoot). In
	// a Node.js snapshot that is the `global` object; Chrome 156 and
	// exposeInternals snapshots have none. A target reached by two root
	// edges is listed twice, as DevTools seeds it twice.
	User []model.NodeIndex
	// PageOwned marks the nodes DevTools flags as owned by the page
	// (markPageOwnedNodes): everything reachable over non-weak edges from
	// the targets of the root's shortcut edges and of its element edges to
	// "(Document DOM trees)". Nil when there are no such seeds. Analyze
	// fills it in during the dominator pass instead of walking the graph
	// once more (ComputeDominators does so when it is nil); FromResults
	// leaves it nil, as nothing after the dominator pass needs it.
	PageOwned Bits

	// seeds are the page-owned walk's starting points.
	seeds []model.NodeIndex
}

// HasUserRoots reports whether the graph has user roots. Without them
// DevTools runs in "expose internals" mode: raw self sizes, no page-owned
// rule, and distances as a plain BFS from the root.
func (r *Roots) HasUserRoots() bool { return len(r.User) > 0 }

// docDOMTreesName is the synthetic node Blink uses to group document trees.
const docDOMTreesName = "(Document DOM trees)"

// FindRoots computes the user roots and the page-owned set of g.
func FindRoots(g *model.Graph) *Roots {
	return FindRootsWith(g, true)
}

// FindRootsWith is FindRoots; without pageOwned it leaves PageOwned nil (with
// its seeds noted) for ComputeDominators to derive during its DFS.
func FindRootsWith(g *model.Graph, pageOwned bool) *Roots {
	k := kinds.New(g)
	r := &Roots{Root: g.Root}
	if g.NumNodes() == 0 {
		return r
	}
	start, end := g.EdgeRange(g.Root)
	var seeds []model.NodeIndex
	for e := start; e < end; e++ {
		to := g.Edges.To[e]
		isDocTrees := k.NodeOf(g, to) == kinds.Synthetic && g.NodeName(to) == docDOMTreesName
		if k.NodeOf(g, to) != kinds.Synthetic || isDocTrees {
			r.User = append(r.User, to)
		}
		switch k.Edge[g.Edges.Type[e]] {
		case kinds.EdgeShortcut:
			seeds = append(seeds, to)
		case kinds.EdgeElement:
			if isDocTrees {
				seeds = append(seeds, to)
			}
		}
	}
	r.seeds = seeds
	if len(seeds) > 0 && pageOwned {
		r.PageOwned = reachFrom(g, k, seeds)
	}
	return r
}

// reachFrom marks every node reachable from seeds over non-weak edges.
func reachFrom(g *model.Graph, k *kinds.Table, seeds []model.NodeIndex) Bits {
	return markFrom(g, k, NewBits(g.NumNodes()), seeds)
}

// markFrom adds to seen every node reachable from seeds over non-weak
// edges without passing through a node seen already, and returns it. The
// set does not depend on visiting order, so a plain stack does.
func markFrom(g *model.Graph, k *kinds.Table, seen Bits, seeds []model.NodeIndex) Bits {
	stack := make([]int32, 0, min(len(seeds), 1024))
	for _, s := range seeds {
		if !seen.Has(int(s)) {
			seen.Set(int(s))
			stack = append(stack, s)
		}
	}
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := fe[n]; e < fe[n+1]; e++ {
			t := to[e]
			if seen.Has(int(t)) || k.Weak[typ[e]] {
				continue
			}
			seen.Set(int(t))
			stack = append(stack, t)
		}
	}
	return seen
}

// Reachable marks the nodes reachable from the root over non-weak edges.
// The rest are garbage the runtime had not collected yet (or objects held
// only by weak references); DevTools still attaches them under the root.
func Reachable(g *model.Graph) Bits {
	if g.NumNodes() == 0 {
		return nil
	}
	return reachFrom(g, kinds.New(g), []model.NodeIndex{g.Root})
}

// ClassTotal is a count and a size summed over the nodes of one class.
type ClassTotal struct {
	Class uint32 // index into Classes.Names
	Name  string // the class name
	Count int    // nodes of the class
	Size  uint64 // their summed size
}

// UnreachableReport describes the nodes not reachable from the root over
// non-weak edges.
type UnreachableReport struct {
	Count   int          // unreachable nodes
	Size    uint64       // sum of the sizes passed to Unreachable
	ByClass []ClassTotal // largest Size first, then by name
}

// Unreachable totals the nodes outside reach (as returned by Reachable) by
// class. sizes is the size column to sum: g.Nodes.Size for raw sizes, or
// Analysis.Self for DevTools' adjusted ones.
func Unreachable(g *model.Graph, reach Bits, cls *Classes, sizes model.Uint64s) *UnreachableReport {
	rep := &UnreachableReport{}
	n := g.NumNodes()
	idx := map[uint32]int{}
	for i := 0; i < n; i++ {
		if reach.Has(i) {
			continue
		}
		rep.Count++
		size := sizes.At(i)
		rep.Size += size
		c := cls.Of[i]
		j, ok := idx[c]
		if !ok {
			j = len(rep.ByClass)
			idx[c] = j
			rep.ByClass = append(rep.ByClass, ClassTotal{Class: c, Name: cls.Names[c]})
		}
		rep.ByClass[j].Count++
		rep.ByClass[j].Size += size
	}
	sort.Slice(rep.ByClass, func(a, b int) bool {
		x, y := rep.ByClass[a], rep.ByClass[b]
		if x.Size != y.Size {
			return x.Size > y.Size
		}
		if x.Name != y.Name {
			return x.Name < y.Name
		}
		return x.Class < y.Class
	})
	return rep
}
