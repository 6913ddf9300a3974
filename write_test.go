package heapx_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/formats"
)

// TestWrite writes a dump with its analysis to the exchange format and
// reads it back with the same graph and results; a Java dump written as
// a V8 snapshot says what DevTools will show otherwise and that its
// threads' stacks are left out, and has the root's repeated references
// merged.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "node-basic.heapsnapshot.gz")
	d, err := heapx.Open(src, heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	jsonl, _ := formats.Lookup("jsonl")
	out := filepath.Join(dir, "basic.jsonl.gz")
	var done, total int64
	w, err := d.Write(out, jsonl, heapx.WriteOptions{Analyze: true, Progress: func(n, all int64) { done, total = n, all }})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(out)
	g := d.Graph()
	if w.Path != out || !w.Results || !w.Gzip || w.Size != st.Size() || w.Nodes != g.NumNodes() || w.Edges != g.NumEdges() || done == 0 || done != total {
		t.Errorf("wrote %+v (file %d bytes), progress %d of %d", w, st.Size(), done, total)
	}
	back, err := heapx.Open(out, heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := d.Results()
	res := back.StoredResults()
	if back.Graph().NumNodes() != g.NumNodes() || res == nil || len(res.Retained) != len(want.Retained) || res.Retained[g.Root] != want.Retained[g.Root] {
		t.Fatalf("read back: %d nodes, results %v", back.Graph().NumNodes(), res != nil)
	}

	java, err := heapx.Open(filepath.Join("testdata", "hprof", "java-leakdemo-small.hprof.gz"), heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v8, _ := formats.Lookup("v8")
	var warnings []string
	w, err = java.Write(filepath.Join(dir, "java.heapsnapshot"), v8, heapx.WriteOptions{Warn: func(m string) { warnings = append(warnings, m) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 4 || !strings.Contains(warnings[0], "java.lang.String (35,489 objects, 852 kB) as (string)") ||
		warnings[3] != "the 8 threads' stacks are left out: a V8 heap snapshot has no place for them (.jsonl and .db keep them)" ||
		w.Results || w.Edges != java.Graph().NumEdges()-12 {
		t.Errorf("Java as V8: %+v, warnings %q", w, warnings)
	}
}

// TestCheckOutput: what makes an output unfit is said before anything
// is read; WriteTrace refuses what a trace cannot be written as.
func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	v8, _ := formats.Lookup("v8")
	jsonl, _ := formats.Lookup("jsonl")
	for _, c := range []struct {
		out     string
		of      *formats.Format
		analyze bool
		want    string
	}{
		{filepath.Join(dir, "a.heapsnapshot"), v8, true, "--analyze: format v8 cannot store analysis results"},
		{dir, jsonl, false, dir + ": is a directory"},
		{filepath.Join(dir, "no", "a.jsonl"), jsonl, false, "directory " + filepath.Join(dir, "no") + " does not exist"},
		{filepath.Join(dir, "a.jsonl"), jsonl, true, ""},
	} {
		err := heapx.CheckOutput(c.out, c.of, c.analyze)
		if (err == nil) != (c.want == "") || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckOutput(%s, %s, %v): %v, want %q", c.out, c.of.Name, c.analyze, err, c.want)
		}
	}
	if _, err := heapx.WriteTrace("t.heapxtrace", filepath.Join(dir, "t.heapsnapshot"), v8, heapx.WriteOptions{}); err == nil ||
		!strings.Contains(err.Error(), "converts to the exchange format only") {
		t.Errorf("trace as V8: %v", err)
	}
}

// TestWrittenString checks heapx convert's sentence about each file
// written: a dump's nodes and edges with what the file is, a trace's
// objects.
func TestWrittenString(t *testing.T) {
	jsonl, _ := formats.Lookup("jsonl")
	for _, c := range []struct {
		w    heapx.Written
		want string
	}{
		{heapx.Written{Path: "a.jsonl.gz", Format: jsonl, Size: 2_500_000, Gzip: true, Results: true, Nodes: 65386, Edges: 244874},
			"a.jsonl.gz (jsonl, gzip, with analysis results, 2.5 MB): 65,386 nodes, 244,874 edges"},
		{heapx.Written{Path: "a.jsonl", Format: jsonl, Size: 900, Nodes: 12, Edges: 30}, "a.jsonl (jsonl, 900 B): 12 nodes, 30 edges"},
		{heapx.Written{Path: "t.db", Format: jsonl, Size: 4096, Nodes: 1001, Lifetimes: true}, "t.db (jsonl, object lifetimes, 4.1 kB): 1,000 objects"},
	} {
		if got := c.w.String(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
