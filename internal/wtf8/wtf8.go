// Package wtf8 handles the one way heapx's strings differ from UTF-8. A
// JavaScript string is UTF-16 and may hold a lone surrogate; heap
// snapshots write one as a \uD800-style escape, and heapx keeps it as
// WTF-8 (the three bytes UTF-8 would use if surrogates were allowed) so the
// exact string can be written back. Every reader, writer and printer that
// meets such bytes recognises them here.
package wtf8

import "unicode/utf8"

// SurrogateAt reports whether s holds a WTF-8 encoded surrogate at byte i,
// and which UTF-16 code unit (U+D800-U+DFFF) it is.
func SurrogateAt[S ~string | ~[]byte](s S, i int) (rune, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2]&0xC0 == 0x80 {
		return 0xD000 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), true
	}
	return 0, false
}

// AppendSurrogate appends the WTF-8 bytes of the surrogate code unit u.
func AppendSurrogate(b []byte, u rune) []byte {
	return append(b, 0xE0|byte(u>>12), 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
}

// Valid reports whether b is UTF-8 apart from WTF-8 surrogates.
func Valid(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	return invalidAt(b, 0) < 0
}

// Sanitize returns b with every byte that is neither UTF-8 nor part of a
// WTF-8 surrogate replaced by U+FFFD, as a UTF-8 text decoder reading the
// file would (Chrome DevTools reads snapshots with TextDecoder). b itself
// is returned, without copying, when there is nothing to replace.
func Sanitize(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	i := invalidAt(b, 0)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i >= 0 {
		out = append(out, b[:i]...)
		out = utf8.AppendRune(out, utf8.RuneError)
		b = b[i+1:]
		i = invalidAt(b, 0)
	}
	return append(out, b...)
}

// invalidAt returns the index of the first byte from i on that is neither
// UTF-8 nor part of a WTF-8 surrogate, or -1.
func invalidAt(b []byte, i int) int {
	for i < len(b) {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if _, ok := SurrogateAt(b, i); ok {
				i += 3
				continue
			}
			return i
		}
		i += size
	}
	return -1
}
