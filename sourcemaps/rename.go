package sourcemaps

import (
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// Rename gives the functions and class instances of a V8 graph the names
// their scripts' maps have for them, before the graph is analysed: a
// minified class t whose map names it LedgerRow makes its instances and
// its constructor LedgerRow, so the Summary, the closures, the paths and
// every other view show the program's names. A node is renamed when it
// has a location (V8 records one for every function and for objects
// made by a constructor) and the map names what is defined there
// (Set.MapName); the functions of an allocation trace are renamed by
// their positions in the same way. It returns how many nodes it renamed.
// res names the graph's scripts; the graph's strings grow by the new
// names.
func Rename(g *model.Graph, res *analysis.Resolver, s *Set) int {
	type key struct {
		script, line, col uint32
		name              model.StringID
	}
	renamed := map[key]model.StringID{} // NoString: no name
	const none = ^model.StringID(0)
	mapped := map[uint32]bool{} // by script id: whether it has a map
	lookup := func(k key) model.StringID {
		has, ok := mapped[k.script]
		if !ok {
			has = s.scriptFor(analysis.Position{ScriptID: k.script, Script: res.ScriptName(k.script)}) != nil
			mapped[k.script] = has
		}
		if !has {
			return none
		}
		if id, ok := renamed[k]; ok {
			return id
		}
		id := none
		p := analysis.Position{ScriptID: k.script, Script: res.ScriptName(k.script), Line: int32(k.line) + 1, Column: int32(k.col) + 1}
		if orig, ok := s.MapName(p, g.Strings.At(k.name)); ok {
			id = g.Strings.AddString(orig)
		}
		renamed[k] = id
		return id
	}
	n := 0
	for _, l := range g.Locations {
		t := g.NodeType(l.Node)
		if t.Namespace != "v8" || t.Name != "closure" && t.Name != "object" {
			continue
		}
		if id := lookup(key{l.ScriptID, l.Line, l.Column, g.Nodes.Name[l.Node]}); id != none {
			g.Nodes.Name[l.Node] = id
			n++
		}
	}
	if g.Trace != nil {
		for i := range g.Trace.Functions {
			f := &g.Trace.Functions[i]
			if f.Line <= 0 || f.Column <= 0 {
				continue
			}
			if id := lookup(key{f.ScriptID, uint32(f.Line - 1), uint32(f.Column - 1), f.Name}); id != none {
				f.Name = id
			}
		}
	}
	return n
}

// RenameProfile gives the functions of a sampling heap profile the names
// their scripts' maps have for them, as Rename does a graph's: a profile's
// frames name functions as V8 does, minified.
func RenameProfile(p *model.SamplingProfile, s *Set) {
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Line < 0 || n.Column < 0 {
			continue
		}
		if orig, ok := s.MapName(analysis.Position{Script: n.URL, Line: n.Line + 1, Column: n.Column + 1}, n.Function); ok {
			n.Function = orig
		}
	}
}
