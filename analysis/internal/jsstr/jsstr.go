// Package jsstr handles strings as JavaScript does: lengths and order in
// UTF-16 code units, property names quoted as DevTools prints them, and
// parseInt, so the analysis packages' names, cut-offs and sort orders come
// out identical to DevTools'.
package jsstr

import (
	"strconv"
	"unicode/utf8"
)

// DevTools runs in JavaScript, where string lengths count UTF-16 code units
// and strings compare by code units. These helpers reproduce that on Go's
// UTF-8 strings so names, cut-offs and sort orders come out identical.

// Len returns the length of s in UTF-16 code units.
func Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// Compare compares a and b as JavaScript compares strings.
func Compare(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	ua, ub := firstUnit16(ra), firstUnit16(rb)
	if ua == ub {
		ua, ub = ra, rb
	}
	if ua < ub {
		return -1
	}
	return 1
}

// firstUnit16 is the first UTF-16 code unit of r.
func firstUnit16(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}

// jsQuote returns s as JSON.stringify writes a string: quoted, with ", \
// and control characters escaped, and nothing else (unlike Go's encoders,
// which also escape <, >, & and U+2028).
func jsQuote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b = append(b, '\\', '"')
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '\b':
			b = append(b, '\\', 'b')
		case c == '\f':
			b = append(b, '\\', 'f')
		case c == '\n':
			b = append(b, '\\', 'n')
		case c == '\r':
			b = append(b, '\\', 'r')
		case c == '\t':
			b = append(b, '\\', 't')
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}

// PropertyName is JSHeapSnapshotNode.PropertyName: names with a
// comma, quote or brace are shown JSON-quoted.
func PropertyName(name string) string {
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case ',', '\'', '"', '{', '}':
			return jsQuote(name)
		}
	}
	return name
}

// ParseInt is JavaScript's parseInt(s, 10): optional leading white
// space and sign, then the longest run of decimal digits. ok is false where
// JavaScript returns NaN.
func ParseInt(s string) (v int64, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\v' || s[i] == '\f') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, false
	}
	v, err := strconv.ParseInt(s[i:j], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}
