// Package hostile makes the crafted inputs of issue 12: dumps built to
// cost a reader memory or time it should not spend (declared lengths that
// inflate, superclass cycles, field offsets that wrap, huge strings),
// names carrying terminal escapes, and exchange files whose stored
// results lie. The readers' tests and fuzz seeds take them from here, and
// bench/hostile.sh runs heapx on the full-size ones, so the crafted bytes
// have one source.
package hostile

// Escapes is a name that would take over a terminal printed as it is:
// ESC ] 0 ; ... BEL sets the window title, ESC [ 2 J clears the screen,
// U+009B is the C1 control CSI (ESC [ in one code point), and DEL.
const Escapes = "Evil\x1b]0;pwned\x07\x1b[2J\u009b31mRed\x7f"
