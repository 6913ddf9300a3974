package main

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/render"
)

// TestSuspectsCLI runs `heapx suspects` as a user does on a dump of each
// runtime and checks what it says: the field that holds the accumulation,
// the element class behind collection internals, the shape of Firefox's
// generic Object, detached DOM among the suspects, linked lists, objects
// two structures share, and no suspect on a heap without a leak (testdata/gen/README.md, "Leak-suspects fixtures").
func TestSuspectsCLI(t *testing.T) {
	t.Parallel()
	rows := func(file string) []map[string]any {
		var d render.Document
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
		{"../../testdata/node-leak-3.heapsnapshot.gz", "retained (captured by onWork at make-fixtures.js:135:35)", "LeakedItem", "", "", 1500},
	} {
		r := rows(c.file)
		if len(r) == 0 || r[0]["held_by"] != c.heldBy || r[0]["class"] != c.class || r[0]["shape"] != c.shape || r[0]["via"] != c.via || r[0]["count"] != c.count {
			t.Errorf("%s: first suspect %v, want %d %s %s via %q held by %s", c.file, r, int(c.count), c.class, c.shape, c.via, c.heldBy)
		}
	}
	// A leaked linked list of one class and of two in turn, and Points
	// that two variables share (no object dominates them).
	for _, c := range []struct {
		file, kind, class, linkedBy, sentence string
		count                                 float64
	}{
		{"../../testdata/node-list-20k-3-final.heapsnapshot.gz", "linked list", "Item", ".next",
			"globalThis.list (List @51523) retains 824 kB (21.0% of the heap) in globalThis.list.head (Item @84391): a linked list of 20,100 Item (via .next).", 20100},
		{"../../testdata/suspects/node-altlist-20k.heapsnapshot.gz", "linked list", "Item and Link", ".next",
			"in globalThis.list.head (Item @84457): a linked list of 20,100 Item and Link (via .next).", 20100},
		{"../../testdata/hprof/java-jshell-agent.hprof.gz", "shared", "REPL.$JShell$11$Point", "",
			"50,000 REPL.$JShell$11$Point retaining 1.2 MB (34.0% of the heap) are held by REPL.$JShell$12.pts (50,000) and REPL.$JShell$13.byDist (50,000), so no one object retains them", 50000},
	} {
		r := rows(c.file)
		if len(r) == 0 || r[0]["kind"] != c.kind || r[0]["class"] != c.class || r[0]["linked_by"] != c.linkedBy || r[0]["count"] != c.count {
			t.Errorf("%s: first suspect %v, want a %s of %d %s linked by %q", c.file, r, c.kind, int(c.count), c.class, c.linkedBy)
		}
		if out := ok(t, "suspects", c.file); !strings.Contains(out, c.sentence) {
			t.Errorf("%s: text output lacks %q:\n%s", c.file, c.sentence, out)
		}
	}
	out := ok(t, "suspects", "../../testdata/suspects/java-tickets.hprof.gz")
	if want := "class TicketStore @0xff700090 retains 10.2 MB (90.7% of the heap) in TicketStore.TICKETS (java.util.HashMap @0xff72c568): 12,000 TicketStore$Ticket and 12,000 java.lang.String (in java.util.HashMap$Node entries)."; !strings.Contains(out, want) {
		t.Errorf("text output lacks %q:\n%s", want, out)
	}
	out = ok(t, "suspects", "../../testdata/suspects/node-eslint.heapsnapshot.gz")
	// No suspect: the note says so, with no empty table above it.
	if !strings.Contains(out, "No leak suspect") || strings.Contains(out, "Function") || strings.Contains(out, "Holder") {
		t.Errorf("ESLint, no leak: %s", out)
	}
}

// TestSuspectsShapesCLI runs `heapx suspects` on the everyday leak shapes
// Node 20 wrote (testdata/gen/suspects/make-shapes.js) and checks what a
// user reads first: the class, its count, the variable holding it and
// where, the machinery, in the table's JSON and in the sentence.
func TestSuspectsShapesCLI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		shape, class, holder, machinery, sentence string
		count                                     float64
	}{
		{"pending-promise", "RequestContext", "configReady (module scope of pending-promise.js)", "pending promise",
			"configReady (Promise @49789, module scope of pending-promise.js), a pending promise, retains 2.1 MB (35.2% of the heap) in what waits for it to settle: 320 RequestContext, 320 IncomingMessage, 320 Socket and 4 more classes, held by 320 suspended loadConfig (pending-promise.js:23:26), 320 suspended authorize (pending-promise.js:28:25), 320 suspended handle (pending-promise.js:45:22) and 1 more functions.", 320},
		{"closure-chain", "PriceTable", "current (module scope of closure-chain.js)", "",
			"current (PriceTable @183661, module scope of closure-chain.js) retains 2.1 MB (33.0% of the heap): a linked list of 605 PriceTable (via .describe {context} ->previous), held by 605 (anonymous) (closure-chain.js:28:20).", 605},
		{"memo-cache", "Quote", "computeQuote (module scope of memo-cache.js)", "",
			"computeQuote (memoized @35867, module scope of memo-cache.js) retains 1.9 MB (30.1% of the heap) in cache (Map @43773, captured by memoized at memo-cache.js:29:27): 4,020 Quote, 4,020 QuoteRequest and 8,040 (string).", 4020},
		{"emitter-server", "SessionView", "settings (module scope of emitter-server.js)", `listeners of "change"`,
			`settings (EventEmitter @93899, module scope of emitter-server.js) retains 1.9 MB (31.2% of the heap) in its "change" listeners: 2,020 SessionView, held by 2,020 onSettingsChange (emitter-server.js:31:50).`, 2020},
		{"map-server", "RequestRecord", "requestLog (module scope of map-server.js)", "",
			"requestLog (Map @73939, module scope of map-server.js) retains 1.1 MB (20.7% of the heap): 3,020 RequestRecord.", 3020},
	} {
		file := "../../testdata/suspects/shapes/" + c.shape + "-node20.heapsnapshot.gz"
		var d render.Document
		okJSON(t, &d, "suspects", "--json", file)
		if r := d.Sections[0].Rows; len(r) != 1 || r[0]["class"] != c.class || r[0]["count"] != c.count || r[0]["holder_name"] != c.holder ||
			r[0]["machinery"] != c.machinery {
			t.Errorf("%s: suspects %v, want %d %s held as %s through %q", c.shape, r, int(c.count), c.class, c.holder, c.machinery)
		}
		if out := ok(t, "suspects", file); !strings.Contains(out, "Suspect 1: "+c.sentence+"\n") {
			t.Errorf("%s: text output lacks %q:\n%s", c.shape, c.sentence, out)
		}
	}
}
