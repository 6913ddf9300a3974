package memtrace_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/hostile"
)

// TestCraftedTraces reads the crafted traces bench/hostile.sh runs heapx
// on: those that lie about a length end in one line naming the record and
// its byte, having allocated for the bytes there are, and the valid ones
// (a hundred thousand allocation sites, a list and a ring of 400,000 objects,
// deep calls) read to their END.
func TestCraftedTraces(t *testing.T) {
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
		want  string // "" for a valid trace
	}{
		{"string-64m", hostile.TraceLongString, "byte 7: STRING record at byte 5: the trace ends inside field text (truncated)"},
		{"free-vars-2e60", hostile.TraceFreeVars, "FREE_VARS record at byte 5: the trace ends inside field name (truncated)"},
		{"idle-sites", func(w io.Writer) error { return hostile.TraceIdleSites(w, 100_000) }, ""},
		{"list", func(w io.Writer) error { return hostile.TraceList(w, 400_000) }, ""},
		{"ring", func(w io.Writer) error { return hostile.TraceRing(w, 400_000) }, ""},
		{"deep-calls", func(w io.Writer) error { return hostile.TraceDeepCalls(w, 300_000) }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.write(&b); err != nil {
				t.Fatal(err)
			}
			size := b.Len()
			var err error
			var last memtrace.Event
			alloc := hostile.Allocated(func() {
				r, e := memtrace.NewReader(&b, c.name+".hxtrace")
				if e != nil {
					err = e
					return
				}
				for {
					ev, e := r.Next()
					if e != nil {
						if !errors.Is(e, io.EOF) {
							err = e
						}
						return
					}
					last = ev
				}
			})
			switch {
			case c.want == "" && (err != nil || last.Kind != memtrace.End):
				t.Errorf("%v, last record %v", err, last.Kind)
			case c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.name+".hxtrace: ") || !strings.Contains(err.Error(), c.want)):
				t.Errorf("error %v, want one saying %q", err, c.want)
			}
			// The reader keeps its string and position tables (8 bytes
			// an instruction) and buffers a megabyte of a long string.
			if alloc > uint64(size)+2<<20 {
				t.Errorf("reading %d bytes allocated %d", size, alloc)
			}
		})
	}
}
