package v8

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
)

// TestUnknownSectionSkipped: strings in a section the reader skips are
// scanned, not decoded, and escaped quotes and backslashes in them do not
// end them early.
func TestUnknownSectionSkipped(t *testing.T) {
	want, err := Read(strings.NewReader(tiny), "tiny", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	extra := `"extra":{"a\"b":["c\\\\\"]\"","\u0022}\\",{"\\":"x"}]},` + "\n"
	in := strings.Replace(tiny, `"strings":[`, extra+`"strings":[`, 1)
	g, err := Read(strings.NewReader(in), "extra", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Strings.Len() != want.Strings.Len() || g.Strings.At(5) != want.Strings.At(5) || g.NumNodes() != want.NumNodes() {
		t.Errorf("with a skipped section: %d strings, last %q, %d nodes", g.Strings.Len(), g.Strings.At(5), g.NumNodes())
	}
	cut := tiny[:strings.Index(tiny, `"strings":[`)] + `"extra":["never ends \"]}`
	if _, err := Read(strings.NewReader(cut), "cut", ReadOptions{}); err == nil || err.Error() != fmt.Sprintf("cut: extra: byte %d: file ends early: the dump is truncated", len(cut)) {
		t.Errorf("an unterminated string in a skipped section: %v", err)
	}
}

// TestLongString reads strings longer than the scanner's block and than
// the size from which the string table takes the decoding buffer
// (ownBuffer) and the outgrown buffers are returned (returnAfter), with
// escapes across the blocks; the strings after them are still read into
// the table's shared arena.
func TestLongString(t *testing.T) {
	unit := `é\n\"\u0041\ud83d\ude00x` // decodes to é\n"A😀x
	n := (returnAfter + 3<<20) / len("é\n\"A😀x")
	long := strings.Repeat(unit, n)
	want := strings.Repeat("é\n\"A😀x", n)
	in := strings.Replace(tiny, `"Thing"`, `"`+long+`"`, 1)
	in = strings.Replace(in, `"x"`, `"`+strings.Repeat(unit, n/5)+`"`, 1) // 2-3 MB
	g, err := Read(strings.NewReader(in), "long", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Strings.At(3); got != want {
		t.Errorf("long string: %d bytes, want %d", len(got), len(want))
	}
	if got, w := g.Strings.At(4), strings.Repeat("é\n\"A😀x", n/5); got != w {
		t.Errorf("second long string: %d bytes, want %d", len(got), len(w))
	}
	if g.Strings.At(2) != "global" || g.Strings.At(5) != "back \"é😀\\" {
		t.Errorf("short strings around them: %q %q", g.Strings.At(2), g.Strings.At(5))
	}
}

// TestStringEscapes decodes strings with every kind of escape, valid and
// not, with the input arriving a byte at a time and with the scanner's
// buffer ending at every position in them: the same text, or the same
// error at the same offset, however the input is cut.
func TestStringEscapes(t *testing.T) {
	// A string cut short is the input layer's one error.
	truncated := formats.ErrTruncated.Error()
	for _, c := range []struct {
		in, want string
		off      int // of the error, if msg is set
		msg      string
	}{
		{`"plain"`, "plain", 0, ""},
		{`"a\"b\\c\/d\b\f\n\r\t"`, "a\"b\\c/d\b\f\n\r\t", 0, ""},
		{`"\u00e9\u20AC\u0000"`, "é€\x00", 0, ""},
		{`"\ud83d\ude00\uD83D\uDE00"`, "😀😀", 0, ""},
		{`"\ud800x"`, "\xed\xa0\x80x", 0, ""},                 // a lone surrogate, as WTF-8
		{`"\udc00\ud800"`, "\xed\xb0\x80\xed\xa0\x80", 0, ""}, // a low one first: two lone ones
		{`"\ud800\ud800\udc00"`, "\xed\xa0\x80𐀀", 0, ""},
		{`"\ud800\u0041\ud800\n"`, "\xed\xa0\x80A\xed\xa0\x80\n", 0, ""},
		{"\"raw\ttab\x01\"", "raw\ttab\x01", 0, ""}, // V8 never writes them; read as they are
		{"\"\xffa\xed\xa0\x80\"", "\uFFFDa\xed\xa0\x80", 0, ""},
		{`"\q"`, "", 3, `invalid escape \q in string`},
		{`"\u12G4"`, "", 6, `invalid hex digit 'G' in \u escape`},
		{`"\ud800\uZ000"`, "", 10, `invalid hex digit 'Z' in \u escape`},
		{`"\ud800\u"x"`, "", 10, `invalid hex digit '"' in \u escape`},
		{`"abc`, "", 4, truncated},
		{`"abc\`, "", 5, truncated},
		{`"\u12`, "", 5, truncated},
		{`"\ud800`, "", 7, truncated},
		{`"\ud800\`, "", 8, truncated},
		{`"\ud800\u`, "", 9, truncated},
		{`"\ud800\udc`, "", 11, truncated},
	} {
		check := func(how string, r io.Reader, size, skip int) {
			t.Helper()
			in, err := input.Open(r, -1, "x", nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := newScanner(in, size).readString()
			want := ""
			if c.msg != "" {
				want = fmt.Sprintf("x: byte %d: %s", skip+c.off, c.msg)
			}
			if err == nil && (want != "" || string(b) != c.want) || err != nil && err.Error() != want {
				t.Errorf("%s %s: %q, %v; want %q, %s", c.in, how, b, err, c.want, want)
			}
		}
		check("a byte at a time", iotest.OneByteReader(strings.NewReader(c.in)), 64, 0)
		// A 16-byte buffer, the string after 0 to 15 spaces.
		for skip := 0; skip < 16; skip++ {
			check(fmt.Sprintf("after %d spaces", skip), strings.NewReader(strings.Repeat(" ", skip)+c.in), 16, skip)
		}
	}
}
