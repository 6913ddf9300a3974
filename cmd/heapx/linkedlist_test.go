package main

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// listSnaps are the node-list-20k snapshots (bench/gen-linkedlist.js): a
// list held by its head alone, 100 items before the baseline, 20,000
// appended before the target, still alive in the final one; tail is the
// id of its last item.
var listSnaps = []string{"../../testdata/node-list-20k-1-baseline.heapsnapshot.gz",
	"../../testdata/node-list-20k-2-target.heapsnapshot.gz", "../../testdata/node-list-20k-3-final.heapsnapshot.gz"}

const listTail = "124685"

// TestLinkedListCLI runs every command issue 12 found quadratic on a real
// leaked list of 20,000 items (4 GB and 14 s for leaks, out of memory for
// merged-paths on 30,000) as a user does, and checks what each says.
func TestLinkedListCLI(t *testing.T) {
	t.Parallel()
	b, tg, f := listSnaps[0], listSnaps[1], listSnaps[2]

	out := ok(t, "leaks", b, tg, f)
	for _, want := range []string{"Leak 1: 20,000 objects (800 kB) retained this way", "Item 20,000", "…              96 more .next Item"} {
		if !strings.Contains(out, want) {
			t.Errorf("leaks lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Leak 2") {
		t.Errorf("leaks finds more than the list:\n%s", out)
	}

	d := reportJSON(t, f, b, tg)
	if leaks := reportPart(t, d, "leaks"); len(leaks) != 1 || leaks[0]["count"] != 20000.0 || d.LeakedSize != 800000 {
		t.Errorf("report: leaks %v, leaked size %d", leaks, d.LeakedSize)
	}

	out = ok(t, "merged-paths", f, "--class", "Item")
	if !strings.Contains(out, ".next (up to 20,099 hops)  Item          20,099") {
		t.Errorf("merged-paths:\n%s", out)
	}

	out = ok(t, "paths", f, "--id", listTail)
	for _, want := range []string{"Path 1: 20102 edges, from a user root", "…              20,095 more .next Item", ".next          Item @124685               20102"} {
		if !strings.Contains(out, want) {
			t.Errorf("paths lacks %q:\n%s", want, out)
		}
	}
	var p query.PathsJSON
	decodeStrict(t, ok(t, "paths", "--json", "-n", "1", f, "--id", listTail), &p)
	if len(p.Paths) != 1 || len(p.Paths[0].Steps) != 20102 || p.Paths[0].Steps[20101].To.ID != 124685 {
		t.Errorf("paths --json: %d paths", len(p.Paths))
	}
}
