package formats_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
)

// TestFormatErrorSanitised: the parts of a FormatError that hold a dump's
// text (a section key, the message) show escape sequences as text and are
// cut, so a crafted dump can neither drive the terminal nor flood it.
func TestFormatErrorSanitised(t *testing.T) {
	e := &formats.FormatError{File: "x.heapsnapshot", Section: "\x1b[2J" + strings.Repeat("s", 1000), Offset: 7,
		Msg: "class \x1b]0;pwned\x07 \u009b31m" + strings.Repeat("m", 1<<20)}
	msg := e.Error()
	for _, b := range []string{"\x1b", "\x07", "\u009b"} {
		if strings.Contains(msg, b) {
			t.Errorf("message holds %q: %.200q", b, msg)
		}
	}
	full := fmt.Sprintf("(%d bytes)", len(e.Msg))
	for _, w := range []string{`x.heapsnapshot: \x1b[2Jsss`, `class \x1b]0;pwned\x07 \u009b31mmmm`, full, "byte 7:"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message does not say %s: %.300s", w, msg)
		}
	}
	if len(msg) > 3<<10 {
		t.Errorf("message of %d bytes", len(msg))
	}
	// Plain messages are untouched.
	e = &formats.FormatError{File: "a.hprof", Section: "heap dump", Offset: -1, Msg: `bad "record"`}
	if got, want := e.Error(), `a.hprof: heap dump: bad "record"`; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
