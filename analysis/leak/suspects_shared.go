package leak

import (
	"cmp"
	"slices"
	"sort"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

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
	cost, _ := f.a.ShortestPathTree()
	member := f.a.BorrowScratch(g.NumNodes(), true) // 1 + the try a node is an object of
	defer f.a.ReturnScratch(member)
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
			if i := member[t]; i != 0 && member[u] != i && !f.k.Weak[g.Edges.Type[e]] {
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
			if sf, ok := f.holding(c.structure, c.count, model.NoNode); ok {
				fields = append(fields, sf)
			}
		}
		if len(fields) == 0 {
			continue
		}
		point := counts[0].structure
		class := SuspectClass{Class: gr.class, Count: gr.count, Retained: gr.retained, Example: gr.example,
			Function: model.NoNode, User: f.userClass(gr.example)}
		out = append(out, found{Suspect: Suspect{Holder: point, Retained: f.a.Dominators.Retained[point], Point: point,
			Fields: fields, Class: gr.class, Count: gr.count, ClassRetained: gr.retained, Classes: []SuspectClass{class},
			Via: NoClass, Shared: true}, objs: gr.nodes, total: gr.retained})
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
		if !f.isOpaque(v) && !f.internal(v) && !f.plumbing(v) && f.k.NodeOf(f.g, v) != kinds.Native {
			res = v
		}
		break
	}
	for _, w := range walked {
		memo[w] = res
	}
	return res
}
