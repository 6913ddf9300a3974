package v8

import (
	"bytes"
	"strings"
	"testing"

	"github.com/heapx/heapx/model"
)

// FuzzWriteRoundTrip writes back whatever the reader accepts and reads it
// again: the writer must never fail on a graph the reader built, and the
// snapshot it writes must read back to the same graph. Strings with
// control characters, surrogates and odd layouts come from the fuzzer.
func FuzzWriteRoundTrip(f *testing.F) {
	f.Add([]byte(tiny))
	f.Add([]byte(tinyScripts))
	f.Add([]byte(`{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],"node_types":[["hidden","synthetic"]],` +
		`"edge_fields":["type","name_or_index","to_node"],"edge_types":[["element","property"]],"location_fields":["object_index","script_id","line","column"],` +
		`"trace_node_fields":["id","function_info_index","count","size","children"],"trace_function_info_fields":["function_id","name","script_name","script_id","line","column"]},` +
		`"node_count":2,"edge_count":2,"trace_function_count":1},"nodes":[1,0,1,0,2,0,1,3,8,0],"edges":[0,5,5,1,1,0],` +
		`"trace_function_infos":[1,1,0,3,4,5],"trace_tree":[1,0,1,1,[2,0,1,1,[],3,0,1,1,[]],4,0,2,2,[]],"locations":[5,1,2,3],"scopes":[1,-2,3],` +
		`"strings":["","\ud800\u00e9\n\u0001\"x\\"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := readOrSkip(t, data)
		if err != nil {
			return
		}
		for _, sec := range g.Sections {
			// A section whose meta layout key is one of V8's own (a
			// section "sample" would own "sample_fields") cannot keep
			// its layout: not a case real snapshots have.
			switch strings.TrimSuffix(sec.Name, "s") + "_fields" {
			case "node_fields", "edge_fields", "trace_function_info_fields", "trace_node_fields", "sample_fields", "location_fields":
				t.Skip("section name collides with a V8 meta key")
			}
		}
		var out bytes.Buffer
		if err := Write(&out, g, WriteOptions{}); err != nil {
			t.Fatalf("writing a graph the reader accepted: %v", err)
		}
		h, err := Read(bytes.NewReader(out.Bytes()), "again", ReadOptions{Workers: 2})
		if err != nil {
			t.Fatalf("reading back what was written: %v\n%s", err, out.Bytes())
		}
		// Sections and node fields the reader skipped are gone by design
		// (docs/format.md, 3.4); everything else must survive.
		if err := model.Compare(g, h, model.CompareOptions{IgnoreMeta: []string{"v8:skipped_section", "v8:ignored_node_fields"}}); err != nil {
			t.Fatalf("round trip changed the graph: %v\n%s", err, out.Bytes())
		}
	})
}

// readOrSkip reads data, skipping the input when the reader panics: this
// target tests the writer, and the reader's own robustness is FuzzRead's
// (which fails on the same input).
func readOrSkip(t *testing.T, data []byte) (g *model.Graph, err error) {
	defer func() {
		if r := recover(); r != nil {
			t.Skipf("the reader panicked (FuzzRead's concern): %v", r)
		}
	}()
	return Read(bytes.NewReader(data), "fuzz", ReadOptions{Workers: 2})
}
