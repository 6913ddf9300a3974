package analysistest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// LinkedList builds the heap of a program whose global `list` is a
// linked list of items Item -.next-> Item, each with a `.data` object,
// items items long: the root, its shortcut to global, (GC roots), the
// List, then item i at node 4+2i and its data at 5+2i. Graphs of one list
// at several lengths share their ids, as snapshots of one process do.
func LinkedList(items int) *model.Graph {
	nodes := []Node{{Type: "synthetic", Name: "", Size: 0}, {Type: "synthetic", Name: "(GC roots)", Size: 0}, Obj("global", 100), Obj("List", 32)}
	edges := []Edge{{From: 0, To: 1, Type: ElementEdge, Index: 1}, {From: 0, To: 2, Type: ShortcutEdge, Name: "2"},
		Prop(2, 3, "list")}
	for i := 0; i < items; i++ {
		it, data := int32(4+2*i), int32(5+2*i)
		nodes = append(nodes, Obj("Item", 48), Obj("Object", 32))
		from, name := it-2, "next"
		if i == 0 {
			from, name = 3, "head"
		}
		edges = append(edges, Prop(from, it, name), Prop(it, data, "data"))
	}
	return Build(nodes, edges)
}

// AnalyzeList analyses LinkedList(items).
func AnalyzeList(t testing.TB, items int) *analysis.Analysis {
	a, err := analysis.Analyze(LinkedList(items), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// NodeList is testdata/node-list-20k.json, the ids bench/gen-linkedlist.js
// read from the process that wrote the node-list-20k snapshots.
type NodeList struct {
	Items         int    `json:"items"`
	WarmItems     int    `json:"warm_items"`
	HeadID        uint64 `json:"head_id"`
	FirstLeakedID uint64 `json:"first_leaked_id"`
	TailID        uint64 `json:"tail_id"`
}

// NodeListSeries analyses the node-list-20k snapshots (a real Node 20
// heap: a list held by its head alone, `class Item { value; next }`, 100
// items before the baseline, 20,000 appended before the target, still
// there in the final snapshot) and returns them with their ids.
func NodeListSeries(t *testing.T) ([]*analysis.Analysis, NodeList) {
	t.Helper()
	var as []*analysis.Analysis
	for _, step := range []string{"1-baseline", "2-target", "3-final"} {
		a, err := analysis.Analyze(LoadFixture(t, "node-list-20k-"+step), analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		as = append(as, a)
	}
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "node-list-20k.json"))
	if err != nil {
		t.Fatal(err)
	}
	var l NodeList
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	return as, l
}

// NodeByID returns the node with id id in a, failing the test without one.
func NodeByID(t *testing.T, a *analysis.Analysis, id uint64) int32 {
	t.Helper()
	n, ok := a.NodeByID(id)
	if !ok {
		t.Fatalf("no node @%d", id)
	}
	return n
}
