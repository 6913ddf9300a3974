// Package inspect holds the inspections of one analysed snapshot: what
// closures capture (Closures), the largest collections (Collections),
// detached DOM trees (DetachedDOM), what an object alone keeps alive
// (DominatedBy), the program's global variables (GlobalVariables), the
// merged shortest paths to a class's instances (MergedPaths), objects
// grouped by shape (ObjectShapes) and strings held many times
// (DuplicateStrings).
//
// Each is a pure function of an *analysis.Analysis: it reads the graph
// core's columns (retained sizes, dominators, classes, paths) and never
// prints or modifies them.
package inspect
