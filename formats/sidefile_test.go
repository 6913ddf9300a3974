package formats_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
)

// TestSideFile writes a side file and reads it back, then reads broken
// ones: each error names the file, the line and its byte offset.
func TestSideFile(t *testing.T) {
	if got := formats.SidePath("dir/app.heapsnapshot.GZ", ".scripts.jsonl"); got != "dir/app.heapsnapshot.scripts.jsonl" {
		t.Errorf("SidePath %q", got)
	}
	var b bytes.Buffer
	if err := formats.WriteSideHeader(&b, "heapx.test", 2); err != nil {
		t.Fatal(err)
	}
	for _, v := range []map[string]int{{"a": 1}, {"a": 2}} {
		if err := formats.WriteJSONLine(&b, v); err != nil {
			t.Fatal(err)
		}
	}
	if want := "{\"format\":\"heapx.test\",\"version\":2}\n{\"a\":1}\n{\"a\":2}\n"; b.String() != want {
		t.Fatalf("wrote %q, want %q", b.String(), want)
	}
	var lines []string
	if err := formats.ReadSideFile(bytes.NewReader(b.Bytes()), "f", "heapx.test", 2, 100, func(l []byte) error {
		lines = append(lines, string(l))
		return nil
	}); err != nil || strings.Join(lines, " ") != `{"a":1} {"a":2}` {
		t.Fatalf("read %q, %v", lines, err)
	}

	header := "{\"format\":\"heapx.test\",\"version\":2}\n"
	for _, c := range []struct{ in, want string }{
		{"", "f: byte 0: empty: want a header line"},
		{"{\"format\":\"heapx.other\",\"version\":2}\n", `f: line 1: byte 0: want the header {"format":"heapx.test","version":2}`},
		{"{\"format\":\"heapx.test\",\"version\":3}\n", "f: line 1: byte 0: version 3 of heapx.test; this heapx reads version 2"},
		{header + "{}\nbad\n", "f: line 3: byte 39: not a line this test takes"},
		{header + strings.Repeat("x", 200) + "\n", "f: line 2: byte 36: a line longer than 100 bytes"},
	} {
		err := formats.ReadSideFile(strings.NewReader(c.in), "f", "heapx.test", 2, 100, func(l []byte) error {
			if string(l) == "bad" {
				return errors.New("not a line this test takes")
			}
			return nil
		})
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}
