package jsonl

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/model"
)

// analysedSmall is a small analysed file: root 1 dominates 3, which
// dominates 5.
var analysedSmall = lines(`["metadata","version_major","1"]`, decls,
	`["record","node",["id","type","name","self_size","heapx:shallow_size","heapx:retained_size","heapx:dominator","heapx:distance"]]`,
	`["record","edge",["from","type","name","to"]]`,
	`["node_type",0,"v8:object","object",[]]`,
	`["edge_type",0,"v8:property","object property","strong","string"]`,
	`["string",0,""]`, `["metadata","heapx:root","1"]`, `["metadata","heapx:analysis","devtools"]`,
	`["node",1,0,0,0,0,24,null,0]`,
	`["node",3,0,0,8,8,24,1,1]`,
	`["node",5,0,0,16,16,16,3,2]`,
	`["edge",1,0,0,3]`, `["edge",3,0,0,5]`)

// analysed is node-basic converted with its analysis, as heapx convert
// --analyze writes it.
func analysed(t testing.TB) []byte {
	t.Helper()
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Results()
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostileResults reads analysed files whose stored results lie (issue
// 12.10): they were taken as they were (top printed a retained size of
// 2^64-1 as 544884523868812.1% of the heap), and a node read twice was
// called a truncated file.
func TestHostileResults(t *testing.T) {
	for _, src := range []struct {
		name string
		b    []byte
	}{{"small", []byte(analysedSmall)}, {"node-basic", analysed(t)}} {
		for _, c := range []struct {
			name string
			lie  func([]byte) ([]byte, error)
			msg  map[string]string
		}{
			{"retained 2^64-1", hostile.JSONLRetainedMax, map[string]string{
				"small":      "results: node id 1 retains 24 bytes, not its shallow size 0 plus the 18446744073709551615 its dominated nodes retain",
				"node-basic": "results: the nodes that node id 1 dominates retain more than 2^64 bytes in all",
			}},
			{"dominator cycle", hostile.JSONLDominatorCycle, map[string]string{
				"small":      "results: the dominators of node id 3 go round in a cycle",
				"node-basic": "results: the dominators of node id 3 go round in a cycle",
			}},
			{"node twice", hostile.JSONLDuplicateNode, map[string]string{
				"small":      "line 17: node id 1 appears twice",
				"node-basic": "line 283285: node id 1 appears twice",
			}},
		} {
			t.Run(src.name+"/"+c.name, func(t *testing.T) {
				in, err := c.lie(src.b)
				if err != nil {
					t.Fatal(err)
				}
				// Whether asked for the results or not, for a node read
				// twice.
				var res model.Results
				_, err = Read(bytes.NewReader(in), "lies.jsonl", ReadOptions{Results: &res})
				var fe *formats.FormatError
				if !errors.As(err, &fe) || !strings.HasSuffix(err.Error(), c.msg[src.name]) {
					t.Errorf("%v, want %q", err, c.msg[src.name])
				}
			})
		}
	}
	// The file as written reads.
	var res model.Results
	if _, err := Read(strings.NewReader(analysedSmall), "small.jsonl", ReadOptions{Results: &res}); err != nil || res.Retained[0] != 24 {
		t.Fatalf("%v, results %+v", err, res)
	}
}
