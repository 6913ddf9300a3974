// Package wtf8 handles the one way heapx's strings differ from UTF-8. A
// JavaScript string is UTF-16 and may hold a lone surrogate; heap
// snapshots write one as a \uD800-style escape, and heapx keeps it as
// WTF-8 (the three bytes UTF-8 would use if surrogates were allowed) so the
// exact string can be written back. Every reader, writer and printer that
// meets such bytes recognises them here.
package wtf8

import (
	"unicode/utf16"
	"unicode/utf8"
)

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

// Valid reports whether b is UTF-8 apart from lone WTF-8 surrogates (a
// high surrogate followed by a low one is not WTF-8: it is the pair's
// character, in four bytes).
func Valid(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	return fixAt(b, 0) < 0
}

// Sanitize returns b with every byte that is neither UTF-8 nor part of a
// lone WTF-8 surrogate replaced by U+FFFD, as a UTF-8 text decoder reading
// the file would (Chrome DevTools reads snapshots with TextDecoder), and
// a WTF-8 high surrogate followed by a low one joined into their
// character, as decoding their \u escapes would: so what is read can be
// written back and read again as the same string. b itself is returned,
// without copying, when there is nothing to change.
func Sanitize(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	i := fixAt(b, 0)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+8)
	for i >= 0 {
		out = append(out, b[:i]...)
		if hi, ok := SurrogateAt(b, i); ok {
			lo, _ := SurrogateAt(b, i+3)
			out = utf8.AppendRune(out, utf16.DecodeRune(hi, lo))
			b = b[i+6:]
		} else {
			out = utf8.AppendRune(out, utf8.RuneError)
			b = b[i+1:]
		}
		i = fixAt(b, 0)
	}
	return append(out, b...)
}

// fixAt returns the index of the first byte from i on that is neither
// UTF-8 nor part of a lone WTF-8 surrogate, or of the first WTF-8 high
// surrogate followed by a low one; -1 if there is none.
func fixAt(b []byte, i int) int {
	for i < len(b) {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			if u, ok := SurrogateAt(b, i); ok {
				if lo, ok := SurrogateAt(b, i+3); ok && u < 0xDC00 && lo >= 0xDC00 {
					return i
				}
				i += 3
				continue
			}
			return i
		}
		i += size
	}
	return -1
}
