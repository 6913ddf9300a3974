// Package lifetime is MemInsight's lifetime analysis (Jensen et al., FSE
// 2015, §3.2) for heapx traces: it rebuilds the heap graph of a traced
// program from its allocations, field and variable writes, calls and
// returns, and says for every object when it was allocated, when it was
// last used and when it became unreachable, exactly, without any help from
// a garbage collector.
//
// The heap is simulated with reference counts. Variables live in context
// nodes arranged as a cactus stack: a call's context points to the context
// its function was defined in, and a function object points to the context
// it closes over. When a function returns, its context is sealed: the
// bindings no nested closure captures (the trace's free-variable lists) are
// dropped, as V8 keeps only captured variables in a context. Generators and
// async functions keep their context while suspended and are sealed when
// they complete. Objects whose count drops to zero are only declared dead at
// flush points (the end of a top-level statement, an idle event loop),
// because between them the program may still hold them in temporaries the
// trace does not show. Counts that drop but stay above zero put the object
// in a cycle queue, swept by mark-and-scan from the live contexts; the
// Merlin algorithm (Hertz et al., TOPLAS 2006) gives every member of a dead
// cycle its exact time of death from timestamps taken when the queue was
// fed.
//
// The simulator streams: its memory is proportional to the live simulated
// heap (nodes and edges in flat arrays with free lists, and no Go object per
// event), not to the trace. Finished objects are handed to a Sink as they
// die.
package lifetime

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heapx/heapx/formats/memtrace"
)

// Lifetime is what the analysis says about one object.
type Lifetime struct {
	ID uint64
	// Site is the allocation site's iid (memtrace.Reader.Position
	// resolves it).
	Site uint64
	// Alloc is when the object was allocated (or first seen, for objects
	// made by code that is not traced).
	Alloc uint64
	// LastUse is its last use; 0 when it was never used.
	LastUse uint64
	// Unreachable is when it became unreachable; for objects alive at
	// the end, the end of the trace (AtEnd set).
	Unreachable uint64
	AtEnd       bool
	// Function says the object is a function (a closure).
	Function bool
	// NonEscaping: it died before the call that allocated it returned
	// (its execution index is a prefix of the one at its death).
	NonEscaping bool
	// OwnerSite is the site of the only object that ever pointed to it
	// through a field when Owned is set; Owned also requires both to
	// have been allocated in the same call and to have died together.
	OwnerSite uint64
	Owned     bool
	// Late says the trace first saw the object after its allocation: it
	// was made by code the trace does not show (Node's own objects, such
	// as requests and sockets, or an uninstrumented module).
	Late bool
	// Revived says the analysis had found the object unreachable, and
	// the program then used it again: something the trace does not show
	// held it (a promise's value or reaction, a callback given to native
	// code). It is counted anew from where it was seen again.
	Revived bool
	// Suspended, for an object alive at the end, is the iid of the await
	// (or yield) of a suspended call that alone held it then: nothing the
	// program's variables reach did.
	Suspended uint64
	// Context is the calling-context node (see Result.Contexts) of the
	// allocation.
	Context int32
	// Frame numbers the call that allocated it (0 is top level).
	Frame uint32
}

// StaleSince is when the object became stale: its last use, or its
// allocation when it was never used after.
func (l Lifetime) StaleSince() uint64 { return max(l.Alloc, l.LastUse) }

// Sink receives every object's lifetime, once, when it is final. The
// pointer is valid only during the call.
type Sink func(*Lifetime)

// node flags.
const (
	fDead uint16 = 1 << iota
	fContext
	fInZeroQ
	fFunction
	fMultiOwner
	fPinned
	fOwnerDied
	fOwnsOne  // an object recorded this one as its owner
	fOwnsMany // more than one did: not a one-to-one ownership
	fModule   // a script's scope: a root for the rest of the run
	fCallee   // a function first seen when called: made and held by untraced code
	fLate     // first seen after its allocation
	fPlaced   // an UPDATE_IID gave its site: traced code made it (a constructor's this)
	fRevived  // found unreachable before, then seen again: held by what the trace does not show
)

// node is one vertex of the simulated heap: an object or a context.
type node struct {
	id      uint64 // the trace's object or context id
	alloc   uint64
	lastUse uint64
	stamp   uint64 // time its count last dropped (Merlin)
	owner   uint64 // id of the first object that pointed to it by a field
	rc      int32
	first   int32 // first out-edge, -1 none
	site    uint64
	fn      uint64 // iid of the function of a function object or a context
	frame   uint32
	ctxTree int32 // calling-context node of the allocation
	owSite  uint64
	owFrame uint32
	// ownerDied is when the owner died, once it has.
	ownerDied uint64
	mark      uint32
	flags     uint16
}

// edge is a labelled pointer; edges of one node form a doubly linked list.
type edge struct {
	from, to   int32
	name       int32
	prev, next int32
}

type edgeKey struct{ from, name int32 }

// Reserved edge names (interned names are >= 0).
const (
	nameParent    int32 = -1 - iota // context -> enclosing context
	nameContext                     // function -> context it closes over
	nameGenerator                   // generator object -> suspended context
)

// frame is one active call.
type frame struct {
	ctx    int32
	id     uint64 // the trace's context id
	fn     uint64
	serial uint32
	tree   int32
	// zq is the zero queue's length when the call began, since the
	// time: at its end, what it allocated and dropped dies (drainCall).
	zq    int
	since uint64
}

// frameExit is when a call that allocated objects still alive returned.
type frameExit struct {
	exit     uint64
	live     int32
	returned bool
	script   bool // a script's top level: its objects are not "non-escaping"
}

// DefaultCycleQueueLimit is how long the cycle queue may grow before it is
// swept at the next flush point (MemInsight's default).
const DefaultCycleQueueLimit = 50000

// Simulator runs the lifetime analysis over a stream of events.
type Simulator struct {
	sink Sink

	nodes    []node
	freeNode []int32
	ids      map[uint64]int32

	edges    []edge
	freeEdge []int32
	edgeOf   map[edgeKey]int32

	names    map[string]int32
	nameList []string

	freeVars map[uint64][]int32 // static function -> captured names, sorted; nil slice with entry: any

	stack     []frame
	pinned    []int32 // suspended contexts of no known object: roots
	globalCtx int32
	serial    uint32
	frames    map[uint32]*frameExit
	frameFree []*frameExit

	zeroQ  []int32
	cycleQ []int32
	// CycleQueueLimit: see DefaultCycleQueueLimit.
	CycleQueueLimit int
	epoch           uint32
	work            []int32
	collected       []int32

	// pending holds dead objects whose last use may still be reported.
	pending   []Lifetime
	pendingOf map[uint64]int32
	// InlineUses says LastUse events come in time order as the uses
	// happen, so a dead object's record is final at once.
	InlineUses bool

	// Contexts is the calling-context tree of allocations.
	Contexts ContextTree

	scratch []byte
	ended   bool
	kept    []int32
	// retCtx and retVal are the last RETURN's context and value.
	retCtx uint64
	retVal int32
	now    uint64
	events uint64
	// FirstSeenLate counts objects first seen at a write or a use, not
	// an allocation: made by code the trace does not show.
	FirstSeenLate uint64
	// Callees counts the functions first seen when called (see callee).
	Callees uint64
	// Revived counts the objects seen again after they were found
	// unreachable (Lifetime.Revived); dead has a bit set per object id
	// found unreachable, to tell them.
	Revived uint64
	dead    []uint64
	// NativeEmitters are the emitters made by untraced code on which
	// the program's listeners piled up (see listener).
	NativeEmitters []NativeEmitter
	// Unseen are the trace's UNSEEN records: code that ran untraced.
	Unseen []memtrace.Event
	// Exit and EndRecord are the trace's EXIT and END records (Kind 0
	// when missing); Signals the names of the signals the program
	// received (SIGNAL records).
	Exit, EndRecord memtrace.Event
	Signals         []string
	// Idles are the idle points: the IDLE records' times (returns to the
	// event loop with an empty stack), and IdleMillis their wall-clock
	// times. A trace without IDLE records (version 1, or a program that
	// never returned to its event loop) has as idle points the times the
	// call stack became empty, and no IdleMillis.
	Idles      []uint64
	IdleMillis []uint64
	depthIdles []uint64
	// heldBy, set at the end, is per node the iid of the await of the
	// suspended call that alone holds it (see Lifetime.Suspended).
	heldBy []uint64
	// HeldAtEnd is, per allocation site with objects alive at the end,
	// the access path to one of them (AccessPath.Steps).
	HeldAtEnd map[uint64][]string
	// Positions names iids in access paths (nil: by number).
	Positions func(uint64) (memtrace.Pos, bool)

	ctxIDs      map[uint64]int32
	scriptKinds map[uint64]memtrace.ScriptKind
	callSite    uint64
	lt          Lifetime
}

// NewSimulator returns a simulator that hands every finished object to
// sink.
func NewSimulator(sink Sink) *Simulator {
	s := &Simulator{
		sink: sink, ids: map[uint64]int32{}, edgeOf: map[edgeKey]int32{}, names: map[string]int32{},
		freeVars: map[uint64][]int32{}, ctxIDs: map[uint64]int32{}, scriptKinds: map[uint64]memtrace.ScriptKind{}, frames: map[uint32]*frameExit{}, pendingOf: map[uint64]int32{},
		CycleQueueLimit: DefaultCycleQueueLimit,
	}
	s.Contexts.init()
	s.globalCtx = s.newNode(0, 0)
	s.nodes[s.globalCtx].flags |= fContext | fPinned
	s.nodes[s.globalCtx].rc = 1
	g := s.newNode(memtrace.GlobalObject, 0)
	s.nodes[g].flags |= fPinned
	s.nodes[g].rc = 1
	s.ids[memtrace.GlobalObject] = g
	return s
}

func (s *Simulator) newNode(id uint64, site uint64) int32 {
	n := node{id: id, alloc: s.now, stamp: s.now, first: -1, site: site, ctxTree: s.treeNow()}
	if len(s.stack) > 0 {
		n.frame = s.stack[len(s.stack)-1].serial
	}
	if k := len(s.freeNode); k > 0 {
		i := s.freeNode[k-1]
		s.freeNode = s.freeNode[:k-1]
		s.nodes[i] = n
		return i
	}
	s.nodes = append(s.nodes, n)
	return int32(len(s.nodes) - 1)
}

func (s *Simulator) treeNow() int32 {
	if len(s.stack) == 0 {
		return 0
	}
	return s.stack[len(s.stack)-1].tree
}

// internBytes is intern without a string allocation for known names.
func (s *Simulator) internBytes(name []byte) int32 {
	if i, ok := s.names[string(name)]; ok {
		return i
	}
	return s.intern(string(name))
}

func (s *Simulator) intern(name string) int32 {
	if i, ok := s.names[name]; ok {
		return i
	}
	i := int32(len(s.nameList))
	s.nameList = append(s.nameList, name)
	s.names[name] = i
	return i
}

// object returns the node of id, making it (allocated now, at site) when
// the trace never showed its allocation.
func (s *Simulator) object(id uint64, site uint64) int32 {
	if id == 0 {
		return -1
	}
	if i, ok := s.ids[id]; ok {
		return i
	}
	s.FirstSeenLate++
	i := s.allocate(id, site)
	s.nodes[i].flags |= fLate
	if w := id / 64; w < uint64(len(s.dead)) && s.dead[w]&(1<<(id%64)) != 0 {
		s.nodes[i].flags |= fRevived
		s.Revived++
	}
	return i
}

func (s *Simulator) allocate(id uint64, site uint64) int32 {
	if i, ok := s.ids[id]; ok && s.nodes[i].flags&fDead == 0 {
		// An id reused while alive: the trace is wrong; keep the old
		// object rather than corrupt the counts.
		return i
	}
	i := s.newNode(id, site)
	s.ids[id] = i
	s.toZeroQ(i) // dead at the next flush unless stored
	if len(s.stack) > 0 {
		s.frameOf(s.stack[len(s.stack)-1].serial).live++
	}
	s.Contexts.count(s.nodes[i].ctxTree, site)
	return i
}

func (s *Simulator) frameOf(serial uint32) *frameExit {
	f := s.frames[serial]
	if f == nil {
		if k := len(s.frameFree); k > 0 {
			f = s.frameFree[k-1]
			s.frameFree = s.frameFree[:k-1]
			*f = frameExit{}
		} else {
			f = &frameExit{}
		}
		s.frames[serial] = f
	}
	return f
}

func (s *Simulator) toZeroQ(i int32) {
	if s.nodes[i].flags&fInZeroQ == 0 {
		s.nodes[i].flags |= fInZeroQ
		s.zeroQ = append(s.zeroQ, i)
	}
}

func (s *Simulator) incRef(i int32) {
	if i >= 0 {
		s.nodes[i].rc++
	}
}

// decRef drops a reference to i at time t.
func (s *Simulator) decRef(i int32, t uint64) {
	n := &s.nodes[i]
	n.rc--
	n.stamp = max(n.stamp, t)
	if n.rc == 0 {
		s.toZeroQ(i)
	} else {
		s.cycleQ = append(s.cycleQ, i)
	}
}

// setEdge points from.name at to (-1: no object), as of time t.
func (s *Simulator) setEdge(from, name, to int32, t uint64) {
	k := edgeKey{from, name}
	if e, ok := s.edgeOf[k]; ok {
		old := s.edges[e].to
		if old == to {
			return
		}
		if to < 0 {
			s.unlink(e)
			delete(s.edgeOf, k)
		} else {
			s.edges[e].to = to
			s.incRef(to)
		}
		if old >= 0 {
			s.decRef(old, t)
		}
		return
	}
	if to < 0 {
		if name >= 0 && s.nodes[from].flags&fContext != 0 {
			// A declared binding with a primitive value still shadows
			// outer ones.
			s.link(from, name, -1)
		}
		return
	}
	s.link(from, name, to)
	s.incRef(to)
}

func (s *Simulator) link(from, name, to int32) {
	e := edge{from: from, to: to, name: name, prev: -1, next: s.nodes[from].first}
	var ei int32
	if k := len(s.freeEdge); k > 0 {
		ei = s.freeEdge[k-1]
		s.freeEdge = s.freeEdge[:k-1]
		s.edges[ei] = e
	} else {
		s.edges = append(s.edges, e)
		ei = int32(len(s.edges) - 1)
	}
	if e.next >= 0 {
		s.edges[e.next].prev = ei
	}
	s.nodes[from].first = ei
	s.edgeOf[edgeKey{from, name}] = ei
}

func (s *Simulator) unlink(ei int32) {
	e := s.edges[ei]
	if e.prev >= 0 {
		s.edges[e.prev].next = e.next
	} else {
		s.nodes[e.from].first = e.next
	}
	if e.next >= 0 {
		s.edges[e.next].prev = e.prev
	}
	s.freeEdge = append(s.freeEdge, ei)
}

// Apply feeds one record of the trace to the simulation, in trace order.
func (s *Simulator) Apply(ev *memtrace.Event) error {
	s.events++
	if ev.Kind.IsEvent() {
		if ev.Time < s.now {
			return fmt.Errorf("%s record at byte %d: time %d, after time %d: the trace's clock went backwards", ev.Kind, ev.Offset, ev.Time, s.now)
		}
		s.now = ev.Time
	}
	t := ev.Time
	switch ev.Kind {
	case memtrace.PutField, memtrace.CollSet, memtrace.CollDelete, memtrace.CollClear, memtrace.CreateObj, memtrace.CreateFun:
		if ev.Obj == memtrace.NoObject {
			return fmt.Errorf("%s record at byte %d: object 0, which stands for a primitive", ev.Kind, ev.Offset)
		}
	}
	switch ev.Kind {
	case memtrace.CreateObj:
		s.allocate(ev.Obj, ev.At)
	case memtrace.CreateFun:
		i := s.allocate(ev.Obj, ev.At)
		s.nodes[i].flags |= fFunction
		s.nodes[i].fn = ev.At
		s.setEdge(i, nameContext, s.context(ev.Ctx), t)
		if ev.Proto != 0 {
			// The prototype and its constructor point at each other:
			// a cycle from the start.
			p := s.allocate(ev.Proto, ev.At)
			s.setEdge(i, s.intern("prototype"), p, t)
			s.setEdge(p, s.intern("constructor"), i, t)
		}
	case memtrace.PutField:
		base := s.object(ev.Obj, ev.At)
		val := s.object(ev.Value, ev.At)
		if val >= 0 {
			s.own(base, val)
			if ev.Key.Kind == memtrace.KeyName && strings.HasPrefix(ev.Key.Name, "on('") {
				s.listener(base, ev.Key.Name)
			}
		}
		s.setEdge(base, s.keyName(ev.Key, 0), val, t)
	case memtrace.CollSet:
		coll := s.object(ev.Obj, ev.At)
		val := s.object(ev.Value, ev.At)
		if ev.Key.Kind == memtrace.KeyObject {
			s.setEdge(coll, s.keyName(ev.Key, 'k'), s.object(ev.Key.N, ev.At), t)
		}
		s.setEdge(coll, s.keyName(ev.Key, 'v'), val, t)
	case memtrace.CollDelete:
		coll := s.object(ev.Obj, ev.At)
		if ev.Key.Kind == memtrace.KeyObject {
			s.setEdge(coll, s.keyName(ev.Key, 'k'), -1, t)
		}
		s.setEdge(coll, s.keyName(ev.Key, 'v'), -1, t)
	case memtrace.CollClear:
		s.clearEntries(s.object(ev.Obj, ev.At), t)
	case memtrace.Declare, memtrace.Write:
		val := s.object(ev.Value, ev.At)
		s.setEdge(s.context(ev.Ctx), s.intern(ev.Name), val, t)
	case memtrace.Call:
		s.callee(ev.Obj, ev.At)
		s.callSite = ev.At
	case memtrace.FunctionEnter:
		site := ev.At
		if s.callSite != 0 {
			site, s.callSite = s.callSite, 0
		}
		s.callee(ev.Obj, ev.At)
		s.enter(ev.Ctx, ev.Parent, ev.At, site, t)
	case memtrace.ScriptEnter:
		s.enter(ev.Ctx, memtrace.GlobalContext, ev.At, ev.At, t)
		s.frameOf(s.serial).script = true
		if s.scriptKinds[ev.Script] == memtrace.Module {
			// An ES module's bindings live for the whole run.
			s.keep(s.stack[len(s.stack)-1].ctx)
		}
	case memtrace.FunctionExit, memtrace.ScriptExit:
		if err := s.leave(ev, true); err != nil {
			return err
		}
	case memtrace.Suspend:
		if err := s.leave(ev, false); err != nil {
			return err
		}
	case memtrace.Resume:
		c, ok := s.ctxIDs[ev.Ctx]
		if !ok {
			return fmt.Errorf("%s record at byte %d: context %d was never entered", ev.Kind, ev.Offset, ev.Ctx)
		}
		s.unpin(c, t)
		s.serial++
		s.incRef(c)
		s.stack = append(s.stack, frame{ctx: c, id: ev.Ctx, fn: s.nodes[c].fn, serial: s.serial,
			tree: s.Contexts.child(s.treeNow(), ev.At), zq: len(s.zeroQ), since: t})
	case memtrace.Return:
		s.retCtx, s.retVal = ev.Ctx, s.object(ev.Value, ev.At)
	case memtrace.TopLevelFlush:
		if len(s.stack) <= 1 {
			// A statement of a script run by require() from a function
			// ends with the caller's temporaries still in use: not a
			// flush point.
			s.flush(t, false)
		}
	case memtrace.UpdateIID:
		if i, ok := s.ids[ev.Obj]; ok {
			s.nodes[i].site = ev.At
			s.nodes[i].flags |= fPlaced
		} else if ev.Obj != memtrace.NoObject {
			// Numbered by its constructor but first reported here (the
			// constructor stored only primitives in it): allocated now.
			s.allocate(ev.Obj, ev.At)
		}
	case memtrace.ScriptDef:
		s.scriptKinds[ev.Script] = ev.ScriptKind
	case memtrace.FreeVars:
		var names []int32
		if !ev.AnyVars {
			names = make([]int32, 0, len(ev.Names))
			for _, n := range ev.Names {
				names = append(names, s.intern(n))
			}
			slices.Sort(names)
		}
		s.freeVars[ev.At] = names
	case memtrace.LastUse:
		s.lastUse(ev.Obj, ev.UseTime)
	case memtrace.EndLastUse:
		if !s.InlineUses {
			s.release(ev.UseTime)
		}
	case memtrace.Unseen:
		s.Unseen = append(s.Unseen, *ev)
		s.Unseen[len(s.Unseen)-1].Names = nil
	case memtrace.Exit:
		s.Exit = *ev
	case memtrace.Idle:
		s.Idles = append(s.Idles, t)
		s.IdleMillis = append(s.IdleMillis, ev.Millis)
	case memtrace.Signal:
		s.Signals = append(s.Signals, ev.Text)
	case memtrace.End:
		s.EndRecord = *ev
		s.End(s.now)
	}
	return nil
}

// callee notes a called function object. One the trace never saw made
// (a builtin such as setImmediate, a class's method, a function of an
// uninstrumented module) is held by what made it, which the trace does
// not show: it is kept for the rest of the run and reported nowhere, not
// taken for an allocation of the program at its call site.
func (s *Simulator) callee(id, site uint64) {
	if id == 0 {
		return
	}
	if _, ok := s.ids[id]; ok {
		return
	}
	i := s.object(id, site)
	s.FirstSeenLate--
	s.Callees++
	s.nodes[i].flags |= fCallee | fFunction
	s.pin(i)
	s.incRef(i)
}

// MaxListeners is Node's default limit of listeners for one event of one
// emitter (EventEmitter.defaultMaxListeners), past which it warns of a
// leak.
const MaxListeners = 10

// NativeEmitter says that an emitter the trace did not see made held more
// listeners of the program at once than Node's MaxListeners.
type NativeEmitter struct {
	Site  uint64 // where the program first touched the emitter
	Event string // the event (its on('NAME') property)
	Most  int    // the most listeners held at once
}

// listener notes a listener stored in an emitter's property key (the
// runtime's on('NAME')#k, docs/trace.md): an emitter made by untraced
// code (a socket, a request) lives in the analysis only as long as the
// program holds it, so listeners that pile up on it past MaxListeners are
// a leak the trace cannot measure, said instead (NativeEmitters).
func (s *Simulator) listener(emitter int32, key string) {
	n := &s.nodes[emitter]
	if n.flags&(fLate|fPlaced) != fLate {
		return
	}
	event, k := key, 0
	if i := strings.LastIndex(key, ")#"); i >= 0 {
		k, _ = strconv.Atoi(key[i+2:])
		event = key[:i+1]
	}
	if k+1 <= MaxListeners {
		return
	}
	for i := range s.NativeEmitters {
		if e := &s.NativeEmitters[i]; e.Site == n.site && e.Event == event {
			e.Most = max(e.Most, k+1)
			return
		}
	}
	s.NativeEmitters = append(s.NativeEmitters, NativeEmitter{Site: n.site, Event: event, Most: k + 1})
}

// keyName interns the edge name of a property key (prefix 0) or of a
// collection entry's key object ('k') or value ('v'). Entry names begin
// with a NUL no property name has; indices are "[n]".
func (s *Simulator) keyName(k memtrace.Key, prefix byte) int32 {
	s.scratch = s.scratch[:0]
	if prefix != 0 {
		s.scratch = append(s.scratch, 0, prefix)
	}
	switch k.Kind {
	case memtrace.KeyName:
		if prefix == 0 {
			return s.intern(k.Name)
		}
		s.scratch = append(s.scratch, k.Name...)
	case memtrace.KeyIndex:
		s.scratch = append(s.scratch, '[')
		s.scratch = strconv.AppendUint(s.scratch, k.N, 10)
		s.scratch = append(s.scratch, ']')
	case memtrace.KeyObject:
		s.scratch = append(s.scratch, '@')
		s.scratch = strconv.AppendUint(s.scratch, k.N, 10)
	}
	return s.internBytes(s.scratch)
}

// clearEntries drops every entry of a Map or Set.
func (s *Simulator) clearEntries(coll int32, t uint64) {
	for e := s.nodes[coll].first; e >= 0; {
		next := s.edges[e].next
		if name := s.edges[e].name; name >= 0 && strings.HasPrefix(s.nameList[name], "\x00") {
			s.setEdge(coll, name, -1, t)
		}
		e = next
	}
}

// context returns the node of context id, the global context for 1. A
// context the trace never entered (a bug in the trace) is made a root, so
// nothing it holds is declared dead wrongly.
func (s *Simulator) context(id uint64) int32 {
	if id == memtrace.GlobalContext {
		return s.globalCtx
	}
	if c, ok := s.ctxIDs[id]; ok {
		return c
	}
	c := s.newNode(id, 0)
	s.nodes[c].flags |= fContext
	s.ctxIDs[id] = c
	s.pin(c)
	s.incRef(c)
	return c
}

func (s *Simulator) pin(c int32) {
	if s.nodes[c].flags&fPinned == 0 {
		s.nodes[c].flags |= fPinned
		s.pinned = append(s.pinned, c)
	}
}

// keep makes c a root for the rest of the run.
func (s *Simulator) keep(c int32) {
	if s.nodes[c].flags&fModule == 0 {
		s.pin(c)
		s.incRef(c)
		s.nodes[c].flags |= fModule
	}
}

func (s *Simulator) unpin(c int32, t uint64) {
	if s.nodes[c].flags&(fPinned|fModule) == fPinned {
		s.nodes[c].flags &^= fPinned
		s.pinned = slices.DeleteFunc(s.pinned, func(x int32) bool { return x == c })
		s.decRef(c, t)
	}
}

// own records that base points to val by a field, for inlining.
func (s *Simulator) own(base, val int32) {
	b, v := &s.nodes[base], &s.nodes[val]
	switch {
	case v.owner == 0:
		v.owner, v.owSite, v.owFrame = b.id, b.site, b.frame
		if b.flags&fOwnsOne != 0 {
			b.flags |= fOwnsMany // a container: its elements are not inlinable into it
		}
		b.flags |= fOwnsOne
	case v.owner != b.id:
		v.flags |= fMultiOwner
	}
}

// enter starts a call (or a script's top level) of the function at fn
// with the new context id, under context parent.
func (s *Simulator) enter(id, parent, fn, site uint64, t uint64) {
	tree := s.Contexts.child(s.treeNow(), site)
	ctx := s.newNode(id, site)
	s.nodes[ctx].flags |= fContext
	s.nodes[ctx].fn = fn
	s.nodes[ctx].rc = 1 // the stack's reference
	s.ctxIDs[id] = ctx
	s.setEdge(ctx, nameParent, s.context(parent), t)
	s.serial++
	s.stack = append(s.stack, frame{ctx: ctx, id: id, fn: fn, serial: s.serial, tree: tree, zq: len(s.zeroQ), since: t})
}

// leave ends the call of ev.Ctx: sealed when it completed, kept (a root)
// when it was suspended. Calls above it that never said they ended (an
// exception through uninstrumented code) end with it.
func (s *Simulator) leave(ev *memtrace.Event, complete bool) error {
	k := len(s.stack) - 1
	for k >= 0 && s.stack[k].id != ev.Ctx {
		k--
	}
	if k < 0 {
		return fmt.Errorf("%s record at byte %d: context %d is not running", ev.Kind, ev.Offset, ev.Ctx)
	}
	for len(s.stack) > k+1 {
		s.exit(ev.Time, true)
	}
	f := s.stack[k]
	if !complete {
		s.pin(f.ctx)
		s.incRef(f.ctx)
		s.nodes[f.ctx].site = ev.At // where it waits (a context has no allocation site)
	}
	s.exit(ev.Time, complete)
	if ev.Kind == memtrace.ScriptExit {
		// A CommonJS module's scope, sealed, stays: the functions it
		// defined are commonly held by native code the trace does not
		// show (timers, emitters, promises) and run from there, so its
		// captured variables live for the rest of the run, as an ES
		// module's do.
		s.keep(f.ctx)
	}
	if len(s.stack) == 0 {
		s.flush(ev.Time, false)
		s.depthIdles = append(s.depthIdles, ev.Time)
	}
	return nil
}

// exit pops the current call; seal drops the bindings no closure captured.
func (s *Simulator) exit(t uint64, seal bool) {
	f := s.stack[len(s.stack)-1]
	s.stack = s.stack[:len(s.stack)-1]
	if seal && s.nodes[f.ctx].flags&fPinned == 0 {
		if keep, known := s.freeVars[f.fn]; !known || keep != nil {
			s.seal(f.ctx, keep, t)
		}
	}
	if fe, ok := s.frames[f.serial]; ok {
		fe.exit, fe.returned = t, true
		s.dropFrame(f.serial, fe)
	}
	s.decRef(f.ctx, t)
	if seal && len(s.stack) > 0 {
		keep := int32(-1)
		if s.retCtx == f.id {
			keep = s.retVal
		}
		s.drainCall(f, keep)
	}
}

// drainCall decides, as the call f ends, the objects it allocated whose
// count is zero, but its return value keep: nothing else can hold them,
// since the caller could not have had them in a temporary before the call
// (MemInsight decides only at top-level statements, which makes a program
// whose work is one statement, main(), keep every dead object until it
// returns). Objects allocated before the call, and objects first seen in
// it (made by untraced code, or a constructor's this before new returns
// it), wait for a flush point, as do dead cycles.
func (s *Simulator) drainCall(f frame, keep int32) {
	s.drainSince(min(f.zq, len(s.zeroQ)), f.since, keep)
}

// drainSince kills the objects queued from start on whose count is zero
// and that were allocated at or after since, but keep.
func (s *Simulator) drainSince(start int, since uint64, keep int32) {
	kept := s.kept[:0]
	for len(s.zeroQ) > start {
		i := s.zeroQ[len(s.zeroQ)-1]
		s.zeroQ = s.zeroQ[:len(s.zeroQ)-1]
		n := &s.nodes[i]
		n.flags &^= fInZeroQ
		if n.rc != 0 || n.flags&(fDead|fPinned) != 0 {
			continue
		}
		if i == keep || n.alloc < since || n.flags&fLate != 0 {
			kept = append(kept, i)
			continue
		}
		s.kill(i, n.stamp, nil)
	}
	for _, i := range kept {
		s.toZeroQ(i)
	}
	s.kept = kept
}

// seal removes ctx's bindings not in keep (sorted).
func (s *Simulator) seal(ctx int32, keep []int32, t uint64) {
	for e := s.nodes[ctx].first; e >= 0; {
		next := s.edges[e].next
		if name := s.edges[e].name; name >= 0 {
			if _, found := slices.BinarySearch(keep, name); !found {
				to := s.edges[e].to
				s.unlink(e)
				delete(s.edgeOf, edgeKey{ctx, name})
				if to >= 0 {
					s.decRef(to, t)
				}
			}
		}
		e = next
	}
}

func (s *Simulator) dropFrame(serial uint32, fe *frameExit) {
	if fe.live == 0 && fe.returned {
		delete(s.frames, serial)
		s.frameFree = append(s.frameFree, fe)
	}
}

func (s *Simulator) lastUse(id uint64, t uint64) {
	if i, ok := s.ids[id]; ok && s.nodes[i].flags&fDead == 0 {
		s.nodes[i].lastUse = max(s.nodes[i].lastUse, t)
		return
	}
	if p, ok := s.pendingOf[id]; ok {
		s.pending[p].LastUse = max(s.pending[p].LastUse, t)
	}
}

// release hands to the sink the dead objects whose uses are all known:
// those that died before t (a dead object is not used again).
func (s *Simulator) release(t uint64) {
	k := 0
	for i := range s.pending {
		l := &s.pending[i]
		if l.Unreachable <= t {
			delete(s.pendingOf, l.ID)
			s.emit(l)
			continue
		}
		s.pending[k] = *l
		s.pendingOf[l.ID] = int32(k)
		k++
	}
	s.pending = s.pending[:k]
}

// emit hands l to the sink. An object used after its count dropped to
// zero was held by a temporary until then: it became unreachable at its
// last use.
func (s *Simulator) emit(l *Lifetime) {
	if !l.AtEnd {
		l.Unreachable = max(l.Unreachable, l.LastUse)
	}
	s.sink(l)
}

// flush decides unreachability: the zero-count queue, then the cycle
// queue when it is long or force is set.
func (s *Simulator) flush(t uint64, force bool) {
	s.drainZero()
	if len(s.cycleQ) > s.CycleQueueLimit || (force && len(s.cycleQ) > 0) {
		s.sweepCycles()
		s.drainZero()
	}
	if s.InlineUses {
		s.release(t)
	}
}

// drainZero kills every queued object whose count is still zero, at the
// time its count dropped, and whatever only it held.
func (s *Simulator) drainZero() {
	for len(s.zeroQ) > 0 {
		i := s.zeroQ[len(s.zeroQ)-1]
		s.zeroQ = s.zeroQ[:len(s.zeroQ)-1]
		n := &s.nodes[i]
		n.flags &^= fInZeroQ
		if n.rc != 0 || n.flags&(fDead|fPinned) != 0 {
			continue
		}
		s.kill(i, n.stamp, nil)
	}
}

// kill marks i dead at time t and drops its out-edges; targets in dying
// (a cycle being collected) are not counted down.
func (s *Simulator) kill(i int32, t uint64, dying func(int32) bool) {
	n := &s.nodes[i]
	n.flags |= fDead
	for e := n.first; e >= 0; {
		ed := s.edges[e]
		delete(s.edgeOf, edgeKey{i, ed.name})
		s.freeEdge = append(s.freeEdge, e)
		if ed.to >= 0 && s.nodes[ed.to].owner == n.id {
			s.nodes[ed.to].flags |= fOwnerDied
			s.nodes[ed.to].ownerDied = t
			if n.flags&fOwnsMany != 0 {
				s.nodes[ed.to].flags |= fMultiOwner
			}
		}
		if ed.to >= 0 && (dying == nil || !dying(ed.to)) {
			to := &s.nodes[ed.to]
			to.stamp = max(to.stamp, t)
			to.rc--
			if to.rc == 0 {
				s.toZeroQ(ed.to)
			} else if to.flags&fDead == 0 {
				s.cycleQ = append(s.cycleQ, ed.to)
			}
		}
		e = ed.next
	}
	n = &s.nodes[i]
	n.first = -1
	if n.flags&fContext != 0 {
		delete(s.ctxIDs, n.id)
		s.freeNode = append(s.freeNode, i)
		return
	}
	s.finish(i, t, false)
}

// finish records the lifetime of object i, dead at t (or alive at the end).
func (s *Simulator) finish(i int32, t uint64, atEnd bool) {
	n := &s.nodes[i]
	// s.lt, not a local: a pointer to a local handed to the sink would
	// escape, an allocation per object.
	s.lt = Lifetime{ID: n.id, Site: n.site, Alloc: n.alloc, LastUse: n.lastUse, Unreachable: t, AtEnd: atEnd,
		Function: n.flags&fFunction != 0, Late: n.flags&(fLate|fPlaced|fRevived) == fLate, Revived: n.flags&fRevived != 0, Context: n.ctxTree, Frame: n.frame}
	l := &s.lt
	if atEnd && s.heldBy != nil {
		l.Suspended = s.heldBy[i]
	}
	if fe, ok := s.frames[n.frame]; ok && n.frame != 0 {
		l.NonEscaping = !atEnd && !fe.script && (!fe.returned || t <= fe.exit)
		fe.live--
		s.dropFrame(n.frame, fe)
	}
	if n.owner != 0 && n.flags&fMultiOwner == 0 {
		l.OwnerSite = n.owSite
		l.Owned = n.flags&fOwnerDied != 0 && n.ownerDied == t && n.owFrame == n.frame
	}
	delete(s.ids, n.id)
	if !atEnd {
		w := n.id / 64
		for uint64(len(s.dead)) <= w {
			s.dead = append(s.dead, 0)
		}
		s.dead[w] |= 1 << (n.id % 64)
	}
	s.freeNode = append(s.freeNode, i)
	if s.InlineUses || atEnd {
		s.emit(l)
		return
	}
	s.pendingOf[l.ID] = int32(len(s.pending))
	s.pending = append(s.pending, *l)
}
