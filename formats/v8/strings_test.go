package v8

import (
	"fmt"
	"strings"
	"testing"
)

// TestUnknownSectionSkipped: strings in a section the reader skips are
// scanned, not decoded, and escaped quotes and backslashes in them do not
// end them early.
func TestUnknownSectionSkipped(t *testing.T) {
	want, err := Read(strings.NewReader(tiny), "tiny", Options{})
	if err != nil {
		t.Fatal(err)
	}
	extra := `"extra":{"a\"b":["c\\\\\"]\"","\u0022}\\",{"\\":"x"}]},` + "\n"
	in := strings.Replace(tiny, `"strings":[`, extra+`"strings":[`, 1)
	g, err := Read(strings.NewReader(in), "extra", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Strings.Len() != want.Strings.Len() || g.Strings.At(5) != want.Strings.At(5) || g.NumNodes() != want.NumNodes() {
		t.Errorf("with a skipped section: %d strings, last %q, %d nodes", g.Strings.Len(), g.Strings.At(5), g.NumNodes())
	}
	cut := tiny[:strings.Index(tiny, `"strings":[`)] + `"extra":["never ends \"]}`
	if _, err := Read(strings.NewReader(cut), "cut", Options{}); err == nil || err.Error() != fmt.Sprintf("cut: extra: byte %d: file ends early: the dump is truncated", len(cut)) {
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
	g, err := Read(strings.NewReader(in), "long", Options{})
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
