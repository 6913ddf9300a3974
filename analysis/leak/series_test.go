package leak_test

import (
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/spidermonkey"
	"github.com/heapx/heapx/internal/testfixtures"
)

// analyzeFile reads a testdata dump of any runtime heapx reads and
// analyses it.
func analyzeFile(t *testing.T, rel string) *analysis.Analysis {
	t.Helper()
	path := filepath.Join(testfixtures.Dir(), rel)
	var a *analysis.Analysis
	var err error
	switch filepath.Ext(path) {
	case ".fxsnapshot":
		g, rerr := spidermonkey.ReadFile(path, spidermonkey.ReadOptions{})
		if rerr != nil {
			t.Fatal(rerr)
		}
		a, err = analysis.Analyze(g, analysis.Options{})
	case ".gz":
		if filepath.Ext(path[:len(path)-3]) == ".hprof" {
			g, rerr := hprof.ReadFile(path, hprof.ReadOptions{})
			if rerr != nil {
				t.Fatal(rerr)
			}
			a, err = analysis.Analyze(g, analysis.Options{})
			break
		}
		fallthrough
	default:
		a, err = analysis.Analyze(analysistest.ReadFixture(t, rel), analysis.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ticketSeries analyses java-ticketleak-1..3: three dumps of one JVM that
// keeps 2,000 more TicketLeak$Ticket before each.
func ticketSeries(t *testing.T) []*analysis.Analysis {
	t.Helper()
	var as []*analysis.Analysis
	for _, n := range []string{"1", "2", "3"} {
		as = append(as, analyzeFile(t, "hprof/java-ticketleak-"+n+".hprof.gz"))
	}
	return as
}

func TestCheckSeriesOneNodeProcess(t *testing.T) {
	as := leakSeries(t)
	s := leak.CheckSeries(as)
	if !s.SameRuntime() || !s.OneProcess() || !s.MatchesObjects() || s.Reversed() != nil {
		t.Fatalf("in order: %+v", s)
	}
	for i, p := range s.Pairs {
		if p.IDs != leak.CountedIDs || p.SameShare() < 0.99 || p.Newer != 0 {
			t.Errorf("pair %d: %+v, same share %v", i, p, p.SameShare())
		}
	}
	if got := s.TakenOrder(); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("taken order %v", got)
	}

	// Reversed: node-leak-3 holds the 3,504 heap objects V8 numbered
	// after node-leak-2's newest (its 500 LeakedItem and their data),
	// node-leak-2 the 3,511 after node-leak-1's.
	r := leak.CheckSeries([]*analysis.Analysis{as[2], as[1], as[0]})
	if !r.OneProcess() || !reflect.DeepEqual(r.Reversed(), []int{0, 1}) {
		t.Fatalf("reversed: %+v", r)
	}
	if r.Pairs[0].Newer != 3504 || r.Pairs[1].Newer != 3511 {
		t.Errorf("newer %d, %d", r.Pairs[0].Newer, r.Pairs[1].Newer)
	}
	if got := r.TakenOrder(); !reflect.DeepEqual(got, []int{2, 1, 0}) {
		t.Errorf("taken order %v", got)
	}
	// One pair out of order in the middle, as `report leak-1 leak-2
	// leak-3` gives them (baselines, then the file).
	m := leak.CheckSeries([]*analysis.Analysis{as[1], as[2], as[0]})
	if !reflect.DeepEqual(m.Reversed(), []int{1}) || !reflect.DeepEqual(m.TakenOrder(), []int{2, 0, 1}) {
		t.Errorf("report order: reversed %v, taken %v", m.Reversed(), m.TakenOrder())
	}
}

// Two Node processes started alike share most ids (97.6% of node-basic's
// are in node-leak-1), but not what they name: the old overlap test took
// them for one process and diffed them object by object.
func TestCheckSeriesTwoNodeProcesses(t *testing.T) {
	basic, leak1 := analyzeFile(t, "node-basic.heapsnapshot.gz"), leakSeries(t)[0]
	s := leak.CheckSeries([]*analysis.Analysis{basic, leak1})
	if s.OneProcess() || s.MatchesObjects() || s.Reversed() != nil || s.TakenOrder() != nil {
		t.Fatalf("%+v", s)
	}
	if sh := s.Pairs[0].SameShare(); sh > 0.2 {
		t.Errorf("same share %v", sh)
	}
	d := leak.Diff(basic, leak1)
	if d.Matching != leak.MatchByClass || d.New != 0 || d.Deleted != 0 {
		t.Errorf("diff: matching %v, new %d, deleted %d", d.Matching, d.New, d.Deleted)
	}
	g := leak.Growth([]*analysis.Analysis{basic, leak1}, leak.GrowthOptions{})
	if g.Matching != leak.MatchByClass || g.Collections != nil {
		t.Errorf("growth: matching %v, %d collections", g.Matching, len(g.Collections))
	}
}

func TestCheckSeriesRuntimes(t *testing.T) {
	node, java := leakSeries(t)[0], analyzeFile(t, "hprof/java-leakdemo-small.hprof.gz")
	ff := analyzeFile(t, "spidermonkey/ff-small-page.fxsnapshot")
	s := leak.CheckSeries([]*analysis.Analysis{node, java, ff})
	if s.SameRuntime() || s.Pairs != nil || s.OneProcess() {
		t.Errorf("%+v", s)
	}
	if !reflect.DeepEqual(s.Runtimes, []string{"v8", "hprof", "spidermonkey"}) {
		t.Errorf("runtimes %v", s.Runtimes)
	}
	if leak.IDKindOf(java.Graph) != leak.AddressIDs || leak.IDKindOf(ff.Graph) != leak.AddressIDs ||
		leak.IDKindOf(node.Graph) != leak.CountedIDs {
		t.Error("id kinds")
	}
}

// Java ids are addresses: two runs of one program share 18% of them, one
// JVM keeps more than half between dumps, and no order is ever claimed.
func TestCheckSeriesJava(t *testing.T) {
	runs := leak.CheckSeries([]*analysis.Analysis{analyzeFile(t, "hprof/java-leakdemo-small.hprof.gz"),
		analyzeFile(t, "hprof/java-leakdemo-small-gz.hprof.gz")})
	if runs.OneProcess() || runs.Pairs[0].IDs != leak.AddressIDs || runs.Pairs[0].SameShare() > 0.25 {
		t.Errorf("two JVM runs: %+v, same share %v", runs.Pairs[0], runs.Pairs[0].SameShare())
	}
	as := ticketSeries(t)
	one := leak.CheckSeries(as)
	if !one.OneProcess() || one.MatchesObjects() || one.TakenOrder() != nil {
		t.Errorf("one JVM: %+v", one)
	}
	if back := leak.CheckSeries([]*analysis.Analysis{as[2], as[1], as[0]}); back.Reversed() != nil || back.Pairs[0].Newer != 0 {
		t.Errorf("one JVM backwards: %+v", back)
	}
}

// Within one JVM the collector moves objects: matched by address, a diff
// saw 3,999 new and 1,999 deleted Tickets where 2,000 were added and none
// went, and leaks reported 2,829 Tickets where 2,000 leaked. Compared by
// class, both are exact.
func TestJavaComparedByClass(t *testing.T) {
	as := ticketSeries(t)
	d := leak.Diff(as[0], as[1])
	if d.Matching != leak.MatchByClass {
		t.Fatalf("diff matching %v", d.Matching)
	}
	if c := d.Classes[0]; c.Name != "TicketLeak$Ticket" || c.New != 0 || c.Deleted != 0 || c.Delta != 2000 || c.SizeDelta != 48000 {
		t.Errorf("diff first row %+v", c)
	}
	if lr := leaksOf(as[0], as[1], as[2], leak.LeakOptions{}); lr.Matching != leak.MatchByClass || lr.Clusters != nil {
		t.Errorf("leaks: matching %v, %d clusters", lr.Matching, len(lr.Clusters))
	}
	cl := leak.ClassLeaks(leak.ClassCounts(as[0]), leak.ClassCounts(as[1]), as[2])
	var names []string
	for _, c := range cl {
		names = append(names, c.Name)
		if c.Kept != 2000 || c.KeptSize != 48000 {
			t.Errorf("%s: kept %d, %d bytes", c.Name, c.Kept, c.KeptSize)
		}
	}
	// Each Ticket holds a seats int[] and an owner String (with its
	// byte[]); nothing else stays up.
	if want := []string{"TicketLeak$Ticket", "byte[]", "int[]", "java.lang.String"}; !reflect.DeepEqual(names, want) {
		t.Errorf("classes %v, want %v", names, want)
	}
	if ex := cl[0].Example; as[2].Classes.Name(ex) != "TicketLeak$Ticket" || cl[0].Counts != [3]int{2000, 4000, 6000} {
		t.Errorf("Ticket: example %d, counts %v", ex, cl[0].Counts)
	}
	// The list holding them moved in the first full GC (0xfc116548, then
	// 0xfc016548): growth follows classes, not that collection.
	g := leak.Growth(as, leak.GrowthOptions{})
	if len(g.Classes) == 0 || g.Classes[0].Name != "TicketLeak$Ticket" || !reflect.DeepEqual(g.Classes[0].Counts, []int{2000, 4000, 6000}) {
		t.Errorf("growth: %+v", g.Classes)
	}
}

// sessionSeries analyses testdata/sessions/chromium-KIND-1..3: snapshots
// of one Chromium page taken in separate inspector sessions ("separate")
// or in one ("session"); see testdata/gen/chromium-sessions.sh.
func sessionSeries(t *testing.T, kind string) []*analysis.Analysis {
	t.Helper()
	var as []*analysis.Analysis
	for _, n := range []string{"1", "2", "3"} {
		as = append(as, analyzeFile(t, "sessions/chromium-"+kind+"-"+n+".heapsnapshot.gz"))
	}
	return as
}

// Three heapx capture --inspect runs against one Chromium page: V8
// numbers each session's snapshot afresh, from the same first id and in
// much the same order, so 74.6% of the first snapshot's objects are
// found in the second under the same id as a node of the same type and
// name (the share test alone took them for one process). Ids of other
// types (7,036 and 16,245 of the sampled ones) and a snapshot numbered in
// order say the ids were reused: every comparison is by class, and
// leaks counts the 1,100 Records the page kept, not objects that merely
// share ids.
func TestCheckSeriesInspectorSessions(t *testing.T) {
	as := sessionSeries(t, "separate")
	s := leak.CheckSeries(as)
	if s.OneProcess() || s.MatchesObjects() || s.Reversed() != nil || s.TakenOrder() != nil {
		t.Fatalf("separate sessions: %+v", s)
	}
	want := []leak.PairCheck{{Sampled: 31454, Found: 31454, Same: 23472, OtherType: 7036},
		{Sampled: 36954, Found: 36954, Same: 18246, OtherType: 16245}}
	for i, p := range s.Pairs {
		w := want[i]
		if p.Sampled != w.Sampled || p.Found != w.Found || p.Same != w.Same || p.OtherType != w.OtherType ||
			!p.Renumbered || !p.IDsReused() || p.OneProcess() || p.MatchesObjects() {
			t.Errorf("pair %d: %+v, want %+v, renumbered, ids reused", i, p, w)
		}
	}
	if sh := s.Pairs[0].SameShare(); sh < leak.StableIDFraction {
		t.Errorf("pair 0 same share %v: the fixture no longer shows what the share alone misses", sh)
	}
	if d := leak.Diff(as[0], as[1]); d.Matching != leak.MatchByClass || d.New != 0 || d.Deleted != 0 {
		t.Errorf("diff: matching %v, new %d, deleted %d", d.Matching, d.New, d.Deleted)
	}
	if lr := leaksOf(as[0], as[1], as[2], leak.LeakOptions{}); lr.Matching != leak.MatchByClass || lr.Clusters != nil {
		t.Errorf("leaks: matching %v, %d clusters", lr.Matching, len(lr.Clusters))
	}
	if g := leak.Growth(as, leak.GrowthOptions{}); g.Matching != leak.MatchByClass || g.Collections != nil {
		t.Errorf("growth: matching %v, %d collections", g.Matching, len(g.Collections))
	}
	found := false
	for _, c := range leak.ClassLeaks(leak.ClassCounts(as[0]), leak.ClassCounts(as[1]), as[2]) {
		if c.Name == "Record" {
			found = c.Kept == 1100 && c.Counts == [3]int{950, 2050, 3100} && as[2].Classes.Name(c.Example) == "Record"
		}
	}
	if !found {
		t.Error("ClassLeaks: no Record kept 1,100 times (950, 2,050, 3,100)")
	}

	// A snapshot of another session that is not its first is not numbered
	// in order; the types of its reused ids still tell.
	mixed := leak.ComparePair(as[2].Graph, sessionSeries(t, "session")[1].Graph)
	if mixed.Renumbered || !mixed.IDsReused() || mixed.OtherType != 3716 || mixed.Found != 38882 {
		t.Errorf("separate-3 then session-2: %+v", mixed)
	}
}

// One session of the same page: the series matches objects although 400
// elements are renamed at every step (their class attribute is in their
// name: 0.8% of the ids found again name the same element under another
// name), and leaks finds the 1,000 Records (and their tags arrays) the
// page kept between the first and the second snapshot.
func TestCheckSeriesOneInspectorSession(t *testing.T) {
	as := sessionSeries(t, "session")
	s := leak.CheckSeries(as)
	if !s.OneProcess() || !s.MatchesObjects() || s.Reversed() != nil || !reflect.DeepEqual(s.TakenOrder(), []int{0, 1, 2}) {
		t.Fatalf("one session: %+v", s)
	}
	for i, p := range s.Pairs {
		if p.OtherType != 0 || p.Renumbered || p.IDsReused() || p.Found-p.Same != 400 {
			t.Errorf("pair %d: %+v", i, p)
		}
	}
	lr := leaksOf(as[0], as[1], as[2], leak.LeakOptions{})
	if lr.Matching != leak.MatchByID || len(lr.Clusters) != 1 {
		t.Fatalf("leaks: matching %v, %d clusters", lr.Matching, len(lr.Clusters))
	}
	cl := lr.Clusters[0]
	want := []leak.LeakClass{{Name: "Record", Count: 1000}, {Name: "Array", Count: 1000}}
	if cl.Objects != 2000 || len(cl.Classes) != 2 || cl.Classes[0].Name != want[0].Name || cl.Classes[0].Count != want[0].Count ||
		cl.Classes[1].Name != want[1].Name || cl.Classes[1].Count != want[1].Count {
		t.Errorf("leak: %d objects, classes %+v", cl.Objects, cl.Classes)
	}
}

func TestClassLeaksNodeFixtures(t *testing.T) {
	as := leakSeries(t)
	cl := leak.ClassLeaks(leak.ClassCounts(as[0]), leak.ClassCounts(as[1]), as[2])
	for _, c := range cl {
		if c.Name == "LeakedItem" {
			if c.Kept != 500 || c.Counts != [3]int{500, 1000, 1500} || c.KeptSize != 28000 || as[2].Classes.Name(c.Example) != "LeakedItem" {
				t.Errorf("LeakedItem %+v", c)
			}
			return
		}
	}
	t.Errorf("no LeakedItem in %+v", cl)
}

// BenchmarkComparePair compares the Firefox medium page (914,460 nodes)
// with itself: every sampled node is found and its type and name
// compared, the most work a pair can take.
func BenchmarkComparePair(b *testing.B) {
	g, err := spidermonkey.ReadFile(filepath.Join(testfixtures.Dir(), "spidermonkey", "ff-medium-page.fxsnapshot"), spidermonkey.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if p := leak.ComparePair(g, g); p.Same != p.Sampled {
			b.Fatalf("%+v", p)
		}
	}
}

// TestDigests checks the digest path the leaks command takes (the
// baseline and the target read into digests, their graphs dropped)
// against the analysed one, on a V8 series of one process, a Java series
// and snapshots of two runtimes: the same series checks, class counts and
// leaks, and a digest that keeps no part of its graph alive.
func TestDigests(t *testing.T) {
	for _, tc := range []struct {
		name string
		as   []*analysis.Analysis
	}{
		{"node leak series", leakSeries(t)},
		{"java ticket series", ticketSeries(t)},
		{"node then java", []*analysis.Analysis{leakSeries(t)[0], ticketSeries(t)[1], ticketSeries(t)[2]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			as := tc.as
			// Digests made from the graphs alone, as cmd/heapx makes them.
			var ds []*leak.Digest
			var prev *leak.Digest
			for _, a := range as[:2] {
				d := leak.NewDigest(a.Graph, prev)
				if !reflect.DeepEqual(d.Classes, leak.ClassCounts(a)) {
					t.Errorf("NewDigest's class counts differ from the analysis'")
				}
				ds, prev = append(ds, d), d
			}
			want, got := leak.CheckSeries(as), leak.CheckDigests(ds, as[2].Graph)
			if !reflect.DeepEqual(want, got) {
				t.Errorf("CheckDigests = %+v\nCheckSeries = %+v", got, want)
			}
			if !want.SameRuntime() {
				return
			}
			if len(want.Pairs) != 2 {
				t.Fatalf("pairs: %+v", want.Pairs)
			}
			full := leaksOf(as[0], as[1], as[2], leak.LeakOptions{})
			digested := leak.Leaks(ds[0], ds[1], as[2], leak.LeakOptions{})
			if !reflect.DeepEqual(full, digested) {
				t.Errorf("Leaks from digests differ: %+v vs %+v", digested, full)
			}
			if !reflect.DeepEqual(leak.ClassLeaks(ds[0].Classes, ds[1].Classes, as[2]),
				leak.ClassLeaks(leak.ClassCounts(as[0]), leak.ClassCounts(as[1]), as[2])) {
				t.Error("ClassLeaks from digests differ")
			}
		})
	}
}

// TestDigestDropsGraph checks that a digest keeps nothing of its graph,
// not even the megabyte string chunks its class names were read into:
// that is what makes `heapx leaks` cost about one snapshot's memory.
func TestDigestDropsGraph(t *testing.T) {
	g := analysistest.LoadFixture(t, "node-leak-1")
	freed := make(chan struct{}, 2)
	cleanup := func(ch chan struct{}) { ch <- struct{}{} }
	runtime.AddCleanup(g, cleanup, freed)
	// A class name, and so the string chunk it is in.
	name := g.NodeName(int32(g.Nodes.ID.Len() - 1))
	if name == "" {
		t.Fatal("the last node has no name")
	}
	runtime.AddCleanup(unsafe.StringData(name), cleanup, freed)
	name = ""
	d := leak.NewDigest(g, nil)
	g = nil
	for n, i := 0, 0; i < 20; i++ {
		runtime.GC()
		select {
		case <-freed:
			if n++; n == 2 {
				if len(d.Classes) == 0 || len(d.Sorted) == 0 {
					t.Fatalf("empty digest: %d classes, %d ids", len(d.Classes), len(d.Sorted))
				}
				return
			}
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("the graph or its strings are still reachable from its digest")
}
