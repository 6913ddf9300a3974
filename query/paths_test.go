package query_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// The paths to the last item of a real list of 20,100 items
// (node-list-20k, made by bench/gen-linkedlist.js): the table shows the
// few hops around the run of .next hops and makes rows for those alone,
// while the JSON has every hop. One path of the three asked for: the
// others (through global's property cell, from the stack) differ from it
// only in how the runtime holds the list's head, which a note says.
func TestPathsQueryLinkedList(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "node-list-20k.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ids struct {
		TailID uint64 `json:"tail_id"`
	}
	if err := json.Unmarshal(b, &ids); err != nil {
		t.Fatal(err)
	}
	values := map[string]any{"id": strconv.FormatUint(ids.TailID, 10), "limit": 3}
	r := run(t, "paths", "node-list-20k-3-final", values)
	if len(r.Sections) != 1 || r.Sections[0].Heading != "Path 1: 20102 edges, from a user root" ||
		len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "1 of the 3 paths asked for: any other within 3 hops") {
		t.Fatalf("%d sections, first %q, notes %q", len(r.Sections), r.Sections[0].Heading, r.Notes)
	}
	var got []string
	for _, row := range rows(t, r, 0) {
		got = append(got, row["edge"].(string)+" "+row["object"].(string))
	}
	want := []string{" (root) @1", ".2 global @6049", ".list List @51523", ".head Item @84391", ".next Item @84393",
		".next Item @84395", "… 20,095 more .next Item", ".next Item @124683", ".next Item @124685"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("path 1 rows\n got %q\nwant %q", got, want)
	}

	// The rows are made for the hops shown: allocations do not grow with
	// the path's 60,000 hops (a row per hop took three or more each).
	q := query.Lookup("paths")
	sn := []query.Snapshot{fixture(t, "node-list-20k-3-final")}
	allocs := testing.AllocsPerRun(1, func() {
		if _, err := q.Exec(&query.Context{Snapshots: sn, Values: values}); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1000 {
		t.Errorf("%.0f allocations", allocs)
	}

	// The JSON form (PathsJSON) has every hop.
	j, err := json.Marshal(r.JSON)
	if err != nil {
		t.Fatal(err)
	}
	var doc query.PathsJSON
	if err := json.Unmarshal(j, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Target.ID != ids.TailID || len(doc.Paths) != 1 {
		t.Fatalf("target %d, %d paths", doc.Target.ID, len(doc.Paths))
	}
	for i, n := range []int{20102} {
		p := doc.Paths[i]
		if len(p.Steps) != n || p.Steps[n-1].To.ID != ids.TailID || p.Steps[n-2].Edge != ".next" || p.Steps[n-2].To.Constructor != "Item" {
			t.Errorf("path %d: %d steps", i+1, len(p.Steps))
		}
	}
	if p := doc.Paths[0]; p.Steps[2].EdgeName != "head" || p.Steps[2].EdgeType != "property" || p.Steps[2].To.ID != 84391 || p.Distance != 20102 {
		t.Errorf("path 1: %+v, distance %d", p.Steps[2], p.Distance)
	}

	// Streamed a step at a time, it is what json.Encoder writes for the
	// whole document, byte for byte (about 8 MB of JSON here).
	var streamed, encoded bytes.Buffer
	if err := r.JSON.(query.JSONStreamer).StreamJSON(&streamed); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(&encoded)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(streamed.Bytes(), encoded.Bytes()) {
		t.Errorf("streamed JSON (%d bytes) differs from the encoder's (%d bytes)", streamed.Len(), encoded.Len())
	}
	if streamed.Len() < 7<<20 {
		t.Errorf("%d bytes of JSON", streamed.Len())
	}
}

// squareFree returns n letters of a word over {0, 1, 2} with no square
// (no block twice in a row): the number of 1s between consecutive 0s of
// the Thue-Morse sequence.
func squareFree(n int) []int {
	thueMorse := func(i int) int { return bits.OnesCount(uint(i)) % 2 }
	var out []int
	ones := 0
	for i := 1; len(out) < n; i++ {
		if thueMorse(i) == 1 {
			ones++
			continue
		}
		out = append(out, ones)
		ones = 0
	}
	return out
}

// chain analyses a graph of the root and a chain of len(classes) objects
// of 32 bytes, root -.next-> 1 -.next-> 2 ..., object i+1 of class
// "A", "B" or "C" as classes[i] is 0, 1 or 2, with id 2(i+1)+1.
func chain(t *testing.T, classes []int) *analysis.Analysis {
	t.Helper()
	n := len(classes)
	g := &model.Graph{}
	obj, _ := g.AddNodeType(model.NodeType{Namespace: "v8", Name: "object", Category: model.CatObject})
	syn, _ := g.AddNodeType(model.NodeType{Namespace: "v8", Name: "synthetic", Category: model.CatSynthetic})
	prop, _ := g.AddEdgeType(model.EdgeType{Namespace: "v8", Name: "property", Category: model.EdgeProperty})
	for _, s := range []string{"", "A", "B", "C", "next"} {
		g.Strings.AddString(s)
	}
	g.Nodes = model.Nodes{Type: make([]uint8, n+1), Name: make([]uint32, n+1), ID: model.MakeUint64s(n + 1), Size: model.MakeUint64s(n + 1), FirstEdge: make([]uint32, n+2)}
	g.Edges = model.Edges{Type: make([]uint8, n), Name: make([]uint32, n), To: make([]model.NodeIndex, n)}
	g.Nodes.Type[0] = syn
	g.Nodes.ID.Set(0, 1)
	for i, c := range classes {
		v := i + 1
		g.Nodes.Type[v], g.Nodes.Name[v] = obj, uint32(1+c)
		g.Nodes.ID.Set(v, uint64(2*v+1))
		g.Nodes.Size.Set(v, 32)
		g.Nodes.FirstEdge[v] = uint32(v)
		g.Edges.Type[i], g.Edges.Name[i], g.Edges.To[i] = prop, 4, model.NodeIndex(v) // node i -.next-> node i+1
	}
	g.Nodes.FirstEdge[n+1] = uint32(n)
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The path through a chain of two classes in turn is a table of a few
// rows: the run of .next A, .next B pairs is elided like a run of one
// hop (a row per hop held 1.8 GB on a real list of a million).
func TestPathsQueryAlternatingChain(t *testing.T) {
	const n = 1000
	classes := make([]int, n)
	for i := range classes {
		classes[i] = i % 2
	}
	sn := []query.Snapshot{{Path: "chain", Analysis: chain(t, classes)}}
	r, err := query.Lookup("paths").Exec(&query.Context{Snapshots: sn, Values: map[string]any{"id": strconv.Itoa(2*n + 1), "limit": 1}})
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r)
	var got []string
	for _, row := range rows(t, r, 0) {
		got = append(got, row["edge"].(string)+" "+row["object"].(string))
	}
	want := []string{" (root) @1", ".next A @3", ".next B @5", "… 996 more hops of .next A, .next B", ".next A @1999", ".next B @2001"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows\n got %q\nwant %q", got, want)
	}
}

// A chain whose classes never repeat a block cannot fold: its merged tree
// is as deep as the chain. The query shows the first 100 levels and says
// how many nodes are deeper, so no renderer walks 10,000 nested levels
// (a million overflowed the stack of --json).
func TestMergedPathsQueryDeepChain(t *testing.T) {
	const n = 10000
	word := squareFree(n)
	a := chain(t, word)
	q := query.Lookup("merged-paths")
	for c, class := range []string{"A", "B"} {
		last := 0 // the depth of the last instance: node i+1 is i+1 edges deep
		for i, x := range word {
			if x == c {
				last = i + 1
			}
		}
		r, err := q.Exec(&query.Context{Snapshots: []query.Snapshot{{Path: "chain", Analysis: a}}, Values: map[string]any{"class": class, "limit": 0}})
		if err != nil {
			t.Fatal(err)
		}
		checkResult(t, r)
		depth := 0
		for nodes := r.Sections[0].Tree.Roots; len(nodes) > 0; depth++ {
			if len(nodes) != 1 {
				t.Fatalf("%s: %d children at depth %d", class, len(nodes), depth)
			}
			nodes = nodes[0].Children
		}
		want := fmt.Sprintf("%s tree nodes more than 100 edges from the root are not shown.", humanize.Thousands(uint64(last-100)))
		if notes := r.Sections[0].Notes; depth != 101 || len(notes) != 1 || notes[0] != want {
			t.Errorf("%s: depth %d, notes %q", class, depth, notes)
		}
	}
}

// The path through a chain of classes in no repeating order shows its
// first and last 50 hops and how many between: a row per hop was a table
// as long as the chain.
func TestPathsQueryDeepChain(t *testing.T) {
	const n = 10000
	sn := []query.Snapshot{{Path: "chain", Analysis: chain(t, squareFree(n))}}
	r, err := query.Lookup("paths").Exec(&query.Context{Snapshots: sn, Values: map[string]any{"id": strconv.Itoa(2*n + 1), "limit": 1}})
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r)
	got := rows(t, r, 0)
	// Hops 1-50 reach @101, then 9,900 are elided, then hops 9,951 to
	// 10,000 from @19903.
	obj := func(i int) string { return got[i]["object"].(string) }
	if len(got) != 1+50+1+50 || obj(51) != "9,900 more hops" || !strings.HasSuffix(obj(50), " @101") || !strings.HasSuffix(obj(52), " @19903") {
		t.Fatalf("%d rows: %v %v %v", len(got), got[50], got[51], got[52])
	}
	for i, row := range got {
		if i != 0 && i != 51 && row["edge"] != ".next" {
			t.Errorf("row %d: %v", i, row)
		}
	}
}
