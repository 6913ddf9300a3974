package inspect

import (
	"slices"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// ThreadStack is one thread's stack (model.Stack) with the sizes of what
// it holds: Eclipse MAT's Thread Overview, for any dump with stacks
// (Java's HPROF, a Node.js core).
type ThreadStack struct {
	// Stack is the thread's stack as the dump has it.
	Stack *model.Stack
	// Object is the node of the thread's own object (Stack.Object),
	// model.NoNode when it has none in the graph.
	Object model.NodeIndex
	// Shallow and Retained are the thread object's sizes (0 without
	// one).
	Shallow, Retained uint64
	// Held is what the thread keeps alive: the retained sizes of its
	// object and of every object its frames hold, each counted once and
	// none that another of them dominates. MAT counts a thread's locals
	// in its retained size; this is that number.
	Held uint64
	// Values are, frame by frame, the nodes and sizes of the frames'
	// values: Values[i][j] is Stack.Frames[i].Values[j]'s.
	Values [][]HeldValue
}

// HeldValue is the object a frame value is, with its sizes.
type HeldValue struct {
	// Node is the object's node, model.NoNode when the value is no
	// object of the graph (a small integer, an object the dump's reader
	// made no node of).
	Node              model.NodeIndex
	Shallow, Retained uint64
}

// ThreadStacks returns every stack of the graph with the sizes of what
// it holds, in the graph's order.
func ThreadStacks(a *analysis.Analysis) []ThreadStack {
	g := a.Graph
	if len(g.Stacks) == 0 {
		return nil
	}
	nodes := nodesOfStacks(g)
	at := func(id uint64) HeldValue {
		n, ok := nodes[id]
		if !ok || id == 0 {
			return HeldValue{Node: model.NoNode}
		}
		return HeldValue{Node: n, Shallow: a.Self.At(int(n)), Retained: a.Dominators.Retained[n]}
	}
	out := make([]ThreadStack, len(g.Stacks))
	for i := range g.Stacks {
		s := &g.Stacks[i]
		obj := at(s.Object)
		t := ThreadStack{Stack: s, Object: obj.Node, Shallow: obj.Shallow, Retained: obj.Retained, Values: make([][]HeldValue, len(s.Frames))}
		var held []model.NodeIndex
		if obj.Node != model.NoNode {
			held = append(held, obj.Node)
		}
		for fi := range s.Frames {
			for _, v := range s.Frames[fi].Values {
				hv := at(v.Node)
				t.Values[fi] = append(t.Values[fi], hv)
				if hv.Node != model.NoNode {
					held = append(held, hv.Node)
				}
			}
		}
		t.Held = SetRetained(a, held)
		out[i] = t
	}
	return out
}

// nodesOfStacks maps the identifiers the graph's stacks name (thread
// objects, frame values) to their nodes, in one pass over the nodes.
func nodesOfStacks(g *model.Graph) map[uint64]model.NodeIndex {
	want := map[uint64]model.NodeIndex{}
	for _, s := range g.Stacks {
		want[s.Object] = model.NoNode
		for _, f := range s.Frames {
			for _, v := range f.Values {
				want[v.Node] = model.NoNode
			}
		}
	}
	delete(want, 0)
	found := map[uint64]model.NodeIndex{}
	for i := range g.NumNodes() {
		id := g.Nodes.ID.At(i)
		if _, ok := want[id]; ok {
			if _, dup := found[id]; !dup {
				found[id] = model.NodeIndex(i)
			}
		}
	}
	return found
}

// SetRetained is the retained size of a set of nodes, counted as MAT's
// dominator tree adds it: the retained sizes of the members no other
// member dominates, each once. It is exact for members that each keep
// their own objects; what only two members together keep (an object two
// of them share) is not counted.
func SetRetained(a *analysis.Analysis, nodes []model.NodeIndex) uint64 {
	set := slices.Clone(nodes)
	slices.Sort(set)
	set = slices.Compact(set)
	idom := a.Dominators.IDom
	var sum uint64
	for _, v := range set {
		top := true
		// The chain is at most as long as there are nodes (a dominator
		// column read from a file may hold a cycle).
		for d, steps := idom[v], 0; d >= 0 && steps < len(idom); d, steps = idom[d], steps+1 {
			if _, in := slices.BinarySearch(set, d); in {
				top = false
				break
			}
		}
		if top {
			sum += a.Dominators.Retained[v]
		}
	}
	return sum
}
