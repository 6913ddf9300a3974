package session_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/formats/jsonl"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/session"
	"github.com/heapx/heapx/sqlquery"
)

func fixture(rel string) string { return filepath.Join(testfixtures.Dir(), rel) }

func open(t *testing.T, file string, baselines ...string) *session.Session {
	t.Helper()
	var bs []string
	for _, b := range baselines {
		bs = append(bs, fixture(b))
	}
	s, err := session.Open(fixture(file), bs, session.Options{SQLCache: sqlquery.Choice{None: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// analysed is the analysis of the dump rel (under testdata/), opened by
// the facade as a session opens it.
func analysed(t *testing.T, rel string) *analysis.Analysis {
	t.Helper()
	d, err := heapx.Open(fixture(rel), heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestInstancesAreTheSummarys: every class's instance list holds as many
// objects as the Summary counts, none twice, largest retained size first;
// on a dump of each runtime.
func TestInstancesAreTheSummarys(t *testing.T) {
	for _, rel := range []string{"node-leak-3.heapsnapshot.gz", "spidermonkey/ff-small-page.fxsnapshot", "hprof/java-leakdemo-small.hprof.gz"} {
		s := open(t, rel)
		objects := 0
		for off := 0; ; {
			page, err := s.Classes(session.ListQuery{Offset: off, Limit: session.MaxPage})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range page.Classes {
				seen := map[uint64]bool{}
				last := ^uint64(0)
				for io := 0; io < c.Count; {
					ip, err := s.Instances(c.Index, "", io, session.MaxPage)
					if err != nil {
						t.Fatal(err)
					}
					if ip.Total != c.Count || len(ip.Objects) == 0 {
						t.Fatalf("%s: class %s has %d instances listed, %d counted", rel, c.Constructor, ip.Total, c.Count)
					}
					for _, o := range ip.Objects {
						if seen[o.ID] || o.RetainedSize > last || o.Constructor != c.Constructor {
							t.Fatalf("%s: instance %+v of %s out of order, seen twice or of another class", rel, o, c.Constructor)
						}
						seen[o.ID], last = true, o.RetainedSize
					}
					io += len(ip.Objects)
				}
				objects += c.Count
			}
			off += len(page.Classes)
			if off >= page.Matched {
				break
			}
		}
		if objects == 0 {
			t.Errorf("%s: no instances", rel)
		}
	}
}

// TestChildClasses: the dominator tree's children grouped by class add up
// to the children, and match heapx dominators --by-class.
func TestChildClasses(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz")
	a := analysed(t, "node-leak-3.heapsnapshot.gz")
	want := inspect.DominatedByClass(a, a.Graph.Root, 0)
	groups, err := s.ChildClasses("root", 0, session.MaxPage)
	if err != nil {
		t.Fatal(err)
	}
	kids, err := s.Children("root", -1, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if groups.Total != len(want) {
		t.Fatalf("%d groups, heapx dominators --by-class has %d", groups.Total, len(want))
	}
	n := 0
	for i, g := range groups.Classes {
		w := want[i]
		if g.Constructor != w.Class || g.Count != w.Count || g.RetainedSize != w.Retained || g.ShallowSize != w.Shallow {
			t.Errorf("group %d: %+v, want %+v", i, g, w)
		}
		of, err := s.Children("root", g.Index, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		if of.Total != g.Count || of.Objects[0].ID != g.Largest.ID {
			t.Errorf("the children of class %s: %d, largest @%d; the group says %d, @%d", g.Constructor, of.Total, of.Objects[0].ID, g.Count, g.Largest.ID)
		}
		n += g.Count
	}
	if n != kids.Total {
		t.Errorf("the groups hold %d children, the root has %d", n, kids.Total)
	}
}

// TestQueryInputs: each query runs on the snapshots it takes, as heapx
// report runs them, and its result is kept.
func TestQueryInputs(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz")
	f1, f2, f3 := fixture("node-leak-1.heapsnapshot.gz"), fixture("node-leak-2.heapsnapshot.gz"), fixture("node-leak-3.heapsnapshot.gz")
	for name, want := range map[string][]string{"summary": {f3}, "diff": {f2, f3}, "leaks": {f1, f2, f3}, "growth": {f1, f2, f3}} {
		r, err := s.Query(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Inputs) != len(want) {
			t.Errorf("%s ran on %v, want %v", name, r.Inputs, want)
			continue
		}
		for i := range want {
			if r.Inputs[i] != want[i] {
				t.Errorf("%s ran on %v, want %v", name, r.Inputs, want)
			}
		}
		again, _ := s.Query(name, nil)
		if again.Result != r.Result {
			t.Errorf("%s was computed twice", name)
		}
	}
	// The row limit is clamped, "all" included.
	r, err := s.Query("summary", map[string]string{"limit": "0"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Result.Sections[0].Table.Rows); n != 176 {
		t.Errorf("summary -n 0: %d rows, want all 176", n)
	}
	r, _ = s.Query("top", map[string]string{"limit": "0"})
	if n := len(r.Result.Sections[0].Table.Rows); n != session.MaxQueryRows {
		t.Errorf("top -n 0: %d rows, want %d", n, session.MaxQueryRows)
	}
}

// TestComparisonByClass: a Java series is compared by class counts (its
// ids are addresses), so which objects are new cannot be listed.
func TestComparisonByClass(t *testing.T) {
	s := open(t, "hprof/java-ticketleak-3.hprof.gz", "hprof/java-ticketleak-1.hprof.gz", "hprof/java-ticketleak-2.hprof.gz")
	d, err := s.Diff(session.ListQuery{Filter: "TicketLeak$Ticket"})
	if err != nil {
		t.Fatal(err)
	}
	if d.Matching != leak.MatchByClass.String() || len(d.Classes) == 0 || d.Classes[0].Delta != 2000 {
		t.Fatalf("diff: %+v", d)
	}
	if _, err := s.NewObjects(d.Classes[0].Index, 0, 10); session.KindOf(err) != session.Invalid {
		t.Errorf("new objects of a class compared by count: %v, want an Invalid error", err)
	}
}

// TestSQLTemporaryCopy: with --no-cache's choice, the SQL copy is
// deleted when the session closes.
func TestSQLTemporaryCopy(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(fixture("node-basic.heapsnapshot.gz"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "node-basic.heapsnapshot.gz")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(path, nil, session.Options{SQLCache: sqlquery.Choice{None: true}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.SQL(t.Context(), "SELECT count(*) AS n FROM node", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(r.Database); err != nil || filepath.Dir(r.Database) != dir {
		t.Fatalf("the copy %s: %v", r.Database, err)
	}
	s.Close()
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("after Close the directory holds %d files, want the dump alone", len(entries))
	}
}

// TestExchangeFormats: a dump in the exchange format's two forms, with
// the analysis results they carry, answers as the dump it was made from;
// a .db is queried with SQL as it is, without a copy.
func TestExchangeFormats(t *testing.T) {
	orig := open(t, "node-leak-3.heapsnapshot.gz")
	a := analysed(t, "node-leak-3.heapsnapshot.gz")
	res := a.Results()
	dir := t.TempDir()
	db := filepath.Join(dir, "leak.db")
	if err := hsql.Save(db, a.Graph, hsql.WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	jl := filepath.Join(dir, "leak.jsonl")
	f, err := os.Create(jl)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonl.Write(f, a.Graph, jsonl.WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, err := orig.Classes(session.ListQuery{Limit: session.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	wantPaths, err := orig.Paths("@92189", 3, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{db, jl} {
		s, err := session.Open(path, nil, session.Options{SQLCache: sqlquery.Choice{Path: t.TempDir()}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Classes(session.ListQuery{Limit: session.MaxPage})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Classes) != len(want.Classes) || got.TotalSize != want.TotalSize {
			t.Fatalf("%s: %d classes of %d bytes, want %d of %d", path, len(got.Classes), got.TotalSize, len(want.Classes), want.TotalSize)
		}
		for i := range want.Classes {
			g, w := got.Classes[i], want.Classes[i]
			if g.Constructor != w.Constructor || g.Key != w.Key || g.Count != w.Count || g.Distance != w.Distance ||
				g.ShallowSize != w.ShallowSize || g.RetainedSize != w.RetainedSize {
				t.Errorf("%s: class %d is %+v, want %+v", path, i, g, w)
			}
		}
		p, err := s.Paths("@92189", 3, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Paths) != len(wantPaths.Paths) || len(p.Paths[0].Steps) != len(wantPaths.Paths[0].Steps) || p.Paths[0].Steps[3].EdgeName != "work" {
			t.Errorf("%s: paths %+v", path, p.Paths)
		}
		r, err := s.SQL(t.Context(), "SELECT count(*) AS n FROM node", 0)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Rows) != `[
{"n":53155}
]` || (path == db) != (r.Database == db) {
			t.Errorf("%s: SQL on %s: %s", path, r.Database, r.Rows)
		}
	}
}
