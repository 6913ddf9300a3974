// Package analysis is the graph core: it computes what a heap snapshot
// viewer shows of every node, roots and reachability, retained sizes over
// a dominator tree, distances from the roots, class ("Constructor")
// aggregates, retainer paths and a census by node type.
//
// The packages under it build on these columns, one job each, and this
// package imports none of them: leak finds what leaks (suspects, leaks
// between snapshots, growth over a series, diffs), inspect holds the
// inspections of one snapshot (closures, collections, detached DOM,
// globals, shapes, strings, merged paths), alloc answers where memory was
// allocated (sites, stacks, timelines, sampling profiles) and lifetime
// analyses memory traces.
//
// Every function is a pure function of a *model.Graph and of earlier
// results; nothing here prints, and the graph is never modified. Results
// are flat columns indexed by node (for example Dominators.IDom[n] and
// Dominators.Retained[n]) so a graph of 10^7 nodes costs a few arrays of
// N int32, never a Go object per node. Every traversal is iterative, so a
// million-long chain does not grow the goroutine stack.
//
// For V8 graphs the numbers match Chrome DevTools' Memory panel exactly
// (chrome-devtools-frontend's HeapSnapshot.ts): the essential-edge rules,
// the shallow-size redistribution, distances, class names and the
// Summary view's maxRet. Analyze runs the whole DevTools pipeline; the
// pieces (FindRoots, Policy.EssentialEdges, ShallowSizes, ComputeDominators,
// Distances, ClassifyNodes, Summarize, ...) can also be called one by one.
package analysis
