package lifetime

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"testing"

	mt "github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/hostile"
)

var update = flag.Bool("update", false, "rewrite testdata/handler.memtrace (go test ./analysis/lifetime -run TestClientAnalyses -update)")

// handlerFile is handlerTrace as a file, for the command-line tests
// (cmd/heapx) too.
const handlerFile = "testdata/handler.memtrace"

// handlerTrace is the trace of this program, its handler run four times
// from the event loop (an IDLE record after the script and each call):
//
//	1 const cache = [];                      // iid 3 at 1:15
//	2 globalThis.onTick = function () {      // iid 2
//	3   cache.push({ el: 1 });               // iid 4 at 3:14: kept, never used
//	4   const table = {};                    // iid 5 at 4:17: one per call
//	5   const node = { range: [0, 1] };      // iid 6 at 5:16, range iid 7 at 5:26
//	6   table.x = node; node.range[0];
//	7 };
func handlerTrace(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := mt.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	_, base, err := w.Script("/app/handler.js", mt.CommonJS, []mt.Pos{
		{Line: 1, Column: 1}, {Line: 2, Column: 21}, {Line: 1, Column: 15}, {Line: 3, Column: 14},
		{Line: 4, Column: 17}, {Line: 5, Column: 16}, {Line: 5, Column: 26},
	})
	if err != nil {
		t.Fatal(err)
	}
	iid := func(i uint64) uint64 { return base + i }
	evs := []mt.Event{
		{Kind: mt.FreeVars, At: iid(1), Names: []string{"cache"}},
		{Kind: mt.FreeVars, At: iid(2)},
		{Kind: mt.ScriptEnter, At: iid(1), Script: 1, Ctx: 2},                          // 1
		{Kind: mt.CreateObj, At: iid(3), Obj: 2, ObjectKind: mt.ArrayLiteral},          // 2
		{Kind: mt.Declare, At: iid(3), Ctx: 2, Name: "cache", Value: 2},                // 3
		{Kind: mt.CreateFun, At: iid(2), Obj: 3, Ctx: 2},                               // 4
		{Kind: mt.PutField, At: iid(2), Obj: 1, Key: mt.Key{Name: "onTick"}, Value: 3}, // 5
		{Kind: mt.TopLevelFlush, At: iid(1)},                                           // 6
		{Kind: mt.ScriptExit, At: iid(1), Ctx: 2},                                      // 7
		{Kind: mt.Idle, Millis: 40},
	}
	var uses []mt.Event
	obj := uint64(10)
	for k := range uint64(4) {
		ctx := 10 + k
		entry, table, node, rng := obj, obj+1, obj+2, obj+3
		obj += 4
		evs = append(evs,
			mt.Event{Kind: mt.FunctionEnter, At: iid(2), Ctx: ctx, Parent: 2, Obj: 3},
			mt.Event{Kind: mt.CreateObj, At: iid(4), Obj: entry},
			mt.Event{Kind: mt.PutField, At: iid(4), Obj: 2, Key: mt.Key{Kind: mt.KeyIndex, N: k}, Value: entry},
			mt.Event{Kind: mt.CreateObj, At: iid(5), Obj: table},
			mt.Event{Kind: mt.Declare, At: iid(5), Ctx: ctx, Name: "table", Value: table},
			mt.Event{Kind: mt.CreateObj, At: iid(6), Obj: node},
			mt.Event{Kind: mt.CreateObj, At: iid(7), Obj: rng, ObjectKind: mt.ArrayLiteral},
			mt.Event{Kind: mt.PutField, At: iid(6), Obj: node, Key: mt.Key{Name: "range"}, Value: rng},
			mt.Event{Kind: mt.Declare, At: iid(6), Ctx: ctx, Name: "node", Value: node},
			mt.Event{Kind: mt.PutField, At: iid(6), Obj: table, Key: mt.Key{Name: "x"}, Value: node},
			mt.Event{Kind: mt.FunctionExit, At: iid(2), Ctx: ctx},
			mt.Event{Kind: mt.Idle, Millis: 50 + 10*k},
		)
		// Each call is 11 ticks from 8; table, node and range are used
		// at the call's last statement (its tenth tick).
		used := 8 + 11*k + 9
		uses = append(uses, mt.Event{Kind: mt.LastUse, Obj: table, UseTime: used},
			mt.Event{Kind: mt.LastUse, Obj: node, UseTime: used}, mt.Event{Kind: mt.LastUse, Obj: rng, UseTime: used})
	}
	uses = append(uses, mt.Event{Kind: mt.LastUse, Obj: 2, UseTime: 8 + 11*3 + 2})
	evs = append(evs, uses...)
	evs = append(evs, mt.Event{Kind: mt.EndLastUse, UseTime: 51}, mt.Event{Kind: mt.Exit}, mt.Event{Kind: mt.End})
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func siteAt(t *testing.T, res *Result, line, col int) *Site {
	t.Helper()
	for i := range res.Sites {
		if p := res.Sites[i].Pos; p.Line == line && p.Column == col {
			return &res.Sites[i]
		}
	}
	t.Fatalf("no site at %d:%d", line, col)
	return nil
}

func TestClientAnalyses(t *testing.T) {
	trace := handlerTrace(t)
	if *update {
		if err := os.WriteFile(handlerFile, trace, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if old, err := os.ReadFile(handlerFile); err != nil || !bytes.Equal(old, trace) {
		t.Fatalf("%s is not what handlerTrace writes (%v): run with -update", handlerFile, err)
	}
	r, err := mt.NewReader(bytes.NewReader(trace), "handler.memtrace")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyze(r, "handler.memtrace", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.End != 51 || !slices.Equal(res.Idles, []uint64{7, 18, 29, 40, 51}) || !slices.Equal(res.IdleMillis, []uint64{40, 50, 60, 70, 80}) {
		t.Fatalf("end %d, idle points %v at %v ms; want 51 and 7, 18, 29, 40, 51 (after the script and each call)", res.End, res.Idles, res.IdleMillis)
	}
	entry := siteAt(t, res, 3, 14)
	if entry.Count != 4 || entry.AtEnd != 4 || entry.Unused != 4 || !entry.Leaking {
		t.Errorf("cache entries: %+v, want 4 allocated, alive and unused at the end, leaking", entry)
	}
	// The last idle point, the end, is not judged.
	if want := []int{0, 1, 2, 3}; !slices.Equal(entry.StaleAtIdle, want) || entry.Trend.Tau != 1 || entry.Trend.Growth != 3 {
		t.Errorf("cache entries stale at idle points: %v (%+v), want %v, tau 1, growth 3", entry.StaleAtIdle, entry.Trend, want)
	}
	// Entry k is allocated at 9+11k and stale from then to the end (51):
	// 42+31+20+9 ticks.
	if entry.Staleness != 102 || entry.MaxStale != 4 {
		t.Errorf("cache entries: staleness %d, peak stale %d; want 102 and 4", entry.Staleness, entry.MaxStale)
	}
	table := siteAt(t, res, 4, 17)
	if table.Count != 4 || !table.OneAliveAtATime() || !table.AllNonEscaping() || table.Leaking {
		t.Errorf("tables: %+v, want 4, one alive at a time, non-escaping, not leaking", table)
	}
	// Used at the call's last statement, dead at its exit one tick on.
	if table.Staleness != 4 {
		t.Errorf("tables: staleness %d, want 4", table.Staleness)
	}
	rng := siteAt(t, res, 5, 26)
	node := siteAt(t, res, 5, 16)
	// Each table holds its node too, made in the same call and dying
	// with it: the nodes could be inlined into the tables as well.
	if !rng.Inlinable() || rng.OwnerSite != node.IID || !node.Inlinable() || node.OwnerSite != table.IID || table.Inlinable() {
		t.Errorf("ranges %+v (node site %d), nodes %+v (table site %d): want ranges inlinable into nodes, nodes into tables, tables into nothing", rng, node.IID, node, table.IID)
	}
	cache := siteAt(t, res, 1, 15)
	if cache.Leaking || cache.AtEnd != 1 || cache.Staleness != 51-43 {
		t.Errorf("the cache: %+v, want alive, not leaking, stale 8 ticks", cache)
	}
	tl := res.Timeline(51, []int32{res.SiteIndex(entry.IID)})
	// At time 32, in the third call (from 30) after its entry (31): the
	// cache, the handler and three entries are alive; the entries (the
	// third since 31) and the handler, never used, are stale; the cache is
	// used again at 43.
	if tl.Times[31] != 32 || tl.Alive[31] != 5 || tl.SiteStale[0][31] != 3 || tl.Stale[31] != 4 {
		t.Errorf("timeline at %d: alive %d, stale %d, stale entries %d; want at 32: 5, 4 and 3", tl.Times[31], tl.Alive[31], tl.Stale[31], tl.SiteStale[0][31])
	}
	if calls := res.CallTree(table.IID); len(calls) != 1 || calls[0].Count != 4 || len(calls[0].Calls) != 1 {
		t.Errorf("call tree of the tables: %+v, want 4 under one call", calls)
	}
}

// TestLeakTrend: the leak rule on stale counts of the shapes servers and
// async programs give: steady growth, growth in steps (plateaus), growth
// with dips (some leaked objects freed now and then) and noise are leaks;
// a cache that filled and stayed, a sawtooth (a cache cleared now and
// then), a flat count, a count that fell, too little growth and too few
// points are not.
func TestLeakTrend(t *testing.T) {
	series := func(n int, f func(i int) int) []int {
		xs := make([]int, n)
		for i := range xs {
			xs[i] = f(i)
		}
		return xs
	}
	for _, c := range []struct {
		name string
		xs   []int
		leak bool
	}{
		{"one per idle point", series(100, func(i int) int { return i }), true},
		{"one per request, four requests per idle point", series(300, func(i int) int { return 4 * i }), true},
		{"steps of 20 idle points", series(200, func(i int) int { return 5 * (i / 20) }), true},
		{"three steps", series(60, func(i int) int { return 10 * (i / 20) }), true},
		{"dips: a tenth freed every 10 points", series(200, func(i int) int { return i - (i/10)%2*(i/10) }), true},
		{"noisy growth", series(200, func(i int) int { return i/4 + []int{0, 7, 2, 9, 1, 5}[i%6] }), true},
		{"four idle points, one more each", []int{0, 1, 2, 3}, true},
		{"a cache of 50 filled in the first third", series(300, func(i int) int { return min(50, i/2) }), false},
		{"a cache cleared every 25 points", series(300, func(i int) int { return i % 25 }), false},
		{"in-flight requests: 0 to 3 at random", series(300, func(i int) int { return (i * 7919) % 4 }), false},
		{"flat", series(100, func(int) int { return 12 }), false},
		{"falling", series(100, func(i int) int { return 100 - i }), false},
		{"two objects more in a long run", series(300, func(i int) int { return 10 + i/150*2 }), false},
		{"three idle points", []int{0, 5, 10}, false},
	} {
		at := make([]int, len(c.xs))
		for i := range at {
			at[i] = 2 * i // every other idle point judged
		}
		tr := LeakTrend(c.xs, at)
		if tr.Leaking != c.leak {
			t.Errorf("%s: leaking %v (%+v), want %v", c.name, tr.Leaking, tr, c.leak)
		}
	}
	// The slope is per idle point: one object every other point.
	if tr := LeakTrend([]int{0, 1, 2, 3, 4, 5}, []int{0, 2, 4, 6, 8, 10}); tr.Slope != 0.5 || tr.Growth != 5 || tr.Tau != 1 {
		t.Errorf("linear: %+v, want slope 0.5, growth 5, tau 1", tr)
	}
}

// TestJudgedIdles: the idle points the rule judges leave out the end and
// are at most LeakSamples, spread from the first to the last.
func TestJudgedIdles(t *testing.T) {
	idles := make([]uint64, 1001)
	for i := range idles {
		idles[i] = uint64(10 * (i + 1))
	}
	j := judgedIdles(idles, idles[1000])
	if len(j) != LeakSamples || j[0] != 0 || j[len(j)-1] != 999 || !slices.IsSorted(j) {
		t.Errorf("judged %d points from %d to %d, want %d from 0 to 999, increasing", len(j), j[0], j[len(j)-1], LeakSamples)
	}
	if j := judgedIdles(idles[:3], 1000); !slices.Equal(j, []int{0, 1, 2}) {
		t.Errorf("three idle points before the end: judged %v", j)
	}
}

// TestSharedStaleCounts analyses 20,000 sites, each an object made by a
// handler call and kept (hostile.TraceIdleSites): their stale counts step
// from 0 to 1 at 256 judged idle points, so they share a few hundred
// series, each measured once by the leak rule; every site's trend is
// the rule's on its own counts, none leaks (one object each), and the
// analysis allocates for the sites, not for 10,000 quadratic measures of
// 32,640 slopes.
func TestSharedStaleCounts(t *testing.T) {
	var b bytes.Buffer
	if err := hostile.TraceIdleSites(&b, 20_000); err != nil {
		t.Fatal(err)
	}
	var res *Result
	var err error
	alloc := hostile.Allocated(func() {
		var r *mt.Reader
		if r, err = mt.NewReader(&b, "idle-sites.hxtrace"); err == nil {
			res, err = Analyze(r, "idle-sites.hxtrace", Options{})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d sites, %d judged points, %d MB allocated", len(res.Sites), len(res.Judged), alloc>>20)
	if len(res.Judged) != LeakSamples || len(res.Sites) < 20_000 || alloc > 200<<20 {
		t.Errorf("%d judged points, %d sites, %d MB allocated", len(res.Judged), len(res.Sites), alloc>>20)
	}
	rising := 0
	for i := range res.Sites {
		s := &res.Sites[i]
		if s.Leaking {
			t.Errorf("site %d leaks: %+v", s.IID, s.Trend)
		}
		if s.Trend.Rising {
			rising++
		}
		if i%97 == 0 && len(s.StaleAtIdle) > 0 && s.Trend != LeakTrend(s.StaleAtIdle, res.Judged) {
			t.Errorf("site %d: trend %+v, its counts' %+v", s.IID, s.Trend, LeakTrend(s.StaleAtIdle, res.Judged))
		}
	}
	if rising < 5_000 {
		t.Errorf("%d sites rising, want the half stale from the second quarter on", rising)
	}
}
