package termtext

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds what a crafted dump puts in a name to act on a terminal:
// clear the screen, set the window title (OSC ... BEL), CSI as the C1
// control U+009B, a raw 0x9b byte (CSI in a Latin-1 locale), a right-to-
// left override, a line separator and a lone surrogate (WTF-8).
var hostile = []struct{ in, want string }{
	{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
	{"a\u009b2Jb", `a\u009b2Jb`},
	{"a\x9b2Jb", `a\x9b2Jb`},
	{"user\u202egnp.exe", `user\u202egnp.exe`},
	{"line\u2028two", `line\u2028two`},
	{"x\ny\tz\r", `x\ny\tz\r`},
	{"\x7f", `\x7f`},
	{"s\xed\xa0\x80s", `s\ud800s`},
}

func TestClean(t *testing.T) {
	for _, c := range hostile {
		if got := Clean(c.in); got != c.want {
			t.Errorf("Clean(%q) = %q, want %q", c.in, got, c.want)
		}
		// Idempotent: cleaned text has nothing left to clean.
		if got := Clean(c.want); got != c.want {
			t.Errorf("Clean(%q) = %q, not idempotent", c.want, got)
		}
	}
	// Text a terminal does not act on is kept, including other languages,
	// emoji sequences (U+200D joins them) and backslashes.
	for _, s := range []string{"", "Array", "(closure)", "C:\\Users\\x", "日本語", "👩‍💻", "\u00e9t\u00e9", "a\u00a0b"} {
		if got := Clean(s); got != s {
			t.Errorf("Clean(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestCut(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcdef", 4, "abc…"},
		{"abcd", 4, "abcd"},
		{"日本語テキスト", 4, "日本語…"},
		{"日本語テ", 4, "日本語テ"},
		{"\x1b[2J", 20, `\x1b[2J`},
		// An escape is never split: it does not fit in 3 characters.
		{"ab\x1bcd", 4, "ab…"},
		{"\u009b\u009b", 8, `\u009b…`},
		{"x", 0, ""},
	} {
		if got := Cut(c.in, c.n); got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
		if w := utf8.RuneCountInString(Cut(c.in, c.n)); w > max(c.n, 0) {
			t.Errorf("Cut(%q, %d) is %d characters wide", c.in, c.n, w)
		}
	}
}

// TestCutReadsAPrefix: a gigabyte-long value costs what a short one does.
// The allocation count is the check (a whole-string conversion would
// allocate the value's size): it does not depend on timing.
func TestCutReadsAPrefix(t *testing.T) {
	big := strings.Repeat("é\x1b", 32<<20) // 96 MB
	var got string
	if b := allocated(func() { got = Cut(big, 80) }); b > 64<<10 {
		t.Errorf("Cut on 96 MB allocated %d bytes", b)
	}
	if want := strings.Repeat(`é\x1b`, 15) + "é…"; got != want {
		t.Errorf("Cut = %q, want %q", got, want)
	}
	var q string
	if b := allocated(func() { q = Quote(big) }); b > 64<<10 {
		t.Errorf("Quote on 96 MB allocated %d bytes", b)
	}
	if want := `"` + strings.Repeat(`é\x1b`, 66) + `é…" (100663296 bytes)`; q != want {
		t.Errorf("Quote of 96 MB = %s, want %s", q, want)
	}
}

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestQuoteAndCap(t *testing.T) {
	if got, want := Quote("type\x1b]0;x\x07"), `"type\x1b]0;x\x07"`; got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
	long := strings.Repeat("ab", 1000)
	if got, want := Quote(long), `"`+long[:MaxQuoted]+`…" (2000 bytes)`; got != want {
		t.Errorf("Quote(2000 bytes) = %s, want %s", got, want)
	}
	// The cut never splits a character.
	if got, want := Cap("ééé", 5), "éé… (6 bytes)"; got != want {
		t.Errorf("Cap = %q, want %q", got, want)
	}
	if got, want := Cap("\x1b[2J", 100), `\x1b[2J`; got != want {
		t.Errorf("Cap = %q, want %q", got, want)
	}
}

// TestWriter writes hostile text in every split into two writes: the
// output is the cleaned text with newlines and tabs kept, whatever the
// split, and JSON stays JSON with the same value.
func TestWriter(t *testing.T) {
	in := "name\x1b[2J\n\tgrid\u009b31m é 日 \xed\xa0\x80 \x9b end\u202e"
	want := `name\x1b[2J` + "\n\t" + `grid\u009b31m é 日 \ud800 \x9b end\u202e`
	for split := 0; split <= len(in); split++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		w.Write([]byte(in[:split]))
		w.Write([]byte(in[split:]))
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		// A surrogate split between writes is escaped byte by byte;
		// either form is safe.
		alt := strings.Replace(want, `\ud800`, `\xed\xa0\x80`, 1)
		if got != want && got != alt {
			t.Fatalf("split at %d: got %q, want %q", split, got, want)
		}
	}
	// A sequence cut off at the end is escaped when flushed.
	var out bytes.Buffer
	w := NewWriter(&out)
	w.Write([]byte("ok\xe6\x97"))
	if out.String() != "ok" {
		t.Errorf("before Flush: %q", out.String())
	}
	w.Flush()
	if got, want := out.String(), `ok\xe6\x97`; got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}

	v := map[string]string{"name": "a\u009b2J\u2028b\x1b"}
	js, _ := json.Marshal(v)
	out.Reset()
	w = NewWriter(&out)
	w.Write(js)
	if bytes.Contains(out.Bytes(), []byte("\u009b")) || bytes.Contains(out.Bytes(), []byte("\x1b")) {
		t.Errorf("JSON through Writer still holds a control: %q", out.Bytes())
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["name"] != v["name"] {
		t.Errorf("JSON through Writer = %s (%v), decodes to %q", out.Bytes(), err, back["name"])
	}
}

// TestWriterBig: a write larger than the writer's chunk is passed on in
// chunks, not held whole.
func TestWriterBig(t *testing.T) {
	in := bytes.Repeat([]byte("日\x1b"), 3*writerChunk)
	var sizes []int
	w := NewWriter(writeFunc(func(p []byte) { sizes = append(sizes, len(p)) }))
	if n, err := w.Write(in); n != len(in) || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	total := 0
	for _, s := range sizes {
		if s > 2*writerChunk {
			t.Errorf("a write of %d bytes passed on", s)
		}
		total += s
	}
	if want := 3 * writerChunk * len("日"+`\x1b`); total != want {
		t.Errorf("passed on %d bytes, want %d", total, want)
	}
}

type writeFunc func([]byte)

func (f writeFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }
