package analysis

import (
	"cmp"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Position is a place in a program's code as heapx prints it.
type Position struct {
	// ScriptID is V8's id of the script, 0 when unknown.
	ScriptID uint32
	// Script names the script: its path or URL as the runtime knew it
	// ("/srv/app.js", "https://example.com/main.js",
	// "node:internal/timers"), "script 81" when only its id is known,
	// "" when nothing is.
	Script string
	// Line and Column are one-based, as editors count; 0 when unknown.
	Line, Column int32
}

// String writes p as script:line:column, the script alone when the line
// is unknown, "" for the zero Position.
func (p Position) String() string { return p.format(p.Script) }

// Short is String with the script's name cut to its file name
// ("app.js:15:3"), or its last two parts for an index file
// ("router/index.js:7"), as a sentence or a table cell shows it.
func (p Position) Short() string { return p.format(ShortScriptName(p.Script)) }

func (p Position) format(script string) string {
	s := script
	if p.Line > 0 {
		s += ":" + strconv.Itoa(int(p.Line))
		if p.Column > 0 {
			s += ":" + strconv.Itoa(int(p.Column))
		}
	}
	return s
}

// ShortScriptName cuts a script's path or URL to what names it in a
// sentence: its file name, with its directory's for an index file
// ("router/index.js"), the query and fragment of a URL left out. Runtime
// modules ("node:internal/timers") and ids ("script 81") are kept whole.
func ShortScriptName(name string) string {
	if name == "" || IsRuntimeScript(name) || strings.HasPrefix(name, "script ") {
		return name
	}
	if i := strings.IndexAny(name, "?#"); i > 0 && strings.Contains(name, "://") {
		name = name[:i]
	}
	name = strings.TrimRight(name, "/")
	dir, base := path.Split(strings.ReplaceAll(name, "\\", "/"))
	if base == "" {
		return name
	}
	if strings.HasPrefix(base, "index.") {
		if _, parent := path.Split(strings.TrimRight(dir, "/")); parent != "" && !strings.Contains(parent, ":") {
			return parent + "/" + base
		}
	}
	return base
}

// IsRuntimeScript reports whether a script is the runtime's own code
// rather than the program's: Node's and Bun's modules ("node:..."),
// Deno's ("ext:..."), and older Node's internals ("internal/...").
func IsRuntimeScript(name string) bool {
	return strings.HasPrefix(name, "node:") || strings.HasPrefix(name, "ext:") || strings.HasPrefix(name, "internal/")
}

// PositionMapper maps a position in the code the runtime ran to the
// source it was built from, as a source map does; ok is false when it
// knows no better place for p, which is then shown as it is. Set one on
// a dump's Resolver (Resolver.SetMapper) and every view that prints a
// position prints the mapped one.
type PositionMapper interface {
	MapPosition(p Position) (mapped Position, ok bool)
}

// Resolver turns the positions a dump records (a V8 script id, line and
// column; an allocation stack's script name; a node with a location)
// into the Positions heapx prints. It is the one place where script ids
// get their names and where source maps plug in (SetMapper): every view
// that shows a place in the program's code asks it.
//
// A script's name comes from, in order: the scripts side file recorded
// beside the dump (model.Graph.Scripts: the inspector's own list, with
// each script's source map); the snapshot's Script objects, which V8
// names after their script, reached from a location's script_object_index
// (newer V8) or from the SharedFunctionInfo of a function with a
// location; the allocation trace's functions, which carry their script's
// name and id. A script none of them names is "script ID".
//
// Safe for concurrent use.
type Resolver struct {
	g       *model.Graph
	scripts map[uint32]model.Script
	mapper  atomic.Pointer[mapperBox]

	locOnce sync.Once
	byNode  []int32 // indices into g.Locations by node, then index
}

// mapperBox holds a PositionMapper for an atomic pointer.
type mapperBox struct{ m PositionMapper }

// NewResolver returns a Resolver for g's positions; g may be nil for
// positions that come with their script's name (a sampling profile's).
func NewResolver(g *model.Graph) *Resolver {
	r := &Resolver{g: g, scripts: map[uint32]model.Script{}}
	if g == nil {
		return r
	}
	if g.Scripts != nil && g.Scripts.Err == nil {
		for _, s := range g.Scripts.List {
			r.scripts[s.ID] = s
		}
	}
	r.nameFromSnapshot()
	if g.Trace != nil {
		for i := range g.Trace.Functions {
			f := &g.Trace.Functions[i]
			r.name(f.ScriptID, g.Strings.At(f.ScriptName))
		}
	}
	return r
}

// name records id's name unless one is known; "" names nothing.
func (r *Resolver) name(id uint32, name string) {
	if name == "" {
		return
	}
	if s, ok := r.scripts[id]; ok && s.URL != "" {
		return
	}
	s := r.scripts[id]
	s.ID, s.URL = id, name
	r.scripts[id] = s
}

// nameFromSnapshot names the scripts of g's locations after the
// snapshot's Script objects: a location's own (LocationScripts), else
// that of a function it locates.
func (r *Resolver) nameFromSnapshot() {
	g := r.g
	if len(g.Locations) == 0 {
		return
	}
	k := kinds.New(g)
	for i, l := range g.Locations {
		if s, ok := r.scripts[l.ScriptID]; ok && s.URL != "" {
			continue
		}
		if g.LocationScripts != nil {
			r.name(l.ScriptID, g.NodeName(g.LocationScripts[i]))
			continue
		}
		if k.Node[g.Nodes.Type[l.Node]] != kinds.Closure {
			continue
		}
		if script := FunctionScript(g, l.Node); script != model.NoNode {
			r.name(l.ScriptID, g.NodeName(script))
		}
	}
}

// FunctionScript returns the Script object of V8 function v: the node
// its SharedFunctionInfo ("shared") reaches by "script" (V8 12 and
// later) or "script_or_debug_info" (earlier), which V8 names after the
// script; model.NoNode when there is none (a builtin, a bound function,
// a node that is no function).
func FunctionScript(g *model.Graph, v model.NodeIndex) model.NodeIndex {
	shared := namedEdge(g, v, "shared")
	if shared == model.NoNode {
		return model.NoNode
	}
	return namedEdge(g, shared, "script", "script_or_debug_info")
}

// namedEdge returns the target of n's first named (not indexed) edge
// called one of names, model.NoNode when there is none.
func namedEdge(g *model.Graph, n model.NodeIndex, names ...string) model.NodeIndex {
	s, end := g.EdgeRange(n)
	for e := s; e < end; e++ {
		if g.EdgeType(e).Indexed {
			continue
		}
		if slices.Contains(names, g.EdgeName(e)) {
			return g.Edges.To[e]
		}
	}
	return model.NoNode
}

// SetMapper makes every Position the Resolver returns from now on a
// mapped one where m knows better (source maps); nil removes it.
func (r *Resolver) SetMapper(m PositionMapper) {
	if m == nil {
		r.mapper.Store(nil)
		return
	}
	r.mapper.Store(&mapperBox{m})
}

// Script returns what is known of the script with V8 id id: its name,
// and, from a scripts side file, its source map URL and the rest of
// model.Script; ok is false when nothing names it.
func (r *Resolver) Script(id uint32) (s model.Script, ok bool) {
	s, ok = r.scripts[id]
	return s, ok && s.URL != ""
}

// Scripts returns every script the Resolver knows by name, by id.
func (r *Resolver) Scripts() []model.Script {
	out := make([]model.Script, 0, len(r.scripts))
	for _, s := range r.scripts {
		if s.URL != "" {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b model.Script) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// ScriptName returns the name of the script with V8 id id as heapx
// shows it (DisplayScriptName), "script ID" when nothing names it.
func (r *Resolver) ScriptName(id uint32) string {
	if s, ok := r.Script(id); ok {
		return DisplayScriptName(s.URL)
	}
	return "script " + strconv.FormatUint(uint64(id), 10)
}

// DisplayScriptName is a script's name as heapx shows it: a file: URL as
// its path (Node names a CommonJS script by its path and an ECMAScript
// module, and the inspector every script, by its file: URL), any other
// name as it is.
func DisplayScriptName(name string) string {
	rest, ok := strings.CutPrefix(name, "file://")
	if !ok {
		return name
	}
	if u, err := url.PathUnescape(rest); err == nil {
		rest = u
	}
	if len(rest) > 2 && rest[0] == '/' && rest[2] == ':' {
		rest = rest[1:] // file:///C:/app.js is C:/app.js
	}
	return rest
}

// Locate returns the Position of a V8 location: script id, then line
// and column zero-based as V8 writes them.
func (r *Resolver) Locate(scriptID, line, column uint32) Position {
	return r.Resolve(Position{ScriptID: scriptID, Script: r.ScriptName(scriptID), Line: int32(line) + 1, Column: int32(column) + 1})
}

// Resolve returns p, which names its script as its source did (an
// allocation stack's frame, a sampling profile's), as it is to be shown:
// a script left unnamed named when the Resolver knows its id, mapped
// when a PositionMapper knows better.
func (r *Resolver) Resolve(p Position) Position {
	if p.Script == "" && p.ScriptID != 0 {
		if _, ok := r.Script(p.ScriptID); ok {
			p.Script = r.ScriptName(p.ScriptID)
		}
	} else {
		p.Script = DisplayScriptName(p.Script)
	}
	if b := r.mapper.Load(); b != nil {
		if m, ok := b.m.MapPosition(p); ok {
			return m
		}
	}
	return p
}

// NodeLocation returns the location the dump records for node n (a
// function's definition, an object's constructor), ok false when it
// records none. A node with several has its last, as in DevTools.
func (r *Resolver) NodeLocation(n model.NodeIndex) (l model.Location, ok bool) {
	i := r.LocationIndex(n)
	if i < 0 {
		return l, false
	}
	return r.g.Locations[i], true
}

// NodePosition is NodeLocation as a Position.
func (r *Resolver) NodePosition(n model.NodeIndex) (Position, bool) {
	l, ok := r.NodeLocation(n)
	if !ok {
		return Position{}, false
	}
	return r.Locate(l.ScriptID, l.Line, l.Column), true
}

// LocationIndex returns the index into g.Locations of n's location
// (NodeLocation), -1 for none, by binary search over the locations
// sorted by node, made on first use: no per-node column.
func (r *Resolver) LocationIndex(n model.NodeIndex) int32 {
	if r.g == nil || len(r.g.Locations) == 0 {
		return -1
	}
	ls := r.g.Locations
	r.locOnce.Do(func() {
		order := make([]int32, len(ls))
		for i := range order {
			order[i] = int32(i)
		}
		slices.SortFunc(order, func(x, y int32) int {
			return cmp.Or(cmp.Compare(ls[x].Node, ls[y].Node), cmp.Compare(x, y))
		})
		r.byNode = order
	})
	i, _ := slices.BinarySearchFunc(r.byNode, n+1, func(l int32, n model.NodeIndex) int { return cmp.Compare(ls[l].Node, n) })
	if i == 0 || ls[r.byNode[i-1]].Node != n {
		return -1
	}
	return r.byNode[i-1]
}

// Resolver returns the Resolver of a's dump, made on first use.
func (a *Analysis) Resolver() *Resolver {
	a.resolverOnce.Do(func() { a.resolver = NewResolver(a.Graph) })
	return a.resolver
}
