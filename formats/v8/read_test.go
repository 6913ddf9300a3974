package v8

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// golden is the part of a DevTools peer output (testdata/golden) the reader
// must reproduce.
type golden struct {
	NodeCount     int    `json:"node_count"`
	EdgeCount     int    `json:"edge_count"`
	TotalSelfSize uint64 `json:"total_self_size"`
}

func readGolden(t *testing.T, name string) golden {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", name+".devtools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

func fixture(name string) string {
	return filepath.Join("..", "..", "testdata", name+".heapsnapshot.gz")
}

var fixtures = []string{"node-basic", "node-internals", "node-trace", "node-leak-1", "node-leak-2", "node-leak-3", "chromium-small-page"}

// TestFixturesMatchDevTools checks counts and total size against what
// Chrome DevTools' own worker computed for the same files.
func TestFixturesMatchDevTools(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			g, err := ReadFile(fixture(name), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := readGolden(t, name)
			if g.NumNodes() != want.NodeCount || g.NumEdges() != want.EdgeCount || g.TotalSize() != want.TotalSelfSize {
				t.Errorf("nodes %d edges %d size %d, DevTools says %d %d %d",
					g.NumNodes(), g.NumEdges(), g.TotalSize(), want.NodeCount, want.EdgeCount, want.TotalSelfSize)
			}
			wantProducer := "Node.js (V8)"
			if strings.HasPrefix(name, "chromium") {
				wantProducer = "Chromium (V8, Blink)"
			}
			if p, _ := g.MetaValue("producer"); p != wantProducer {
				t.Errorf("producer %q, want %q", p, wantProducer)
			}
			if g.Root != 0 || g.NodeName(0) != "" || g.NodeType(0).Name != "synthetic" {
				t.Errorf("root is node %d %q of type %s, want the synthetic node 0", g.Root, g.NodeName(g.Root), g.NodeType(g.Root).Name)
			}
		})
	}
}

// TestCorpusChromium checks the Chromium 156 dump against the corpus
// verifier's independent counts (corpus/chromium/*.verify.txt). The
// fixture is the corpus file gzipped (testdata/gen/README.md), so the
// test runs wherever the repository is checked out.
func TestCorpusChromium(t *testing.T) {
	g, err := ReadFile(fixture("chromium-small-page"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 173737 || g.NumEdges() != 577170 || g.Strings.Len() != 38279 || g.TotalSize() != 5006009 {
		t.Errorf("got %d nodes, %d edges, %d strings, size %d", g.NumNodes(), g.NumEdges(), g.Strings.Len(), g.TotalSize())
	}
	byType := map[string]int{}
	for _, ty := range g.Nodes.Type {
		byType[g.NodeTypes[ty].Name]++
	}
	want := map[string]int{"synthetic": 32, "native": 20596, "string": 56354, "object shape": 1537, "code": 6301,
		"array": 14051, "number": 12995, "symbol": 59, "closure": 1950, "object": 56462, "concatenated string": 3400}
	for k, v := range want {
		if byType[k] != v {
			t.Errorf("%s nodes: %d, want %d", k, byType[k], v)
		}
	}
	var det [3]int
	for _, d := range g.Detachedness {
		det[d]++
	}
	if det != [3]int{173025, 202, 510} {
		t.Errorf("detachedness %v, want [173025 202 510]", det)
	}
	if len(g.Locations) != 42105 {
		t.Errorf("%d locations, want 42105", len(g.Locations))
	}
	// Chrome 156's scope sections are kept as tables with their fields.
	names := []string{}
	for _, s := range g.Sections {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "scopes,scope_context_vars,scope_uses" || len(g.Sections[0].Values) != 115 ||
		strings.Join(g.Sections[0].Fields, ",") != "script_node_index,scope_id,depth,scope_context_vars_count,scope_uses_count" {
		t.Errorf("sections %v, first %v with %d values", names, g.Sections[0].Fields, len(g.Sections[0].Values))
	}
	// A node the corpus verifier printed: #23544 object "Customer" id 47089, 28 bytes, 6 edges.
	n := model.NodeIndex(23544)
	if g.NodeName(n) != "Customer" || g.NodeID(n) != 47089 || g.NodeSize(n) != 28 {
		t.Errorf("node 23544: %q id %d size %d", g.NodeName(n), g.NodeID(n), g.NodeSize(n))
	}
	s, e := g.EdgeRange(n)
	var got []string
	for i := s; i < e; i++ {
		got = append(got, g.EdgeType(i).Name+":"+g.EdgeName(i)+"->"+g.NodeName(g.Edges.To[i]))
	}
	if w := "property:id->smi number property:name->customer-444 property:orders->Array property:tags->Set property:__proto__->Object"; !strings.HasPrefix(strings.Join(got, " "), w) {
		t.Errorf("edges of node 23544: %v", got)
	}
}

func TestWeakMapEphemerons(t *testing.T) {
	g, err := ReadFile(fixture("node-basic"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 7 entries (5 WeakMap + 2 WeakSet), each written as a table->value and
	// a key->value edge: only the table's is an ephemeron.
	var eph, pair int
	for e := range g.Edges.To {
		et := g.EdgeType(uint32(e))
		if et.Strength == model.Ephemeron {
			eph++
		}
		if et.Name == "internal" && strings.Contains(g.EdgeName(uint32(e)), "pair in WeakMap") {
			pair++
		}
	}
	if eph != 7 || pair != 14 {
		t.Errorf("%d ephemeron edges of %d WeakMap pair edges, want 7 of 14", eph, pair)
	}
	for n := 0; n < g.NumNodes(); n++ {
		s, e := g.EdgeRange(model.NodeIndex(n))
		for i := s; i < e; i++ {
			if g.EdgeType(i).Strength == model.Ephemeron {
				id, ok := weakMapTableID(g.EdgeName(i))
				if !ok || id != g.Nodes.ID.At(n) {
					t.Errorf("ephemeron edge %d leaves node id %d, name says table %d", i, g.Nodes.ID.At(n), id)
				}
			}
		}
	}
}

// TestHeapTimeline reads a recording of DevTools' "allocation
// instrumentation on timeline" (samples filled) made through the inspector.
func TestHeapTimeline(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "node-timeline.heaptimeline.gz")
	g, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := readGolden(t, "node-timeline")
	if g.NumNodes() != want.NodeCount || g.NumEdges() != want.EdgeCount || g.TotalSize() != want.TotalSelfSize {
		t.Errorf("nodes %d edges %d size %d, DevTools says %d %d %d", g.NumNodes(), g.NumEdges(), g.TotalSize(), want.NodeCount, want.EdgeCount, want.TotalSelfSize)
	}
	if f, _ := g.MetaValue("format"); f != "v8.heaptimeline" {
		t.Errorf("format %q", f)
	}
	tr := g.Trace
	if tr == nil || len(tr.Samples) != 18 || len(tr.Functions) != 38 || len(tr.Tree) != 56 || len(g.Locations) != 5236 {
		t.Fatalf("trace: %d samples, %d functions, %d tree nodes, %d locations", len(tr.Samples), len(tr.Functions), len(tr.Tree), len(g.Locations))
	}
	for i := 1; i < len(tr.Samples); i++ {
		if tr.Samples[i].TimestampMicros < tr.Samples[i-1].TimestampMicros || tr.Samples[i].LastAssignedID < tr.Samples[i-1].LastAssignedID {
			t.Errorf("samples not increasing at %d: %+v", i, tr.Samples[i-1:i+1])
		}
	}
	ids := map[uint32]bool{}
	for _, n := range tr.Tree {
		ids[n.ID] = true
	}
	nonzero := 0
	for _, id := range g.TraceNodeID {
		if id != 0 {
			nonzero++
			if !ids[id] {
				t.Fatalf("trace_node_id %d not in trace_tree", id)
			}
		}
	}
	if nonzero != 5443 {
		t.Errorf("%d nodes with a trace node id, want 5443", nonzero)
	}
}

func TestAllocationTrace(t *testing.T) {
	g, err := ReadFile(fixture("node-trace"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Trace == nil || len(g.Trace.Functions) != 223 || len(g.Trace.Tree) == 0 {
		t.Fatalf("trace %+v", g.Trace)
	}
	nonzero := 0
	for _, id := range g.TraceNodeID {
		if id != 0 {
			nonzero++
		}
	}
	if nonzero != 27924 {
		t.Errorf("%d nodes with a trace node id, want 27924", nonzero)
	}
	// Every trace node's parent precedes it and every function index is valid.
	for i, n := range g.Trace.Tree {
		if n.Parent >= int32(i) || int(n.Function) >= len(g.Trace.Functions) {
			t.Fatalf("trace node %d: parent %d function %d", i, n.Parent, n.Function)
		}
	}
	if g.Trace.Tree[0].Parent != -1 {
		t.Errorf("first trace node has parent %d", g.Trace.Tree[0].Parent)
	}
	// Without tracking, no trace column is kept.
	b, err := ReadFile(fixture("node-basic"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.TraceNodeID != nil || b.Trace != nil {
		t.Errorf("untracked snapshot has trace data")
	}
}

// TestStreamingMatchesFile reads through io.Reader (size unknown, so columns
// grow as data arrives) and with one worker, and compares with ReadFile.
func TestStreamingMatchesFile(t *testing.T) {
	want, err := ReadFile(fixture("node-basic"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(fixture("node-basic"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := Read(io.MultiReader(f), "stream", ReadOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	sameGraph(t, got, want)
}

func sameGraph(t *testing.T, got, want *model.Graph) {
	t.Helper()
	if got.NumNodes() != want.NumNodes() || got.NumEdges() != want.NumEdges() || got.Strings.Len() != want.Strings.Len() {
		t.Fatalf("shape differs: %d/%d/%d vs %d/%d/%d", got.NumNodes(), got.NumEdges(), got.Strings.Len(), want.NumNodes(), want.NumEdges(), want.Strings.Len())
	}
	for i := range want.Nodes.ID.Len() {
		if got.Nodes.ID.At(i) != want.Nodes.ID.At(i) || got.Nodes.Size.At(i) != want.Nodes.Size.At(i) || got.Nodes.Name[i] != want.Nodes.Name[i] ||
			got.Nodes.Type[i] != want.Nodes.Type[i] || got.Nodes.FirstEdge[i+1] != want.Nodes.FirstEdge[i+1] {
			t.Fatalf("node %d differs", i)
		}
	}
	for i := range want.Edges.To {
		if got.Edges.To[i] != want.Edges.To[i] || got.Edges.Name[i] != want.Edges.Name[i] || got.Edges.Type[i] != want.Edges.Type[i] {
			t.Fatalf("edge %d differs", i)
		}
	}
	for i := 0; i < want.Strings.Len(); i++ {
		if got.Strings.At(uint32(i)) != want.Strings.At(uint32(i)) {
			t.Fatalf("string %d differs", i)
		}
	}
}

// tiny is a complete, valid snapshot in Node 20's layout: root -> (GC roots),
// root -shortcut-> global, global -property x-> object, object -weak-> global.
const tiny = `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count","trace_node_id","detachedness"],` +
	`"node_types":[["hidden","array","string","object","code","closure","regexp","number","native","synthetic","concatenated string","sliced string","symbol","bigint","object shape"],"string","number","number","number","number","number"],` +
	`"edge_fields":["type","name_or_index","to_node"],"edge_types":[["context","element","property","internal","hidden","shortcut","weak"],"string_or_number","node"],` +
	`"location_fields":["object_index","script_id","line","column"]},"node_count":4,"edge_count":4,"trace_function_count":0},
"nodes":[9,0,1,0,2,0,0
,9,1,3,0,0,0,0
,3,2,5,40,1,0,0
,3,3,7,16,1,0,2],
"edges":[1,1,7
,5,2,14
,2,4,21
,6,5,14],
"trace_function_infos":[],"trace_tree":[],"samples":[],"locations":[21,3,10,4],
"strings":["","(GC roots)","global","Thing","x","back \"\u00e9\ud83d\ude00\\"]}`

func TestTiny(t *testing.T) {
	g, err := Read(strings.NewReader(tiny), "tiny", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 4 || g.NumEdges() != 4 || g.TotalSize() != 56 {
		t.Fatalf("%d nodes %d edges size %d", g.NumNodes(), g.NumEdges(), g.TotalSize())
	}
	if g.EdgeName(0) != "1" || g.EdgeName(2) != "x" || g.Edges.To[2] != 3 || g.EdgeType(3).Strength != model.Weak || g.EdgeType(1).Strength != model.Shortcut {
		t.Errorf("edges: %q %q to %d, strengths %v %v", g.EdgeName(0), g.EdgeName(2), g.Edges.To[2], g.EdgeType(3).Strength, g.EdgeType(1).Strength)
	}
	if g.Strings.At(5) != "back \"é😀\\" {
		t.Errorf("escaped string decoded as %q", g.Strings.At(5))
	}
	if len(g.Locations) != 1 || g.Locations[0] != (model.Location{Node: 3, ScriptID: 3, Line: 10, Column: 4}) {
		t.Errorf("locations %+v", g.Locations)
	}
	if g.Detachedness[3] != 2 || g.NodeType(2).Category != model.CatObject {
		t.Errorf("detachedness %v, category %v", g.Detachedness, g.NodeType(2).Category)
	}
}

// tinyScripts is tiny with newer V8's location_fields: its location names
// node 2 as its script (script_object_index 14 = 2 × 7 node fields).
var tinyScripts = strings.Replace(strings.Replace(tiny,
	`"location_fields":["object_index","script_id","line","column"]`,
	`"location_fields":["object_index","script_id","script_object_index","line","column"]`, 1),
	`"locations":[21,3,10,4]`, `"locations":[21,3,14,10,4]`, 1)

// TestLocationScripts reads newer V8's script_object_index into
// Graph.LocationScripts and finds the location fields by name, wherever
// and among however many fields they are.
func TestLocationScripts(t *testing.T) {
	g, err := Read(strings.NewReader(tinyScripts), "tiny", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Locations) != 1 || g.Locations[0] != (model.Location{Node: 3, ScriptID: 3, Line: 10, Column: 4}) ||
		len(g.LocationScripts) != 1 || g.LocationScripts[0] != 2 {
		t.Errorf("locations %+v, scripts %v", g.Locations, g.LocationScripts)
	}
	if g, err := Read(strings.NewReader(tiny), "tiny", ReadOptions{}); err != nil || g.LocationScripts != nil {
		t.Errorf("without script_object_index: scripts %v, %v", g.LocationScripts, err)
	}
	// Ten fields, object_index last: more than a record buffer of eight.
	many := strings.Replace(strings.Replace(tiny,
		`"location_fields":["object_index","script_id","line","column"]`,
		`"location_fields":["a","b","c","d","e","f","script_id","line","column","object_index"]`, 1),
		`"locations":[21,3,10,4]`, `"locations":[0,0,0,0,0,0,3,10,4,21]`, 1)
	g, err = Read(strings.NewReader(many), "many", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Locations) != 1 || g.Locations[0] != (model.Location{Node: 3, ScriptID: 3, Line: 10, Column: 4}) {
		t.Errorf("ten location fields: %+v", g.Locations)
	}
	// With no locations, the column is there but empty: the header still
	// lists the field, and a writer must write it back.
	empty := strings.Replace(tinyScripts, `"locations":[21,3,14,10,4]`, `"locations":[]`, 1)
	g, err = Read(strings.NewReader(empty), "empty", ReadOptions{})
	if err != nil || g.LocationScripts == nil || len(g.LocationScripts) != 0 {
		t.Fatalf("no locations: scripts %v (nil %v), %v", g.LocationScripts, g.LocationScripts == nil, err)
	}
	var out bytes.Buffer
	if err := Write(&out, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"location_fields":["object_index","script_id","script_object_index","line","column"]`) {
		t.Errorf("written back without script_object_index:\n%.600s", out.String())
	}
}

func TestLoneSurrogateKept(t *testing.T) {
	in := strings.Replace(tiny, `"x"`, `"\ud800x"`, 1)
	g, err := Read(strings.NewReader(in), "tiny", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := []byte(g.Strings.At(4)); !bytes.Equal(got, []byte{0xED, 0xA0, 0x80, 'x'}) {
		t.Errorf("lone surrogate stored as % x, want WTF-8 ed a0 80", got)
	}
}

func TestGzipStream(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(tiny))
	zw.Close()
	g, err := Read(&buf, "tiny.gz", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 4 {
		t.Errorf("%d nodes", g.NumNodes())
	}
}

// TestBadInput feeds broken snapshots and checks each yields a FormatError
// that says where and what, never a panic.
func TestBadInput(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"empty", ``, "top level: byte 0: file ends early: the dump is truncated"},
		{"garbage", `hello`, `expected '{' starting the snapshot object, found 'h'`},
		{"not json", "\x00\x01\x02", "byte 0x00"},
		{"truncated header", tiny[:100], "snapshot: byte 100: file ends early: the dump is truncated"},
		{"truncated nodes", tiny[:strings.Index(tiny, `,3,2,5`)], "nodes: byte 665: file ends early: the dump is truncated"},
		{"truncated strings", tiny[:len(tiny)-10], "strings: byte 889: file ends early: the dump is truncated"},
		{"nodes before header", `{"nodes":[]}`, `section "nodes" before the snapshot header`},
		{"node_count lies high", strings.Replace(tiny, `"node_count":4`, `"node_count":5`, 1), "nodes array holds 28 numbers, header says 5 nodes"},
		{"node_count impossible", strings.Replace(tiny, `"node_count":4`, `"node_count":4000000000`, 1), "snapshot: byte 908: file ends early: the dump is truncated"},
		{"node_count lies low", strings.Replace(tiny, `"node_count":4`, `"node_count":3`, 1), "more than snapshot.node_count"},
		{"edge_count lies", strings.Replace(tiny, `"edge_count":4`, `"edge_count":5`, 1), "edge_counts add up to 4, header says edge_count 5"},
		{"edge past end", strings.Replace(tiny, `2,4,21`, `2,4,28`, 1), "to_node 28 is not the start of one of the 4 nodes"},
		{"edge misaligned", strings.Replace(tiny, `2,4,21`, `2,4,20`, 1), "to_node 20"},
		{"bad node type", strings.Replace(tiny, `,3,3,7,16`, `,99,3,7,16`, 1), "type 99 is not one of the 15 node types"},
		{"bad edge type", strings.Replace(tiny, `,6,5,14]`, `,60,5,14]`, 1), "type 60 is not one of the 7 edge types"},
		{"name past strings", strings.Replace(tiny, `,2,4,21`, `,2,40,21`, 1), "edge 2: name string 40 not in the 6 strings"},
		{"float in nodes", strings.Replace(tiny, `3,2,5,40`, `3,2,5,4.5`, 1), "expected an integer"},
		{"letter in edges", strings.Replace(tiny, `5,2,14`, `5,x,14`, 1), "expected a number"},
		{"missing comma", strings.Replace(tiny, `5,2,14`, `5 2,14`, 1), "expected ',' or ']'"},
		{"missing node field", strings.Replace(tiny, `"self_size",`, ``, 1), `missing field "self_size"`},
		{"meta types short", strings.Replace(tiny, `"node_types":[[`, `"node_types":[["hidden"],[`, 1), "type 9 is not one of the 1 node types"},
		{"negative size", strings.Replace(tiny, `3,2,5,40`, `3,2,5,-40`, 1), "negative self_size"},
		{"huge number", strings.Replace(tiny, `3,2,5,40`, `3,2,5,99999999999999999999`, 1), "number too large"},
		{"location past end", strings.Replace(tiny, `"locations":[21,`, `"locations":[28,`, 1), "object_index 28"},
		{"no strings", tiny[:strings.Index(tiny, ",\n\"strings\"")] + "}", "missing section"},
		{"bad escape", strings.Replace(tiny, `"Thing"`, `"Th\qing"`, 1), `invalid escape \q`},
		{"trailing junk", tiny + "x", "after the snapshot object"},
		{"locations before nodes", strings.Replace(strings.Replace(tiny, `"locations":[21,3,10,4],`, ``, 1), `"nodes":[`, `"locations":[21,3,10,4],"nodes":[`, 1), "locations before the nodes section"},
		{"script past end", strings.Replace(tinyScripts, `"locations":[21,3,14,`, `"locations":[21,3,28,`, 1), "script_object_index 28 is not the start of a node"},
		{"script misaligned", strings.Replace(tinyScripts, `"locations":[21,3,14,`, `"locations":[21,3,15,`, 1), "script_object_index 15"},
		{"script negative", strings.Replace(tinyScripts, `"locations":[21,3,14,`, `"locations":[21,3,-7,`, 1), "script_object_index -7"},
		{"key case", strings.Replace(tiny, `"node_count"`, `"Node_Count"`, 1), `header lacks "node_count"`},
		{"meta key case", strings.Replace(tiny, `"edge_types"`, `"edge_Types"`, 1), `meta lacks "edge_types"`},
		{"bad root_index", strings.Replace(tiny, `"node_count":4`, `"root_index":3,"node_count":4`, 1), "root_index 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in), "bad.heapsnapshot", ReadOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a FormatError", err, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "bad.heapsnapshot:") || !strings.Contains(msg, c.want) {
				t.Errorf("error %q, want it to name the file and say %q", msg, c.want)
			}
			// Counting the edges instead of keeping them checks them
			// the same way, except their names against the strings.
			var count int
			_, cerr := Read(strings.NewReader(c.in), "bad.heapsnapshot", ReadOptions{CountEdges: &count})
			if c.name == "name past strings" {
				if cerr != nil {
					t.Errorf("counting the edges: %v, want no error (their names are not kept)", cerr)
				}
			} else if cerr == nil || cerr.Error() != msg {
				t.Errorf("counting the edges: error %v, want %q", cerr, msg)
			}
		})
	}
}

// TestCountEdges reads every fixture with ReadOptions.CountEdges: the node
// columns are those of a full read, the edges are counted (DevTools'
// edge_count) and none is kept.
func TestCountEdges(t *testing.T) {
	for _, name := range fixtures {
		t.Run(name, func(t *testing.T) {
			full, err := ReadFile(fixture(name), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			count := -1
			g, err := ReadFile(fixture(name), ReadOptions{CountEdges: &count})
			if err != nil {
				t.Fatal(err)
			}
			if want := readGolden(t, name).EdgeCount; count != want || count != full.NumEdges() {
				t.Errorf("counted %d edges, DevTools says %d, a full read %d", count, want, full.NumEdges())
			}
			if g.NumEdges() != 0 || g.Nodes.FirstEdge[g.NumNodes()] != 0 {
				t.Errorf("%d edges kept, last offset %d", g.NumEdges(), g.Nodes.FirstEdge[g.NumNodes()])
			}
			if g.NumNodes() != full.NumNodes() || g.TotalSize() != full.TotalSize() || g.Strings.Len() != full.Strings.Len() ||
				len(g.Locations) != len(full.Locations) || !slices.Equal(g.Nodes.ID.Slice(), full.Nodes.ID.Slice()) || !slices.Equal(g.Nodes.Type, full.Nodes.Type) ||
				!slices.Equal(g.Detachedness, full.Detachedness) || !slices.Equal(g.Meta, full.Meta) {
				t.Errorf("nodes differ from a full read: %d nodes, size %d, %d strings, %d locations, meta %v",
					g.NumNodes(), g.TotalSize(), g.Strings.Len(), len(g.Locations), g.Meta)
			}
		})
	}
}

// TestGzipRatioBound gives node counts no input can hold: in a plain
// file, whose length is known, the file ends before what its header
// promises (the error for a dump cut short); compressed, the header is
// checked against the most a gzip stream of that length inflates to.
func TestGzipRatioBound(t *testing.T) {
	lie := strings.Replace(tiny, `"node_count":4`, `"node_count":400000000`, 1)
	_, err := Read(strings.NewReader(lie), "lie", ReadOptions{})
	if want := fmt.Sprintf("lie: snapshot: byte %d: file ends early: the dump is truncated", len(lie)); err == nil || err.Error() != want {
		t.Errorf("plain: %v, want %s", err, want)
	}
	gz := testfixtures.Gzip(t, []byte(lie))
	_, err = Read(bytes.NewReader(gz), "lie.gz", ReadOptions{})
	if want := fmt.Sprintf("lie.gz: snapshot: byte 12: node_count 400000000 cannot fit in an input of at most %d bytes", len(gz)*1032); err == nil || err.Error() != want {
		t.Errorf("gzip: %v, want %s", err, want)
	}
}

func TestTruncatedGzip(t *testing.T) {
	b, err := os.ReadFile(fixture("node-basic"))
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, 10, 5000, len(b) / 2, len(b) - 4} {
		_, err := Read(bytes.NewReader(b[:cut]), "cut.gz", ReadOptions{})
		if err == nil {
			t.Errorf("cut at %d: no error", cut)
			continue
		}
		if cut > 5000 && !errors.Is(err, formats.ErrTruncated) {
			t.Errorf("cut at %d: %v does not say the file is truncated", cut, err)
		}
		if !strings.HasPrefix(err.Error(), "cut.gz:") {
			t.Errorf("cut at %d: %v", cut, err)
		}
	}
}

// TestTruncated cuts a real snapshot, plain and gzip-compressed: each cut
// gives the error every reader gives for a dump cut short.
func TestTruncated(t *testing.T) {
	testfixtures.CheckTruncated(t, fixture("node-basic"), func(name string, b []byte) error {
		_, err := Read(bytes.NewReader(b), name, ReadOptions{})
		return err
	})
}

// TestErrorOffset checks that a bad value deep in a parallel block is
// reported at its exact byte offset.
func TestErrorOffset(t *testing.T) {
	var sb strings.Builder
	n := 200000
	fmt.Fprintf(&sb, `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["hidden","object"],"string","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["element"],"number","node"]},"node_count":%d,"edge_count":0},"nodes":[`, n)
	bad := 0
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		if i == n-7 {
			bad = sb.Len() + len("1,0,1,")
			sb.WriteString("1,0,1,-5,0")
			continue
		}
		fmt.Fprintf(&sb, "1,0,%d,8,0", 2*i+1)
	}
	sb.WriteString(`],"edges":[],"strings":[""]}`)
	_, err := Read(strings.NewReader(sb.String()), "big", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("byte %d: node %d: negative self_size -5", bad, n-7)) {
		t.Errorf("error %v, want byte %d", err, bad)
	}
}

func TestIsSnapshot(t *testing.T) {
	for in, want := range map[string]bool{
		`{"snapshot":{`: true, " {\n \"snapshot\"": true, "\x1f\x8b\x08": false,
		`{"nodes":[]}`: false, `[1,2]`: false, ``: false, "JAVA PROFILE 1.0.2": false,
	} {
		if Detect([]byte(in)) != want {
			t.Errorf("Detect(%q) = %v", in, !want)
		}
	}
}

// TestLocationsInBlocks reads a snapshot whose locations span many of the
// blocks the parse workers take in parallel (and more locations than
// objects, so their column grows): every record must land whole at its
// index, and a bad object_index be reported as the location it is in.
func TestLocationsInBlocks(t *testing.T) {
	const n = 100000
	locs := 3 * n
	snapshot := func(bad int) string {
		var sb strings.Builder
		fmt.Fprintf(&sb, `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["hidden","object"],"string","number","number","number"],"edge_fields":["type","name_or_index","to_node"],"edge_types":[["element"],"number","node"],"location_fields":["script_id","object_index","line","column"]},"node_count":%d,"edge_count":0},"nodes":[`, n)
		for i := range n {
			if i > 0 {
				sb.WriteString("\n,")
			}
			fmt.Fprintf(&sb, "1,0,%d,8,0", 2*i+1)
		}
		sb.WriteString(`],"edges":[],"locations":[`)
		for i := range locs {
			if i > 0 {
				sb.WriteString(",\n")
			}
			obj := 5 * (i % n)
			if i == bad {
				obj = 5*n + 5
			}
			fmt.Fprintf(&sb, "%d,%d,%d,%d", i%97, obj, i, i%80)
		}
		sb.WriteString(`],"strings":[""]}`)
		return sb.String()
	}
	in := snapshot(-1)
	if len(in) < 6*blockSize {
		t.Fatalf("the locations take %d bytes: too few blocks", len(in))
	}
	g, err := Read(strings.NewReader(in), "locations", ReadOptions{Workers: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Locations) != locs {
		t.Fatalf("%d locations, want %d", len(g.Locations), locs)
	}
	for i, l := range g.Locations {
		if want := (model.Location{Node: int32(i % n), ScriptID: uint32(i % 97), Line: uint32(i), Column: uint32(i % 80)}); l != want {
			t.Fatalf("location %d: %+v, want %+v", i, l, want)
		}
	}
	bad := locs - 1000
	_, err = Read(strings.NewReader(snapshot(bad)), "locations", ReadOptions{Workers: 4})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("location %d: object_index %d is not the start of a node", bad, 5*n+5)) {
		t.Errorf("a bad object_index: %v", err)
	}
}
