package jsonstr

import (
	"unicode/utf8"

	"github.com/heapx/heapx/internal/wtf8"
)

// Append appends s as a JSON string: the short escapes for '"',
// '\\', \b, \f, \n, \r, \t, \u00XX for other control characters and
// printable ASCII as is. Other characters are kept as UTF-8, or, if ascii
// is set, written as \uXXXX (characters above U+FFFF as a surrogate pair),
// as V8's serializer writes them. Hex digits are uppercase, as V8 writes
// them. A lone surrogate (WTF-8 in the model, see formats/v8's reader)
// goes back to its \uDXXX escape so the exact JavaScript string survives;
// bytes that are not UTF-8 at all become \uFFFD: JSON cannot carry them.
func Append(b []byte, s string, ascii bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:])
			valid := r != utf8.RuneError || size > 1
			if valid && !ascii {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case !valid:
				if u, ok := wtf8.SurrogateAt(s, i); ok {
					b = appendU(b, u)
					size = 3
				} else {
					b = appendU(b, 0xFFFD)
				}
			case r >= 0x10000:
				r -= 0x10000
				b = appendU(b, 0xD800+r>>10)
				b = appendU(b, 0xDC00+r&0x3FF)
			default:
				b = appendU(b, r)
			}
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = appendU(b, rune(c))
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

const hexUpper = "0123456789ABCDEF"

// appendU appends \uXXXX for a UTF-16 code unit, uppercase as V8 writes.
func appendU(b []byte, u rune) []byte {
	return append(b, '\\', 'u', hexUpper[u>>12&0xF], hexUpper[u>>8&0xF], hexUpper[u>>4&0xF], hexUpper[u&0xF])
}
