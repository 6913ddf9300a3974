// Package jsonstr reads and writes JSON strings as heap dumps hold them:
// the escapes of RFC 8259, a UTF-16 surrogate pair joined into one
// character and a lone surrogate kept as WTF-8 (internal/wtf8), so that
// the exact JavaScript string survives a round trip. The V8 reader, which
// streams a block at a time, and the JSON Lines reader, a line at a time,
// decode with it; the V8 and JSON Lines writers encode with Append.
//
// Decoding is in two steps a caller alternates, so each keeps its own
// buffering: Literal finds the run of bytes that stand for themselves, and
// Unescape decodes the escape sequence after it. Problems come back as
// values for the caller to word, each format's errors as its users know
// them.
package jsonstr

import (
	"bytes"
	"unicode/utf8"

	"github.com/heapx/heapx/internal/wtf8"
)

// Literal returns the length of the run at the start of b, inside a JSON
// string, whose bytes stand for themselves: up to the first '"' or '\\',
// or with strict also the first control character (JSON requires them
// escaped); len(b) if there is none.
func Literal(b []byte, strict bool) int {
	if strict {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return len(b)
	}
	// Long strings are common where control characters are allowed (V8's
	// string table): two vectorised searches beat a loop over the bytes.
	q := bytes.IndexByte(b, '"')
	if q < 0 {
		q = len(b)
	}
	if e := bytes.IndexByte(b[:q], '\\'); e >= 0 {
		return e
	}
	return q
}

// A Problem is what is wrong with an escape sequence.
type Problem uint8

// The problems Unescape reports.
const (
	OK        Problem = iota
	Cut               // the input ends right after the backslash
	CutHex            // the input ends inside a \u escape's four hex digits
	BadHex            // a \u escape holds a byte that is not a hex digit
	BadEscape         // the backslash is followed by a byte that starts no escape
)

// MaxEscape is the most input Unescape reads: a surrogate pair, two \u
// escapes.
const MaxEscape = len(`\uD83D\uDE00`)

// Unescape decodes the escape sequence at the start of b, whose first
// byte is the backslash, appends what it stands for to dst and returns the
// number of bytes it took. b must hold MaxEscape bytes, or all the input
// there is: a high surrogate is joined with the low one escaped right
// after it, and without one stays alone. On a problem, n is the index
// after the offending byte (BadHex, BadEscape) or len(b) (Cut, CutHex).
func Unescape(dst, b []byte) (out []byte, n int, p Problem) {
	if len(b) < 2 {
		return dst, len(b), Cut
	}
	switch e := b[1]; e {
	case '"', '\\', '/':
		return append(dst, e), 2, OK
	case 'b':
		return append(dst, '\b'), 2, OK
	case 'f':
		return append(dst, '\f'), 2, OK
	case 'n':
		return append(dst, '\n'), 2, OK
	case 'r':
		return append(dst, '\r'), 2, OK
	case 't':
		return append(dst, '\t'), 2, OK
	case 'u':
	default:
		return dst, 2, BadEscape
	}
	r, n, p := hex4(b, 2)
	if p != OK {
		return dst, n, p
	}
	if r >= 0xD800 && r < 0xDC00 && len(b) >= 8 && b[6] == '\\' && b[7] == 'u' {
		// A high surrogate and another \u escape: a pair if that one is
		// a low surrogate.
		r2, n2, p := hex4(b, 8)
		if p != OK {
			return dst, n2, p
		}
		if r2 >= 0xDC00 && r2 < 0xE000 {
			return utf8.AppendRune(dst, (r-0xD800)<<10|(r2-0xDC00)+0x10000), n2, OK
		}
	}
	if r >= 0xD800 && r < 0xE000 {
		return wtf8.AppendSurrogate(dst, r), n, OK
	}
	return utf8.AppendRune(dst, r), n, OK
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func hex4(b []byte, i int) (rune, int, Problem) {
	var r rune
	for end := i + 4; i < end; i++ {
		if i == len(b) {
			return 0, i, CutHex
		}
		c := b[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, i + 1, BadHex
		}
		r = r<<4 | rune(d)
	}
	return r, i, OK
}
