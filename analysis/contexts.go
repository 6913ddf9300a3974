package analysis

import (
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// V8's names of a scope's context and of the realm's native context.
const (
	contextName       = "system / Context"
	nativeContextName = "system / NativeContext"
)

// maxScopeDepth bounds how many enclosing inner scopes ContextName walks
// out of to find a function's.
const maxScopeDepth = 8

// IsContext reports whether node n is a V8 context: the variables of a
// function's, a module's or a block's scope that closures keep.
func IsContext(g *model.Graph, n model.NodeIndex) bool {
	return kinds.IsV8(g) && IsContextName(g.NodeName(n))
}

// IsContextName reports whether a V8 node's name is a context's:
// "system / Context", or, as Chromium 156 names them after their scope,
// "system / Context / scope @39185" (a class per scope in the Summary).
func IsContextName(name string) bool {
	return name == contextName || strings.HasPrefix(name, contextName+" / ")
}

// ContextName says in words which scope the V8 context n holds the
// variables of, where DevTools says "system / Context":
//
//   - "module scope of app.js": a module's top-level variables (its
//     scope is the outermost but the realm's, and a function of
//     app.js closes over it);
//   - "context of handle (app.js:15)": the variables of a call of the
//     function handle, defined at app.js line 15, that its inner
//     functions keep (the function the context's scope information
//     belongs to, and where a live closure of it is defined);
//   - "scope inside context of handle (app.js:15)": an inner scope's (a
//     block's, a loop body's, or a function's no closure of which is
//     alive) inside one of those.
//
// It is "" for a node that is no context, and for one nothing names
// (no function of its scope is alive). The scripts are named by the
// dump's Resolver, the functions' positions line-only. It reads an
// index of the edges between functions, contexts and their scope
// information, which it builds on first use.
func (a *Analysis) ContextName(n model.NodeIndex) string {
	g := a.Graph
	if !IsContext(g, n) {
		return ""
	}
	prefix := ""
	for range maxScopeDepth {
		prev := namedEdge(g, n, "previous")
		outermost := prev == model.NoNode || g.NodeName(prev) == nativeContextName
		if name := a.functionScopeName(n, outermost); name != "" {
			return prefix + name
		}
		if outermost {
			if script := a.scopeScript(n); script != "" {
				return prefix + "module scope of " + ShortScriptName(script)
			}
			return ""
		}
		if !IsContext(g, prev) {
			return ""
		}
		prefix += "scope inside "
		n = prev
	}
	return ""
}

// functionScopeName names context n after the function whose scope it
// is: the SharedFunctionInfo that shares its scope information
// ("name_or_scope_info"), with the position of a closure of it; "" when
// none is alive, or for the outermost scope's anonymous function (a
// CommonJS module's wrapper: its scope is the module's).
func (a *Analysis) functionScopeName(n model.NodeIndex, outermost bool) string {
	g := a.Graph
	info := namedEdge(g, n, "scope_info")
	if info == model.NoNode {
		return ""
	}
	shared := a.retainerBy(info, "name_or_scope_info")
	if shared == model.NoNode {
		return ""
	}
	// V8 names a SharedFunctionInfo after its function, an anonymous
	// one "" or "(shared function info)"; Chromium's V8 writes "system /
	// SharedFunctionInfo / Dialog", and the bare prefix when anonymous.
	fname := g.NodeName(shared)
	if strings.HasPrefix(fname, "(") {
		fname = ""
	}
	if rest, ok := strings.CutPrefix(fname, "system / SharedFunctionInfo"); ok {
		fname = strings.TrimPrefix(rest, " / ")
	}
	if fname == "" && outermost {
		return ""
	}
	if fname == "" {
		fname = "an anonymous function"
	}
	name := "context of " + fname
	if fn := a.retainerBy(shared, "shared"); fn != model.NoNode {
		if p, ok := a.Resolver().NodePosition(fn); ok {
			p.Column = 0
			name += " (" + p.Short() + ")"
		}
	}
	return name
}

// scopeScript names the script of context n's scope: that of a function
// that closes over it.
func (a *Analysis) scopeScript(n model.NodeIndex) string {
	g := a.Graph
	fn := a.retainerBy(n, "context")
	if fn == model.NoNode {
		return ""
	}
	if l, ok := a.Resolver().NodeLocation(fn); ok {
		if s, ok := a.Resolver().Script(l.ScriptID); ok {
			return DisplayScriptName(s.URL)
		}
	}
	if script := FunctionScript(g, fn); script != model.NoNode {
		return DisplayScriptName(g.NodeName(script))
	}
	return ""
}

// retainerBy returns the first node that retains n by an edge named
// name (one of linkNames), model.NoNode when none does.
func (a *Analysis) retainerBy(n model.NodeIndex, name string) model.NodeIndex {
	g := a.Graph
	l := a.functionLinks()
	for i, _ := slices.BinarySearch(l.to, n); i < len(l.to) && l.to[i] == n; i++ {
		if e := l.edge[i]; g.EdgeName(e) == name {
			return EdgeSource(g, e)
		}
	}
	return model.NoNode
}

// linkNames name the edges ContextName follows backwards: a function's
// to its context and to its SharedFunctionInfo, the latter's to its
// scope information.
var linkNames = []string{"context", "shared", "name_or_scope_info"}

// links is the retainer index of the edges named linkNames alone, for
// ContextName: 8 bytes an edge of a few per function, where the whole
// index (Retainers) costs 4 bytes an edge of the heap and a node, which a
// report showing a path through a context would otherwise build and keep.
type links struct {
	to   []model.NodeIndex // ascending
	edge []uint32          // edge[i] leads to to[i]; a node's in edge order
}

// functionLinks returns a's links, built on first use.
func (a *Analysis) functionLinks() *links {
	a.linksOnce.Do(func() { a.links = buildLinks(a.Graph) })
	return a.links
}

// buildLinks indexes g's non-indexed edges named linkNames: one scan of
// the edges, each name compared once per string of the dump.
func buildLinks(g *model.Graph) *links {
	l := &links{}
	match := make([]int8, g.Strings.Len()) // 0 unknown, 1 a link's name, 2 not
	for e := range uint32(g.NumEdges()) {
		if g.EdgeType(e).Indexed {
			continue
		}
		id := g.Edges.Name[e]
		if match[id] == 0 {
			match[id] = 2
			if slices.Contains(linkNames, g.Strings.At(id)) {
				match[id] = 1
			}
		}
		if match[id] == 1 {
			l.to, l.edge = append(l.to, g.Edges.To[e]), append(l.edge, e)
		}
	}
	idx := make([]int, len(l.to))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return int(l.to[i]) - int(l.to[j]) })
	to, edge := make([]model.NodeIndex, len(idx)), make([]uint32, len(idx))
	for k, i := range idx {
		to[k], edge[k] = l.to[i], l.edge[i]
	}
	l.to, l.edge = to, edge
	return l
}
