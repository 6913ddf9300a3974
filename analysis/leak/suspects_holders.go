package leak

import (
	"cmp"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Machinery is the runtime's structure through which a suspect's holder
// holds its accumulation, when it is not the holder's own fields.
type Machinery uint8

// The machineries LeakSuspects recognizes.
const (
	// NoMachinery: the holder holds the accumulation in its own fields
	// and collections.
	NoMachinery Machinery = iota
	// Listeners: the listener array of a Node.js EventEmitter (Holder)
	// for the event Suspect.Event.
	Listeners
	// PendingPromise: the reactions of a promise (Holder) that has not
	// settled: the callbacks and suspended async functions waiting on it.
	PendingPromise
	// Timers: a list of Node.js's timers (Holder, a TimersList) of the
	// duration Suspect.Event, in milliseconds.
	Timers
)

// machinery finds the runtime's structure between s's holder and its
// accumulation, and makes the holder the object the program knows: the
// EventEmitter, not its _events object; the timer list itself, not
// Node's table of lists.
func (f *suspectFinder) machineryOf(s *Suspect) {
	if !f.v8 || s.Detached || s.Shared {
		return
	}
	doms := f.a.Dominators
	switch f.a.Classes.Names[f.a.Classes.Of[s.Point]] {
	case "Promise":
		// Its reactions are the machinery: the class V8 gives them,
		// "(system)", says nothing more.
		s.Machinery, s.Via = PendingPromise, NoClass
		return
	case "TimersList":
		s.Machinery = Timers
		if p := doms.IDom[s.Point]; p >= 0 {
			if e := f.edgeTo(p, s.Point); e != analysis.NoParent {
				s.Event = f.g.EdgeName(e)
			}
		}
		s.Holder, s.Retained = s.Point, doms.Retained[s.Point]
		return
	}
	// emitter._events[event] is the point, an array of listeners; or
	// emitter._events itself, when the listeners of several events
	// accumulate (once() adds one for the event and one for "error").
	if emitter := f.emitterEvents(s.Point); emitter >= 0 {
		s.Machinery, s.Via = Listeners, NoClass
		s.Holder, s.Retained = emitter, doms.Retained[emitter]
		// The events are those with many listeners: the _events
		// object's fields holding arrays of them (once() adds two
		// sharing a context, so neither array retains them alone).
		var events []string
		g := f.g
		from, end := g.EdgeRange(s.Point)
		for e := from; e < end; e++ {
			if t := g.Edges.To[e]; f.k.Edge[g.Edges.Type[e]] == kinds.EdgeProperty && f.elements(t) >= 2 {
				events = append(events, g.EdgeName(e))
			}
		}
		s.Event = strings.Join(events, ", ")
		return
	}
	events := doms.IDom[s.Point]
	if events < 0 {
		return
	}
	emitter := f.emitterEvents(events)
	e := f.edgeTo(events, s.Point)
	if emitter < 0 || e == analysis.NoParent || f.k.Edge[f.g.Edges.Type[e]] != kinds.EdgeProperty {
		return
	}
	s.Machinery, s.Event, s.Via = Listeners, f.g.EdgeName(e), NoClass
	s.Holder, s.Retained = emitter, doms.Retained[emitter]
}

// elements counts v's element edges (an Array's items).
func (f *suspectFinder) elements(v model.NodeIndex) int {
	n := 0
	from, end := f.g.EdgeRange(v)
	for e := from; e < end; e++ {
		if f.k.Edge[f.g.Edges.Type[e]] == kinds.EdgeElement {
			n++
		}
	}
	return n
}

// emitterEvents returns the EventEmitter whose _events object v is, the
// one dominating it; NoNode when v is none.
func (f *suspectFinder) emitterEvents(v model.NodeIndex) model.NodeIndex {
	emitter := f.a.Dominators.IDom[v]
	if emitter < 0 || f.isOpaque(emitter) {
		return model.NoNode
	}
	if e := f.edgeTo(emitter, v); e == analysis.NoParent || f.g.EdgeName(e) != "_events" {
		return model.NoNode
	}
	return emitter
}

// nameHolders finds the variable or field each suspect's holder is held
// by (Suspect.HolderField): the way a program names it. Of the holder's
// retainers that a path from the roots reaches, a field a path of named
// fields reaches from a global object (globalThis.service.orders) comes
// first, then a variable of a module's top-level scope, then a
// variable a closure captures, then any other named field, each the
// nearest to the roots first; without any, the field holding does. A
// timer list is named by its duration, the key Node's table of lists
// holds it under. Java classes and global objects need no name: they
// are theirs. One pass over the edges.
func (f *suspectFinder) nameHolders(all []found) {
	g := f.g
	cost, _ := f.a.ShortestPathTree()
	want := map[model.NodeIndex][]int{}
	for i := range all {
		h := all[i].Holder
		if f.globals.Has(int(h)) || (f.hprof && f.k.NodeOf(g, h) == kinds.Shape) {
			continue
		}
		want[h] = append(want[h], i)
	}
	type pick struct {
		rank int
		cost int32
		edge uint32
		from model.NodeIndex
	}
	best := map[model.NodeIndex]pick{}
	duration := map[model.NodeIndex]string{}
	for u := range int32(g.NumNodes()) {
		if cost[u] < 0 {
			continue
		}
		s, end := g.EdgeRange(u)
		for e := s; e < end; e++ {
			t := g.Edges.To[e]
			is, ok := want[t]
			if !ok || t == u {
				continue
			}
			// Node's table of lists holds each under its duration, an
			// element of a plain object (its priority queue, an Array,
			// under a position).
			if ek := f.k.Edge[g.Edges.Type[e]]; all[is[0]].Machinery == Timers && (ek == kinds.EdgeProperty || ek == kinds.EdgeElement) &&
				f.a.Classes.Names[f.a.Classes.Of[u]] == "Object" && isDigits(g.EdgeName(e)) {
				duration[t] = g.EdgeName(e)
			}
			if !f.isField(e) {
				continue
			}
			p := pick{rank: 3, cost: cost[u], edge: e, from: u}
			switch {
			case f.globals.Has(int(u)) || (f.k.Edge[g.Edges.Type[e]] != kinds.EdgeContext && f.field(u, e, 1).Base != model.NoNode):
				p.rank = 0
			case f.k.Edge[g.Edges.Type[e]] == kinds.EdgeContext && f.modules.Has(int(u)):
				p.rank = 1
			case f.k.Edge[g.Edges.Type[e]] == kinds.EdgeContext:
				p.rank = 2
			}
			if b, ok := best[t]; !ok || cmp.Or(cmp.Compare(p.rank, b.rank), cmp.Compare(p.cost, b.cost)) < 0 {
				best[t] = p
			}
		}
	}
	for h, is := range want {
		for _, i := range is {
			s := &all[i].Suspect
			if d, ok := duration[h]; ok && s.Machinery == Timers {
				s.Event = d
			}
			if p, ok := best[h]; ok {
				sf := f.field(p.from, p.edge, 1)
				s.HolderField = &sf
			} else if sf, ok := f.holding(h, 1, model.NoNode); ok {
				s.HolderField = &sf
			}
		}
	}
}

// isDigits reports whether s is a non-empty run of decimal digits.
func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// placeScopes says, for each field that is a variable (a V8 context
// edge), which function captures it and where: the closure that
// dominates the scope, else any closure of the scope, with its source
// location; for a module's top-level scope, the script. One pass over
// the closures.
func (f *suspectFinder) placeScopes(fields []*SuspectField) {
	g := f.g
	scopes := map[model.NodeIndex]model.NodeIndex{} // scope -> a closure of it
	for _, sf := range fields {
		if f.k.Edge[g.Edges.Type[sf.Edge]] == kinds.EdgeContext {
			scopes[sf.Owner] = model.NoNode
		}
	}
	if len(scopes) == 0 {
		return
	}
	for v := range int32(g.NumNodes()) {
		if f.k.NodeOf(g, v) != kinds.Closure {
			continue
		}
		ctx := f.namedEdge(v, "context")
		fn, ok := scopes[ctx]
		if !ok || (fn >= 0 && f.a.Dominators.IDom[ctx] == fn) {
			continue
		}
		if fn < 0 || f.a.Dominators.IDom[ctx] == v || (g.NodeName(fn) == "" && g.NodeName(v) != "") {
			scopes[ctx] = v
		}
	}
	for _, sf := range fields {
		fn, ok := scopes[sf.Owner]
		if !ok || fn < 0 {
			continue
		}
		sf.Module = f.modules.Has(int(sf.Owner))
		sf.Location = f.location(fn)
		if sf.Module {
			sf.Location.Function, sf.Location.Line, sf.Location.Column = "", 0, 0
		} else {
			sf.Function = fn
		}
	}
}

// runtimes reports whether s is the runtime's own structure, held where
// the program cannot reach it, with no machinery the program uses between
// (the runtime's timer lists and emitters hold what the program gave
// them, so they stay): in V8, a holder that is a function of the
// runtime's scripts (Node's BuiltinModule and its table of modules) or
// held by a variable of one of them; in Java, a holder named through a
// static field of a JDK class (BuiltinClassLoader.packageToModule).
func (f *suspectFinder) runtimes(s *Suspect) bool {
	if s.Machinery != NoMachinery {
		return false
	}
	hf := s.HolderField
	switch {
	case f.v8:
		if f.k.NodeOf(f.g, s.Holder) == kinds.Closure {
			if url := f.location(s.Holder).URL; url != "" && !userScript(url) {
				return true
			}
		}
		return hf != nil && f.k.Edge[f.g.Edges.Type[hf.Edge]] == kinds.EdgeContext && hf.Location.URL != "" && !userScript(hf.Location.URL)
	case f.hprof:
		return hf != nil && hf.Base >= 0 && !javaUserClass(strings.TrimPrefix(f.g.NodeName(hf.Base), "class "))
	}
	return false
}
