package lifetime

import (
	"testing"
)

// run feeds evs, each at its own tick from 1, then ends the trace one tick
// after the last, and returns every object's lifetime by id.
func run(t *testing.T, s *Simulator, got map[uint64]Lifetime, evs []Event) uint64 {
	t.Helper()
	var now uint64
	for i := range evs {
		switch {
		case evs[i].Kind.metadata():
			if evs[i].Time == 0 {
				evs[i].Time = now
			}
		case evs[i].Time == 0:
			now++
			evs[i].Time = now
		default:
			now = evs[i].Time
		}
		if err := s.Apply(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	s.End(now + 1)
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
// m(x, y); x = null. Object 2 dies at the write of null (time 13); 3 is
// still held by y, and m by its variable.
func TestPaperFigure5(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, got, []Event{
		{Kind: FreeVars, Fn: 7},                                                            // m captures nothing
		{Kind: Declare, Name: "x"}, {Kind: Declare, Name: "y"}, {Kind: Declare, Name: "m"}, // 1-3
		{Kind: Alloc, Obj: 2, Site: 1}, {Kind: Write, Name: "x", Val: 2}, {Kind: Flush}, // 4-6
		{Kind: Alloc, Obj: 3, Site: 2}, {Kind: Write, Name: "y", Val: 3}, {Kind: Flush}, // 7-9
		{Kind: AllocFunction, Obj: 4, Fn: 7, Site: 3}, {Kind: Write, Name: "m", Val: 4}, // 10-11
		{Kind: Call, Obj: 4, Site: 7}, {Kind: Declare, Name: "p", Val: 2}, {Kind: Declare, Name: "q", Val: 3}, // 12-14
		{Kind: PutField, Obj: 2, Name: "f", Val: 3}, {Kind: Exit}, {Kind: Flush}, // 15-17
		{Kind: Write, Name: "x", Val: 0}, {Kind: Flush}, // 18-19
	})
	wantDead(t, got, 2, 18)
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
	run(t, s, got, []Event{
		{Kind: FreeVars, Fn: fnF, Names: []string{"x"}},
		{Kind: AllocFunction, Obj: 10, Fn: fnF}, {Kind: Write, Name: "f", Val: 10}, // 1-2
		{Kind: Call, Obj: 10},                                       // 3
		{Kind: Alloc, Obj: 11}, {Kind: Declare, Name: "x", Val: 11}, // 4-5 o1
		{Kind: Alloc, Obj: 12}, {Kind: Declare, Name: "y", Val: 12}, // 6-7 o2
		{Kind: Alloc, Obj: 13},                                                                     // 8 the returned object
		{Kind: AllocFunction, Obj: 14, Fn: fnSet}, {Kind: PutField, Obj: 13, Name: "set", Val: 14}, // 9-10
		{Kind: AllocFunction, Obj: 15, Fn: fnGet}, {Kind: PutField, Obj: 13, Name: "get", Val: 15}, // 11-12
		{Kind: Exit}, {Kind: Write, Name: "r", Val: 13}, {Kind: Flush}, // 13-15
		{Kind: Call, Obj: 14}, {Kind: Declare, Name: "z"}, {Kind: Write, Name: "x"}, {Kind: Exit}, {Kind: Flush}, // 16-20
	})
	wantDead(t, got, 12, 13) // y: sealed at f's exit
	wantDead(t, got, 11, 18) // x: overwritten through set's closure
	for _, id := range []uint64{10, 13, 14, 15} {
		wantAlive(t, got, id)
	}
	if got[12].NonEscaping != true || got[13].NonEscaping {
		t.Errorf("non-escaping: y's object %v (want true), the returned object %v (want false)", got[12].NonEscaping, got[13].NonEscaping)
	}
}

// A cycle a <-> b held by two globals dies when the later of them lets go,
// with what only it holds, even though the cycle queue is swept long
// after (at the end): Merlin's timestamps.
func TestCycleMerlinTimes(t *testing.T) {
	for _, limit := range []int{0, DefaultCycleQueueLimit} {
		s, got := newSim(limit)
		run(t, s, got, []Event{
			{Kind: Alloc, Obj: 2}, {Kind: Write, Name: "g1", Val: 2}, // 1-2 a
			{Kind: Alloc, Obj: 3}, {Kind: Write, Name: "g2", Val: 3}, // 3-4 b
			{Kind: PutField, Obj: 2, Name: "b", Val: 3}, {Kind: PutField, Obj: 3, Name: "a", Val: 2}, // 5-6
			{Kind: Alloc, Obj: 4}, {Kind: PutField, Obj: 2, Name: "c", Val: 4}, {Kind: Flush}, // 7-9 c, only a holds it
			{Kind: Alloc, Obj: 5}, {Kind: PutField, Obj: 3, Name: "d", Val: 5}, {Kind: Write, Name: "g3", Val: 5}, // 10-12 d, also global
			{Kind: Write, Name: "g1"}, {Kind: Flush}, // 13-14
			{Kind: Write, Name: "g2"}, {Kind: Flush}, // 15-16
			{Kind: Alloc, Obj: 6}, {Kind: Flush}, // 17-18 a temporary
			{Kind: Write, Name: "g3"}, {Kind: Flush}, // 19-20
		})
		wantDead(t, got, 2, 15)
		wantDead(t, got, 3, 15)
		wantDead(t, got, 4, 15)
		wantDead(t, got, 5, 19)
		wantDead(t, got, 6, 17)
	}
}

// Two dead cycles, one pointing into the other: the inner one died first
// (its last outside reference went at 6) and keeps that time, though the
// sweep reaches it from the outer one (dead at 10).
func TestCycleIntoEarlierGarbage(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, got, []Event{
		{Kind: Alloc, Obj: 2}, {Kind: Alloc, Obj: 3}, // 1-2 inner cycle
		{Kind: PutField, Obj: 2, Name: "n", Val: 3}, {Kind: PutField, Obj: 3, Name: "n", Val: 2}, // 3-4
		{Kind: Write, Name: "inner", Val: 2}, {Kind: Write, Name: "inner"}, // 5-6: unreachable at 6
		{Kind: Alloc, Obj: 4}, {Kind: Alloc, Obj: 5}, // 7-8 outer cycle, about to point into the inner one
		{Kind: PutField, Obj: 4, Name: "n", Val: 5}, {Kind: PutField, Obj: 5, Name: "n", Val: 4}, // 9-10
		{Kind: Write, Name: "outer", Val: 4}, {Kind: Write, Name: "outer"}, {Kind: Flush}, // 11-13
	})
	wantDead(t, got, 2, 6)
	wantDead(t, got, 3, 6)
	wantDead(t, got, 4, 12)
	wantDead(t, got, 5, 12)
}

// Last uses reported in blocks after the fact (MemInsight's default)
// reach the records of objects already dead; a record is handed on only
// once a block covers its death.
func TestLastUseBlocks(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	s.InlineUses = false
	evs := []Event{
		{Kind: Alloc, Obj: 2}, {Kind: Write, Name: "v", Val: 2}, // 1-2
		{Kind: Alloc, Obj: 3}, {Kind: PutField, Obj: 2, Name: "k", Val: 3}, // 3-4
		{Kind: Write, Name: "v"}, {Kind: Flush}, // 5-6: both die at 5
	}
	run2 := func(evs []Event) {
		for i := range evs {
			if err := s.Apply(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range evs {
		evs[i].Time = uint64(i + 1)
	}
	run2(evs)
	if len(got) != 0 {
		t.Fatalf("records handed on before their last uses were known: %v", got)
	}
	run2([]Event{
		{Kind: LastUse, Obj: 2, Time: 4}, {Kind: LastUse, Obj: 3, Time: 3}, {Kind: LastUse, Obj: 2, Time: 2},
		{Kind: LastUseEnd, Time: 6},
	})
	if got[2].LastUse != 4 || got[3].LastUse != 3 || got[2].Unreachable != 5 || got[3].Unreachable != 5 {
		t.Errorf("got %+v, want 2 used last at 4, 3 at 3, both dead at 5", got)
	}
	if st := got[2].StaleSince(); st != 4 {
		t.Errorf("2 stale since %d, want 4", st)
	}
}

// A generator's context outlives its suspension, held by the generator
// object; completion seals it. An abandoned generator takes its context
// and locals with it.
func TestGeneratorContexts(t *testing.T) {
	const gen = 5
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, got, []Event{
		{Kind: FreeVars, Fn: gen},
		{Kind: AllocFunction, Obj: 10, Fn: gen}, {Kind: Write, Name: "g", Val: 10}, // 1-2
		{Kind: Alloc, Obj: 11}, {Kind: Write, Name: "it", Val: 11}, // 3-4 the generator object
		{Kind: Call, Obj: 10}, {Kind: Alloc, Obj: 12}, {Kind: Declare, Name: "local", Val: 12}, // 5-7
		{Kind: Suspend, Obj: 11}, {Kind: Flush}, // 8-9: local lives on
		{Kind: Resume, Obj: 11}, {Kind: Exit}, {Kind: Flush}, // 10-12: sealed at completion
		{Kind: Alloc, Obj: 13}, {Kind: Write, Name: "it2", Val: 13}, // 13-14 a second generator
		{Kind: Call, Obj: 10}, {Kind: Alloc, Obj: 14}, {Kind: Declare, Name: "local", Val: 14}, // 15-17
		{Kind: Suspend, Obj: 13}, {Kind: Flush}, // 18-19
		{Kind: Write, Name: "it2"}, {Kind: Flush}, // 20-21: abandoned
	})
	wantDead(t, got, 12, 11)
	wantDead(t, got, 13, 20)
	wantDead(t, got, 14, 20)
	wantAlive(t, got, 11)
}

// An object allocated with another in the same call, pointed to only by
// it and dying with it, is an inlining candidate; one with two owners is
// not.
func TestOwnership(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, got, []Event{
		{Kind: AllocFunction, Obj: 9, Fn: 1}, {Kind: Write, Name: "parse", Val: 9}, // 1-2
		{Kind: Call, Obj: 9},                                                                                                // 3
		{Kind: Alloc, Obj: 2, Site: 100}, {Kind: Alloc, Obj: 3, Site: 101}, {Kind: PutField, Obj: 2, Name: "range", Val: 3}, // 4-6
		{Kind: Alloc, Obj: 4, Site: 100}, {Kind: Alloc, Obj: 5, Site: 101}, {Kind: PutField, Obj: 4, Name: "range", Val: 5}, // 7-9
		{Kind: PutField, Obj: 2, Name: "other", Val: 5},                          // 10: 5 has two owners
		{Kind: Write, Name: "ast", Val: 2}, {Kind: Declare, Name: "tmp", Val: 4}, // 11-12
		{Kind: Exit}, {Kind: Flush}, // 13-14
		{Kind: Write, Name: "ast"}, {Kind: Flush}, // 15-16
	})
	if l := got[3]; !l.Owned || l.OwnerSite != 100 || l.Unreachable != 15 {
		t.Errorf("range of the kept node: %+v, want owned by site 100, dead at 15", l)
	}
	if l := got[5]; l.Owned {
		t.Errorf("range with two owners: %+v, want not owned", l)
	}
	wantDead(t, got, 4, 13)
	if !got[4].NonEscaping || got[2].NonEscaping {
		t.Errorf("non-escaping: tmp %v (want true), ast %v (want false)", got[4].NonEscaping, got[2].NonEscaping)
	}
}

// Objects the trace never saw allocated are allocated where first seen;
// Map entries hold their keys and values until deleted.
func TestUnseenAndMaps(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, got, []Event{
		{Kind: Write, Name: "m", Val: 20, Site: 3},   // 1: a Map made by native code
		{Kind: Alloc, Obj: 2}, {Kind: Alloc, Obj: 3}, // 2-3
		{Kind: MapSet, Obj: 20, Key: 2, Val: 3}, {Kind: MapSet, Obj: 20, Name: "s", Val: 2}, {Kind: Flush}, // 4-6
		{Kind: MapSet, Obj: 20, Key: 2}, {Kind: Flush}, // 7-8: 3 dies, 2 still held under "s"
		{Kind: MapSet, Obj: 20, Name: "s"}, {Kind: Flush}, // 9-10
	})
	if s.Unseen != 1 {
		t.Errorf("%d objects first seen at a write, want 1", s.Unseen)
	}
	if l := got[20]; l.Site != 3 || l.Alloc != 1 || !l.AtEnd {
		t.Errorf("the map: %+v, want allocated at site 3, time 1, alive", l)
	}
	wantDead(t, got, 3, 7)
	wantDead(t, got, 2, 9)
}

// A temporary stored before the flush lives; one never stored dies at
// its allocation.
func TestTemporaries(t *testing.T) {
	s, got := newSim(DefaultCycleQueueLimit)
	run(t, s, got, []Event{
		{Kind: Alloc, Obj: 2}, {Kind: Alloc, Obj: 3}, {Kind: Alloc, Obj: 4}, {Kind: LastUse, Obj: 3}, // 1-3
		{Kind: Write, Name: "v", Val: 2}, {Kind: Flush}, // 4-5
	})
	wantAlive(t, got, 2)
	wantDead(t, got, 3, 3) // used at 3, when object 4 was allocated
	wantDead(t, got, 4, 3)
}

func TestBadTraces(t *testing.T) {
	s, _ := newSim(0)
	if err := s.Apply(&Event{Kind: Exit, Time: 1}); err == nil {
		t.Error("an exit with nothing running was accepted")
	}
	if err := s.Apply(&Event{Kind: Flush, Time: 5}); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(&Event{Kind: Flush, Time: 4}); err == nil {
		t.Error("time going backwards was accepted")
	}
	if err := s.Apply(&Event{Kind: Resume, Obj: 9, Time: 6}); err == nil {
		t.Error("resuming what never suspended was accepted")
	}
}
