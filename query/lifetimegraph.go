package query

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// LifetimeNamespace is the namespace of the lifetime fields, node types
// and metadata heapx convert writes for a memory trace (docs/format.md
// 2.10); LifetimeVersion their version, written as the metadata
// heapx_lifetime:version.
const (
	LifetimeNamespace = "heapx_lifetime"
	LifetimeVersion   = 1
)

// The lifetime node fields, in the order they are declared.
const (
	FieldAllocTime       = LifetimeNamespace + ":alloc_time"
	FieldLastUse         = LifetimeNamespace + ":last_use"
	FieldUnreachableTime = LifetimeNamespace + ":unreachable_time"
)

// LifetimeGraph turns the lifetime analysis of the trace at path into an
// exchange-format dump: a synthetic root, then one node per object the
// trace allocated, in allocation order, named by its allocation site
// (file:line:column) and typed by its kind (heapx_lifetime:object or
// heapx_lifetime:function), with the node fields FieldAllocTime,
// FieldLastUse (null when never used) and FieldUnreachableTime (null when
// alive at the end). The dump has no edges: the analysis drops an
// object's references when it dies and does not keep the heap of the end.
func LifetimeGraph(path string) (*model.Graph, []formats.NodeField, error) {
	res, err := Lifetimes(path)
	if err != nil {
		return nil, nil, err
	}
	g, fields := lifetimeDump(res)
	return g, fields, nil
}

// Node types of a lifetime dump, by index.
const (
	lifetimeRootType uint8 = iota
	lifetimeObjectType
	lifetimeFunctionType
)

// lifetimeOrder is the objects' order in the dump: by allocation time,
// then id (the analysis decides them in order of death).
func lifetimeOrder(res *lifetime.Result) []int32 {
	order := make([]int32, len(res.Objects))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &res.Objects[a], &res.Objects[b]
		if x.Alloc != y.Alloc {
			return cmp.Compare(x.Alloc, y.Alloc)
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return order
}

// lifetimeDump is LifetimeGraph's graph and node fields for res.
func lifetimeDump(res *lifetime.Result) (*model.Graph, []formats.NodeField) {
	n := len(res.Objects) + 1
	g := &model.Graph{
		Meta: []model.KV{
			{Key: "producer", Value: "heapx trace"},
			{Key: "heapx:source_format", Value: "heapx.memtrace"},
			{Key: LifetimeNamespace + ":version", Value: strconv.Itoa(LifetimeVersion)},
			{Key: LifetimeNamespace + ":end_time", Value: strconv.FormatUint(res.End, 10)},
		},
		NodeTypes: []model.NodeType{
			lifetimeRootType:     {Namespace: LifetimeNamespace, Name: "(root)", Category: model.CatSynthetic},
			lifetimeObjectType:   {Namespace: LifetimeNamespace, Name: "object", Category: model.CatObject},
			lifetimeFunctionType: {Namespace: LifetimeNamespace, Name: "function", Category: model.CatClosure},
		},
		Root: 0,
	}
	g.Nodes.Type = make([]uint8, n)
	g.Nodes.Name = make([]model.StringID, n)
	g.Nodes.ID = model.MakeUint64s(n)
	g.Nodes.Size = model.MakeUint64s(n)
	g.Nodes.FirstEdge = make([]uint32, n+1)
	g.Nodes.Name[0] = g.Strings.AddString("(heapx trace root)")
	// Object ids start at 2 (0 is no object, 1 the global object, which
	// the analysis does not report), so the root takes id 0.
	siteName := make([]model.StringID, len(res.Sites))
	for i := range res.Sites {
		siteName[i] = g.Strings.AddString(res.Sites[i].Pos.String())
	}
	alloc := formats.NodeField{Name: FieldAllocTime, Values: make([]uint64, n), Missing: make([]bool, n)}
	use := formats.NodeField{Name: FieldLastUse, Values: make([]uint64, n), Missing: make([]bool, n)}
	gone := formats.NodeField{Name: FieldUnreachableTime, Values: make([]uint64, n), Missing: make([]bool, n)}
	alloc.Missing[0], use.Missing[0], gone.Missing[0] = true, true, true
	for k, oi := range lifetimeOrder(res) {
		o := &res.Objects[oi]
		i := k + 1
		g.Nodes.ID.Set(i, o.ID)
		g.Nodes.Name[i] = siteName[o.Site]
		g.Nodes.Type[i] = lifetimeObjectType
		if o.Flags&lifetime.RecFunction != 0 {
			g.Nodes.Type[i] = lifetimeFunctionType
		}
		alloc.Values[i] = o.Alloc
		use.Values[i], use.Missing[i] = o.LastUse, o.LastUse == 0
		gone.Values[i], gone.Missing[i] = o.Unreachable, o.Flags&lifetime.RecAtEnd != 0
	}
	return g, []formats.NodeField{alloc, use, gone}
}
