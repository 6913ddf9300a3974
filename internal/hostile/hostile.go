// Package hostile makes the crafted inputs of issue 12: dumps built to
// cost a reader memory or time it should not spend (declared lengths that
// inflate, superclass cycles, field offsets that wrap, huge strings),
// names carrying terminal escapes, and exchange files whose stored
// results lie. The readers' tests and fuzz seeds take them from here, and
// bench/hostile.sh runs heapx on the full-size ones, so the crafted bytes
// have one source.
package hostile

import "runtime"

// Escapes is a name that would take over a terminal printed as it is:
// ESC ] 0 ; ... BEL sets the window title, ESC [ 2 J clears the screen,
// U+009B is the C1 control CSI (ESC [ in one code point), and DEL.
const Escapes = "Evil\x1b]0;pwned\x07\x1b[2J\u009b31mRed\x7f"

// Allocated runs f and returns the bytes the Go heap allocated while it
// ran (runtime.MemStats.TotalAlloc): what a reader reserved for an input,
// including what a declared size made it reserve and never touch, which
// peak RSS does not show (and a machine that does not overcommit memory
// refuses). Tests of crafted input bound it.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
