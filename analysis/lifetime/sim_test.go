package lifetime

import (
	"testing"

	mt "github.com/heapx/heapx/formats/memtrace"
)

// The tests' traces run in one script, whose context is 2 (iid 1000);
// calls get contexts from 3 up. Ticks: the script enters at time 0, then
// every program event takes the next time from 1, as the trace's clock
// does.
const script = 2

func obj(id, site uint64) mt.Event { return mt.Event{Kind: mt.CreateObj, Obj: id, At: site} }
func fun(id, fn, ctx uint64) mt.Event {
	return mt.Event{Kind: mt.CreateFun, Obj: id, At: fn, Ctx: ctx}
}
func put(base uint64, name string, val uint64) mt.Event {
	return mt.Event{Kind: mt.PutField, Obj: base, Key: mt.Key{Name: name}, Value: val}
}
func decl(ctx uint64, name string, val uint64) mt.Event {
	return mt.Event{Kind: mt.Declare, Ctx: ctx, Name: name, Value: val}
}
func wr(ctx uint64, name string, val uint64) mt.Event {
	return mt.Event{Kind: mt.Write, Ctx: ctx, Name: name, Value: val}
}
func enter(ctx, parent, fn, fnObj uint64) mt.Event {
	return mt.Event{Kind: mt.FunctionEnter, Ctx: ctx, Parent: parent, At: fn, Obj: fnObj}
}
func exit(ctx uint64) mt.Event    { return mt.Event{Kind: mt.FunctionExit, Ctx: ctx} }
func suspend(ctx uint64) mt.Event { return mt.Event{Kind: mt.Suspend, Ctx: ctx} }
func resume(ctx uint64) mt.Event  { return mt.Event{Kind: mt.Resume, Ctx: ctx} }
func flush() mt.Event             { return mt.Event{Kind: mt.TopLevelFlush} }
func freeVars(fn uint64, names ...string) mt.Event {
	return mt.Event{Kind: mt.FreeVars, At: fn, Names: names}
}

// run feeds evs after a script's SCRIPT_ENTER, each program event at the
// next tick from 1, then ends the trace one tick after the last.
func run(t *testing.T, s *Simulator, evs []mt.Event) uint64 {
	t.Helper()
	start := mt.Event{Kind: mt.ScriptEnter, At: 1000, Ctx: script}
	if err := s.Apply(&start); err != nil {
		t.Fatal(err)
	}
	var now uint64
	for i := range evs {
		ev := evs[i]
		switch {
		case !ev.Kind.IsEvent():
			ev.Time = now
		case ev.Time == 0:
			now++
			ev.Time = now
		default:
			now = ev.Time
		}
		if err := s.Apply(&ev); err != nil {
			t.Fatal(err)
		}
	}
	end := mt.Event{Kind: mt.End, Time: now + 1}
	if err := s.Apply(&end); err != nil {
		t.Fatal(err)
	}
	return now + 1
}

func newSim(limit int) (*Simulator, map[uint64]Lifetime) {
	got := map[uint64]Lifetime{}
	s := NewSimulator(func(l *Lifetime) {
		if _, dup := got[l.ID]; dup {
			panic("object reported twice")
		}
		got[l.ID] = *l
	})
	s.CycleQueueLimit = limit
	s.InlineUses = true
	return s, got
}

func wantDead(t *testing.T, got map[uint64]Lifetime, id, at uint64) {
	t.Helper()
	l, ok := got[id]
	if !ok {
		t.Fatalf("object %d: no lifetime reported", id)
	}
	if l.AtEnd || l.Unreachable != at {
		t.Errorf("object %d: unreachable at %d (alive at end: %v), want %d", id, l.Unreachable, l.AtEnd, at)
	}
}

func wantAlive(t *testing.T, got map[uint64]Lifetime, id uint64) {
	t.Helper()
	if l, ok := got[id]; !ok || !l.AtEnd {
		t.Errorf("object %d: %+v, want alive at the end", id, l)
	}
}

// The paper's Fig. 5: x = {}; y = {}; function m(p, q) { p.f = q };
// m(x, y); x = null. Object 2 dies at the write of null (time 15); 3 is
// still held by y, and m by its variable.
func TestPaperFigure5(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, []mt.Event{
		freeVars(7),                              // m captures nothing
		obj(2, 1), decl(script, "x", 2), flush(), // 1-3
		obj(3, 2), decl(script, "y", 3), flush(), // 4-6
		fun(4, 7, script), decl(script, "m", 4), flush(), // 7-9
		enter(3, script, 7, 4), decl(3, "p", 2), decl(3, "q", 3), // 10-12
		put(2, "f", 3), exit(3), flush(), // 13-15
		wr(script, "x", 0), flush(), // 16-17
	})
	wantDead(t, got, 2, 16)
	wantAlive(t, got, 3)
	wantAlive(t, got, 4)
	if len(got) != 3 {
		t.Errorf("%d objects reported, want 3", len(got))
	}
}

// The paper's §3.2 closure example: f's y is captured by no closure, so
// its object dies when f returns; x is captured by set and get, so its
// object lives until r.set(null).
func TestClosureSealing(t *testing.T) {
	const fnF, fnSet, fnGet = 1, 2, 3
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, []mt.Event{
		freeVars(fnF, "x"), freeVars(fnSet), freeVars(fnGet),
		fun(10, fnF, script), decl(script, "f", 10), // 1-2
		enter(3, script, fnF, 10),    // 3
		obj(11, 0), decl(3, "x", 11), // 4-5 o1
		obj(12, 0), decl(3, "y", 12), // 6-7 o2
		obj(13, 0),                            // 8 the returned object
		fun(14, fnSet, 3), put(13, "set", 14), // 9-10
		fun(15, fnGet, 3), put(13, "get", 15), // 11-12
		{Kind: mt.Return, Ctx: 3, Value: 13}, exit(3), decl(script, "r", 13), flush(), // 13-16
		enter(4, 3, fnSet, 14), decl(4, "z", 0), wr(3, "x", 0), exit(4), flush(), // 17-21
	})
	wantDead(t, got, 12, 14) // y: sealed at f's exit
	wantDead(t, got, 11, 19) // x: overwritten through set's closure
	for _, id := range []uint64{10, 13, 14, 15} {
		wantAlive(t, got, id)
	}
	if !got[12].NonEscaping || got[13].NonEscaping {
		t.Errorf("non-escaping: y's object %v (want true), the returned object %v (want false)", got[12].NonEscaping, got[13].NonEscaping)
	}
}

// A cycle a <-> b held by two globals dies when the later of them lets go,
// with what only it holds, even though the cycle queue is swept long
// after (at the end): Merlin's timestamps.
func TestCycleMerlinTimes(t *testing.T) {
	for _, limit := range []int{0, DefaultCycleQueueLimit} {
		s, got := newSim(limit)
		run(t, s, []mt.Event{
			obj(2, 0), decl(script, "g1", 2), // 1-2 a
			obj(3, 0), decl(script, "g2", 3), // 3-4 b
			put(2, "b", 3), put(3, "a", 2), // 5-6
			obj(4, 0), put(2, "c", 4), flush(), // 7-9 c, only a holds it
			obj(5, 0), put(3, "d", 5), decl(script, "g3", 5), // 10-12 d, also global
			wr(script, "g1", 0), flush(), // 13-14
			wr(script, "g2", 0), flush(), // 15-16
			obj(6, 0), flush(), // 17-18 a temporary
			wr(script, "g3", 0), flush(), // 19-20
		})
		wantDead(t, got, 2, 15)
		wantDead(t, got, 3, 15)
		wantDead(t, got, 4, 15)
		wantDead(t, got, 5, 19)
		wantDead(t, got, 6, 17)
	}
}

// Two cycles, the outer one pointing into the inner one, which a global
// also holds. The outer one dies first (at 13); the inner one when the
// global lets go (at 15), though the sweep meets it from the outer one.
func TestCycleIntoLaterGarbage(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, []mt.Event{
		obj(2, 0), obj(3, 0), // 1-2 inner cycle
		put(2, "n", 3), put(3, "n", 2), // 3-4
		decl(script, "inner", 2), flush(), // 5-6
		obj(4, 0), obj(5, 0), // 7-8 outer cycle
		put(4, "n", 5), put(5, "n", 4), put(4, "in", 2), // 9-11
		decl(script, "outer", 4), wr(script, "outer", 0), flush(), // 12-14
		wr(script, "inner", 0), flush(), // 15-16
	})
	wantDead(t, got, 2, 15)
	wantDead(t, got, 3, 15)
	wantDead(t, got, 4, 13)
	wantDead(t, got, 5, 13)
}

// Last uses reported in blocks after the fact (MemInsight's default)
// reach the records of objects already dead; a record is handed on only
// once a block covers its death.
func TestLastUseBlocks(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	s.InlineUses = false
	evs := []mt.Event{
		{Kind: mt.ScriptEnter, At: 1000, Ctx: script},
		obj(2, 0), decl(script, "v", 2), // 1-2
		obj(3, 0), put(2, "k", 3), // 3-4
		wr(script, "v", 0), flush(), // 5-6: both die at 5
	}
	for i := range evs {
		evs[i].Time = uint64(i)
		if err := s.Apply(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 0 {
		t.Fatalf("records handed on before their last uses were known: %v", got)
	}
	for _, ev := range []mt.Event{
		{Kind: mt.LastUse, Obj: 2, UseTime: 4}, {Kind: mt.LastUse, Obj: 3, UseTime: 3},
		{Kind: mt.EndLastUse, UseTime: 6},
	} {
		ev.Time = 6
		if err := s.Apply(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if got[2].LastUse != 4 || got[3].LastUse != 3 || got[2].Unreachable != 5 || got[3].Unreachable != 5 {
		t.Errorf("got %+v, want 2 used last at 4, 3 at 3, both dead at 5", got)
	}
	if st := got[2].StaleSince(); st != 4 {
		t.Errorf("2 stale since %d, want 4", st)
	}
}

// A generator's context outlives its suspension; its completion seals it.
func TestGeneratorContexts(t *testing.T) {
	const gen = 5
	s, got := newSim(0)
	run(t, s, []mt.Event{
		freeVars(gen),
		fun(10, gen, script), decl(script, "g", 10), // 1-2
		obj(11, 0), decl(script, "it", 11), // 3-4 the generator object
		enter(3, script, gen, 10), obj(12, 0), decl(3, "local", 12), // 5-7
		suspend(3), flush(), // 8-9: local lives on
		resume(3), exit(3), flush(), // 10-12: sealed at completion
	})
	wantDead(t, got, 12, 11)
	wantAlive(t, got, 11)
}

// An object allocated with another in the same call, pointed to only by
// it and dying with it, is an inlining candidate; one with two owners is
// not.
func TestOwnership(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, []mt.Event{
		freeVars(1),
		fun(9, 1, script), decl(script, "parse", 9), // 1-2
		enter(3, script, 1, 9),                       // 3
		obj(2, 100), obj(3, 101), put(2, "range", 3), // 4-6
		obj(4, 100), obj(5, 101), put(4, "range", 5), // 7-9
		put(2, "other", 5),                      // 10: 5 has two owners
		wr(script, "ast", 2), decl(3, "tmp", 4), // 11-12
		exit(3), flush(), // 13-14
		wr(script, "ast", 0), flush(), // 15-16
		enter(4, script, 1, 9), obj(7, 100), obj(8, 101), put(7, "range", 8), wr(script, "kept", 7), exit(4), // 17-22
	})
	if l := got[3]; !l.Owned || l.OwnerSite != 100 || l.Unreachable != 15 {
		t.Errorf("range of the kept node: %+v, want owned by site 100, dead at 15", l)
	}
	if l := got[5]; l.Owned {
		t.Errorf("range with two owners: %+v, want not owned", l)
	}
	// Node 7 and its range 8 are both alive at the end: they die
	// together too.
	if l := got[8]; !l.Owned || !l.AtEnd || l.OwnerSite != 100 {
		t.Errorf("range of a node alive at the end: %+v, want owned by site 100", l)
	}
	wantDead(t, got, 4, 13)
	if !got[4].NonEscaping || got[2].NonEscaping {
		t.Errorf("non-escaping: tmp %v (want true), ast %v (want false)", got[4].NonEscaping, got[2].NonEscaping)
	}
}

// Objects the trace never saw allocated are allocated where first seen;
// Map entries hold their keys and values until deleted or cleared.
func TestUnseenAndMaps(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	set := func(coll, key uint64, name string, val uint64) mt.Event {
		k := mt.Key{Kind: mt.KeyObject, N: key}
		if key == 0 {
			k = mt.Key{Kind: mt.KeyName, Name: name}
		}
		return mt.Event{Kind: mt.CollSet, Obj: coll, Key: k, Value: val}
	}
	run(t, s, []mt.Event{
		{Kind: mt.Declare, Ctx: script, Name: "m", Value: 20, At: 3}, // 1: a Map made by native code
		obj(2, 0), obj(3, 0), obj(4, 0), // 2-4
		set(20, 2, "", 3), set(20, 0, `"s"`, 2), set(20, 0, `"t"`, 4), flush(), // 5-8
		{Kind: mt.CollDelete, Obj: 20, Key: mt.Key{Kind: mt.KeyObject, N: 2}}, flush(), // 9-10: 3 dies, 2 still held under "s"
		{Kind: mt.CollClear, Obj: 20}, flush(), // 11-12
	})
	if s.FirstSeenLate != 1 {
		t.Errorf("%d objects first seen late, want 1", s.FirstSeenLate)
	}
	if l := got[20]; l.Site != 3 || l.Alloc != 1 || !l.AtEnd {
		t.Errorf("the map: %+v, want allocated at site 3, time 1, alive", l)
	}
	wantDead(t, got, 3, 9)
	wantDead(t, got, 2, 11)
	wantDead(t, got, 4, 11)
}

// A temporary stored before the flush lives; one never stored dies at
// its allocation, or at its last use.
func TestTemporaries(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, []mt.Event{
		obj(2, 0), obj(3, 0), obj(4, 0), {Kind: mt.LastUse, Obj: 3, UseTime: 3}, // 1-3
		decl(script, "v", 2), flush(), // 4-5
	})
	wantAlive(t, got, 2)
	wantDead(t, got, 3, 3)
	wantDead(t, got, 4, 3)
}

func TestBadTraces(t *testing.T) {
	s, _ := newSim(0)
	if err := s.Apply(&mt.Event{Kind: mt.FunctionExit, Ctx: 5, Time: 1}); err == nil {
		t.Error("an exit of a context never entered was accepted")
	}
	if err := s.Apply(&mt.Event{Kind: mt.TopLevelFlush, Time: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(&mt.Event{Kind: mt.TopLevelFlush, Time: 4}); err == nil {
		t.Error("time going backwards was accepted")
	}
	if err := s.Apply(&mt.Event{Kind: mt.Resume, Ctx: 9, Time: 6}); err == nil {
		t.Error("resuming what never ran was accepted")
	}
}

// TestRevived: an object found unreachable that the trace shows again (a
// promise's value held by native code, then caught) is counted anew where
// it was seen again, as revived and not as made by untraced code.
func TestRevived(t *testing.T) {
	var got []Lifetime
	s := NewSimulator(func(l *Lifetime) { got = append(got, *l) })
	s.InlineUses = true
	run(t, s, []mt.Event{
		obj(5, 10), flush(), // made at 10, held by nothing: dead
		put(mt.GlobalObject, "err", 5),               // seen again
		obj(6, 11), put(mt.GlobalObject, "other", 7), // 7: first seen here, made by untraced code
	})
	if len(got) != 4 || s.Revived != 1 {
		t.Fatalf("lifetimes %+v, %d revived; want 4 records, one revived", got, s.Revived)
	}
	for _, l := range got {
		switch {
		case l.ID == 5 && l.AtEnd && (!l.Revived || l.Late):
			t.Errorf("the second life of 5: %+v, want revived, not late", l)
		case l.ID == 5 && !l.AtEnd && (l.Revived || l.Site != 10):
			t.Errorf("the first life of 5: %+v, want made at 10", l)
		case l.ID == 7 && (!l.Late || l.Revived):
			t.Errorf("7: %+v, want late, not revived", l)
		}
	}
}
