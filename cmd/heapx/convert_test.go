package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/jsonl"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// TestConvertRoundTrip converts every fixture the way a user does, V8 ->
// .jsonl.gz -> .heapsnapshot, and checks that the exchange file answers
// like the original (info, top) and that the regenerated snapshot is the
// original byte for byte, Node's and Chrome's alike.
func TestConvertRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			flat := filepath.Join(dir, f.name+".jsonl.gz")
			back := filepath.Join(dir, f.name+".heapsnapshot")
			out := ok(t, "convert", f.path, flat)
			if !strings.HasPrefix(out, "wrote "+flat+" (jsonl, gzip, ") {
				t.Errorf("convert printed %q", out)
			}
			ok(t, "convert", flat, back)
			// The file names the build that wrote it (a write option).
			if g := `["metadata","generator",` + strconv.Quote(generator()) + `]`; !bytes.Contains(testfixtures.Gunzip(t, flat), []byte("\n"+g+"\n")) {
				t.Errorf("%s has no %s line", flat, g)
			}

			var info hx.Info
			if err := json.Unmarshal([]byte(ok(t, "info", "--json", flat)), &info); err != nil {
				t.Fatal(err)
			}
			want := readGolden(t, f.name)
			if info.NodeCount != want.NodeCount || info.EdgeCount != want.EdgeCount || info.TotalSelfSize != want.TotalSelfSize || info.Format != jsonl.FormatName || info.Compression != "gzip" {
				t.Errorf("info on the .jsonl.gz: %d nodes, %d edges, %d bytes, format %q, %s", info.NodeCount, info.EdgeCount, info.TotalSelfSize, info.Format, info.Compression)
			}
			// The views answer the same from the exchange file.
			top := func(path string) string {
				s := ok(t, "top", "--json", "-n", "50", path)
				return strings.Replace(s, `"file": "`+path+`"`, `"file": ""`, 1)
			}
			if a, b := top(f.path), top(flat); a != b {
				t.Errorf("top differs between the snapshot and its .jsonl.gz")
			}

			orig := testfixtures.Gunzip(t, f.path)
			got, err := os.ReadFile(back)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(orig, got) {
				t.Errorf("V8 -> jsonl.gz -> V8 is not the original snapshot (%d vs %d bytes)", len(got), len(orig))
			}
		})
	}
}

// TestConvertAnalyze stores analysis results and checks them against
// DevTools' retained sizes.
func TestConvertAnalyze(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "a.jsonl")
	if s := ok(t, "convert", "--analyze", "../../testdata/node-leak-1.heapsnapshot.gz", out); !strings.Contains(s, "with analysis results") {
		t.Errorf("convert printed %q", s)
	}
	res := &model.Results{}
	g, err := jsonl.ReadFile(out, jsonl.ReadOptions{Results: res})
	if err != nil {
		t.Fatal(err)
	}
	if res.Policy != "devtools" || len(res.Retained) != g.NumNodes() {
		t.Fatalf("results: policy %q, %d retained sizes for %d nodes", res.Policy, len(res.Retained), g.NumNodes())
	}
	var golden struct {
		Top []struct {
			ID          uint64 `json:"id"`
			Retained    uint64 `json:"retained_size"`
			DominatorID uint64 `json:"dominator_id"`
			Distance    int32  `json:"distance"`
		} `json:"top_nodes_by_retained_size"`
	}
	b, _ := os.ReadFile(goldenPath("node-leak-1"))
	if err := json.Unmarshal(b, &golden); err != nil {
		t.Fatal(err)
	}
	index := map[uint64]int{}
	for i := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(i)
		index[id] = i
	}
	for _, want := range golden.Top {
		i := index[want.ID]
		if res.Retained[i] != want.Retained || g.NodeID(res.Dominator[i]) != want.DominatorID || res.Distance[i] != want.Distance {
			t.Errorf("node @%d: retained %d, dominator @%d, distance %d; DevTools %d, @%d, %d", want.ID, res.Retained[i],
				g.NodeID(res.Dominator[i]), res.Distance[i], want.Retained, want.DominatorID, want.Distance)
		}
	}
	// Converting again carries the results over.
	again := filepath.Join(dir, "b.jsonl.gz")
	if s := ok(t, "convert", out, again); !strings.Contains(s, "with analysis results") {
		t.Errorf("results were not carried over: %q", s)
	}
}

// TestConvertFailures runs convert wrongly: each run must fail with one
// "heapx: " line and leave nothing in the output directory.
func TestConvertFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.heapsnapshot")
	if err := os.WriteFile(bad, []byte(`{"snapshot":{"meta":{}}, "nodes":[1,2`), 0o644); err != nil {
		t.Fatal(err)
	}
	in := "../../testdata/node-basic.heapsnapshot.gz"
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{"convert", in, filepath.Join(out, "x.txt")}, "cannot tell the output format from the extension"},
		{[]string{"convert", "--to", "pdf", in, filepath.Join(out, "x")}, "--to pdf: no such format"},
		{[]string{"convert", "--analyze", in, filepath.Join(out, "x.heapsnapshot")}, "cannot store analysis results"},
		{[]string{"convert", in, filepath.Join(dir, "missing", "x.jsonl")}, "does not exist"},
		{[]string{"convert", bad, filepath.Join(out, "x.jsonl")}, bad},
		{[]string{"convert", filepath.Join(dir, "nothing.heapsnapshot"), filepath.Join(out, "x.jsonl")}, "no such file"},
		{[]string{"convert", in, out}, "cannot tell the output format"},
		{[]string{"convert", in}, "convert needs two arguments"},
	}
	for _, c := range cases {
		r := heapx(t, c.args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "heapx: ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("heapx %v: exit %d, stderr %q; want one line saying %q", c.args, r.code, r.stderr, c.msg)
		}
		if ents, _ := os.ReadDir(out); len(ents) != 0 {
			t.Errorf("heapx %v left %v", c.args, ents)
		}
	}
	// --to overrides the extension.
	x := filepath.Join(out, "x.dump")
	ok(t, "convert", "--to", "jsonl", in, x)
	if g, err := jsonl.ReadFile(x, jsonl.ReadOptions{}); err != nil || g.NumNodes() != 47198 {
		t.Errorf("--to jsonl: %v", err)
	}
}

// TestConvertInterrupted interrupts a convert while it writes: the output
// must not appear, and the temporary file must be gone.
func TestConvertInterrupted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a large snapshot")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "big.heapsnapshot")
	writeBigSnapshot(t, in, 1_500_000)
	out := filepath.Join(dir, "big.jsonl.gz")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := heapxCommand(t, "convert", in, out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for the temporary output to appear: reading is over and
		// writing has begun.
		deadline := time.Now().Add(60 * time.Second)
		for {
			m, _ := filepath.Glob(filepath.Join(dir, ".big.jsonl.gz.tmp-*"))
			if len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("no temporary file appeared")
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Fatalf("%v: exit %v, stderr %q; want 130 (did it finish before the signal?)", sig, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "heapx: "+sig.String()+": "+out+" not written") {
			t.Errorf("stderr %q", stderr.String())
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			names := []string{}
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("after %v the directory holds %v, want only the input", sig, names)
		}
	}
}

// writeBigSnapshot writes a V8 snapshot of n nodes in a chain with three
// edges each, big enough that converting it takes a while.
func writeBigSnapshot(t *testing.T, path string, n int) {
	t.Helper()
	g := &model.Graph{}
	obj, _ := g.AddNodeType(model.NodeType{Namespace: "v8", Name: "object", Category: model.CatObject})
	syn, _ := g.AddNodeType(model.NodeType{Namespace: "v8", Name: "synthetic", Category: model.CatSynthetic})
	prop, _ := g.AddEdgeType(model.EdgeType{Namespace: "v8", Name: "property", Category: model.EdgeProperty})
	for _, s := range []string{"", "Thing", "next", "prev", "self"} {
		g.Strings.AddString(s)
	}
	g.Nodes = model.Nodes{Type: make([]uint8, n), Name: make([]uint32, n), ID: model.MakeUint64s(n), Size: model.MakeUint64s(n), FirstEdge: make([]uint32, n+1)}
	m := 3 * n
	g.Edges = model.Edges{Type: make([]uint8, m), Name: make([]uint32, m), To: make([]model.NodeIndex, m)}
	for i := 0; i < n; i++ {
		g.Nodes.Type[i], g.Nodes.Name[i] = obj, 1
		g.Nodes.ID.Set(i, uint64(2*i+1))
		g.Nodes.Size.Set(i, 32)
		g.Nodes.FirstEdge[i+1] = uint32(3 * (i + 1))
		for k, name := range []uint32{2, 3, 4} {
			e := 3*i + k
			g.Edges.Type[e], g.Edges.Name[e] = prop, name
			g.Edges.To[e] = model.NodeIndex([]int{(i + 1) % n, (i + n - 1) % n, i}[k])
		}
	}
	g.Nodes.Type[0], g.Nodes.Name[0] = syn, 0
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := v8.Write(f, g, v8.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestConvertThroughSQLite takes every fixture V8 -> .db -> .heapsnapshot
// and V8 -> .db -> .jsonl.gz -> .heapsnapshot: the .db carries the whole
// dump (Chrome's location scripts included), so the snapshot comes back
// byte for byte both ways, and the analysis results go through to the
// flat form.
func TestConvertThroughSQLite(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db, _ := analysedCopy(t, f, ".db")
			flat := filepath.Join(dir, "x.jsonl.gz")
			direct, back := filepath.Join(dir, "direct.heapsnapshot"), filepath.Join(dir, "back.heapsnapshot")
			ok(t, "convert", db, direct)
			if s := ok(t, "convert", db, flat); !strings.Contains(s, "with analysis results") {
				t.Errorf("results did not come through the database: %q", s)
			}
			ok(t, "convert", flat, back)
			orig := testfixtures.Gunzip(t, f.path)
			for _, p := range []string{direct, back} {
				got, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, orig) {
					t.Errorf("%s is not the original snapshot (%d vs %d bytes)", filepath.Base(p), len(got), len(orig))
				}
			}
		})
	}
}

// TestConvertToV8ShowsHeapxNumbers converts a Java and a Firefox dump to
// .heapsnapshot and compares what Chrome DevTools computes on the result
// (testdata/golden/*.converted.devtools.json, made by DevTools' own worker
// on exactly these conversions; see its README) with what heapx says about
// the original dump: every object of DevTools' top 50 has heapx's shallow
// size, retained size, distance and class, and every class of its top 50
// heapx's count, sizes and distance, except the classes DevTools names
// itself, which convert must name in its warnings. Before the writer mapped
// types for DevTools, DevTools folded each byte[] into its owner
// (LeakDemo$RequestRecord 7.4 MB instead of 640 kB) and could not load the
// Firefox file at all.
func TestConvertToV8ShowsHeapxNumbers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		golden, path string
		// DevTools' own class names -> heapx's class for the same objects;
		// "{…}" stands for the classes DevTools infers from property names.
		renamed  map[string]string
		warnings []string
		merged   int // root edges merged
	}{
		{"java-leakdemo-small.converted", "../../testdata/hprof/java-leakdemo-small.hprof.gz",
			map[string]string{"(string)": "java.lang.String"},
			[]string{"java.lang.String (35,489 objects, 852 kB) as (string)", "12 of the root's references repeat"}, 12},
		{"ff-small-page.converted", "../../testdata/spidermonkey/ff-small-page.fxsnapshot",
			map[string]string{"(string)": "JSString", "(synthetic)": "JS::ubi::RootList", "{…}": "Object"},
			[]string{"Object (105,000 of 105,115 objects, 5.9 MB) as 3 classes: {shape, sku} (75,000),", "JSString (10,384 objects, 289 kB) as (string)",
				"16 of the root's references repeat", "DevTools keeps 32 bits of a node id: 155,233 of the 155,233 ids"}, 16},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "converted.heapsnapshot")
			r := heapx(t, "convert", c.path, out)
			if r.code != 0 {
				t.Fatalf("convert: exit %d, %s", r.code, r.stderr)
			}
			for _, w := range c.warnings {
				if !strings.Contains(r.stderr, "heapx: warning: "+out+": ") || !strings.Contains(r.stderr, w) {
					t.Errorf("convert's warnings lack %q:\n%s", w, r.stderr)
				}
			}
			want := readViewsGolden(t, c.golden)
			var orig, conv infoCounts
			okJSON(t, &orig, "info", "--json", c.path)
			okJSON(t, &conv, "info", "--json", out)
			if g := readGolden(t, c.golden); conv.Nodes != g.NodeCount || conv.Edges != g.EdgeCount || conv.Edges != orig.Edges-c.merged || conv.TotalSelf != orig.TotalSelf {
				t.Errorf("converted file: %+v, original %+v, DevTools read %+v", conv, orig, g)
			}
			heapxClass := func(devtools string) string {
				if strings.HasPrefix(devtools, "{") {
					devtools = "{…}"
				}
				if h, ok := c.renamed[devtools]; ok {
					return h
				}
				return devtools
			}

			var top query.TopJSON
			okJSON(t, &top, "top", "--json", "-n", "60", c.path)
			byID := map[uint64]query.NodeJSON{}
			for _, n := range top.Nodes {
				byID[n.ID&math.MaxUint32] = n // DevTools keeps the low 32 bits
			}
			for _, w := range want.TopNodes {
				h, found := byID[w.ID]
				if !found || h.ShallowSize != w.SelfSize || h.RetainedSize != w.RetainedSize || h.Distance != w.Distance || h.Constructor != heapxClass(w.ClassName) {
					t.Errorf("DevTools' object @%d %s: self %d, retained %d, distance %d, class %s; heapx: %+v (found %v)",
						w.ID, w.Name, w.SelfSize, w.RetainedSize, w.Distance, w.ClassName, h, found)
				}
			}

			var s query.SummaryJSON
			okJSON(t, &s, "summary", "--json", "--unreachable", "-n", "0", c.path)
			byName := map[string]query.ClassJSON{}
			for _, k := range s.Classes {
				byName[k.Constructor] = k
			}
			// DevTools' class distance is the smallest over every instance,
			// so a class with one unreachable instance is -5 there; heapx's
			// is the nearest reachable instance's (convert warns of it).
			unreachable := map[string]bool{}
			for _, k := range s.Unreachable.Classes {
				unreachable[k.Constructor] = true
			}
			sameDistance := func(class string, heapx, devtools int32) bool {
				return heapx == devtools || devtools == -5 && unreachable[class]
			}
			if s.TotalSize != want.TotalSizeDevTools {
				t.Errorf("total size %d, DevTools %d", s.TotalSize, want.TotalSizeDevTools)
			}
			// Classes DevTools splits off one of heapx's add up to it.
			split := map[string]query.ClassJSON{}
			for _, w := range want.TopConstructors {
				if w.Name == "(synthetic)" {
					continue // the root: heapx's Summary lists no row for another runtime's root
				}
				hc := heapxClass(w.Name)
				h := byName[hc]
				if hc == "Object" && c.renamed["{…}"] == "Object" {
					sum := split[hc]
					sum.Count += w.Count
					sum.ShallowSize += w.SelfSize
					split[hc] = sum
					continue
				}
				if h.Count != w.Count || h.ShallowSize != w.SelfSize || h.RetainedSize != w.RetainedSize || !sameDistance(hc, h.Distance, w.Distance) {
					t.Errorf("DevTools' class %s: count %d, self %d, retained %d, distance %d; heapx's %s: %+v",
						w.Name, w.Count, w.SelfSize, w.RetainedSize, w.Distance, hc, h)
				}
			}
			for hc, sum := range split {
				if h := byName[hc]; h.Count != sum.Count || h.ShallowSize != sum.ShallowSize {
					t.Errorf("DevTools' classes for heapx's %s hold %d objects, %d bytes; heapx: %+v", hc, sum.Count, sum.ShallowSize, h)
				}
			}

			// heapx reads the written file as DevTools does.
			var back query.SummaryJSON
			okJSON(t, &back, "summary", "--json", "-n", "0", out)
			got := map[string]query.ClassJSON{}
			for _, k := range back.Classes {
				got[k.Key] = k
			}
			if back.ClassCount != want.AggregateClassCount {
				t.Errorf("heapx finds %d classes in the converted file, DevTools %d", back.ClassCount, want.AggregateClassCount)
			}
			for _, w := range want.TopConstructors {
				if h := got[w.Key]; h.Count != w.Count || h.ShallowSize != w.SelfSize || h.RetainedSize != w.RetainedSize || !sameDistance(heapxClass(w.Name), h.Distance, w.Distance) {
					t.Errorf("converted file, class %s: heapx %+v, DevTools %+v", w.Key, h, w)
				}
			}
		})
	}
}
