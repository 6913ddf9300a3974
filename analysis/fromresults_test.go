package analysis_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

// TestFromResultsAnswersLikeAnalyze takes every fixture's analysis back to
// the results a file stores (Results), rebuilds the analysis from them
// (FromResults) and checks that every view answers as Analyze's does.
func TestFromResultsAnswersLikeAnalyze(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			g := analysistest.LoadFixture(t, name)
			want, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r := want.Results(); r.Policy != "devtools" || r.Check(g) != nil {
				t.Fatalf("Results: policy %q, %v", r.Policy, r.Check(g))
			}
			// Copies, so that nothing FromResults does can reach want's
			// columns, and so the aliasing check below means something.
			r := want.Results()
			r.Shallow, r.Retained = append([]uint64(nil), r.Shallow...), append([]uint64(nil), r.Retained...)
			r.Dominator, r.Distance = append([]int32(nil), r.Dominator...), append([]int32(nil), r.Distance...)
			got, err := analysis.FromResults(g, r, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if &got.Dominators.Retained[0] != &r.Retained[0] || &got.Distances[0] != &r.Distance[0] {
				t.Fatal("FromResults did not use the results (it recomputed them)")
			}
			if got.Policy != want.Policy || got.TotalSize() != want.TotalSize() {
				t.Errorf("policy %q, total %d; Analyze: %q, %d", got.Policy.Name, got.TotalSize(), want.Policy.Name, want.TotalSize())
			}
			if !reflect.DeepEqual(got.Summary(), want.Summary()) {
				t.Error("Summary differs")
			}
			if !reflect.DeepEqual(got.Top(100), want.Top(100)) {
				t.Error("Top differs")
			}
			if !reflect.DeepEqual(got.Unreachable(), want.Unreachable()) {
				t.Error("Unreachable differs")
			}
			if !reflect.DeepEqual(got.Statistics(), want.Statistics()) {
				t.Error("Statistics differs")
			}
			if !reflect.DeepEqual(got.Roots.User, want.Roots.User) {
				t.Errorf("user roots %v, Analyze %v", got.Roots.User, want.Roots.User)
			}
			for _, row := range want.Top(5) {
				p1, p2 := got.Paths(row.Node, analysis.PathOptions{K: 3}), want.Paths(row.Node, analysis.PathOptions{K: 3})
				if !reflect.DeepEqual(p1, p2) {
					t.Errorf("paths to node %d differ", row.Node)
				}
				if c1, c2 := got.DominatorChain(row.Node), want.DominatorChain(row.Node); !reflect.DeepEqual(c1, c2) {
					t.Errorf("dominator chain of node %d: %v, Analyze %v", row.Node, c1, c2)
				}
			}
			// The page-owned set FromResults leaves out is derived when a
			// caller asks which edges are essential.
			e1 := got.Policy.EssentialEdges(g, got.Roots)
			e2 := want.Policy.EssentialEdges(g, analysis.FindRoots(g))
			if !reflect.DeepEqual(e1, e2) {
				t.Error("EssentialEdges differ")
			}
		})
	}
}

// TestFromResultsFallsBack checks that results that do not fit the graph
// or the policy are not used: the analysis is recomputed instead.
func TestFromResultsFallsBack(t *testing.T) {
	g := analysistest.LoadFixture(t, "node-basic")
	want, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wrong := func(edit func(r *model.Results)) *model.Results {
		r := want.Results()
		r.Shallow = make([]uint64, want.Self.Len()) // recognisably not Analyze's
		edit(r)
		return r
	}
	raw := analysis.RawPolicy
	cases := map[string]struct {
		r   *model.Results
		opt analysis.Options
	}{
		"nil":            {nil, analysis.Options{}},
		"other policy":   {wrong(func(r *model.Results) { r.Policy = "raw" }), analysis.Options{}},
		"unnamed":        {wrong(func(r *model.Results) { r.Policy = "" }), analysis.Options{}},
		"asked for raw":  {wrong(func(*model.Results) {}), analysis.Options{Policy: &raw}},
		"short column":   {wrong(func(r *model.Results) { r.Distance = r.Distance[:1] }), analysis.Options{}},
		"root dominated": {wrong(func(r *model.Results) { r.Dominator = append([]int32(nil), r.Dominator...); r.Dominator[g.Root] = 0 }), analysis.Options{}},
		"dominator range": {wrong(func(r *model.Results) {
			r.Dominator = append([]int32(nil), r.Dominator...)
			r.Dominator[5] = int32(g.NumNodes())
		}), analysis.Options{}},
		// Issue 12.10: what a damaged or edited file can hold.
		"retained 2^64-1": {func() *model.Results {
			r := want.Results()
			r.Retained = append([]uint64(nil), r.Retained...)
			r.Retained[5] = math.MaxUint64
			return r
		}(), analysis.Options{}},
		"retained more than the root": {func() *model.Results {
			r := want.Results()
			r.Retained = append([]uint64(nil), r.Retained...)
			r.Retained[g.Root]--
			return r
		}(), analysis.Options{}},
		"dominator cycle": {func() *model.Results {
			r := want.Results()
			r.Dominator = append([]int32(nil), r.Dominator...)
			a, b := int32(7), r.Dominator[7]
			r.Dominator[b] = a
			return r
		}(), analysis.Options{}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			a, err := analysis.FromResults(g, c.r, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			wantPolicy := analysis.DevToolsPolicy
			if c.opt.Policy != nil {
				wantPolicy = *c.opt.Policy
			}
			if a.Policy != wantPolicy {
				t.Errorf("policy %q, want %q", a.Policy.Name, wantPolicy.Name)
			}
			if c.r != nil && &a.Dominators.Retained[0] == &c.r.Retained[0] {
				t.Fatal("unusable results were used")
			}
			if c.opt.Policy == nil && !reflect.DeepEqual(a.Summary(), want.Summary()) {
				t.Error("the recomputed Summary differs from Analyze's")
			}
		})
	}
	if _, err := analysis.FromResults(&model.Graph{}, nil, analysis.Options{}); err != analysis.ErrEmptyGraph {
		t.Errorf("empty graph: %v", err)
	}
}

// TestDominatorChainCycle checks that a dominator column with a cycle, as
// a hostile file may carry, is not taken (it made DominatorChain loop
// until it guarded against it): the analysis is recomputed, and the
// chain is the real one.
func TestDominatorChainCycle(t *testing.T) {
	g := analysistest.Build([]analysistest.Node{{Type: "synthetic", Name: "", Size: 0}, analysistest.Obj("A", 1), analysistest.Obj("B", 1)}, []analysistest.Edge{analysistest.Prop(0, 1, "a"), analysistest.Prop(1, 2, "b")})
	r := &model.Results{Policy: "devtools", Shallow: []uint64{0, 1, 1}, Retained: []uint64{2, 2, 1},
		Dominator: []int32{model.NoNode, 2, 1}, Distance: []int32{0, 1, 2}}
	a, err := analysis.FromResults(g, r, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := a.DominatorChain(2); !reflect.DeepEqual(c, []model.NodeIndex{2, 1, 0}) {
		t.Errorf("chain %v, want [2 1 0]", c)
	}
}
