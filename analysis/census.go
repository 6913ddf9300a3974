package analysis

import (
	"sort"
	"strconv"

	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// TypeCount is a node count and a total self size for one node type or
// category.
type TypeCount struct {
	Count int    // nodes
	Size  uint64 // sum of their raw self sizes
}

// TypeRow is one node type of a census.
type TypeRow struct {
	Type model.NodeType // the type-table entry
	TypeCount
}

// CategoryRow is one neutral category of a census.
type CategoryRow struct {
	Category model.Category // the neutral category
	TypeCount
}

// CensusResult counts nodes and sums raw self sizes by node type and by
// category, for `heapx info`.
type CensusResult struct {
	Nodes, Edges int    // graph size
	TotalSize    uint64 // sum of all raw self sizes
	// ByType has one row per node type that occurs, largest size first.
	ByType []TypeRow
	// ByCategory has one row per category that occurs, largest size first.
	ByCategory []CategoryRow
}

// Census counts g's nodes by type and category.
func Census(g *model.Graph) *CensusResult {
	byType := make([]TypeCount, len(g.NodeTypes))
	for i, t := range g.Nodes.Type {
		byType[t].Count++
		byType[t].Size += g.Nodes.Size.At(i)
	}
	c := &CensusResult{Nodes: g.NumNodes(), Edges: g.NumEdges()}
	var byCat [256]TypeCount
	for t, tc := range byType {
		if tc.Count == 0 {
			continue
		}
		nt := g.NodeTypes[t]
		c.ByType = append(c.ByType, TypeRow{Type: nt, TypeCount: tc})
		byCat[nt.Category].Count += tc.Count
		byCat[nt.Category].Size += tc.Size
		c.TotalSize += tc.Size
	}
	for cat, tc := range byCat {
		if tc.Count > 0 {
			c.ByCategory = append(c.ByCategory, CategoryRow{Category: model.Category(cat), TypeCount: tc})
		}
	}
	sort.SliceStable(c.ByType, func(a, b int) bool { return c.ByType[a].Size > c.ByType[b].Size })
	sort.SliceStable(c.ByCategory, func(a, b int) bool { return c.ByCategory[a].Size > c.ByCategory[b].Size })
	return c
}

// Statistics is DevTools' Statistics pie chart (JSHeapSnapshot.calculateStatistics).
type Statistics struct {
	// Total is DevTools' totalSize: the root's retained size plus the
	// snapshot's extra_native_bytes.
	Total uint64
	// Native is the self size of native nodes plus extra_native_bytes;
	// TypedArrays is the part in "system / JSArrayBufferData" nodes.
	Native, TypedArrays uint64
	// V8Heap is Total - Native; Code, Strings and System are the self
	// sizes of code, string and hidden nodes; JSArrays is the self size of
	// "Array" objects plus that of their "elements" store when the array
	// is its only retainer.
	V8Heap, Code, JSArrays, Strings, System uint64
}

// ExtraNativeBytes returns the snapshot's extra_native_bytes (memory V8
// attributes to the embedder outside any node), 0 when absent.
func ExtraNativeBytes(g *model.Graph) uint64 {
	if v, ok := g.MetaValue("v8:extra_native_bytes"); ok {
		if x, err := strconv.ParseUint(v, 10, 64); err == nil {
			return x
		}
	}
	return 0
}

// TotalSize is DevTools' totalSize, the base of its percentages: the
// root's retained size plus extra_native_bytes.
func TotalSize(g *model.Graph, doms *Dominators) uint64 {
	if len(doms.Retained) == 0 {
		return ExtraNativeBytes(g)
	}
	return doms.Retained[doms.Root] + ExtraNativeBytes(g)
}

// ComputeStatistics computes DevTools' Statistics from the shallow sizes
// self (ShallowSizes) and the dominator tree.
func ComputeStatistics(g *model.Graph, self model.Uint64s, doms *Dominators, ds *DOMState) *Statistics {
	k := kinds.New(g)
	extra := ExtraNativeBytes(g)
	s := &Statistics{Total: TotalSize(g, doms), Native: extra}
	n := g.NumNodes()
	fe := g.Nodes.FirstEdge
	var retainerCount []uint32 // built on first need
	for i := 0; i < n; i++ {
		size := self.At(i)
		switch k.Node[g.Nodes.Type[i]] {
		case kinds.Hidden:
			s.System += size
		case kinds.Native:
			s.Native += size
			if ds.rawName(g, int32(i)) == "system / JSArrayBufferData" {
				s.TypedArrays += size
			}
		case kinds.Code:
			s.Code += size
		case kinds.ConsString, kinds.SlicedString, kinds.String:
			s.Strings += size
		default:
			if g.NodeName(int32(i)) != "Array" {
				continue
			}
			s.JSArrays += size
			for e := fe[i]; e < fe[i+1]; e++ {
				if k.Edge[g.Edges.Type[e]] != kinds.EdgeInternal || g.Strings.At(g.Edges.Name[e]) != "elements" {
					continue
				}
				if retainerCount == nil {
					retainerCount = make([]uint32, n)
					for _, t := range g.Edges.To {
						retainerCount[t]++
					}
				}
				if t := g.Edges.To[e]; retainerCount[t] == 1 {
					s.JSArrays += self.At(int(t))
				}
				break
			}
		}
	}
	s.V8Heap = s.Total - s.Native
	return s
}
