package alloc

import "github.com/heapx/heapx/analysis"

// AllocatingFunctions returns, for every node, the function that
// allocated it (the site `heapx sites` files it under): an index into
// frames, the trace's functions, or -1 for a node without an allocation
// stack. Both are nil when the dump has no allocation stacks. One pass
// over the nodes, with the trace indexed once, for exports that write a
// site per object.
func AllocatingFunctions(a *analysis.Analysis) (of []int32, frames []Frame) {
	g := a.Graph
	if !hasAllocationStacks(g) {
		return nil, nil
	}
	x := newTraceIndex(g.Trace)
	of = make([]int32, g.NumNodes())
	for v := range of {
		of[v] = allocatingFunction(g, x, int32(v))
	}
	frames = make([]Frame, len(g.Trace.Functions))
	for i := range frames {
		frames[i] = traceFrame(a.Resolver(), g, &g.Trace.Functions[i])
	}
	return of, frames
}
