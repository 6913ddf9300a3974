package leak_test

import (
	"reflect"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/model"
)

// diffPair is a base graph with A×2, B and an array, and a target where
// one A, B and the array are gone and two As and a C are new; global and
// the first A keep their ids.
func diffPair(t *testing.T) (base, target *model.Graph) {
	t.Helper()
	root := analysistest.Node{Type: "synthetic", Name: "", Size: 0}
	base = analysistest.Build([]analysistest.Node{root, analysistest.Obj("global", 8), analysistest.Obj("A", 10), analysistest.Obj("A", 10), analysistest.Obj("B", 7), {Type: "array", Name: "(arr)", Size: 4}},
		[]analysistest.Edge{{From: 0, To: 1, Type: analysistest.ShortcutEdge, Name: "global"}, analysistest.Prop(1, 2, "a1"), analysistest.Prop(1, 3, "a2"), analysistest.Prop(1, 4, "b"),
			{From: 2, To: 5, Type: analysistest.ElementEdge, Index: 0}, {From: 5, To: 4, Type: analysistest.ElementEdge, Index: 0}})
	target = analysistest.Build([]analysistest.Node{root, analysistest.Obj("global", 8), analysistest.Obj("A", 10), analysistest.Obj("A", 10), analysistest.Obj("A", 10), analysistest.Obj("C", 5)},
		[]analysistest.Edge{{From: 0, To: 1, Type: analysistest.ShortcutEdge, Name: "global"}, analysistest.Prop(1, 2, "a1"), analysistest.Prop(1, 3, "a3"), analysistest.Prop(1, 4, "a4"), analysistest.Prop(1, 5, "c")})
	// Target nodes 3, 4 and 5 are new: give them ids the base does not
	// have (V8 never gives a new object an id it gave another).
	target.Nodes.ID.Set(3, 101)
	target.Nodes.ID.Set(4, 103)
	target.Nodes.ID.Set(5, 105)
	return base, target
}

func analyzeAll(t *testing.T, g *model.Graph) *analysis.Analysis {
	t.Helper()
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// renumbered is diffPair with every target id changed, as between two
// processes whose ids are addresses.
func renumbered(t *testing.T) (base, target *analysis.Analysis) {
	b, tg := diffPair(t)
	for i := range tg.Nodes.ID.Len() {
		tg.Nodes.ID.Set(i, tg.Nodes.ID.At(i)+1<<40)
	}
	return analyzeAll(t, b), analyzeAll(t, tg)
}

func TestDiffByID(t *testing.T) {
	b, tg := diffPair(t)
	d := leak.Diff(analyzeAll(t, b), analyzeAll(t, tg))
	// Base: global, A@5 (14 bytes: the array's 4 moved to it), A@7 and
	// B@9; the root has no size. global and A@5 are found again: 2 of 4.
	if d.Matching != leak.MatchByID || d.IDOverlap != 0.5 {
		t.Fatalf("matching %v, overlap %v", d.Matching, d.IDOverlap)
	}
	want := []leak.ClassDiff{
		{Name: "A", Key: ",A", New: 2, Deleted: 1, Delta: 1, AllocSize: 20, FreedSize: 10, SizeDelta: 10, BaseCount: 2, TargetCount: 3,
			BaseSize: 24, TargetSize: 30, NewNodes: []int32{3, 4}},
		{Name: "C", Key: ",C", New: 1, Delta: 1, AllocSize: 5, SizeDelta: 5, TargetCount: 1, TargetSize: 5, NewNodes: []int32{5}},
		{Name: "B", Key: ",B", Deleted: 1, Delta: -1, FreedSize: 7, SizeDelta: -7, BaseCount: 1, BaseSize: 7},
	}
	if !reflect.DeepEqual(d.Classes, want) {
		t.Errorf("rows\n got %+v\nwant %+v", d.Classes, want)
	}
	if d.New != 3 || d.Deleted != 2 || d.AllocSize != 25 || d.FreedSize != 17 {
		t.Errorf("totals %d %d %d %d", d.New, d.Deleted, d.AllocSize, d.FreedSize)
	}
}

func TestDiffUnstableIDs(t *testing.T) {
	d := leak.Diff(renumbered(t))
	if d.Matching != leak.MatchByClass || d.IDOverlap != 0 {
		t.Fatalf("matching %v, overlap %v", d.Matching, d.IDOverlap)
	}
	want := []leak.ClassDiff{
		{Name: "A", Key: ",A", Delta: 1, SizeDelta: 6, BaseCount: 2, TargetCount: 3, BaseSize: 24, TargetSize: 30},
		{Name: "C", Key: ",C", Delta: 1, SizeDelta: 5, TargetCount: 1, TargetSize: 5},
		{Name: "B", Key: ",B", Delta: -1, SizeDelta: -7, BaseCount: 1, BaseSize: 7},
	}
	if !reflect.DeepEqual(d.Classes, want) {
		t.Errorf("rows\n got %+v\nwant %+v", d.Classes, want)
	}
}

func TestDiffNodeFixtures(t *testing.T) {
	as := leakSeries(t)
	d := leak.Diff(as[0], as[1])
	if d.Matching != leak.MatchByID || d.IDOverlap < 0.99 {
		t.Fatalf("matching %v, overlap %v", d.Matching, d.IDOverlap)
	}
	if d.New != 3084 || d.Deleted != 80 || d.AllocSize != 156342 || d.FreedSize != 11662 || len(d.Classes) != 33 {
		t.Errorf("new %d, deleted %d, alloc %d, freed %d, rows %d", d.New, d.Deleted, d.AllocSize, d.FreedSize, len(d.Classes))
	}
	// Sorted by Alloc. Size: each LeakedItem's `data` array (112 bytes
	// with its backing store) comes first, then the payload strings.
	top := [3]string{d.Classes[0].Name, d.Classes[1].Name, d.Classes[2].Name}
	if top != [3]string{"Array", "(concatenated string)", "LeakedItem"} {
		t.Errorf("top rows %v", top)
	}
	li := d.Classes[2]
	if li.New != 500 || li.Deleted != 0 || li.AllocSize != 28000 || li.BaseCount != 500 || li.TargetCount != 1000 || len(li.NewNodes) != leak.MaxDiffExamples {
		t.Errorf("LeakedItem %+v", li)
	}
	for _, v := range li.NewNodes {
		if as[1].Classes.Name(v) != "LeakedItem" {
			t.Errorf("new node %d is a %s", v, as[1].Classes.Name(v))
		}
	}
}
