package jsonl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// ignoreMeta are the keys a reader sets for the file it read.
var ignoreMeta = model.CompareOptions{IgnoreMeta: []string{"format", exchange.KeySourceFormat, exchange.KeyGenerator}}

// TestRoundTripFixtures writes every fixture as JSON Lines and reads it
// back: the graph must come back identical, column for column.
func TestRoundTripFixtures(t *testing.T) {
	for _, path := range testfixtures.V8Dumps(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g, err := v8.ReadFile(path, v8.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, g, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			h, err := Read(bytes.NewReader(buf.Bytes()), "rt.jsonl", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := model.Compare(g, h, ignoreMeta); err != nil {
				t.Fatal(err)
			}
			if f, _ := h.MetaValue("format"); f != FormatName {
				t.Errorf("format %q", f)
			}
			src, _ := g.MetaValue("format")
			if f, _ := h.MetaValue(exchange.KeySourceFormat); f != src {
				t.Errorf("source format %q, want %q", f, src)
			}
			// Writing the read graph again gives the same bytes.
			var again bytes.Buffer
			if err := Write(&again, h, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Errorf("jsonl -> jsonl is not byte-identical (%d vs %d bytes)", buf.Len(), again.Len())
			}
		})
	}
}

func TestSmallExample(t *testing.T) {
	// The example of docs/format.md, section 8.
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "## 8. Example")
	j := strings.Index(s[i:], "    [\"metadata\"")
	var lines []string
	for _, l := range strings.Split(s[i+j:], "\n") {
		if !strings.HasPrefix(l, "    [") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "    "))
	}
	g, err := Read(strings.NewReader(strings.Join(lines, "\n")+"\n"), "example", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != 3 || g.NumEdges() != 2 || g.NodeName(1) != "Foo" || g.EdgeName(1) != "greeting" || g.EdgeName(0) != "0" || g.NodeID(g.Edges.To[1]) != 5 {
		t.Errorf("example read as %d nodes, %d edges", g.NumNodes(), g.NumEdges())
	}
}

func TestErrors(t *testing.T) {
	const head = `["metadata","version_major","1"]` + "\n" +
		`["record","node_type",["index","name","category","fields"]]` + "\n" +
		`["record","edge_type",["index","name","category","strength","name_kind"]]` + "\n" +
		`["record","node",["id","type","name","self_size"]]` + "\n" +
		`["record","edge",["from","type","name","to"]]` + "\n" +
		`["record","string",["id","text"]]` + "\n" +
		`["node_type",0,"v8:object","object",[]]` + "\n" +
		`["edge_type",0,"v8:property","object property","strong","string"]` + "\n" +
		`["string",0,"x"]` + "\n"
	cases := map[string]struct{ in, msg string }{
		"version":       {`["metadata","version_major","2"]` + "\n", `unsupported heapx format version_major "2": this heapx reads version 1`},
		"not first":     {`["metadata","generator","x"]` + "\n", "line 1: not a heapx flat file"},
		"bad node":      {head + `["node",1,0,0]` + "\n", `line 10: expected ',' before field "self_size"`},
		"extra field":   {head + `["node",1,0,0,5,6]` + "\n", "line 10: expected ']' ending the record"},
		"dup id":        {head + `["node",1,0,0,5]` + "\n" + `["node",1,0,0,5]` + "\n", "line 11: node id 1 appears twice"},
		"bad type":      {head + `["node",1,7,0,5]` + "\n", "line 10: node type 7 is not declared"},
		"dangling edge": {head + `["node",1,0,0,5]` + "\n" + `["edge",1,0,0,9]` + "\n", "line 11: an edge's to refers to node id 9"},
		"bad string":    {head + `["node",1,0,4,5]` + "\n", "string"},
		"undeclared":    {`["metadata","version_major","1"]` + "\n" + `["node",1,0,0,5]` + "\n", `line 2: "node" record before its declaration`},
		"count":         {`["metadata","version_major","1"]` + "\n" + `["metadata","heapx:node_count","2"]` + "\n" + head[len(`["metadata","version_major","1"]`+"\n"):] + `["node",1,0,0,5]` + "\n", "line 12: byte 474: file ends early: the dump is truncated"},
		"garbage":       {head + "hello\n", "line 10: expected '[' starting a record"},
		"negative":      {head + `["node",1,0,0,-5]` + "\n", "self_size (an unsigned integer)"},
		"huge":          {head + `["node",123456789012345678901,0,0,5]` + "\n", "does not fit in 64 bits"},
		"smi and to":    {head + `["node",1,0,0,5]` + "\n" + `["edge",1,0,0,null]` + "\n", "neither a target node"},
		"empty":         {"", "empty file"},
		// Results nobody asked for are still checked for their kind.
		"result kind": {strings.Replace(head, `["id","type","name","self_size"]`, `["id","type","name","self_size","heapx:shallow_size","heapx:retained_size","heapx:dominator","heapx:distance"]`, 1) +
			`["node",1,0,0,5,5,"x",null,0]` + "\n", "line 10: expected a heapx result (an unsigned integer)"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in), "f.jsonl", ReadOptions{})
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a FormatError", err, err)
			}
			if !strings.Contains(err.Error(), c.msg) || !strings.HasPrefix(err.Error(), "f.jsonl:") {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
		})
	}
}

// TestV8JSONLV8 takes every fixture through V8 -> jsonl -> V8 and checks
// that the V8 snapshot comes back byte for byte, Chrome's included (its
// locations' script_object_index travels as v8:location's script), and
// reads back to the same graph (counts, ids, names, edges in order, types
// and strengths, self sizes, locations, trace, sections, metadata).
func TestV8JSONLV8(t *testing.T) {
	for _, path := range testfixtures.V8Dumps(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			orig := testfixtures.Gunzip(t, path)
			g, err := v8.Read(bytes.NewReader(orig), path, v8.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var flat, snap bytes.Buffer
			if err := Write(&flat, g, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			h, err := Read(bytes.NewReader(flat.Bytes()), "x.jsonl", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := v8.Write(&snap, h, v8.WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(orig, snap.Bytes()) {
				i := 0
				for i < len(orig) && i < snap.Len() && orig[i] == snap.Bytes()[i] {
					i++
				}
				t.Fatalf("V8 -> jsonl -> V8 differs from the original at byte %d of %d/%d:\norig %q\nout  %q", i, len(orig), snap.Len(),
					orig[max(0, i-60):min(len(orig), i+60)], snap.Bytes()[max(0, i-60):min(snap.Len(), i+60)])
			}
			back, err := v8.Read(bytes.NewReader(snap.Bytes()), "back", v8.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The V8 reader derives format and producer again, so the
			// metadata must match exactly.
			if err := model.Compare(g, back, model.CompareOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLocationScripts reads v8:location's optional script field: resolved
// to the Script node wherever the nodes are, present (and empty) when
// declared without records, and all or nothing: with some records null,
// the column is dropped and reported as skipped.
func TestLocationScripts(t *testing.T) {
	head := lines(`["metadata","version_major","1"]`,
		decls,
		`["record","node",["id","type","name","self_size"]]`,
		`["record","edge",["from","type","name","to"]]`,
		`["record","v8:location",["script","node","script_id","line","column"]]`,
		`["node_type",0,"v8:object","object",[]]`,
		`["string",0,""]`)
	nodes := lines(`["node",1,0,0,0]`, `["node",3,0,0,8]`, `["node",5,0,0,16]`)
	read := func(in string) (*model.Graph, error) {
		return Read(strings.NewReader(in), "s.jsonl", ReadOptions{})
	}
	// Locations before the nodes they name.
	g, err := read(head + lines(`["v8:location",5,3,7,1,2]`, `["v8:location",3,5,7,3,4]`) + nodes)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.LocationScripts, []model.NodeIndex{2, 1}) || len(g.Locations) != 2 ||
		g.Locations[1] != (model.Location{Node: 2, ScriptID: 7, Line: 3, Column: 4}) {
		t.Errorf("locations %+v, scripts %v", g.Locations, g.LocationScripts)
	}
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Declared in V8's order; each record names the script by its id.
	if out := buf.String(); !strings.Contains(out, lines(`["record","v8:location",["node","script_id","script","line","column"]]`)) ||
		!strings.HasSuffix(out, lines(`["v8:location",3,7,5,1,2]`, `["v8:location",5,7,3,3,4]`)) {
		t.Errorf("written as:\n%s", out)
	}
	// Declared, no records: the column is there, empty, and written back.
	g, err = read(head + nodes)
	if err != nil || g.LocationScripts == nil || len(g.LocationScripts) != 0 {
		t.Fatalf("no records: scripts %v (nil %v), %v", g.LocationScripts, g.LocationScripts == nil, err)
	}
	buf.Reset()
	if err := Write(&buf, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `["record","v8:location",["node","script_id","script","line","column"]]`) {
		t.Errorf("no records: not declared again:\n%s", buf.String())
	}
	// Some null: dropped, and the values reported.
	g, err = read(head + nodes + lines(`["v8:location",5,3,7,1,2]`, `["v8:location",null,3,7,1,2]`, `["v8:location",1,5,7,1,2]`))
	if err != nil {
		t.Fatal(err)
	}
	if g.LocationScripts != nil || len(g.Locations) != 3 {
		t.Errorf("some null: scripts %v, %d locations", g.LocationScripts, len(g.Locations))
	}
	if v, _ := g.MetaValue(exchange.KeySkippedFields); v != "v8:location.script=2" {
		t.Errorf("skipped fields %q", v)
	}
	// A script that is no node.
	if _, err := read(head + nodes + lines(`["v8:location",9,3,7,1,2]`)); err == nil || !strings.Contains(err.Error(), "script refers to node id 9") {
		t.Errorf("dangling script: %v", err)
	}
	if _, err := read(head + nodes + lines(`["v8:location","x",3,7,1,2]`)); err == nil || !strings.Contains(err.Error(), "location script") {
		t.Errorf("script of the wrong kind: %v", err)
	}
}

// lines joins records into a file.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

const decls = `["record","string",["id","text"]]
["record","node_type",["index","name","category","fields"]]
["record","edge_type",["index","name","category","strength","name_kind"]]`

// TestAnyOrder reads a file that uses the freedoms of docs/format.md 5.2:
// edges before their nodes and out of source order, strings last with ids
// that are not 0, 1, 2, metadata at the end, type indexes not from 0.
func TestAnyOrder(t *testing.T) {
	in := lines(`["metadata","version_major","1"]`,
		decls,
		`["record","node",["type","name","self_size","id"]]`,
		`["record","edge",["to","name","type","from"]]`,
		`["node_type",70,"x:thing","object",null]`,
		`["node_type",300,"x:root","synthetic",[]]`,
		`["edge_type",1000,"x:ref","object property","strong","string"]`,
		`["edge_type",5,"x:slot","array element","weak","index"]`,
		`["edge",20,500,1000,10]`, // root -> a "a"
		`["edge",10,7,5,20]`,      // a -> root [7]
		`["edge",30,501,1000,10]`, // root -> b "b"
		`["edge",30,502,1000,20]`, // a -> b "c"
		`["node",300,900,0,10]`,
		`["node",70,901,16,20]`,
		`["node",70,901,24,30]`,
		`["string",901,"Thing"]`, `["string",900,""]`, `["string",500,"a"]`, `["string",501,"b"]`, `["string",502,"c"]`,
		`["metadata","heapx:root","10"]`,
		`["metadata","producer","test"]`)
	g, err := Read(strings.NewReader(in), "order.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := 0; n < g.NumNodes(); n++ {
		s, e := g.EdgeRange(model.NodeIndex(n))
		for i := s; i < e; i++ {
			got = append(got, g.NodeName(model.NodeIndex(n))+"."+g.EdgeName(i)+"->"+strconv.FormatUint(g.NodeID(g.Edges.To[i]), 10)+"/"+g.EdgeType(i).Strength.String())
		}
	}
	if w := ".a->20/strong .b->30/strong Thing.7->10/weak Thing.c->30/strong"; strings.Join(got, " ") != w {
		t.Errorf("edges %q, want %q", strings.Join(got, " "), w)
	}
	if g.Root != 0 || g.NodeType(1).QualifiedName() != "x:thing" || g.NodeType(1).Category != model.CatObject || g.TotalSize() != 40 {
		t.Errorf("root %d, type %v, size %d", g.Root, g.NodeType(1), g.TotalSize())
	}
	if v, _ := g.MetaValue("producer"); v != "test" {
		t.Errorf("producer %q", v)
	}
}

// TestUnknownSkipped checks that unknown record types, unknown namespaced
// fields and subtype fields are skipped, counted and reported in the
// graph's metadata, and that results nobody asked for are not reported.
func TestUnknownSkipped(t *testing.T) {
	in := lines(`["metadata","version_major","1"]`,
		`["record","spidermonkey:frame",["id","script"]]`,
		decls,
		`["record","node",["id","type","name","self_size","mdb:address","heapx:shallow_size","heapx:retained_size","heapx:dominator","heapx:distance"]]`,
		`["record","edge",["from","type","name","to","smi"]]`,
		`["node_type",0,"v8:concatenated string","concatenated string",[["length","smi"],["s1","node"]]]`,
		`["edge_type",0,"v8:property","object property","strong","string"]`,
		`["string",0,""]`,
		`["spidermonkey:frame",1,{"deep":[1,[2,{"x":"y"}]]}]`,
		`["node",1,0,0,8,"0xdeadbeef",8,16,null,0,5,1]`,
		`["node",3,0,0,8,{"a":1},8,8,1,1,5,1]`,
		`["edge",1,0,0,3,null]`,
		`["edge",1,0,0,null,42]`,
		`["mdb:stack",[1,2,3]]`,
		`["mdb:stack",[]]`)
	g, err := Read(strings.NewReader(in), "unknown.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	for _, kv := range g.Meta {
		if strings.HasPrefix(kv.Key, "heapx:skipped") {
			skipped = append(skipped, kv.Key+" "+kv.Value)
		}
	}
	want := []string{
		"heapx:skipped_records edge(smi)=1",
		"heapx:skipped_records mdb:stack=2",
		"heapx:skipped_records spidermonkey:frame=1",
		"heapx:skipped_fields node.mdb:address=2",
		"heapx:skipped_fields node_type v8:concatenated string.length=2",
		"heapx:skipped_fields node_type v8:concatenated string.s1=2",
	}
	if strings.Join(skipped, "\n") != strings.Join(want, "\n") {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	if g.NumNodes() != 2 || g.NumEdges() != 1 {
		t.Errorf("%d nodes, %d edges", g.NumNodes(), g.NumEdges())
	}
	// Asked for, the results are read.
	res := &model.Results{}
	if _, err := Read(strings.NewReader(in), "unknown.jsonl", ReadOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	if len(res.Dominator) != 2 || res.Dominator[0] != model.NoNode || res.Dominator[1] != 0 || res.Distance[1] != 1 {
		t.Errorf("results %+v", res)
	}
}

// TestResultsRoundTrip persists results and reads them back.
func TestResultsRoundTrip(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := g.NumNodes()
	res := &model.Results{Policy: "test", Shallow: make([]uint64, n), Retained: make([]uint64, n), Dominator: make([]model.NodeIndex, n), Distance: make([]int32, n)}
	// A binary tree under the root, node 0.
	for i := range n {
		res.Shallow[i], res.Retained[i], res.Dominator[i], res.Distance[i] = uint64(i), uint64(i), model.NodeIndex((i-1)/2), int32(i%7-5)
	}
	res.Dominator[0] = model.NoNode
	for i := n - 1; i > 0; i-- {
		res.Retained[(i-1)/2] += res.Retained[i]
	}
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	got := &model.Results{}
	h, err := Read(bytes.NewReader(buf.Bytes()), "r.jsonl", ReadOptions{Results: got})
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Compare(g, h, ignoreMeta); err != nil {
		t.Fatal(err)
	}
	if got.Policy != "test" || !slices.Equal(got.Shallow, res.Shallow) || !slices.Equal(got.Retained, res.Retained) ||
		!slices.Equal(got.Dominator, res.Dominator) || !slices.Equal(got.Distance, res.Distance) {
		t.Error("results differ")
	}
	// Results that do not fit the graph are refused.
	res.Retained = res.Retained[1:]
	if err := Write(io.Discard, g, WriteOptions{Results: res}); err == nil {
		t.Error("wrote results of the wrong length")
	}
}

func TestDetect(t *testing.T) {
	for in, want := range map[string]bool{
		`["metadata","version_major","1"]`:                   true,
		" [ \"metadata\" , \"version_major\" ,\"2\"]":        true,
		"\xef\xbb\xbf[\"metadata\",\"version_major\",\"1\"]": true,
		`["metadata","generator","x"]`:                       false,
		`{"snapshot":{}}`:                                    false,
		`["metadata","version`:                               false,
	} {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%q) = %v", in, got)
		}
	}
}

// TestSaveGzip writes through the registry, as heapx convert does, and
// opens the result by content.
func TestSaveGzip(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-trace.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, _ := formats.Lookup("jsonl")
	path := filepath.Join(t.TempDir(), "x.jsonl.gz")
	if err := formats.Save(path, f, g, formats.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, of, err := formats.Open(path, formats.ReadOptions{})
	if err != nil || of.Name != "jsonl" {
		t.Fatalf("%v %v", of, err)
	}
	if err := model.Compare(g, h, ignoreMeta); err != nil {
		t.Fatal(err)
	}
}

// TestTraceAnyOrder lists the allocation trace's tables backwards: they
// are put in index order, and gaps or repeats are errors.
func TestTraceAnyOrder(t *testing.T) {
	head := lines(`["metadata","version_major","1"]`, decls,
		`["record","node",["id","type","name","self_size"]]`,
		`["record","v8:trace_function",["index","function_id","name","script_name","script_id","line","column"]]`,
		`["record","v8:trace_node",["index","parent","id","function_index","count","size"]]`,
		`["node_type",0,"v8:synthetic","synthetic",[]]`,
		`["string",0,""]`, `["string",1,"f"]`, `["string",2,"g"]`,
		`["node",1,0,0,0]`)
	in := head + lines(`["v8:trace_node",1,0,8,1,2,64]`, `["v8:trace_node",0,-1,7,0,1,32]`,
		`["v8:trace_function",1,11,2,0,3,4,5]`, `["v8:trace_function",0,10,1,0,3,-1,-1]`)
	g, err := Read(strings.NewReader(in), "trace.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := g.Trace
	if len(tr.Functions) != 2 || g.Strings.At(tr.Functions[1].Name) != "g" || tr.Functions[0].ID != 10 || tr.Functions[0].Line != -1 ||
		len(tr.Tree) != 2 || tr.Tree[0].ID != 7 || tr.Tree[1].Parent != 0 || tr.Tree[1].Function != 1 {
		t.Errorf("trace %+v", tr)
	}
	for name, bad := range map[string]string{
		"gap":    lines(`["v8:trace_function",1,11,2,0,3,4,5]`),
		"repeat": lines(`["v8:trace_function",0,11,2,0,3,4,5]`, `["v8:trace_function",0,11,2,0,3,4,5]`),
		"parent": lines(`["v8:trace_function",0,11,2,0,3,4,5]`, `["v8:trace_node",0,0,7,0,1,32]`),
		"func":   lines(`["v8:trace_node",0,-1,7,3,1,32]`),
	} {
		if _, err := Read(strings.NewReader(head+bad), "bad.jsonl", ReadOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestParallelBlocks reads a file of many blocks through the parallel
// parser and checks it against the same records written with spaces,
// which the line parser reads alone: same graph, same results, and errors
// name the same lines.
func TestParallelBlocks(t *testing.T) {
	const n = 60000 // nodes; three edges each: ~4 MB, several blocks
	var b strings.Builder
	b.WriteString(lines(`["metadata","version_major","1"]`, decls,
		`["record","node",["id","type","name","self_size","x:extra","heapx:shallow_size","heapx:retained_size","heapx:dominator","heapx:distance"]]`,
		`["record","edge",["from","type","name","to"]]`,
		`["node_type",0,"x:thing","object",[]]`,
		`["node_type",1,"x:sub","object",[["more","number"]]]`,
		`["edge_type",0,"x:ref","object property","strong","string"]`,
		`["edge_type",1,"x:slot","array element","strong","index"]`,
		`["string",0,""]`, `["string",1,"a"]`, `["metadata","heapx:root","1"]`, `["metadata","heapx:analysis","devtools"]`))
	// Node i (id 2i-1) is dominated by node i/2 and has shallow size i.
	retained := make([]int, n+1)
	for i := n; i >= 1; i-- {
		retained[i] += i
		retained[i/2] += retained[i]
	}
	for i := 1; i <= n; i++ {
		typ, extra := 0, ""
		if i%1000 == 7 {
			typ, extra = 1, ",42" // a subtype field: left to the line parser
		}
		dom := strconv.Itoa(2*(i/2) - 1) // node i/2
		if i == 1 {
			dom = "null"
		}
		fmt.Fprintf(&b, `["node",%d,%d,%d,%d,%d,%d,%d,%s,%d%s]`+"\n", 2*i-1, typ, i%2, i, i%5-2, i, retained[i], dom, i%9-1, extra)
		if i%5000 == 0 {
			fmt.Fprintf(&b, `["string",%d,"s%d"]`+"\r\n", 1+i/5000, i) // other lines between runs, CRLF too
		}
	}
	for i := 1; i <= n; i++ {
		for k := 0; k < 3; k++ {
			fmt.Fprintf(&b, `["edge",%d,%d,%d,%d]`+"\n", 2*i-1, k%2, k, 2*((i*7+k)%n)+1)
		}
	}
	compact := b.String()
	spaced := strings.ReplaceAll(compact, ",", ", ")
	read := func(in string) (*model.Graph, *model.Results, error) {
		var r model.Results
		g, err := Read(strings.NewReader(in), "p.jsonl", ReadOptions{Results: &r})
		return g, &r, err
	}
	g, r, err := read(compact)
	if err != nil {
		t.Fatal(err)
	}
	h, s, err := read(spaced)
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Compare(g, h, model.CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if g.NumNodes() != n || g.NumEdges() != 3*n || !slices.Equal(r.Retained, s.Retained) || !slices.Equal(r.Dominator, s.Dominator) || !slices.Equal(r.Distance, s.Distance) {
		t.Fatalf("%d nodes, %d edges; results differ", g.NumNodes(), g.NumEdges())
	}
	if v, _ := g.MetaValue(exchange.KeySkippedFields); !strings.Contains(v, "node.x:extra=60000") {
		t.Errorf("skipped fields %q", v)
	}
	// A bad line deep in the file: reported with its line number either way.
	ls := strings.SplitAfter(compact, "\n")
	for _, bad := range []int{len(ls) - 5, len(ls) / 2, 40000} {
		want := "line " + strconv.Itoa(bad+1) + ":"
		for _, in := range []string{compact, spaced} {
			ls := strings.SplitAfter(in, "\n")
			ls[bad] = strings.Replace(ls[bad], ",", ",,", 1)
			if _, _, err := read(strings.Join(ls, "")); err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("bad line %d: error %v, want %q", bad+1, err, want)
			}
		}
	}
}
