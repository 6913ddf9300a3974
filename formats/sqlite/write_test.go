package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/spidermonkey"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// TestEstimateSizeAndNoPacked writes a Firefox page dump (48-bit ids) and
// a Node dump with results, with and without heapx_packed: EstimateSize,
// which heapx sql uses to place its cache before writing it, is within 5%
// of the file for Firefox's and errs on the large side by at most a third
// for V8's; NoPacked leaves the packed columns out and the rows read back
// the same graph; compressed, the packed columns add at most a tenth to
// the file (uncompressed they were a quarter of it).
func TestEstimateSizeAndNoPacked(t *testing.T) {
	ff, err := spidermonkey.ReadFile(filepath.Join("..", "..", "testdata", "spidermonkey", "ff-small-page.fxsnapshot"), spidermonkey.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		g        *model.Graph
		min, max float64 // estimate / file size
	}{{"firefox", ff, 0.95, 1.05}, {"node", node, 1, 1.35}} {
		t.Run(c.name, func(t *testing.T) {
			a, err := analysis.Analyze(c.g, analysis.Options{NoClasses: true})
			if err != nil {
				t.Fatal(err)
			}
			res := a.Results()
			var sizes [2]int64
			for i, noPacked := range []bool{false, true} {
				opt := WriteOptions{Results: res, NoPacked: noPacked}
				path := filepath.Join(t.TempDir(), "x.db")
				if err := Save(path, c.g, opt); err != nil {
					t.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				sizes[i] = st.Size()
				if r := float64(EstimateSize(c.g, opt)) / float64(st.Size()); r < c.min || r > c.max {
					t.Errorf("NoPacked %v: estimate %d for a file of %d bytes (ratio %.2f)", noPacked, EstimateSize(c.g, opt), st.Size(), r)
				}
				got := &model.Results{}
				h, err := ReadFile(path, ReadOptions{Results: got})
				if err != nil {
					t.Fatal(err)
				}
				if h.NumNodes() != c.g.NumNodes() || h.NumEdges() != c.g.NumEdges() || got.Retained[c.g.Root] != res.Retained[c.g.Root] {
					t.Errorf("NoPacked %v: read back %d nodes, %d edges, root retained %v", noPacked, h.NumNodes(), h.NumEdges(), got.Retained)
				}
			}
			if added := float64(sizes[0])/float64(sizes[1]) - 1; sizes[0] <= sizes[1] || added > 0.1 {
				t.Errorf("without heapx_packed the file is %d bytes, with %d: %.0f%% more", sizes[1], sizes[0], 100*added)
			}
		})
	}
}
