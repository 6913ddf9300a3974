package analysis_test

import (
	"reflect"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/model"
)

// TestShownPathsMatchPaths: the paths ShownPaths finds with its index of
// the nodes near the targets are Paths' (found with the whole graph's
// retainer index), for a sample of the nodes of three dumps, in batches
// of five and all at once, and for the five largest objects (a report's
// suspects), which the near index finds.
func TestShownPathsMatchPaths(t *testing.T) {
	for _, name := range []string{"node-leak-3", "chromium-small-page", "node-internals"} {
		a := analysistest.AnalyzeFixture(t, name)
		sample := everyNth(a.Graph, 997)
		largest := analysis.TopRetained(a.Dominators, 5)
		if !analysis.NearIndexed(a, largest) {
			t.Errorf("%s: the largest objects' paths without the near index", name)
		}
		batches := [][]model.NodeIndex{largest, sample}
		for i := 0; i < len(sample); i += 5 {
			batches = append(batches, sample[i:min(i+5, len(sample))])
		}
		for _, targets := range batches {
			got := a.ShownPaths(targets)
			for i, v := range targets {
				want := analysis.Path{Cost: -1}
				if ps := a.Paths(v, analysis.PathOptions{K: 1}); len(ps) > 0 {
					want = ps[0]
				}
				if !reflect.DeepEqual(got[i], want) {
					t.Fatalf("%s: node %d: ShownPaths %+v, Paths %+v", name, v, got[i], want)
				}
			}
		}
	}
}
