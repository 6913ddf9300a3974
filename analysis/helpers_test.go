package analysis_test

import (
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// V8 type tables as the V8 reader builds them.
var (
	v8NodeTypes = []string{"hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native",
		"synthetic", "concatenated string", "sliced string", "symbol", "bigint", "object shape"}
	v8EdgeTypes = []model.EdgeType{
		{Namespace: "v8", Name: "context", Category: model.EdgeContext},
		{Namespace: "v8", Name: "element", Category: model.EdgeElement, Indexed: true},
		{Namespace: "v8", Name: "property", Category: model.EdgeProperty},
		{Namespace: "v8", Name: "internal", Category: model.EdgeInternal},
		{Namespace: "v8", Name: "hidden", Category: model.EdgeInternal, Indexed: true},
		{Namespace: "v8", Name: "shortcut", Strength: model.Shortcut},
		{Namespace: "v8", Name: "weak", Category: model.EdgeInternal, Strength: model.Weak},
		{Namespace: "v8", Name: "internal", Category: model.EdgeInternal, Strength: model.Ephemeron},
	}
)

// v8Categories is the V8 reader's mapping to neutral categories.
var v8Categories = map[string]model.Category{
	"hidden": model.CatInternal, "array": model.CatArray, "string": model.CatString, "object": model.CatObject,
	"code": model.CatCode, "closure": model.CatClosure, "regexp": model.CatRegExp, "number": model.CatHeapNumber,
	"native": model.CatNative, "synthetic": model.CatSynthetic, "concatenated string": model.CatConsString,
	"sliced string": model.CatSlicedString, "symbol": model.CatSymbol, "bigint": model.CatBigInt, "object shape": model.CatShape,
}

// Edge type indexes in v8EdgeTypes.
const (
	eContext  = 0
	eElement  = 1
	eProperty = 2
	eInternal = 3
	eHidden   = 4
	eShortcut = 5
	eWeak     = 6
	eEphemer  = 7
)

// tnode and tedge describe a hand-built graph.
type tnode struct {
	typ  string
	name string
	size uint64
}

type tedge struct {
	from, to int32
	typ      int
	name     string // for named types
	index    uint32 // for indexed types
}

// build makes a V8-like graph: node 0 is the root unless root says
// otherwise; ids are 2*i+1.
func build(nodes []tnode, edges []tedge) *model.Graph {
	g := &model.Graph{}
	for _, t := range v8NodeTypes {
		g.NodeTypes = append(g.NodeTypes, model.NodeType{Namespace: "v8", Name: t, Category: v8Categories[t]})
	}
	g.EdgeTypes = append(g.EdgeTypes, v8EdgeTypes...)
	strs := map[string]uint32{}
	str := func(s string) uint32 {
		if id, ok := strs[s]; ok {
			return id
		}
		id := g.Strings.AddString(s)
		strs[s] = id
		return id
	}
	typeIndex := map[string]uint8{}
	for i, t := range v8NodeTypes {
		typeIndex[t] = uint8(i)
	}
	n := len(nodes)
	g.Nodes.FirstEdge = make([]uint32, n+1)
	for _, e := range edges {
		g.Nodes.FirstEdge[e.from+1]++
	}
	for i := 1; i <= n; i++ {
		g.Nodes.FirstEdge[i] += g.Nodes.FirstEdge[i-1]
	}
	m := len(edges)
	g.Edges.Type = make([]uint8, m)
	g.Edges.Name = make([]uint32, m)
	g.Edges.To = make([]int32, m)
	pos := append([]uint32(nil), g.Nodes.FirstEdge[:n]...)
	for _, e := range edges {
		p := pos[e.from]
		pos[e.from]++
		g.Edges.Type[p] = uint8(e.typ)
		g.Edges.To[p] = e.to
		if v8EdgeTypes[e.typ].Indexed {
			g.Edges.Name[p] = e.index
		} else {
			g.Edges.Name[p] = str(e.name)
		}
	}
	for i, nd := range nodes {
		t, ok := typeIndex[nd.typ]
		if !ok {
			panic("unknown type " + nd.typ)
		}
		g.Nodes.Type = append(g.Nodes.Type, t)
		g.Nodes.Name = append(g.Nodes.Name, str(nd.name))
		g.Nodes.ID.Append(uint64(2*i + 1))
		g.Nodes.Size.Append(nd.size)
	}
	if err := g.Validate(); err != nil {
		panic(err)
	}
	return g
}

// obj is shorthand for an object node.
func obj(name string, size uint64) tnode { return tnode{"object", name, size} }

// prop is shorthand for a property edge.
func prop(from, to int32, name string) tedge {
	return tedge{from: from, to: to, typ: eProperty, name: name}
}

// leaksOf runs analysis.Leaks on three analysed snapshots, the baseline
// and the target as digests, as the leaks command passes them.
func leaksOf(baseline, target, final *analysis.Analysis, opt analysis.LeakOptions) *analysis.LeakResult {
	bd := baseline.Digest(nil)
	return analysis.Leaks(bd, target.Digest(bd), final, opt)
}
