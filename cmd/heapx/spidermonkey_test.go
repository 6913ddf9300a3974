package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// TestSpiderMonkeyCLI runs the commands on the small Firefox heap snapshot
// and checks them against what Firefox itself computed for that file
// (testdata/spidermonkey/ff-small-page.oracle.json): node counts, the
// census of the Object class and the retained size of the Window, which
// the root dominates.
func TestSpiderMonkeyCLI(t *testing.T) {
	t.Parallel()
	in := filepath.Join("..", "..", "testdata", "spidermonkey", "ff-small-page.fxsnapshot")
	const (
		nodes, edges = 155233, 410234
		total        = 11327097
		window       = 28111603261488 // the page's Window object
		windowRet    = 10678080
		buffer       = 37873259786416 // an ArrayBuffer the page holds in an array
	)
	var info infoCounts
	okJSON(t, &info, "info", "--json", in)
	if info.Format != "spidermonkey.fxsnapshot" || info.Nodes != nodes || info.Edges != edges || info.TotalSelf != total {
		t.Errorf("info: %+v", info)
	}

	var summary query.SummaryJSON
	okJSON(t, &summary, "summary", "--json", "-n", "0", in)
	found := 0
	for _, c := range summary.Classes {
		switch c.Constructor {
		case "Object": // Firefox's census by objectClass
			found++
			if c.Count != 105115 || c.ShallowSize != 5903272 {
				t.Errorf("summary Object: %+v", c)
			}
		case "Window":
			found++
			if c.Count != 1 || c.RetainedSize != windowRet {
				t.Errorf("summary Window: %+v", c)
			}
		case "JS::ubi::RootList": // the root groups the roots: no class row at 100%
			t.Errorf("summary lists the root: %+v", c)
		}
	}
	if found != 2 {
		t.Errorf("summary lacks Object or Window: %+v", summary.Classes[:min(5, len(summary.Classes))])
	}

	var top query.TopJSON
	okJSON(t, &top, "top", "--json", "-n", "1", in)
	if len(top.Nodes) != 1 || top.Nodes[0].ID != window || top.Nodes[0].Type != "JSObject" || top.Nodes[0].RetainedSize != windowRet {
		t.Errorf("top: %+v", top.Nodes)
	}

	paths := ok(t, "paths", "--id", strconv.Itoa(buffer), in)
	for _, want := range []string{"ArrayBuffer @0x22720e3230b0", "Window @0x19913e206030", `["vector element"]`, ".buffers", ".objectElements[2]"} {
		if !strings.Contains(paths, want) {
			t.Errorf("paths lacks %q:\n%s", want, paths)
		}
	}

	for _, out := range []string{"ff.jsonl.gz", "ff.db"} {
		p := filepath.Join(t.TempDir(), out)
		ok(t, "convert", in, p)
		okJSON(t, &info, "info", "--json", p)
		if info.Nodes != nodes || info.Edges != edges || info.TotalSelf != total {
			t.Errorf("%s: info %+v", out, info)
		}
	}
}
