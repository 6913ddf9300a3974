package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapx/heapx/formats/jsonl"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestConvertRoundTrip converts every fixture the way a user does, V8 ->
// .jsonl.gz -> .heapsnapshot, and checks that the exchange file answers
// like the original (info, top) and that the regenerated snapshot is the
// original byte for byte, Node's and Chrome's alike.
func TestConvertRoundTrip(t *testing.T) {
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

			var info infoJSON
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
	for i, id := range g.Nodes.ID {
		index[id] = i
	}
	for _, want := range golden.Top {
		i := index[want.ID]
		if res.Retained[i] != want.Retained || g.Nodes.ID[res.Dominator[i]] != want.DominatorID || res.Distance[i] != want.Distance {
			t.Errorf("node @%d: retained %d, dominator @%d, distance %d; DevTools %d, @%d, %d", want.ID, res.Retained[i],
				g.Nodes.ID[res.Dominator[i]], res.Distance[i], want.Retained, want.DominatorID, want.Distance)
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
	if testing.Short() {
		t.Skip("writes a large snapshot")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "big.heapsnapshot")
	writeBigSnapshot(t, in, 1_500_000)
	out := filepath.Join(dir, "big.jsonl.gz")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(heapxBin, "convert", in, out)
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
	g.Nodes = model.Nodes{Type: make([]uint8, n), Name: make([]uint32, n), ID: make([]uint64, n), Size: make([]uint64, n), FirstEdge: make([]uint32, n+1)}
	m := 3 * n
	g.Edges = model.Edges{Type: make([]uint8, m), Name: make([]uint32, m), To: make([]model.NodeIndex, m)}
	for i := 0; i < n; i++ {
		g.Nodes.Type[i], g.Nodes.Name[i], g.Nodes.ID[i], g.Nodes.Size[i] = obj, 1, uint64(2*i+1), 32
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
// and V8 -> .db -> .jsonl.gz -> .heapsnapshot when the SQLite form is
// built in: the .db carries the whole dump (Chrome's location scripts
// included), so the snapshot comes back byte for byte both ways, and the
// analysis results go through to the flat form.
func TestConvertThroughSQLite(t *testing.T) {
	if !strings.Contains(ok(t, "convert", "--help"), "sqlite (.db)") {
		t.Skip("this heapx does not write .db")
	}
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			db, flat := filepath.Join(dir, "x.db"), filepath.Join(dir, "x.jsonl.gz")
			direct, back := filepath.Join(dir, "direct.heapsnapshot"), filepath.Join(dir, "back.heapsnapshot")
			ok(t, "convert", "--analyze", f.path, db)
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
