package jsonl

import (
	"bytes"
	"testing"

	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// FuzzRead feeds arbitrary bytes to the reader: it must return a graph that
// validates or a FormatError, and never panic. Seeds are real files: the
// head of the smallest fixture converted to JSON Lines (declarations,
// types, strings and the first nodes and edges; cut at a line so the
// count checks fire), plus small hand-made files, one analysed, with the
// lies stored results can tell (internal/hostile).
func FuzzRead(f *testing.F) {
	g, err := v8.ReadFile("../../testdata/node-timeline.heaptimeline.gz", v8.ReadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{}); err != nil {
		f.Fatal(err)
	}
	b := buf.Bytes()
	head := b[:bytes.LastIndexByte(b[:8192], '\n')+1]
	f.Add(head)
	// The last lines: trace functions, tree, samples, locations.
	tail := b[len(b)-4096:]
	f.Add(append(append([]byte{}, head[:bytes.Index(head, []byte(`["node_type"`))]...), tail[bytes.IndexByte(tail, '\n')+1:]...))
	f.Add([]byte(`["metadata","version_major","1"]` + "\n"))
	f.Add([]byte(`["metadata","version_major","1"]` + "\n" +
		`["record","node",["id","type","name","self_size"]]` + "\n" +
		`["record","edge",["from","type","name","to","smi"]]` + "\n" +
		`["record","node_type",["index","name","category","fields"]]` + "\n" +
		`["record","edge_type",["index","name","category","strength","name_kind"]]` + "\n" +
		`["record","string",["id","text"]]` + "\n" +
		`["record","x:y",["a"]]` + "\n" +
		`["edge",3,0,9,1,null]` + "\n" +
		`["node_type",0,"v8:object","object",[["length","smi"]]]` + "\n" +
		`["edge_type",0,"v8:property","object property","weak","string"]` + "\n" +
		`["string",9,"\ud800x"]` + "\n" +
		`["x:y",{"a":[1,"b"]}]` + "\n" +
		`["node",3,0,9,8,5]` + "\n" +
		`["node",1,0,9,8,5]` + "\n"))
	// Locations with their Script nodes (Chrome's script_object_index).
	f.Add([]byte(`["metadata","version_major","1"]` + "\n" +
		`["record","node",["id","type","name","self_size"]]` + "\n" +
		`["record","edge",["from","type","name","to"]]` + "\n" +
		`["record","node_type",["index","name","category","fields"]]` + "\n" +
		`["record","string",["id","text"]]` + "\n" +
		`["record","v8:location",["node","script_id","script","line","column"]]` + "\n" +
		`["node_type",0,"v8:object","object",[]]` + "\n" +
		`["string",0,""]` + "\n" +
		`["v8:location",3,4,1,0,0]` + "\n" +
		`["v8:location",1,4,null,0,0]` + "\n" +
		`["node",1,0,0,0]` + "\n" +
		`["node",3,0,0,8]` + "\n"))
	// A small analysed file, and the lies of issue 12.10 told in it.
	f.Add([]byte(analysedSmall))
	for _, lie := range []func([]byte) ([]byte, error){hostile.JSONLRetainedMax, hostile.JSONLDominatorCycle, hostile.JSONLDuplicateNode} {
		b, err := lie([]byte(analysedSmall))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var res model.Results
		g, err := Read(bytes.NewReader(data), "fuzz", ReadOptions{Results: &res})
		if !testfixtures.CheckRead(t, g, err) {
			return
		}
		if res.Shallow != nil {
			if err := res.Check(g); err != nil {
				t.Fatalf("results returned without error do not hold together: %v", err)
			}
		}
		// Whatever was read can be written and read back the same.
		var out bytes.Buffer
		if err := Write(&out, g, WriteOptions{}); err != nil {
			t.Fatalf("writing a graph that was read: %v", err)
		}
		h, err := Read(bytes.NewReader(out.Bytes()), "again", ReadOptions{})
		if err != nil {
			t.Fatalf("reading back what was written: %v\n%s", err, out.Bytes())
		}
		if h.NumNodes() != g.NumNodes() || h.NumEdges() != g.NumEdges() {
			t.Fatalf("round trip changed counts")
		}
	})
}
