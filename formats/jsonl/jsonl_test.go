package jsonl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// fixtures are every V8 dump in testdata/, each with its own quirks: Node
// 20's layout, Chrome's sections and detachedness, a --track-heap-objects
// trace, a heap timeline's samples.
func fixtures(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.heapsnapshot.gz", "*.heaptimeline.gz"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 8 {
		t.Fatalf("found only %d fixtures", len(out))
	}
	return out
}

// ignoreMeta are the keys a reader sets for the file it read.
var ignoreMeta = model.CompareOptions{IgnoreMeta: []string{"format", keySourceFormat, keyGenerator}}

// TestRoundTripFixtures writes every fixture as JSON Lines and reads it
// back: the graph must come back identical, column for column.
func TestRoundTripFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g, err := v8.ReadFile(path, v8.Options{})
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
			if f, _ := h.MetaValue(keySourceFormat); f != src {
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
	if g.NumNodes() != 3 || g.NumEdges() != 2 || g.NodeName(1) != "Foo" || g.EdgeName(1) != "greeting" || g.EdgeName(0) != "0" || g.Nodes.ID[g.Edges.To[1]] != 5 {
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
		"count":         {`["metadata","version_major","1"]` + "\n" + `["metadata","heapx:node_count","2"]` + "\n" + head[len(`["metadata","version_major","1"]`+"\n"):] + `["node",1,0,0,5]` + "\n", "promises 2 node records"},
		"garbage":       {head + "hello\n", "line 10: expected '[' starting a record"},
		"negative":      {head + `["node",1,0,0,-5]` + "\n", "self_size (an unsigned integer)"},
		"huge":          {head + `["node",123456789012345678901,0,0,5]` + "\n", "does not fit in 64 bits"},
		"smi and to":    {head + `["node",1,0,0,5]` + "\n" + `["edge",1,0,0,null]` + "\n", "neither a target node"},
		"empty":         {"", "empty file"},
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
