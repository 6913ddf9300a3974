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
		a, err = analysis.Analyze(analysistest.LoadFixture(t, filepath.Base(path[:len(path)-len(".heapsnapshot.gz")])), analysis.Options{})
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
