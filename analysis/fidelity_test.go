package analysis_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// The fidelity tests compare heapx with the numbers Chrome DevTools' heap
// snapshot worker computed for the fixtures (testdata/golden, made by
// testdata/gen/make-goldens.sh): every node's shallow size, retained size,
// dominator and distance, the top 50 objects and the top 50 classes.

var fixtures = []string{
	"chromium-small-page", "node-basic", "node-internals", "node-leak-1", "node-leak-2", "node-leak-3", "node-trace",
}

type goldenNode struct {
	ID        uint64 `json:"id"`
	Type      string `json:"type"`
	Name      string `json:"name"`
	ClassName string `json:"class_name"`
	Self      uint64 `json:"self_size"`
	Retained  uint64 `json:"retained_size"`
	Distance  int32  `json:"distance"`
	Dominator uint64 `json:"dominator_id"`
}

type goldenClass struct {
	Name     string `json:"name"`
	Key      string `json:"key"`
	Count    int    `json:"count"`
	Self     uint64 `json:"self_size"`
	Retained uint64 `json:"retained_size"`
	Distance int32  `json:"distance"`
}

type golden struct {
	NodeCount        int           `json:"node_count"`
	EdgeCount        int           `json:"edge_count"`
	TotalSelfSize    uint64        `json:"total_self_size"`
	RootRetainedSize uint64        `json:"root_retained_size"`
	TotalSize        uint64        `json:"total_size_devtools"`
	ClassCount       int           `json:"aggregate_class_count"`
	TopNodes         []goldenNode  `json:"top_nodes_by_retained_size"`
	TopClasses       []goldenClass `json:"top_constructors_by_retained_size"`
	Statistics       struct {
		Total  uint64 `json:"total"`
		Native struct {
			Total       uint64 `json:"total"`
			TypedArrays uint64 `json:"typedArrays"`
		} `json:"native"`
		V8Heap struct {
			Total    uint64 `json:"total"`
			Code     uint64 `json:"code"`
			JSArrays uint64 `json:"jsArrays"`
			Strings  uint64 `json:"strings"`
			System   uint64 `json:"system"`
		} `json:"v8heap"`
	} `json:"statistics"`
}

// nodeDump is the driver's per-node dump (testdata/golden/README.md).
type nodeDump struct {
	n        int
	id       []uint32
	self     []float64
	retained []float64
	idom     []uint32
	dist     []int32
}

func loadDump(t testing.TB, path string) *nodeDump {
	raw := testfixtures.Gunzip(t, path)
	h := bytes.IndexByte(raw, '\n') + 1
	var hdr struct {
		NodeCount int `json:"nodeCount"`
	}
	if err := json.Unmarshal(raw[:h-1], &hdr); err != nil {
		t.Fatal(err)
	}
	n := hdr.NodeCount
	d := &nodeDump{n: n, id: make([]uint32, n), self: make([]float64, n), retained: make([]float64, n),
		idom: make([]uint32, n), dist: make([]int32, n)}
	le := binary.LittleEndian
	for i := 0; i < n; i++ {
		d.id[i] = le.Uint32(raw[h+4*i:])
		d.self[i] = math.Float64frombits(le.Uint64(raw[h+4*n+8*i:]))
		d.retained[i] = math.Float64frombits(le.Uint64(raw[h+12*n+8*i:]))
		d.idom[i] = le.Uint32(raw[h+20*n+4*i:])
		d.dist[i] = int32(le.Uint32(raw[h+24*n+4*i:]))
	}
	return d
}

func TestDevToolsFidelity(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			g := analysistest.LoadFixture(t, name)
			var gold golden
			b, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".devtools.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &gold); err != nil {
				t.Fatal(err)
			}
			dump := loadDump(t, filepath.Join("..", "testdata", "golden", name+".devtools-nodes.bin.gz"))
			a, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkFidelity(t, g, a, &gold, dump)
			if name == "chromium-small-page" {
				// The corpus's own DevTools sidecar, made when the corpus
				// was built, must agree too.
				var side golden
				b, err := os.ReadFile(filepath.Join("..", "testdata", "golden", name+".chrome-devtools-frontend.json"))
				if err == nil && json.Unmarshal(b, &side) == nil {
					checkFidelity(t, g, a, &side, dump)
				}
			}
			// DevTools logs "Heap snapshot: 80 nodes are unreachable from
			// the root" for the Chromium fixture (golden README).
			if u := a.Unreachable(); name == "chromium-small-page" && (u.Count != 80 || a.Dominators.WeakOnly != 80) {
				t.Errorf("unreachable %d, weak-only %d; want 80", u.Count, a.Dominators.WeakOnly)
			}
		})
	}
}

func checkFidelity(t *testing.T, g *model.Graph, a *analysis.Analysis, gold *golden, dump *nodeDump) {
	t.Helper()
	if g.NumNodes() != gold.NodeCount || g.NumEdges() != gold.EdgeCount {
		t.Fatalf("nodes/edges %d/%d, want %d/%d", g.NumNodes(), g.NumEdges(), gold.NodeCount, gold.EdgeCount)
	}
	if got := g.TotalSize(); got != gold.TotalSelfSize {
		t.Errorf("total self size %d, want %d", got, gold.TotalSelfSize)
	}
	doms := a.Dominators
	if got := doms.Retained[g.Root]; got != gold.RootRetainedSize {
		t.Errorf("root retained %d, want %d", got, gold.RootRetainedSize)
	}
	if got := a.TotalSize(); got != gold.TotalSize {
		t.Errorf("total size %d, want %d", got, gold.TotalSize)
	}
	// Every node.
	var badSelf, badRet, badDom, badDist int
	for i := 0; i < g.NumNodes(); i++ {
		if uint64(dump.id[i]) != g.Nodes.ID.At(i) {
			t.Fatalf("node %d: id %d, dump says %d", i, g.Nodes.ID.At(i), dump.id[i])
		}
		if float64(a.Self.At(int(i))) != dump.self[i] {
			if badSelf++; badSelf <= 5 {
				t.Errorf("node %d @%d %s: self %d, want %v (raw %d)", i, g.Nodes.ID.At(i), g.NodeName(int32(i)), a.Self.At(int(i)), dump.self[i], g.Nodes.Size.At(i))
			}
		}
		if float64(doms.Retained[i]) != dump.retained[i] {
			if badRet++; badRet <= 5 {
				t.Errorf("node %d @%d %s: retained %d, want %v", i, g.Nodes.ID.At(i), g.NodeName(int32(i)), doms.Retained[i], dump.retained[i])
			}
		}
		want := int32(dump.idom[i])
		got := doms.IDom[i]
		if int32(i) == g.Root {
			got = g.Root
		}
		if got != want {
			if badDom++; badDom <= 5 {
				t.Errorf("node %d @%d %s: dominator %d, want %d", i, g.Nodes.ID.At(i), g.NodeName(int32(i)), got, want)
			}
		}
		if a.Distances[i] != dump.dist[i] {
			if badDist++; badDist <= 5 {
				t.Errorf("node %d @%d %s: distance %d, want %d", i, g.Nodes.ID.At(i), g.NodeName(int32(i)), a.Distances[i], dump.dist[i])
			}
		}
	}
	if badSelf+badRet+badDom+badDist > 0 {
		t.Errorf("mismatches: self %d, retained %d, dominator %d, distance %d", badSelf, badRet, badDom, badDist)
	}

	// Top 50 objects.
	top := a.Top(50)
	if len(top) != len(gold.TopNodes) {
		t.Fatalf("top: %d rows, want %d", len(top), len(gold.TopNodes))
	}
	for i, w := range gold.TopNodes {
		r := top[i]
		domID := uint64(0)
		if r.Dominator >= 0 {
			domID = g.NodeID(r.Dominator)
		}
		name := r.Name
		if len(w.Name) < len(name) && len(w.Name) == 200 {
			name = name[:len(w.Name)]
		}
		if r.ID != w.ID || r.Type != w.Type || name != w.Name || r.Class != w.ClassName || r.Shallow != w.Self ||
			r.Retained != w.Retained || r.Distance != w.Distance || domID != w.Dominator {
			t.Errorf("top %d: got {%d %s %q %q %d %d %d @%d}\n want {%d %s %q %q %d %d %d @%d}", i,
				r.ID, r.Type, name, r.Class, r.Shallow, r.Retained, r.Distance, domID,
				w.ID, w.Type, w.Name, w.ClassName, w.Self, w.Retained, w.Distance, w.Dominator)
		}
	}

	// Classes.
	sum := a.Summary()
	if len(sum) != gold.ClassCount {
		t.Errorf("classes: %d, want %d", len(sum), gold.ClassCount)
	}
	for i, w := range gold.TopClasses {
		if i >= len(sum) {
			break
		}
		c := sum[i]
		if c.Name != w.Name || c.Key != w.Key || c.Count != w.Count || c.Shallow != w.Self || c.Retained != w.Retained || c.Distance != w.Distance {
			t.Errorf("class %d: got {%q %q %d %d %d %d}\n want {%q %q %d %d %d %d}", i,
				c.Name, c.Key, c.Count, c.Shallow, c.Retained, c.Distance,
				w.Name, w.Key, w.Count, w.Self, w.Retained, w.Distance)
		}
	}

	// Statistics.
	st := analysis.ComputeStatistics(g, a.Self, a.Dominators, a.DOM)
	gs := gold.Statistics
	want := analysis.Statistics{Total: gs.Total, Native: gs.Native.Total, TypedArrays: gs.Native.TypedArrays,
		V8Heap: gs.V8Heap.Total, Code: gs.V8Heap.Code, JSArrays: gs.V8Heap.JSArrays, Strings: gs.V8Heap.Strings, System: gs.V8Heap.System}
	if *st != want {
		t.Errorf("statistics %+v, want %+v", *st, want)
	}
}

// On node-basic, a WeakMap value is dominated by its key and its shortest
// retainer path starts at global.
func TestNodeBasicWeakMapValue(t *testing.T) {
	g := analysistest.LoadFixture(t, "node-basic")
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var note model.NodeIndex = -1
	for i := 0; i < g.NumNodes(); i++ {
		if g.NodeName(int32(i)) == "CustomerNote" && g.NodeType(int32(i)).Name == "object" {
			note = int32(i)
			break
		}
	}
	if note < 0 {
		t.Fatal("no CustomerNote")
	}
	if n, ok := a.NodeByID(g.NodeID(note)); !ok || n != note {
		t.Fatalf("NodeByID: %d %v", n, ok)
	}
	chain := a.DominatorChain(note)
	if len(chain) < 3 || g.NodeName(chain[1]) != "Customer" || chain[len(chain)-1] != g.Root {
		t.Errorf("dominator chain %v", chain)
	}
	if a.Dominators.Retained[note] != 152 {
		t.Errorf("CustomerNote retains %d, want 152 (README)", a.Dominators.Retained[note])
	}
	paths := a.Paths(note, analysis.PathOptions{K: 3})
	if len(paths) == 0 || paths[0].System || g.NodeName(paths[0].Steps[0].To) != "global" {
		t.Fatalf("paths %+v", paths)
	}
	last := paths[0].Steps[len(paths[0].Steps)-1]
	if last.To != note {
		t.Errorf("path ends at %d", last.To)
	}
	for i := 1; i < len(paths); i++ {
		if paths[i].Cost < paths[i-1].Cost {
			t.Errorf("paths out of order: %d then %d", paths[i-1].Cost, paths[i].Cost)
		}
	}
	if u := a.Unreachable(); u == nil || u.Count != 0 {
		t.Errorf("unreachable %+v", u)
	}
}
