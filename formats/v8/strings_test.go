package v8

import (
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
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

// TestStringBlocks reads a strings array of many blocks, in V8's layout
// and in others, with and without decoding it in blocks: the tables must
// be the same, string for string, and so must the WeakMap names found in
// them. The array holds escapes of every kind, bytes that are not UTF-8,
// strings longer than a block, the array's own end sequence escaped
// inside a string, and (not V8's, but read) a raw newline right after an
// escaped quote and a comma inside a string, where a block may be cut.
func TestStringBlocks(t *testing.T) {
	const tinyStrings = `"strings":["","(GC roots)","global","Thing","x","back \"\u00e9\ud83d\ude00\\"]`
	rng := rand.New(rand.NewSource(3))
	pieces := []string{`a`, `Thing`, `é`, `\n`, `\"`, `\\`, `\u0041`, `\ud83d\ude00`, `\ud800`, "\xff", `]`, `,`, ` `,
		`(table @12)`, `\u2028`}
	var strs []string
	for i := 0; len(strs) < 200000; i++ {
		var sb strings.Builder
		switch {
		case i%20000 == 5:
			sb.WriteString(`x\"]y`) // the array's end, escaped
		case i%20000 == 9:
			sb.WriteString("x\\\",\ny") // a cut point inside the string
		case i%20000 == 13:
			sb.WriteString("x\ny") // a raw newline in a string
		case i%5000 == 17:
			// Longer than a block.
			for sb.Len() < 3*stringBlock/2 {
				sb.WriteString(pieces[rng.Intn(len(pieces))])
			}
		case i%1000 == 3:
			fmt.Fprintf(&sb, "%d / part of key (K @%d) -> value (V @%d) pair in WeakMap (table @%d)", i, i+1, i+2, i%7+1)
		default:
			for k := rng.Intn(12); k > 0; k-- {
				sb.WriteString(pieces[rng.Intn(len(pieces))])
			}
		}
		strs = append(strs, sb.String())
	}
	for _, layout := range []struct{ name, sep string }{{"V8's", ",\n"}, {"one line", ","}, {"spaced", " ,\n\t"}} {
		in := strings.Replace(tiny, tinyStrings, `"strings":["`+strings.Join(strs, `"`+layout.sep+`"`)+`"]`, 1)
		if in == tiny {
			t.Fatal("the fixture's strings section was not found")
		}
		stringBlocks = false
		want, err := Read(strings.NewReader(in), "strings", ReadOptions{})
		stringBlocks = true
		if err != nil {
			t.Fatalf("%s: %v", layout.name, err)
		}
		got, err := Read(strings.NewReader(in), "strings", ReadOptions{Workers: 3})
		if err != nil {
			t.Fatalf("%s, in blocks: %v", layout.name, err)
		}
		if got.Strings.Len() != want.Strings.Len() {
			t.Fatalf("%s: %d strings in blocks, %d one at a time", layout.name, got.Strings.Len(), want.Strings.Len())
		}
		for i := range want.Strings.Len() {
			if a, b := got.Strings.At(model.StringID(i)), want.Strings.At(model.StringID(i)); a != b {
				t.Fatalf("%s: string %d is %q in blocks, %q one at a time", layout.name, i, a, b)
			}
		}
	}
}

// TestDecodeStrings checks what decodeStrings takes as a whole block and
// the WeakMap names it finds.
func TestDecodeStrings(t *testing.T) {
	name := "3 / part of key (K @5) -> value (V @7) pair in WeakMap (table @9)"
	d := decodeStrings([]byte(`"a\u0041",`+"\n"+`"`+name+`",`+"\n"), true, nil, nil)
	if !d.ok || len(d.lens) != 2 || string(d.data) != "aA"+name || len(d.weakMap) != 1 || d.weakMap[0] != (weakMapName{1, 9}) {
		t.Errorf("decoded %+v", d)
	}
	for _, bad := range []string{`"a",` + "\n" + `"b"`, `"a"` + "\n", `x"a",`, `"a\q",`, `"a`, ``, `"a\u12",`} {
		if d := decodeStrings([]byte(bad), true, nil, nil); d.ok {
			t.Errorf("%q taken as a whole block", bad)
		}
	}
}
