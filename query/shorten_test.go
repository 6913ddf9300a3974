package query

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// TestShorten: names are cut to the width, a dump's escape sequences and
// C1 controls are shown as text, and cutting a 100 MB name costs what
// cutting a short one does (it was converted whole to runes: 400 MB).
func TestShorten(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"Array", 48, "Array"},
		{"abcdef", 4, "abc…"},
		{"\x1b]0;title\x07Evil", 48, `\x1b]0;title\x07Evil`},
		{"a\u009b2Jb", 48, `a\u009b2Jb`},
		{"line\nnext", 48, `line\nnext`},
	} {
		if got := Shorten(c.in, c.n); got != c.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
	long := strings.Repeat("日", 100<<20/3)
	var got string
	a := testfixtures.Allocated(func() { got = Shorten(long, MaxNameWidth) })
	if got != strings.Repeat("日", MaxNameWidth-1)+"…" {
		t.Errorf("Shorten of 100 MB = %q", got)
	}
	if a > 64<<10 {
		t.Errorf("Shorten of 100 MB allocated %d bytes", a)
	}
}
