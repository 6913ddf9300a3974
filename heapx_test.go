package heapx_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/model"
)

const (
	leak1 = "testdata/node-leak-1.heapsnapshot.gz"
	leak3 = "testdata/node-leak-3.heapsnapshot.gz"
	java  = "testdata/hprof/java-ticketleak-3.hprof.gz"
)

func open(t *testing.T, path string, opts heapx.Options) *heapx.Dump {
	t.Helper()
	d, err := heapx.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestResultsRoundTrip saves a dump with its analysis (Dump.Results, the
// way heapx convert --analyze does) as .jsonl and .db, and opens them
// again: the stored results are used as they are, not recomputed, and
// every number is the same; RecomputeStored and SkipStored do what they
// say.
func TestResultsRoundTrip(t *testing.T) {
	d := open(t, leak3, heapx.Options{})
	if d.StoredResults() != nil {
		t.Fatal("a .heapsnapshot has stored results")
	}
	res, err := d.Results()
	if err != nil {
		t.Fatal(err)
	}
	want, err := d.Top(50)
	if err != nil {
		t.Fatal(err)
	}
	wantPaths, err := d.Paths(80593, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, ext := range []string{".jsonl", ".jsonl.gz", ".db"} {
		t.Run(ext, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "leak3"+ext)
			f, _ := formats.ByExtension(path)
			if err := formats.Save(path, f, d.Graph(), formats.WriteOptions{Results: res}); err != nil {
				t.Fatal(err)
			}

			back := open(t, path, heapx.Options{})
			stored := back.StoredResults()
			if stored == nil {
				t.Fatal("no stored results read back")
			}
			a, err := back.Analysis()
			if err != nil {
				t.Fatal(err)
			}
			if &a.Dominators.Retained[0] != &stored.Retained[0] || &a.Distances[0] != &stored.Distance[0] {
				t.Error("the stored results were recomputed, not reused")
			}
			got, err := back.Top(50)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Top differs after the round trip:\n%v\nwant\n%v", got, want)
			}
			gotPaths, err := back.Paths(80593, 3)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotPaths, wantPaths) {
				t.Error("Paths differ after the round trip")
			}

			again := open(t, path, heapx.Options{Stored: heapx.RecomputeStored})
			if again.StoredResults() == nil {
				t.Error("RecomputeStored did not read the stored results")
			}
			a2, err := again.Analysis()
			if err != nil {
				t.Fatal(err)
			}
			if &a2.Dominators.Retained[0] == &again.StoredResults().Retained[0] {
				t.Error("RecomputeStored reused the stored results")
			}
			if !reflect.DeepEqual(a2.Dominators.Retained, stored.Retained) {
				t.Error("recomputed retained sizes differ from the stored ones")
			}

			if skip := open(t, path, heapx.Options{Stored: heapx.SkipStored}); skip.StoredResults() != nil {
				t.Error("SkipStored read the stored results")
			}
		})
	}
}

// TestProgress follows the stages Options.Progress reports: reading, from
// 0 to the file's size, then, only when asked for, the analysis, once.
func TestProgress(t *testing.T) {
	type call struct {
		stage       heapx.Stage
		done, total int64
	}
	var calls []call
	d := open(t, leak3, heapx.Options{Progress: func(s heapx.Stage, done, total int64) {
		calls = append(calls, call{s, done, total})
	}})
	st, err := os.Stat(leak3)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) < 2 || calls[0] != (call{heapx.Reading, 0, st.Size()}) {
		t.Fatalf("first calls %v, want reading from 0 of %d", calls[:min(2, len(calls))], st.Size())
	}
	for i, c := range calls[1:] {
		if c.stage != heapx.Reading || c.done < calls[i].done || c.done > st.Size() {
			t.Fatalf("call %d: %v after %v", i+1, c, calls[i])
		}
	}
	if last := calls[len(calls)-1]; last.done != st.Size() {
		t.Errorf("reading ended at %d of %d bytes", last.done, st.Size())
	}
	if d.Size() != st.Size() || !d.Gzip() || d.Format().Name != "v8" || d.Path() != leak3 {
		t.Errorf("size %d, gzip %v, format %s, path %s", d.Size(), d.Gzip(), d.Format().Name, d.Path())
	}
	n := len(calls)
	for range 2 {
		if _, err := d.Analysis(); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls[n:]; !reflect.DeepEqual(got, []call{{heapx.Analyzing, 0, -1}}) {
		t.Errorf("analysis reported %v, want one analyzing call", got)
	}
	if heapx.Reading.String() != "reading" || heapx.Analyzing.String() != "analyzing" {
		t.Errorf("stages are called %q and %q", heapx.Reading, heapx.Analyzing)
	}
}

// panicMagic starts the files of a format whose reader panics, to check
// that Open turns a reader's bug into an error.
const panicMagic = "HEAPX-TEST-PANIC"

func init() {
	formats.Register(formats.Format{
		Name:        "test-panic",
		Description: "a reader with a bug, for TestOpenErrors",
		Detect:      func(head []byte) bool { return strings.HasPrefix(string(head), panicMagic) },
		Read: func(string, formats.ReadOptions) (*model.Graph, error) {
			panic("index out of range, say")
		},
	})
}

// TestOpenErrors checks that what goes wrong opening a dump is an error
// that names the file.
func TestOpenErrors(t *testing.T) {
	whole, err := os.ReadFile(leak1)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	notes, cut, buggy := filepath.Join(dir, "notes.txt"), filepath.Join(dir, "cut.heapsnapshot.gz"), filepath.Join(dir, "buggy")
	for p, b := range map[string][]byte{notes: []byte("hello\n"), cut: whole[:20000], buggy: []byte(panicMagic + " and more")} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "missing.heapsnapshot"): ": no such file",
		dir:   ": is a directory, not a heap dump",
		notes: ": not a heap dump heapx can read",
		cut:   "",
		buggy: ": internal error while reading (please report it): index out of range, say",
	} {
		d, err := heapx.Open(path, heapx.Options{})
		if err == nil || d != nil {
			t.Errorf("%s: opened (%v)", path, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), path+want) {
			t.Errorf("%s: error %q, want it to start with %q", path, err, path+want)
		}
	}
}

// TestObjects checks the accessors against what heapx top and paths
// print for the same objects.
func TestObjects(t *testing.T) {
	d := open(t, leak3, heapx.Options{})
	o, err := d.Object(80593)
	if err != nil {
		t.Fatal(err)
	}
	if o.Label() != "Array @80593" || o.Class != "Array" || o.Shallow != 15656 || o.Retained != 447536 || o.Distance != 6 {
		t.Errorf("object @80593: %s %+v", o.Label(), o.NodeRow)
	}
	if _, err := d.Object(999999999); err == nil || err.Error() != leak3+": no node with id @999999999" {
		t.Errorf("object @999999999: %v", err)
	}
	if _, err := d.Paths(80593, 0); err == nil {
		t.Error("Paths with k 0: no error")
	}
	paths, err := d.Paths(80593, 3)
	if err != nil {
		t.Fatal(err)
	}
	// heapx paths --id 80593 -n 3: one path, from a user root (the
	// global) through 6 references; the 7- and 8-hop paths DevTools lists
	// next differ from it only in V8's property stores and property cells,
	// so they are not shown.
	if len(paths) != 1 {
		t.Fatalf("%d paths, want 1", len(paths))
	}
	if p := paths[0]; p.System || p.Distance != 6 || len(p.Steps) != 6 || p.Root.Label() != "(root) @1" || p.Steps[0].Edge != ".2" ||
		p.Steps[5].To.ID != 80593 || p.Steps[4].To.Label() != "context of installListener @80591" {
		t.Errorf("path: %+v", p)
	}

	// Java's ids are addresses, shown in hex.
	j := open(t, java, heapx.Options{})
	top, err := j.Top(1)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("@0x%x", top[0].ID); len(top) != 1 || !strings.HasSuffix(top[0].Label(), want) {
		t.Errorf("top Java object %q, want its id as %s", top[0].Label(), want)
	}
}

// TestQuery runs registry queries through the facade: their answers are
// the accessors' answers, and a mistake in a name, an argument or the
// number of dumps is an error.
func TestQuery(t *testing.T) {
	d := open(t, leak3, heapx.Options{})
	r, err := d.Query("top", map[string]any{"limit": 5})
	if err != nil {
		t.Fatal(err)
	}
	top, err := d.Top(5)
	if err != nil {
		t.Fatal(err)
	}
	rows := r.Sections[0].Table.Rows
	if len(rows) != 5 {
		t.Fatalf("top -n 5 gave %d rows", len(rows))
	}
	for i, o := range top {
		if rows[i][0] != o.Label() || rows[i][4] != o.Retained {
			t.Errorf("row %d: %v, Top: %s %d", i, rows[i], o.Label(), o.Retained)
		}
	}

	base := open(t, leak1, heapx.Options{})
	r, err = base.Query("diff", nil, d)
	if err != nil {
		t.Fatal(err)
	}
	diff, err := d.Diff(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Sections[0].Table.Rows[2]; got[0] != "LeakedItem" || got[1] != diff.Classes[2].New || got[1] != 1000 {
		t.Errorf("diff row 3: %v, Diff: %+v", got, diff.Classes[2])
	}

	for _, c := range []struct {
		name string
		args map[string]any
		more []*heapx.Dump
		want string
	}{
		{"topp", nil, nil, `no query "topp" (queries: paths, summary, top, diff,`},
		{"top", map[string]any{"limt": 5}, nil, `query top has no argument "limt" (its arguments: limit)`},
		{"top", map[string]any{"limit": "5"}, nil, "top: --limit has a value of the wrong type (string)"},
		{"diff", nil, nil, "diff takes 2 snapshots, got 1"},
		{"paths", nil, nil, "paths needs --id"},
	} {
		if _, err := d.Query(c.name, c.args, c.more...); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s %v: error %v, want %q", c.name, c.args, err, c.want)
		}
	}
}

// TestAnalysisOptions checks that Options.Analysis reaches the analysis.
func TestAnalysisOptions(t *testing.T) {
	d := open(t, leak3, heapx.Options{Analysis: analysis.Options{NoClasses: true}})
	o, err := d.Object(80593)
	if err != nil {
		t.Fatal(err)
	}
	if o.Class != "" || o.Retained != 447536 {
		t.Errorf("without classes: %+v", o.NodeRow)
	}
	if _, err := d.Diff(d); err == nil || !strings.Contains(err.Error(), "diff needs the classes") {
		t.Errorf("Diff without classes: %v", err)
	}
}

// TestNodesOnly opens a V8 dump without its edges (what heapx info does)
// and a Java one, whose reader keeps them: both count the edges of a full
// read, and the analysis, which needs the edges, is refused.
func TestNodesOnly(t *testing.T) {
	for _, path := range []string{leak1, java} {
		full := open(t, path, heapx.Options{})
		d := open(t, path, heapx.Options{NodesOnly: true})
		if d.EdgeCount() != full.Graph().NumEdges() || full.EdgeCount() != full.Graph().NumEdges() || d.EdgeCount() == 0 {
			t.Errorf("%s: %d edges counted, a full read has %d (EdgeCount %d)", path, d.EdgeCount(), full.Graph().NumEdges(), full.EdgeCount())
		}
		if d.Graph().NumNodes() != full.Graph().NumNodes() || d.Graph().TotalSize() != full.Graph().TotalSize() {
			t.Errorf("%s: nodes-only read has %d nodes of %d bytes, a full read %d of %d", path,
				d.Graph().NumNodes(), d.Graph().TotalSize(), full.Graph().NumNodes(), full.Graph().TotalSize())
		}
		if _, err := d.Analysis(); err == nil || !strings.Contains(err.Error(), "without its edges") {
			t.Errorf("%s: analysis without edges: %v", path, err)
		}
	}
	if n := open(t, leak1, heapx.Options{NodesOnly: true}).Graph().NumEdges(); n != 0 {
		t.Errorf("V8 read without edges kept %d", n)
	}
}

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
