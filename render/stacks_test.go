package render_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// TestWriteStacks prints a core's thread with each kind of frame and a
// Java thread with its sizes, as heapx stack does: a JavaScript frame
// lists 6 closure variables and says how many more, or all of them.
func TestWriteStacks(t *testing.T) {
	size := func(n uint64) *uint64 { return &n }
	js := query.ThreadFrameJSON{Index: 0, Kind: "javascript", Function: "descend", Script: "/app/main.js", Line: 12, Column: 3,
		Values: []query.FrameValueJSON{{Role: "receiver", Text: "<Object @0x10>"}, {Role: "argument", Text: "3"}, {Role: "argument", Text: `"a"`}}}
	for i := range 8 {
		js.Values = append(js.Values, query.FrameValueJSON{Role: "closure", Name: fmt.Sprintf("v%d", i), Text: fmt.Sprint(i)})
	}
	s := &query.ThreadsJSON{File: "core.1", Runtime: "Node 20.1.0 (V8 11.3)", Binary: "/usr/bin/node", Threads: []query.ThreadJSON{
		{Thread: 7, Name: "main", Stop: "no frame pointer", Frames: []query.ThreadFrameJSON{js,
			{Index: 1, Kind: "javascript", Function: "(anonymous)"},
			{Index: 2, Kind: "runtime", Type: "v8:EntryFrame"},
			{Index: 3, Kind: "native", PC: "0x55aa"}}},
		{Thread: 8, Frames: []query.ThreadFrameJSON{{Index: 0, Kind: "native", Function: "epoll_wait", PC: "0x7f00"}}},
		{Thread: 1, Name: "worker", State: "WAITING", ID: 0xfc00, Class: "java.lang.Thread", RetainedSize: size(216), HeldSize: size(2048),
			Frames: []query.ThreadFrameJSON{{Index: 0, Kind: "java", Function: "App.run", Script: "App.java", Line: 9,
				Values: []query.FrameValueJSON{{Role: "local", Text: "<byte[] @0xfd00>", ShallowSize: size(1040), RetainedSize: size(1040)}}}}},
	}}
	const head = `core.1: Node 20.1.0 (V8 11.3), /usr/bin/node

thread 7 (main): 2 JavaScript frames of 4
  #0   descend  /app/main.js:12:3
        this = <Object @0x10>; arguments (2): 3, "a"
`
	const tail = `  #1   (anonymous)  (no script)
        this = ; arguments (0): 
  #2   [EntryFrame]
  #3   ??  (native, pc 0x55aa)
      (the walk ended: no frame pointer)

thread 8: no JavaScript frames (1 native)
  #0   epoll_wait  (native, pc 0x7f00)

thread 1 (worker) WAITING: 1 Java frames; java.lang.Thread @0xfc00 retains 216 B; with its frames 2.0 kB
  #0   App.run(App.java:9)
        local <byte[] @0xfd00>  shallow 1.0 kB, retained 1.0 kB
`
	for _, c := range []struct {
		all  bool
		want string
	}{
		{false, head + "        closure: v0 = 0, v1 = 1, v2 = 2, v3 = 3, v4 = 4, v5 = 5, … 2 more (--all)\n" + tail},
		{true, head + "        closure: v0 = 0, v1 = 1, v2 = 2, v3 = 3, v4 = 4, v5 = 5, v6 = 6, v7 = 7\n" + tail},
	} {
		var b strings.Builder
		if err := render.WriteStacks(&b, s, c.all); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("all %v:\n%s\nwant\n%s", c.all, b.String(), c.want)
		}
	}
	// A core whose threads run no JavaScript says so.
	var b strings.Builder
	if err := render.WriteStacks(&b, &query.ThreadsJSON{File: "core.2", Threads: []query.ThreadJSON{s.Threads[1]}}, false); err != nil {
		t.Fatal(err)
	}
	if want := "\nthread 8: no JavaScript frames (1 native)\n  #0   epoll_wait  (native, pc 0x7f00)\n\nNo thread was running JavaScript when the core was taken.\n"; b.String() != want {
		t.Errorf("no JavaScript:\n%q\nwant\n%q", b.String(), want)
	}
}
