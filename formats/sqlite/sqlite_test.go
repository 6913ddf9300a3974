package sqlite

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/formats/hprof"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// fixtures returns every V8 dump in testdata/.
func fixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.heapsnapshot.gz", "*.heaptimeline.gz"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no fixtures in testdata/")
	}
	return out
}

// TestRoundTripFixtures writes every fixture to a .db and reads it back:
// the graph must come back equal, column for column, and so must the
// analysis results.
func TestRoundTripFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			g, err := v8.ReadFile(path, v8.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			a, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := a.Results()
			db := filepath.Join(t.TempDir(), "out.db")
			if err := Save(db, g, WriteOptions{Results: res}); err != nil {
				t.Fatal(err)
			}
			f, err := formats.Detect(db)
			if err != nil || f.Name != Name {
				t.Fatalf("Detect: %v, %v", f, err)
			}
			var back model.Results
			h, err := ReadFile(db, ReadOptions{Results: &back})
			if err != nil {
				t.Fatal(err)
			}
			compareGraphs(t, g, h)
			if !reflect.DeepEqual(*res, back) {
				t.Errorf("results differ after the round trip (policy %q vs %q)", res.Policy, back.Policy)
			}
			if v, _ := h.MetaValue("format"); v != FormatName {
				t.Errorf("format %q", v)
			}
			if v, _ := h.MetaValue(exchange.KeySourceFormat); !strings.HasPrefix(v, "v8.heap") {
				t.Errorf("heapx:source_format %q", v)
			}
		})
	}
}

// TestRoundTripGCRoots writes a JVM dump, whose GC roots have kinds
// (heapx_gc_root), to a .db and reads it back: roots and kinds must come
// back in order, through the rows and through heapx_packed alike.
func TestRoundTripGCRoots(t *testing.T) {
	g, err := hprof.ReadFile(filepath.Join("..", "..", "testdata", "hprof", "java-ticketleak-1.hprof.gz"), hprof.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.GCRoots) < 100 || len(g.RootKinds) < 3 {
		t.Fatalf("the fixture has %d GC roots of %d kinds; the test needs many of several kinds", len(g.GCRoots), len(g.RootKinds))
	}
	for _, packed := range []bool{false, true} {
		db := filepath.Join(t.TempDir(), "out.db")
		opt := WriteOptions{}
		if packed {
			a, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opt.Results = a.Results()
		}
		if err := Save(db, g, opt); err != nil {
			t.Fatal(err)
		}
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.GCRoots, h.GCRoots) || !reflect.DeepEqual(g.RootKinds, h.RootKinds) {
			t.Errorf("packed %v: GC roots differ after the round trip: %d roots of kinds %q, want %d of %q",
				packed, len(h.GCRoots), h.RootKinds, len(g.GCRoots), g.RootKinds)
		}
		compareGraphs(t, g, h)
	}
}

// ignoreMeta are the keys a reader sets for the file it read.
var ignoreMeta = model.CompareOptions{IgnoreMeta: []string{exchange.KeyFormat, exchange.KeySourceFormat, exchange.KeyGenerator}}

// compareGraphs fails t unless h holds exactly g's graph.
func compareGraphs(t *testing.T, g, h *model.Graph) {
	t.Helper()
	if err := model.Compare(g, h, ignoreMeta); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyAndTinyGraphs covers the batch boundaries: 0, 1, batchRows-1,
// batchRows and batchRows+1 rows in a table.
func TestEmptyAndTinyGraphs(t *testing.T) {
	for _, n := range []int{1, batchRows - 1, batchRows, batchRows + 1, 3*batchRows + 7} {
		g := chain(n)
		db := filepath.Join(t.TempDir(), "x.db")
		if err := Save(db, g, WriteOptions{}); err != nil {
			t.Fatal(n, err)
		}
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(n, err)
		}
		compareGraphs(t, g, h)
	}
}

// chain builds a graph of n nodes, each holding the next one.
func chain(n int) *model.Graph {
	g := &model.Graph{}
	obj, _ := g.AddNodeType(model.NodeType{Namespace: "test", Name: "object", Category: model.CatObject})
	prop, _ := g.AddEdgeType(model.EdgeType{Namespace: "test", Name: "property", Category: model.EdgeProperty})
	g.Strings.AddString("")
	g.Strings.AddString("next")
	g.Strings.AddString("Node")
	g.Nodes.FirstEdge = append(g.Nodes.FirstEdge, 0)
	for i := 0; i < n; i++ {
		g.Nodes.Type = append(g.Nodes.Type, obj)
		g.Nodes.Name = append(g.Nodes.Name, 2)
		g.Nodes.ID.Append(uint64(2*i + 1))
		g.Nodes.Size.Append(uint64(i))
		if i+1 < n {
			g.Edges.Type = append(g.Edges.Type, prop)
			g.Edges.Name = append(g.Edges.Name, 1)
			g.Edges.To = append(g.Edges.To, model.NodeIndex(i+1))
		}
		g.Nodes.FirstEdge = append(g.Nodes.FirstEdge, uint32(len(g.Edges.To)))
	}
	return g
}

// TestRoundTripStacks writes a graph with stacks, with and without
// results (heapx_packed), and reads it back: the stacks come back field
// for field, identifiers of 2^63 and up included; a file of stack version
// 1 reads too; a graph without stacks gets no stack tables.
func TestRoundTripStacks(t *testing.T) {
	g := chain(5)
	g.Stacks = testfixtures.Stacks(g)
	for _, packed := range []bool{false, true} {
		db := filepath.Join(t.TempDir(), "out.db")
		opt := WriteOptions{}
		if packed {
			a, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			opt.Results = a.Results()
		}
		if err := Save(db, g, opt); err != nil {
			t.Fatal(err)
		}
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compareGraphs(t, g, h)
		if v, ok := h.MetaValue(exchange.KeyStackVersion); ok {
			t.Errorf("the reader kept %s=%s in the graph's metadata", exchange.KeyStackVersion, v)
		}
	}
	// A file of stack version 1, from before Java's stacks: no object
	// and state columns; its stacks read with none.
	old := filepath.Join(t.TempDir(), "v1.db")
	v1 := chain(5)
	v1.Stacks = testfixtures.Stacks(v1)[:3]
	if err := Save(old, v1, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	mutate(t, old, `ALTER TABLE heapx_stack DROP COLUMN object_identifier`, `ALTER TABLE heapx_stack DROP COLUMN state`,
		`UPDATE metadata SET value = '1' WHERE key = 'heapx:stack_version'`)
	h1, err := ReadFile(old, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	compareGraphs(t, v1, h1)
	plain := chain(5)
	db := filepath.Join(t.TempDir(), "plain.db")
	if err := Save(db, plain, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := ReadFile(db, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Stacks != nil {
		t.Errorf("a graph without stacks read back with %d", len(h.Stacks))
	}
}
