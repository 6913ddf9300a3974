package exchange

import (
	"slices"
	"testing"

	"github.com/heapx/heapx/model"
)

func TestTypeNames(t *testing.T) {
	for _, c := range []struct{ ns, name, spelled string }{
		{"v8", "concatenated string", "v8:concatenated string"},
		{"", "node", "node"},
		{"hprof", "class:java.lang.Object", "hprof:class:java.lang.Object"}, // split at the first colon
	} {
		if got := TypeName(c.ns, c.name); got != c.spelled {
			t.Errorf("TypeName(%q, %q) = %q", c.ns, c.name, got)
		}
		nt := NodeType(c.spelled, "closure")
		if nt.Namespace != c.ns || nt.Name != c.name || nt.Category != model.CatClosure {
			t.Errorf("NodeType(%q) = %+v", c.spelled, nt)
		}
	}
	if nt := NodeType(":odd", "no such category"); nt.Namespace != "" || nt.Name != ":odd" || nt.Category != model.CatOther {
		t.Errorf("a leading colon or unknown category: %+v", nt)
	}
	et := EdgeType("v8:weak", "object property", "weak", "string")
	if et.Namespace != "v8" || et.Name != "weak" || et.Category != model.EdgeProperty || et.Strength != model.Weak || et.Indexed {
		t.Errorf("EdgeType = %+v", et)
	}
	et = EdgeType("element", "mystery", "mystery", "index")
	if et.Category != model.EdgeOther || et.Strength != model.Strong || !et.Indexed {
		t.Errorf("unknown category and strength: %+v", et)
	}
	// Every category and strength the model has survives its name.
	for c := model.Category(0); c.String() != "other"; c++ {
		if NodeType("x", c.String()).Category != c {
			t.Errorf("category %q", c)
		}
	}
	for s := model.Strength(0); s == 0 || s.String() != "strong"; s++ {
		if EdgeType("x", "other", s.String(), "string").Strength != s {
			t.Errorf("strength %q", s)
		}
	}
}

func TestMetadata(t *testing.T) {
	g := &model.Graph{Meta: []model.KV{{Key: "format", Value: "v8.heapsnapshot"}, {Key: "producer", Value: "Node"},
		{Key: KeyNodeCount, Value: "99"}, {Key: KeyVersion, Value: "7"}}}
	g.Strings.AddString("")
	g.Nodes.ID = model.NewUint64s(1, 3)
	g.Nodes.FirstEdge = []uint32{0, 0, 0}
	g.Root = 1
	for _, c := range []struct{ generator, want string }{{"heapx v1.2.3", "heapx v1.2.3"}, {"", DefaultGenerator}} {
		var keys, values []string
		for _, kv := range Metadata(g, &model.Results{Policy: "devtools"}, c.generator) {
			keys, values = append(keys, kv.Key), append(values, kv.Value)
		}
		wantKeys := []string{KeyVersion, KeyGenerator, KeyNodeCount, KeyEdgeCount, KeyStringCount, KeyRoot, KeySourceFormat, KeyAnalysis, "producer"}
		wantValues := []string{"1", c.want, "2", "0", "1", "3", "v8.heapsnapshot", "devtools", "Node"}
		if !slices.Equal(keys, wantKeys) || !slices.Equal(values, wantValues) {
			t.Errorf("Metadata(generator %q):\n keys %q\n want %q\n values %q\n want %q", c.generator, keys, wantKeys, values, wantValues)
		}
	}
}

func TestWritable(t *testing.T) {
	g := &model.Graph{}
	g.Strings.AddString("")
	g.Nodes = model.Nodes{ID: model.NewUint64s(1), Type: []uint8{0}, Name: []model.StringID{0}, Size: model.NewUint64s(0), FirstEdge: []uint32{0, 0}}
	g.NodeTypes = []model.NodeType{{Name: "object", Category: model.CatObject}}
	fits := &model.Results{Shallow: []uint64{0}, Retained: []uint64{0}, Dominator: []model.NodeIndex{model.NoNode}, Distance: []int32{0}}
	if res, err := Writable(g, fits); err != nil || res != fits {
		t.Errorf("fitting results: %v, %v", res, err)
	}
	if res, err := Writable(g, &model.Results{Policy: "devtools"}); err != nil || res != nil {
		t.Errorf("empty results are none: %v, %v", res, err)
	}
	if _, err := Writable(g, &model.Results{Shallow: []uint64{0, 0}}); err == nil {
		t.Error("results for two nodes accepted for a graph of one")
	}
	g.Nodes.FirstEdge = []uint32{0, 5}
	if _, err := Writable(g, nil); err == nil {
		t.Error("an invalid graph accepted")
	}
}
