package model

import (
	"math"
	"strings"
	"testing"
)

// TestResultsCheck feeds Check the lies a damaged or edited file can tell
// (issue 12.10): each must be refused with a message naming the node.
func TestResultsCheck(t *testing.T) {
	// Root 0 (id 1) dominates 1 (id 3) and 3 (id 7); 1 dominates 2 (id 5).
	g := &Graph{Nodes: Nodes{ID: NewUint64s(1, 3, 5, 7)}}
	good := func() *Results {
		return &Results{Policy: "devtools", Shallow: []uint64{0, 1, 2, 3}, Retained: []uint64{6, 3, 2, 3},
			Dominator: []NodeIndex{NoNode, 0, 1, 0}, Distance: []int32{0, 1, 2, 1}}
	}
	if err := good().Check(g); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(r *Results)
		msg  string
	}{
		{"short column", func(r *Results) { r.Distance = r.Distance[:3] }, "results have 4/4/4/3 entries"},
		{"dominator out of range", func(r *Results) { r.Dominator[2] = 4 }, "dominator of node id 5 is node 4, not one of the 4 nodes"},
		{"root dominated", func(r *Results) { r.Dominator[0] = 3 }, "the root (node id 1) has a dominator, node id 7"},
		{"no dominator", func(r *Results) { r.Dominator[3] = NoNode }, "node id 7 has no dominator"},
		{"retained 2^64-1", func(r *Results) { r.Retained[2] = math.MaxUint64 }, "node id 3 retains 3 bytes, not its shallow size 1 plus the 18446744073709551615"},
		{"retained more than its share", func(r *Results) { r.Retained[3] = 4 }, "node id 1 retains 6 bytes, not its shallow size 0 plus the 7"},
		{"children past 2^64", func(r *Results) { r.Retained[1], r.Retained[3] = math.MaxUint64, 2 }, "the nodes that node id 1 dominates retain more than 2^64 bytes in all"},
		{"cycle", func(r *Results) { r.Dominator[1] = 2 }, "the dominators of node id 3 go round in a cycle"},
		{"cycle of empty nodes", func(r *Results) {
			// Sizes that add up along the cycle: only the walk finds it.
			r.Shallow, r.Retained, r.Dominator = []uint64{0, 0, 0, 0}, []uint64{0, 0, 0, 0}, []NodeIndex{NoNode, 2, 1, 0}
		}, "the dominators of node id 3 go round in a cycle"},
		{"root out of range", func(*Results) { g.Root = 4 }, "the root, node 4, is not one of the 4 nodes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() { g.Root = 0 }()
			r := good()
			c.edit(r)
			err := r.Check(g)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("%v, want %q", err, c.msg)
			}
		})
	}
}
