package query_test

import (
	"math"
	"strings"
	"testing"

	"strconv"

	"github.com/heapx/heapx/query"
)

// TestDevToolsDeviations: a Java dump written for DevTools has its
// strings classed "(string)", classes with unreachable instances at
// distance -5 and repeated root references merged, which
// DevToolsDeviations says with the counts; a V8 dump, written as read,
// has none.
func TestDevToolsDeviations(t *testing.T) {
	g := otherFixture(t, "hprof/java-leakdemo-small.hprof.gz").Analysis.Graph
	ws := query.DevToolsDeviations(g)
	if len(ws) != 3 || !strings.HasSuffix(ws[0], ": java.lang.String (35,489 objects, 852 kB) as (string)") ||
		!strings.HasPrefix(ws[1], "23 classes have instances no root reaches") ||
		!strings.HasSuffix(ws[1], ": java.lang.Object[] (200 unreachable), java.lang.invoke.LambdaForm$Name (194 unreachable), byte[] (98 unreachable), java.lang.String (86 unreachable), java.util.ImmutableCollections$List12 (41 unreachable), and 18 more") ||
		!strings.HasPrefix(ws[2], "12 of the root's references repeat") || !strings.HasSuffix(ws[2], "the file has 12 edges fewer") {
		t.Errorf("Java dump: %q", ws)
	}
	if ws := query.DevToolsDeviations(fixture(t, "node-basic").Analysis.Graph); ws != nil {
		t.Errorf("V8 dump: %q", ws)
	}
}

// TestDevToolsDeviationsIDs: ids above 32 bits are named with the one
// DevTools shows for the first of them.
func TestDevToolsDeviationsIDs(t *testing.T) {
	g := otherFixture(t, "spidermonkey/ff-small-page.fxsnapshot").Analysis.Graph
	ws := query.DevToolsDeviations(g)
	var ids string
	for _, w := range ws {
		if strings.HasPrefix(w, "DevTools keeps 32 bits") {
			ids = w
		}
	}
	first := g.Nodes.ID.At(0)
	for i := range g.Nodes.ID.Len() {
		if id := g.Nodes.ID.At(i); id > math.MaxUint32 {
			first = id
			break
		}
	}
	want := "DevTools keeps 32 bits of a node id: 155,233 of the 155,233 ids are larger and show as their low 32 bits (@" +
		strconv.FormatUint(first, 10) + " as @" + strconv.FormatUint(first&math.MaxUint32, 10) + ")"
	if ids != want {
		t.Errorf("got %q\nwant %q", ids, want)
	}
}
