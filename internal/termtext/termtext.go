// Package termtext makes text that comes from a heap dump safe to print on
// a terminal. A dump is input heapx does not control: its strings (object
// names, class names, V8 meta field names, SQL cells) can hold escape
// sequences that clear the screen, set the window title or move the
// cursor, and bidirectional overrides that make text read differently
// from what it is. Every such string that heapx prints, in a table, a
// message or a stream bound for a terminal, goes through this package.
//
// Characters a terminal could act on are shown escaped, in Go's notation,
// so the text stays readable and one value stays on one line:
//
//   - C0 controls and DEL: \t, \n, \r, else \x00-\x1f and \x7f;
//   - C1 controls (U+0080-U+009F, which some terminals take as ESC [
//     and the like): \u0080-\u009f;
//   - bidirectional formatting (U+061C, U+200E, U+200F, U+202A-U+202E,
//     U+2066-U+2069) and the line and paragraph separators U+2028,
//     U+2029: \u202e and so on;
//   - bytes that are not UTF-8 (a lone 0x9b is CSI to a terminal in a
//     Latin-1 locale): \x9b; a lone UTF-16 surrogate, which V8 strings can
//     hold (formats/v8 keeps it as WTF-8), as \ud800.
//
// A backslash is left alone, so cleaning is idempotent (cleaned text
// cleans to itself) and Windows paths and regular expressions read as
// they are; the exact value is in the --json and --csv outputs.
package termtext

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heapx/heapx/internal/wtf8"
)

// escape reports whether r, a valid character, is shown escaped.
func escape(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069,
		r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// next decodes the character at the start of s (non-empty): its display
// form when it is shown escaped (empty otherwise) and its length in bytes.
func next(s string) (esc string, size int) {
	c := s[0]
	if c >= 0x20 && c < 0x7f {
		return "", 1
	}
	if c < 0x80 {
		return byteEscapes[c], 1
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size == 1 {
		if u, ok := wtf8.SurrogateAt(s, 0); ok {
			return `\u` + strconv.FormatInt(int64(u), 16), 3
		}
		return byteEscapes[c], 1
	}
	if r <= 0x9f {
		return c1Escapes[r-0x80], size
	}
	if escape(r) {
		return `\u` + strconv.FormatInt(int64(r), 16), size
	}
	return "", size
}

// byteEscapes and c1Escapes are the escapes of single bytes (C0
// controls, DEL, bytes that are not UTF-8) and of the C1 controls, made
// once so cleaning allocates nothing per character.
var byteEscapes, c1Escapes = func() (b [256]string, c1 [32]string) {
	const digits = "0123456789abcdef"
	for i := range b {
		b[i] = `\x` + string([]byte{digits[i>>4], digits[i&0xf]})
	}
	b['\t'], b['\n'], b['\r'] = `\t`, `\n`, `\r`
	for i := range c1 {
		c1[i] = `\u00` + string([]byte{digits[(0x80+i)>>4], digits[i&0xf]})
	}
	return b, c1
}()

// Clean returns s with every character a terminal could act on shown
// escaped (see the package comment). Text with none is returned as is,
// without a copy.
func Clean(s string) string {
	i := 0
	for i < len(s) {
		esc, size := next(s[i:])
		if esc != "" {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	start := 0
	for i < len(s) {
		esc, size := next(s[i:])
		if esc != "" {
			b.WriteString(s[start:i])
			b.WriteString(esc)
			start = i + size
		}
		i += size
	}
	b.WriteString(s[start:])
	return b.String()
}

// Cut returns Clean(s) cut to at most n characters (an escape counts its
// characters), ending in "…" where it was cut. It reads only as much of s
// as it shows, so a value of a gigabyte costs what one of n characters
// does.
func Cut(s string, n int) string {
	if n < 1 {
		return ""
	}
	width := 0
	cut := -1 // bytes of s that fit in n-1 characters, once known
	i := 0
	for i < len(s) {
		esc, size := next(s[i:])
		w := 1
		if esc != "" {
			w = len(esc)
		}
		if cut < 0 && width+w > n-1 {
			cut = i
		}
		width += w
		if width > n {
			return Clean(s[:cut]) + "…"
		}
		i += size
	}
	return Clean(s)
}

// MaxQuoted is how many bytes of a dump's text Quote shows: enough to
// recognise a name, too few for a crafted value to flood a message.
const MaxQuoted = 200

// Quote returns s cleaned and in double quotes for an error message, cut
// to about MaxQuoted bytes with its full length said when longer:
// "aaaa…" (52428800 bytes). Readers quote a dump's text with it instead
// of %q, which escapes but never cuts.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return `"` + Clean(s) + `"`
	}
	return `"` + Clean(s[:prefixLen(s, MaxQuoted)]) + `…" (` + strconv.Itoa(len(s)) + " bytes)"
}

// Cap returns s cleaned, cut to about max bytes (on a character boundary)
// with its full length said when longer; for a whole message, or a part
// of one, that may hold a dump's text.
func Cap(s string, max int) string {
	if len(s) <= max {
		return Clean(s)
	}
	return Clean(s[:prefixLen(s, max)]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// prefixLen is the length of the longest prefix of s of at most max
// bytes that does not split a character.
func prefixLen(s string, max int) int {
	n := 0
	for n < len(s) {
		_, size := next(s[n:])
		if n+size > max {
			break
		}
		n += size
	}
	return n
}

// Writer passes what is written to it on to another writer with every
// character a terminal could act on shown escaped, except newlines and
// tabs, which lay text out. The command puts one in front of standard
// output when that is a terminal, so no output format (tables, --csv,
// --json) can send a dump's escape sequences to it. It is lossless for
// JSON: encoding/json escapes C0 controls itself, and the \u0080-\u009f,
// \u2028 escapes it writes for the rest are JSON's own.
type Writer struct {
	w     io.Writer
	carry []byte // an incomplete UTF-8 sequence at the end of the last Write
	buf   []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// writerChunk bounds the escaped output held before it is passed on, so a
// gigabyte written at once does not need another gigabyte here.
const writerChunk = 64 << 10

// Write escapes p and writes it on. A UTF-8 sequence split between two
// writes is held until the second.
func (t *Writer) Write(p []byte) (int, error) {
	n := len(p)
	t.buf = t.buf[:0]
	for len(t.carry) > 0 {
		k := min(len(p), utf8.UTFMax)
		tmp := append(append([]byte(nil), t.carry...), p[:k]...)
		if !utf8.FullRune(tmp) {
			t.carry = tmp
			return n, nil
		}
		_, size := utf8.DecodeRune(tmp)
		t.buf = t.appendStream(t.buf, string(tmp[:size]))
		if size >= len(t.carry) {
			p = p[size-len(t.carry):]
			t.carry = t.carry[:0]
		} else {
			t.carry = append(t.carry[:0], t.carry[size:]...)
		}
	}
	for len(p) > 0 {
		end := min(len(p), writerChunk)
		// Hold back a sequence cut by the chunk's end, or by p's.
		for k := end - 1; k >= 0 && k >= end-utf8.UTFMax+1; k-- {
			if utf8.RuneStart(p[k]) {
				if !utf8.FullRune(p[k:end]) {
					end = k
				}
				break
			}
		}
		if end == 0 {
			if len(p) < utf8.UTFMax {
				t.carry = append(t.carry[:0], p...)
				break
			}
			end = 1 // not UTF-8 after all: escaped as a byte
		}
		t.buf = t.appendStream(t.buf, string(p[:end]))
		p = p[end:]
		if len(t.buf) >= writerChunk {
			if _, err := t.w.Write(t.buf); err != nil {
				return n - len(p), err
			}
			t.buf = t.buf[:0]
		}
	}
	if len(t.buf) > 0 {
		if _, err := t.w.Write(t.buf); err != nil {
			return n, err
		}
	}
	return n, nil
}

// Flush writes out a UTF-8 sequence left incomplete by the last Write, as
// escaped bytes: nothing will complete it.
func (t *Writer) Flush() error {
	if len(t.carry) == 0 {
		return nil
	}
	b := t.appendStream(nil, string(t.carry))
	t.carry = t.carry[:0]
	_, err := t.w.Write(b)
	return err
}

// appendStream appends s escaped, newlines and tabs kept.
func (t *Writer) appendStream(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		esc, size := next(s[i:])
		if esc != "" {
			b = append(b, s[start:i]...)
			b = append(b, esc...)
			start = i + size
		}
		i += size
	}
	return append(b, s[start:]...)
}
