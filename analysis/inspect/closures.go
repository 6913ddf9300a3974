package inspect

import (
	"hash/maphash"
	"slices"
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// ClosureGroup is the closures of one function name with what their
// contexts capture.
type ClosureGroup struct {
	Name  string // the function name, "(anonymous)" when empty
	Count int    // closures of that name
	// Contexts counts the distinct contexts with captured variables they
	// hold, ContextRetained sums those contexts' retained sizes: what the
	// captured variables cost.
	Contexts        int
	ContextRetained uint64
	// Variables are the captured variable names over all the contexts,
	// sorted.
	Variables []string
	// Largest is the captured value with the largest retained size (NoNode
	// when nothing is captured), LargestVar the variable holding it.
	Largest         model.NodeIndex
	LargestVar      string
	LargestRetained uint64
	Example         model.NodeIndex // the closure with the smallest node index
	// Location is where the function is defined (V8's locations, made
	// one-based; Function is Name): the place most of the closures share,
	// zero when the dump has no locations for them (Firefox, HPROF).
	// Places counts the distinct places closures of this name come from.
	Location alloc.Frame
	Places   int
}

// Closures groups the closures (model.CatClosure) by function name and
// reports what their contexts hold, largest ContextRetained first (then by
// count, then by example node), at most limit groups.
//
// A closure's context is the node its edge named "context" (V8's internal
// edge to the system / Context) or "environment" leads to (in SpiderMonkey
// dumps: the target of an environment class, such as LexicalEnvironment), or the closure itself when it has closure
// variable edges (model.EdgeContext) of its own; the captured variables are
// that node's closure-variable edges. Only the innermost context is read:
// variables of enclosing scopes (V8's "previous" chain) are not listed. A
// context without variables (V8's NativeContext, which every builtin
// function holds) captures nothing and is not counted, so its size does
// not show up once per builtin function name.
func Closures(a *analysis.Analysis, limit int) []ClosureGroup {
	g := a.Graph
	k := kinds.New(g)
	ctxEdge := namedStrings(g, "context", "environment")
	isVar := func(e uint32) bool { return k.Edge[g.Edges.Type[e]] == kinds.EdgeContext }
	contextOf := func(c int32) int32 {
		s, end := g.EdgeRange(c)
		for e := s; e < end; e++ {
			if isVar(e) {
				return c
			}
		}
		for e := s; e < end; e++ {
			if ek := k.Edge[g.Edges.Type[e]]; (ek == kinds.EdgeInternal || ek == kinds.EdgeOther) && !k.Indexed[g.Edges.Type[e]] && ctxEdge.Has(int(g.Edges.Name[e])) {
				return g.Edges.To[e]
			}
		}
		return model.NoNode
	}
	if kinds.IsSpiderMonkey(g) {
		// Firefox's dumps name a closure's environment slot
		// "**UNKNOWN SLOT 1**" and give every edge one type: the
		// context is the edge target of an environment class, and its
		// variables are its edges named like identifiers, but for the
		// engine's own ("shape", "enclosing_environment").
		isVar = func(e uint32) bool {
			name := g.EdgeName(e)
			return IsIdentifier(name) && name != "shape" && name != "enclosing_environment"
		}
		contextOf = func(c int32) int32 {
			s, end := g.EdgeRange(c)
			for e := s; e < end; e++ {
				if to := g.Edges.To[e]; isEnvironmentClass(g.NodeName(to)) {
					return to
				}
			}
			return model.NoNode
		}
	}
	var closures []int32
	for i, t := range g.Nodes.Type {
		if g.NodeTypes[t].Category == model.CatClosure {
			closures = append(closures, int32(i))
		}
	}
	names := g.Nodes.Name
	keys := hashKeys(closures, func(n int32) uint64 { return maphash.String(hashSeed, g.Strings.At(names[n])) })
	seen := analysis.NewBits(g.NumNodes())
	ret := a.Dominators.Retained
	locs := alloc.NewNodeLocations(a)
	var rows []ClosureGroup
	groupSorted(keys, func(x, y int32) bool {
		return names[x] == names[y] || g.Strings.At(names[x]) == g.Strings.At(names[y])
	}, func(group []int32) {
		r := ClosureGroup{Name: g.Strings.At(names[group[0]]), Count: len(group), Largest: model.NoNode, Example: group[0]}
		if r.Name == "" {
			r.Name = "(anonymous)"
		}
		for _, c := range group {
			ctx := contextOf(c)
			if ctx < 0 || seen.Has(int(ctx)) {
				continue
			}
			seen.Set(int(ctx))
			vars := 0
			s, end := g.EdgeRange(ctx)
			for e := s; e < end; e++ {
				if !isVar(e) {
					continue
				}
				vars++
				name, v := g.EdgeName(e), g.Edges.To[e]
				if !slices.Contains(r.Variables, name) {
					r.Variables = append(r.Variables, name)
				}
				if r.Largest < 0 || ret[v] > r.LargestRetained {
					r.Largest, r.LargestVar, r.LargestRetained = v, name, ret[v]
				}
			}
			if vars > 0 {
				r.Contexts++
				r.ContextRetained += ret[ctx]
			}
		}
		for _, c := range group {
			if ctx := contextOf(c); ctx >= 0 {
				seen.Clear(int(ctx))
			}
		}
		sort.Strings(r.Variables)
		r.Location, r.Places = locs.Dominant(group)
		if r.Places > 0 {
			r.Location.Function = r.Name
		}
		rows = append(rows, r)
	})
	sort.Slice(rows, func(i, j int) bool {
		x, y := &rows[i], &rows[j]
		if x.ContextRetained != y.ContextRetained {
			return x.ContextRetained > y.ContextRetained
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.Example < y.Example
	})
	return limitRows(rows, limit)
}

// isEnvironmentClass reports whether a SpiderMonkey object class is a
// scope environment (what a closure captures variables in).
func isEnvironmentClass(name string) bool {
	return strings.HasSuffix(name, "Environment") || name == "Call" || name == "NamedLambdaObject"
}
