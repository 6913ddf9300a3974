package leak_test

import (
	"reflect"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
)

func TestGrowthNodeFixtures(t *testing.T) {
	as := leakSeries(t)
	r := leak.Growth(as, leak.GrowthOptions{Internals: true})
	if r.Matching != leak.MatchByID || r.IDOverlap < 0.99 {
		t.Fatalf("matching %v, overlap %v", r.Matching, r.IDOverlap)
	}
	want := []leak.ClassGrowth{
		{Name: "Array", Key: ",Array", Counts: []int{629, 1129, 1629}, Sizes: []uint64{100600, 162632, 223928}},
		{Name: "(concatenated string)", Key: ",(concatenated string)", Counts: []int{2424, 3925, 5426}, Sizes: []uint64{77568, 125600, 173632}},
		{Name: "LeakedItem", Key: "81,124,15,LeakedItem", Counts: []int{500, 1000, 1500}, Sizes: []uint64{28000, 56000, 84000}},
		{Name: "(string)", Key: ",(string)", Counts: []int{11451, 11943, 12435}, Sizes: []uint64{406048, 417904, 429760}},
		{Name: "Object", Key: ",Object", Counts: []int{463, 465, 466}, Sizes: []uint64{147472, 147600, 147640}},
		{Name: "(compiled code)", Key: ",(compiled code)", Counts: []int{12751, 12753, 12754}, Sizes: []uint64{897464, 897528, 897576}},
	}
	for i := range want {
		want[i].CountGrows, want[i].SizeGrows = true, true
	}
	if !reflect.DeepEqual(r.Classes, want) || r.Internal != 0 {
		t.Errorf("classes\n got %+v\nwant %+v", r.Classes, want)
	}
	// Without Internals, compiled code (3 functions compiled between the
	// snapshots) is left out and counted: it grows whatever the program
	// keeps.
	if p := leak.Growth(as, leak.GrowthOptions{}); !reflect.DeepEqual(p.Classes, want[:5]) || p.Internal != 1 {
		t.Errorf("without internals: %d classes, %d left out", len(p.Classes), p.Internal)
	}
	// Only the listener's `retained` array grows; its id is @80593 in all
	// three (memlab's leak trace passes through it too).
	if len(r.Collections) != 1 {
		t.Fatalf("collections %+v", r.Collections)
	}
	c := r.Collections[0]
	if c.ID != 80593 || c.Class != "Array" || !reflect.DeepEqual(c.Elements, []int{500, 1000, 1500}) ||
		!reflect.DeepEqual(c.Retained, []uint64{148840, 298480, 447536}) {
		t.Errorf("collection %+v", c)
	}
	for s, a := range as {
		if a.Graph.NodeID(c.Nodes[s]) != 80593 {
			t.Errorf("snapshot %d: node %d", s, c.Nodes[s])
		}
	}
	if l := leak.Growth(as, leak.GrowthOptions{Limit: 2}); len(l.Classes) != 2 || l.Classes[1].Name != "(concatenated string)" {
		t.Errorf("limit 2: %+v", l.Classes)
	}
}

func TestGrowthUnstableIDs(t *testing.T) {
	base, target := renumbered(t)
	r := leak.Growth([]*analysis.Analysis{base, target}, leak.GrowthOptions{})
	if r.Matching != leak.MatchByClass || r.Collections != nil {
		t.Fatalf("%+v", r)
	}
	want := []leak.ClassGrowth{
		{Name: "A", Key: ",A", Counts: []int{2, 3}, Sizes: []uint64{24, 30}, CountGrows: true, SizeGrows: true},
		{Name: "C", Key: ",C", Counts: []int{0, 1}, Sizes: []uint64{0, 5}, CountGrows: true, SizeGrows: true},
	}
	if !reflect.DeepEqual(r.Classes, want) {
		t.Errorf("classes %+v", r.Classes)
	}
}
