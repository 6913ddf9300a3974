package analysis

import (
	"strings"

	"github.com/heapx/heapx/model"
)

// parseWeakMapEdgeName is DevTools' tryParseWeakMapEdgeName: it reports
// whether name matches
//
//	^\d+( / part of key \(.*? @\d+\) -> value \(.*? @\d+\) pair in WeakMap \(table @(\d+)\))$
//
// (JavaScript's "." excludes line terminators) and returns the
// parenthesized "duplicated part" both edges of a WeakMap entry share and
// the table id. It is hand-written because V8 gives every entry's edges a
// name of their own, so a big snapshot has millions of them; the regexp
// package took a quarter of the distance pass.
func parseWeakMapEdgeName(name string) (dup, tableID string, ok bool) {
	const (
		head   = " / part of key ("
		value  = ") -> value ("
		tail   = ") pair in WeakMap (table @"
		digits = "0123456789"
	)
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i == 0 || !strings.HasPrefix(name[i:], head) || !strings.HasSuffix(name, ")") {
		return "", "", false
	}
	dup = name[i:]
	rest := name[i+len(head) : len(name)-1] // A @D2) -> value (B @D3) pair in WeakMap (table @D4
	// D4: the digits at the end, after the literal tail.
	j := len(rest)
	for j > 0 && rest[j-1] >= '0' && rest[j-1] <= '9' {
		j--
	}
	if j == len(rest) || !strings.HasSuffix(rest[:j], tail) {
		return "", "", false
	}
	tableID = rest[j:]
	mid := rest[:j-len(tail)] // A @D2) -> value (B @D3
	if !endsWithAtDigits(mid) {
		return "", "", false
	}
	// Some ") -> value (" must follow " @" and digits; A and B are free.
	found := false
	for k := 0; k+len(value) <= len(mid); {
		p := strings.Index(mid[k:], value)
		if p < 0 {
			break
		}
		if endsWithAtDigits(mid[:k+p]) {
			found = true
			break
		}
		k += p + 1
	}
	if !found || hasLineTerminator(name) {
		return "", "", false
	}
	return dup, tableID, true
}

// endsWithAtDigits reports whether s ends with " @" and at least one digit.
func endsWithAtDigits(s string) bool {
	j := len(s)
	for j > 0 && s[j-1] >= '0' && s[j-1] <= '9' {
		j--
	}
	return j < len(s) && strings.HasSuffix(s[:j], " @")
}

// hasLineTerminator reports whether s has a character JavaScript's "."
// does not match: \n, \r, U+2028 or U+2029 (E2 80 A8 and E2 80 A9 in
// UTF-8). A byte loop: strings.ContainsAny with runes outside ASCII
// decodes s rune by rune and searches the set for each, which made this
// check a sixth of the distance pass on a 1 GB snapshot, where every
// WeakMap entry's edges have a name of their own.
func hasLineTerminator(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r':
			return true
		case 0xE2:
			if i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
				return true
			}
		}
	}
	return false
}

// weakMapNames caches, per string, whether it names a WeakMap entry edge
// and where in it the part both edges of the entry share starts (after the
// entry's index: a suffix of the name, read back from the table), in one
// byte: a map of the shared parts by string took about 30 MB on a 3.5 GB
// snapshot, where every entry has a name of its own.
type weakMapNames struct {
	g     *model.Graph
	state []uint8                // 0 unknown, 1 no, 2+k yes with the shared part from byte k
	long  map[model.StringID]int // where it starts when k is too big for a byte
}

func newWeakMapNames(g *model.Graph) *weakMapNames {
	return &weakMapNames{g: g, state: make([]uint8, g.Strings.Len())}
}

// match returns the shared part of a WeakMap entry edge's name, or false.
func (w *weakMapNames) match(s model.StringID) (string, bool) {
	switch st := w.state[s]; st {
	case 0:
	case 1:
		return "", false
	case 255:
		return w.g.Strings.At(s)[w.long[s]:], true
	default:
		return w.g.Strings.At(s)[st-2:], true
	}
	name := w.g.Strings.At(s)
	d, _, ok := parseWeakMapEdgeName(name)
	if !ok {
		w.state[s] = 1
		return "", false
	}
	k := len(name) - len(d) // the shared part is the name's suffix
	if k < 255-2 {
		w.state[s] = uint8(2 + k)
	} else {
		if w.long == nil {
			w.long = map[model.StringID]int{}
		}
		w.state[s], w.long[s] = 255, k
	}
	return d, true
}
