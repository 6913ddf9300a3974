package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// TestHPROFCLI runs the commands on the small LeakDemo Java dump and
// checks them against VisualVM's numbers for that file
// (testdata/hprof/java-leakdemo-small.hprof.oracle.txt) and the program's
// own ground truth: 20,000 RequestRecords, 400 Sessions.
func TestHPROFCLI(t *testing.T) {
	t.Parallel()
	in := filepath.Join("..", "..", "testdata", "hprof", "java-leakdemo-small.hprof.gz")
	const (
		nodes, edges = 155448, 360764 // 154,602 objects, 845 classes, the root
		total        = 10672168
		leakDemo     = 0xff1000a8 // the class LeakDemo, whose statics hold the leak
	)
	var info infoCounts
	okJSON(t, &info, "info", "--json", in)
	if info.Format != "hprof" || info.Nodes != nodes || info.Edges != edges || info.TotalSelf != total {
		t.Errorf("info: %+v", info)
	}

	var summary query.SummaryJSON
	okJSON(t, &summary, "summary", "--json", "-n", "0", in)
	want := map[string][3]uint64{ // count, shallow, retained: VisualVM's
		"LeakDemo$RequestRecord": {20000, 640000, 8564528},
		"LeakDemo$Session":       {400, 12800, 5950240},
		"LeakDemo$AuditListener": {6667, 160008, 533088},
		"java.lang.String":       {35489, 851736, 0},
	}
	for _, c := range summary.Classes {
		if w, ok := want[c.Constructor]; ok {
			delete(want, c.Constructor)
			if uint64(c.Count) != w[0] || c.ShallowSize != w[1] || (w[2] != 0 && c.RetainedSize != w[2]) {
				t.Errorf("summary %s: %+v, want %v", c.Constructor, c, w)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("summary lacks %v", want)
	}

	var top query.TopJSON
	okJSON(t, &top, "top", "--json", "-n", "1", in)
	if len(top.Nodes) != 1 || top.Nodes[0].ID != leakDemo || top.Nodes[0].Name != "class LeakDemo" {
		t.Errorf("top: %+v", top.Nodes)
	}

	// The listeners' backing array, held by LeakDemo.LISTENERS. Java ids
	// are addresses: shown in hex, as MAT shows them, and taken in hex
	// (as MAT and VisualVM users copy them) or decimal.
	paths := ok(t, "paths", "--id", "0xf1946e38", in)
	for _, w := range []string{"java.lang.Object[] @0xf1946e38", "class LeakDemo @0xff1000a8", ".LISTENERS", "sticky class"} {
		if !strings.Contains(paths, w) {
			t.Errorf("paths lacks %q:\n%s", w, paths)
		}
	}
	if dec := ok(t, "paths", "--id", "4053036600", in); dec != paths {
		t.Errorf("paths --id 4053036600 differs from --id 0xf1946e38:\n%s", dec)
	}
	if r := heapx(t, "paths", "--id", "@0xF1946E39", in); r.code != 1 || !strings.Contains(r.stderr, "no node with id @0xf1946e39") {
		t.Errorf("paths of a missing hex id: exit %d, %q", r.code, r.stderr)
	}
	dom := ok(t, "dominators", "--id", "@0xff1000a8", "-n", "3", in)
	if !strings.Contains(dom, "Children of class LeakDemo @0xff1000a8") {
		t.Errorf("dominators --id @0xff1000a8:\n%s", dom)
	}

	for _, out := range []string{"java.jsonl.gz", "java.db"} {
		p := filepath.Join(t.TempDir(), out)
		ok(t, "convert", in, p)
		okJSON(t, &info, "info", "--json", p)
		if info.Nodes != nodes || info.Edges != edges || info.TotalSelf != total {
			t.Errorf("%s: info %+v", out, info)
		}
	}
}
