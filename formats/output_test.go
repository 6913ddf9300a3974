package formats_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
)

// TestForOutput: the format comes from the name, else the extension
// (.gz looked through); a format not linked in, an unknown name or
// extension, is refused with the formats that can be written.
func TestForOutput(t *testing.T) {
	if got := formats.Writable(); got != "v8 (.heapsnapshot, .heaptimeline)" {
		t.Errorf("Writable() = %q", got)
	}
	for _, c := range []struct{ path, name, want string }{
		{"out.heapsnapshot", "", "v8"},
		{"OUT.HEAPSNAPSHOT.GZ", "", "v8"},
		{"out.bin", "v8", "v8"},
	} {
		if f, err := formats.ForOutput(c.path, c.name); err != nil || f.Name != c.want {
			t.Errorf("ForOutput(%q, %q) = %v, %v; want %s", c.path, c.name, f, err, c.want)
		}
	}
	for _, c := range []struct{ path, name, want string }{
		{"out.jsonl", "", "out.jsonl: cannot tell the output format from the extension"},
		{"out.heapsnapshot", "hprof", "--to hprof: no such format (formats heapx writes: v8 (.heapsnapshot, .heaptimeline))"},
	} {
		if _, err := formats.ForOutput(c.path, c.name); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ForOutput(%q, %q): %v, want %q", c.path, c.name, err, c.want)
		}
	}
}
