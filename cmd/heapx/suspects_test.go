package main

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// TestSuspectsCLI runs `heapx suspects` as a user does on a dump of each
// runtime and checks what it says: the field that holds the accumulation,
// the element class behind collection internals, the shape of Firefox's
// generic Object, detached DOM among the suspects, and no suspect on a
// heap without a leak (testdata/gen/README.md, "Leak-suspects fixtures").
func TestSuspectsCLI(t *testing.T) {
	rows := func(file string) []map[string]any {
		var d query.Document
		okJSON(t, &d, "suspects", "--json", file)
		return d.Sections[0].Rows
	}
	for _, c := range []struct {
		file                      string
		heldBy, class, shape, via string
		count                     float64
	}{
		{"../../testdata/hprof/java-leakdemo-small.hprof.gz", "LeakDemo.SESSIONS (352), LeakDemo.LISTENERS (48)", "LeakDemo$Session", "", "", 400},
		{"../../testdata/suspects/java-tickets.hprof.gz", "TicketStore.TICKETS", "TicketStore$Ticket", "", "java.util.HashMap$Node", 12000},
		{"../../testdata/spidermonkey/ff-medium-page.fxsnapshot", "globalThis.eventLog", "Object", "{cb, msg, shape}", "", 150000},
		{"../../testdata/suspects/chromium-libs-page.heapsnapshot.gz", "globalThis.detached", "Detached <section>", "", "", 20},
		{"../../testdata/node-leak-3.heapsnapshot.gz", "retained (closure variable)", "LeakedItem", "", "", 1500},
	} {
		r := rows(c.file)
		if len(r) == 0 || r[0]["held_by"] != c.heldBy || r[0]["class"] != c.class || r[0]["shape"] != c.shape || r[0]["via"] != c.via || r[0]["count"] != c.count {
			t.Errorf("%s: first suspect %v, want %d %s %s via %q held by %s", c.file, r, int(c.count), c.class, c.shape, c.via, c.heldBy)
		}
	}
	out := ok(t, "suspects", "../../testdata/suspects/java-tickets.hprof.gz")
	if want := "The memory is accumulated in java.util.HashMap @0xff72c568 (10.2 MB), held by TicketStore.TICKETS, which holds 12,000 instances of TicketStore$Ticket (in java.util.HashMap$Node entries) retaining 9.1 MB."; !strings.Contains(out, want) {
		t.Errorf("text output lacks %q:\n%s", want, out)
	}
	out = ok(t, "suspects", "../../testdata/suspects/node-eslint.heapsnapshot.gz")
	// No suspect: the note says so, with no empty table above it.
	if !strings.Contains(out, "No leak suspect") || strings.Contains(out, "Function") || strings.Contains(out, "Holder") {
		t.Errorf("ESLint, no leak: %s", out)
	}
}
