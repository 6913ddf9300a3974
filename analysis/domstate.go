package analysis

import (
	"strings"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// DOM link states, as V8 writes them in the detachedness field.
const (
	DOMUnknown  uint8 = 0
	DOMAttached uint8 = 1
	DOMDetached uint8 = 2
)

// DOMState is the DOM link state of every node after DevTools'
// propagation (HeapSnapshot.propagateDOMState).
type DOMState struct {
	// Attached and Detached mark the nodes in those states after
	// propagation (two bits per node rather than a byte: this is alive
	// during the dominator pass). Nil when no node is in that state.
	Attached, Detached Bits
	// Renamed marks the native nodes DevTools shows as "Detached " + name.
	// Nil when none are.
	Renamed Bits
}

// State returns node n's propagated state: DOMUnknown, DOMAttached or
// DOMDetached (a state 3 in the input reads as DOMUnknown).
func (ds *DOMState) State(n model.NodeIndex) uint8 {
	switch {
	case ds.Attached != nil && ds.Attached.Has(int(n)):
		return DOMAttached
	case ds.Detached != nil && ds.Detached.Has(int(n)):
		return DOMDetached
	}
	return DOMUnknown
}

// set records state s for node n.
func (ds *DOMState) set(n int, s uint8, size int) {
	if ds.Attached != nil {
		ds.Attached.Clear(n)
	}
	if ds.Detached != nil {
		ds.Detached.Clear(n)
	}
	switch s {
	case DOMAttached:
		if ds.Attached == nil {
			ds.Attached = NewBits(size)
		}
		ds.Attached.Set(n)
	case DOMDetached:
		if ds.Detached == nil {
			ds.Detached = NewBits(size)
		}
		ds.Detached.Set(n)
	}
}

// DetachedPrefix is what DevTools puts before the name of a detached
// native node.
const DetachedPrefix = "Detached "

// PropagateDOMState computes DevTools' DOM states. With a detachedness
// column, the known states are pushed through native nodes over edges that
// are not hidden or weak: first "attached" from every attached node, then
// "detached" from every detached one; a node keeps the first state it gets,
// and detached native nodes are renamed "Detached …". Without the column,
// native nodes whose name starts with "Detached " are detached and nothing
// is propagated (DevTools' rule for old snapshots).
func PropagateDOMState(g *model.Graph) *DOMState {
	n := g.NumNodes()
	k := kinds.New(g)
	ds := &DOMState{}
	if g.Detachedness == nil {
		for i := 0; i < n; i++ {
			if k.Node[g.Nodes.Type[i]] == kinds.Native && strings.HasPrefix(g.NodeName(int32(i)), DetachedPrefix) {
				ds.set(i, DOMDetached, n)
			}
		}
		return ds
	}
	for i, s := range g.Detachedness {
		if s&3 != DOMUnknown {
			ds.set(i, s&3, n)
		}
	}
	visited := NewBits(n)
	var attached, detached []int32
	process := func(i int32, state uint8) {
		if visited.Has(int(i)) {
			return
		}
		visited.Set(int(i))
		if k.Node[g.Nodes.Type[i]] != kinds.Native {
			return
		}
		ds.set(int(i), state, n)
		switch state {
		case DOMAttached:
			attached = append(attached, i)
		case DOMDetached:
			if ds.Renamed == nil {
				ds.Renamed = NewBits(n)
			}
			ds.Renamed.Set(int(i))
			detached = append(detached, i)
		}
	}
	for i := 0; i < n; i++ {
		if s := g.Detachedness[i] & 3; s != DOMUnknown {
			process(int32(i), s)
		}
	}
	fe, to, typ := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type
	push := func(i int32, state uint8) {
		for e := fe[i]; e < fe[i+1]; e++ {
			if ek := k.Edge[typ[e]]; ek == kinds.EdgeHidden || ek == kinds.EdgeWeak {
				continue
			}
			process(to[e], state)
		}
	}
	for len(attached) > 0 {
		i := attached[len(attached)-1]
		attached = attached[:len(attached)-1]
		push(i, DOMAttached)
	}
	for len(detached) > 0 {
		i := detached[len(detached)-1]
		detached = detached[:len(detached)-1]
		if ds.State(i) == DOMAttached {
			continue
		}
		push(i, DOMDetached)
	}
	return ds
}

// rawName is the node's name as DevTools' rawName() returns it after DOM
// propagation: with the "Detached " prefix for renamed native nodes.
func (ds *DOMState) rawName(g *model.Graph, n int32) string {
	if ds != nil && ds.Renamed != nil && ds.Renamed.Has(int(n)) {
		return DetachedPrefix + g.NodeName(n)
	}
	return g.NodeName(n)
}

// isRenamed reports whether n is shown with the "Detached " prefix.
func (ds *DOMState) isRenamed(n int32) bool {
	return ds != nil && ds.Renamed != nil && ds.Renamed.Has(int(n))
}
