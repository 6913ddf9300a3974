package heapx_test

import (
	"strings"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/coretest"
)

// TestOpenNodeCore opens a Node.js core (made at test time by gcore)
// through the facade with Options.Binary, as every front end does: its
// summary says what it holds, and its analysis counts the Tickets the
// program made. It skips without gcore or the node binary, unless CI=true.
func TestOpenNodeCore(t *testing.T) {
	c := coretest.Make(t, coretest.Majors(t)[0])
	d := open(t, c.Core, heapx.Options{Binary: c.Binary})
	info := d.Info()
	if d.Format().Name != "nodecore" || info.Format != "nodecore" || !strings.HasPrefix(info.Producer, "Node ") ||
		info.NodeCount < 10000 || info.ThreadCount < 1 || info.EdgeCount != d.Graph().NumEdges() {
		t.Fatalf("%s is %s: %+v", c.Core, d.Format().Name, info)
	}
	a, err := d.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cl := range a.Summary() {
		if cl.Name == c.Expect.Tickets.Class {
			n = cl.Count
		}
	}
	if n != c.Expect.Tickets.Count {
		t.Errorf("%d %s in the core's summary, want %d", n, c.Expect.Tickets.Class, c.Expect.Tickets.Count)
	}
	if _, err := heapx.Open(c.Core, heapx.Options{Binary: "/bin/sh"}); err == nil || !strings.Contains(err.Error(), c.Core) {
		t.Errorf("a core read with /bin/sh: %v, want an error naming the core", err)
	}
}
