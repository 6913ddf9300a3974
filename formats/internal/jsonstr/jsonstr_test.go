package jsonstr

import (
	"testing"

	"github.com/heapx/heapx/internal/wtf8"
)

func TestLiteral(t *testing.T) {
	for _, c := range []struct {
		in             string
		loose, strictN int
	}{
		{``, 0, 0},
		{`abc`, 3, 3},
		{`ab"c\`, 2, 2},
		{`ab\c"`, 2, 2},
		{"a\tb\"", 3, 1},
		{"é\x01", 3, 2},
	} {
		if n := Literal([]byte(c.in), false); n != c.loose {
			t.Errorf("Literal(%q, false) = %d, want %d", c.in, n, c.loose)
		}
		if n := Literal([]byte(c.in), true); n != c.strictN {
			t.Errorf("Literal(%q, true) = %d, want %d", c.in, n, c.strictN)
		}
	}
}

func TestUnescape(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
		n    int
		p    Problem
	}{
		{`\"x`, `"`, 2, OK},
		{`\\`, `\`, 2, OK},
		{`\/`, `/`, 2, OK},
		{`\b\f`, "\b", 2, OK},
		{`\f`, "\f", 2, OK},
		{`\n`, "\n", 2, OK},
		{`\r`, "\r", 2, OK},
		{`\t`, "\t", 2, OK},
		{`\u00e9x`, "é", 6, OK},
		{`\u20AC`, "€", 6, OK},
		{`\ud83d\ude00`, "😀", 12, OK},
		{`\uD83D\uDE00`, "😀", 12, OK},
		{`\ud800`, "\xed\xa0\x80", 6, OK},        // lone, at the end
		{`\ud800x\udc00`, "\xed\xa0\x80", 6, OK}, // lone, something between
		{`\ud800\ud800`, "\xed\xa0\x80", 6, OK},  // two high ones: the first alone
		{`\ud800\u0041`, "\xed\xa0\x80", 6, OK},  // not a surrogate after it
		{`\ud800\n`, "\xed\xa0\x80", 6, OK},      // another escape after it
		{`\udc00\ud800`, "\xed\xb0\x80", 6, OK},  // a low one first
		{`\ud800\u`, "", 8, CutHex},              // the second escape cut
		{`\ud800\uZ000`, "", 9, BadHex},          // the second escape bad
		{`\`, "", 1, Cut},
		{``, "", 0, Cut},
		{`\u12`, "", 4, CutHex},
		{`\u12G4`, "", 5, BadHex},
		{`\u"`, "", 3, BadHex},
		{`\q`, "", 2, BadEscape},
		{`\U0041`, "", 2, BadEscape},
	} {
		out, n, p := Unescape([]byte("pre"), []byte(c.in))
		if p != c.p || n != c.n || p == OK && string(out) != "pre"+c.want {
			t.Errorf("Unescape(%q) = %q, %d, %d; want %q, %d, %d", c.in, out, n, p, c.want, c.n, c.p)
		}
	}
}

func TestAppend(t *testing.T) {
	for _, c := range []struct{ in, ascii, utf8 string }{
		{"plain /", `"plain /"`, `"plain /"`},
		{"q\"b\\", `"q\"b\\"`, `"q\"b\\"`},
		{"\b\f\n\r\t\x01\x1f", `"\b\f\n\r\t\u0001\u001F"`, `"\b\f\n\r\t\u0001\u001F"`},
		{"\x7f", "\"\x7f\"", "\"\x7f\""},
		{"é€", `"\u00E9\u20AC"`, `"é€"`},
		{"😀", `"\uD83D\uDE00"`, `"😀"`},
		{"\xed\xa0\x80x", `"\uD800x"`, `"\uD800x"`}, // a lone surrogate, from WTF-8
		{"\xff", `"\uFFFD"`, `"\uFFFD"`},
	} {
		if got := string(Append(nil, c.in, true)); got != c.ascii {
			t.Errorf("Append(%q, ascii) = %s, want %s", c.in, got, c.ascii)
		}
		if got := string(Append(nil, c.in, false)); got != c.utf8 {
			t.Errorf("Append(%q) = %s, want %s", c.in, got, c.utf8)
		}
	}
}

// decode decodes a JSON string's body through Literal and Unescape, as
// the readers do, the strict way (a control character stops it).
func decode(b []byte) ([]byte, Problem) {
	var out []byte
	for len(b) > 0 {
		k := Literal(b, true)
		out = append(out, b[:k]...)
		if b = b[k:]; len(b) == 0 {
			break
		}
		if b[0] != '\\' {
			return out, BadEscape // a quote or a control character: not from Append
		}
		n := 0
		var p Problem
		if out, n, p = Unescape(out, b); p != OK {
			return out, p
		}
		b = b[n:]
	}
	return out, OK
}

// TestRoundTrip decodes what Append wrote, for the strings a heap dump can
// hold: the same bytes come back.
func TestRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "é€😀", "\x00\x1f\"\\/", "\xed\xa0\x80", "a\xed\xb0\x80\xed\xa0\x80b"} {
		for _, ascii := range []bool{false, true} {
			enc := Append(nil, s, ascii)
			if out, p := decode(enc[1 : len(enc)-1]); p != OK || string(out) != s {
				t.Errorf("%q -> %s -> %q, %d", s, enc, out, p)
			}
		}
	}
}

// FuzzRoundTrip appends any bytes as a JSON string and decodes it back:
// the bytes come back as a UTF-8 decoder would read them (wtf8.Sanitize:
// lone surrogates kept, other bytes that are not UTF-8 as U+FFFD), and
// decoding any bytes at all never panics and never runs past its input.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{"", "plain", "é€😀", "\x00\x1f\"\\/", "\xed\xa0\x80", "a\xed\xb0\x80\xed\xa0\x80b", "\xff\xfe", `\ud83d\ude00\ud800\u12`, `\q\u00zz`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		for _, ascii := range []bool{false, true} {
			enc := Append(nil, string(s), ascii)
			if out, p := decode(enc[1 : len(enc)-1]); p != OK || string(out) != string(wtf8.Sanitize(s)) {
				t.Fatalf("%q -> %s -> %q, %d", s, enc, out, p)
			}
		}
		for i := range s {
			if s[i] != '\\' {
				continue
			}
			_, n, p := Unescape(nil, s[i:])
			if n < 1 || n > len(s)-i || p == OK && n < 2 {
				t.Fatalf("Unescape(%q) took %d bytes, %d", s[i:], n, p)
			}
		}
	})
}
