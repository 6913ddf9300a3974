package lifetime

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/heapx/heapx/model"
)

// Namespace is the namespace of the lifetime fields, node types and
// metadata heapx convert writes for a memory trace (docs/format.md 2.10);
// DumpVersion their version, written as the metadata
// heapx_lifetime:version.
const (
	Namespace   = "heapx_lifetime"
	DumpVersion = 1
)

// The lifetime node fields, in the order they are declared.
const (
	FieldAllocTime       = Namespace + ":alloc_time"
	FieldLastUse         = Namespace + ":last_use"
	FieldUnreachableTime = Namespace + ":unreachable_time"
)

// Node types of a lifetime dump, by index.
const (
	lifetimeRootType uint8 = iota
	lifetimeObjectType
	lifetimeFunctionType
)

// lifetimeOrder is the objects' order in the dump: by allocation time,
// then id (the analysis decides them in order of death).
func lifetimeOrder(res *Result) []int32 {
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

// Graph turns the lifetime analysis res into an exchange-format dump
// (heapx convert of a trace): a synthetic root, then one node per object
// the trace allocated, in allocation order, named by its allocation site
// (file:line:column) and typed by its kind (heapx_lifetime:object or
// heapx_lifetime:function), with the node fields FieldAllocTime,
// FieldLastUse (null when never used) and FieldUnreachableTime (null when
// alive at the end). The dump has no edges: the analysis drops an
// object's references when it dies and does not keep the heap of the end.
func Graph(res *Result) (*model.Graph, []model.NodeField) {
	n := len(res.Objects) + 1
	g := &model.Graph{
		Meta: []model.KV{
			{Key: "producer", Value: "heapx trace"},
			{Key: "heapx:source_format", Value: "heapx.memtrace"},
			{Key: Namespace + ":version", Value: strconv.Itoa(DumpVersion)},
			{Key: Namespace + ":end_time", Value: strconv.FormatUint(res.End, 10)},
		},
		NodeTypes: []model.NodeType{
			lifetimeRootType:     {Namespace: Namespace, Name: "(root)", Category: model.CatSynthetic},
			lifetimeObjectType:   {Namespace: Namespace, Name: "object", Category: model.CatObject},
			lifetimeFunctionType: {Namespace: Namespace, Name: "function", Category: model.CatClosure},
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
	alloc := model.NodeField{Name: FieldAllocTime, Values: make([]uint64, n), Missing: make([]bool, n)}
	use := model.NodeField{Name: FieldLastUse, Values: make([]uint64, n), Missing: make([]bool, n)}
	gone := model.NodeField{Name: FieldUnreachableTime, Values: make([]uint64, n), Missing: make([]bool, n)}
	alloc.Missing[0], use.Missing[0], gone.Missing[0] = true, true, true
	for k, oi := range lifetimeOrder(res) {
		o := &res.Objects[oi]
		i := k + 1
		g.Nodes.ID.Set(i, o.ID)
		g.Nodes.Name[i] = siteName[o.Site]
		g.Nodes.Type[i] = lifetimeObjectType
		if o.Flags&RecFunction != 0 {
			g.Nodes.Type[i] = lifetimeFunctionType
		}
		alloc.Values[i] = o.Alloc
		use.Values[i], use.Missing[i] = o.LastUse, o.LastUse == 0
		gone.Values[i], gone.Missing[i] = o.Unreachable, o.Flags&RecAtEnd != 0
	}
	return g, []model.NodeField{alloc, use, gone}
}
