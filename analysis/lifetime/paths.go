package lifetime

import (
	"strings"

	"github.com/heapx/heapx/formats/memtrace"
)

// AccessPath is the shortest chain of references from a root of the
// simulated heap to one object: the first step names the root (the
// global scope, globalThis, the scope of a running or suspended call),
// the others the variables, fields and collection entries followed.
type AccessPath struct {
	ID    uint64
	Steps []string
}

// AccessPaths returns a path to every live object allocated at site, in
// the simulated heap as it is now (Analyze with Options.StopAt), found
// breadth-first from the roots; pos names the iids of scopes.
func (s *Simulator) AccessPaths(site uint64, pos func(uint64) (memtrace.Pos, bool)) []AccessPath {
	n := len(s.nodes)
	from := make([]int32, n) // the node a node was reached from; -2 unreached, -1 a root
	via := make([]int32, n)  // the edge name it was reached by
	for i := range from {
		from[i] = -2
	}
	var queue []int32
	root := func(i int32) {
		if i >= 0 && from[i] == -2 {
			from[i] = -1
			queue = append(queue, i)
		}
	}
	root(s.globalCtx)
	root(s.ids[memtrace.GlobalObject])
	for k := len(s.stack) - 1; k >= 0; k-- {
		root(s.stack[k].ctx)
	}
	for _, c := range s.pinned {
		root(c)
	}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		for e := s.nodes[i].first; e >= 0; e = s.edges[e].next {
			if to := s.edges[e].to; to >= 0 && from[to] == -2 {
				from[to], via[to] = i, s.edges[e].name
				queue = append(queue, to)
			}
		}
	}
	var out []AccessPath
	for i := range s.nodes {
		nd := &s.nodes[i]
		if nd.flags&(fDead|fContext) != 0 || nd.site != site || from[i] == -2 || s.ids[nd.id] != int32(i) {
			continue
		}
		var steps []string
		for j := int32(i); ; j = from[j] {
			if from[j] == -1 {
				steps = append(steps, s.rootName(j, pos))
				break
			}
			steps = append(steps, s.stepName(from[j], via[j]))
		}
		for a, b := 0, len(steps)-1; a < b; a, b = a+1, b-1 {
			steps[a], steps[b] = steps[b], steps[a]
		}
		out = append(out, AccessPath{ID: nd.id, Steps: steps})
	}
	return out
}

func (s *Simulator) rootName(i int32, pos func(uint64) (memtrace.Pos, bool)) string {
	switch {
	case i == s.globalCtx:
		return "global scope"
	case s.nodes[i].id == memtrace.GlobalObject && s.nodes[i].flags&fContext == 0:
		return "globalThis"
	}
	p, _ := pos(s.nodes[i].fn)
	switch f := s.nodes[i].flags; {
	case f&fModule != 0:
		return "module scope of " + p.File
	case f&fCallee != 0:
		return "a function made by untraced code"
	case f&fPinned != 0:
		return "scope of the suspended call of " + p.String()
	}
	return "scope of the running call of " + p.String()
}

// stepName names the edge name followed from node from.
func (s *Simulator) stepName(from, name int32) string {
	switch name {
	case nameParent:
		return "(enclosing scope)"
	case nameContext:
		return "(closure scope)"
	}
	text := s.nameList[name]
	if strings.HasPrefix(text, "\x00") {
		if text[1] == 'k' {
			return "(collection key " + text[2:] + ")"
		}
		return "(collection entry " + text[2:] + ")"
	}
	if s.nodes[from].flags&fContext != 0 {
		return "variable " + text
	}
	if strings.HasPrefix(text, "[") {
		return text
	}
	return "." + text
}
