// Package leak finds what leaks in a heap: where the memory of one
// snapshot accumulates (LeakSuspects, after Eclipse MAT's Leak Suspects
// report), the objects allocated between two snapshots and still alive in
// a third with the traces that hold them (Leaks, memlab's method), the
// classes and collections growing over a series (Growth), the
// class-by-class comparison of two snapshots (Diff), and the digests and
// checks that let a series be compared one snapshot at a time (Digest,
// CheckSeries).
//
// It builds on the graph core (package analysis) and on the inspections
// (package inspect) for detached DOM, globals and shapes. Like them, every
// function is a pure function of analyses; nothing here prints.
package leak
