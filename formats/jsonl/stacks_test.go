package jsonl

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestStacksRoundTrip writes a graph with stacks and reads it back: the
// stacks come back field for field, the stack version is written and
// consumed, and writing again gives the same bytes.
func TestStacksRoundTrip(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Stacks = testfixtures.Stacks(g)
	var buf bytes.Buffer
	if err := Write(&buf, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`["metadata","heapx:stack_version","2"]`,
		`["record","heapx:stack",["index","thread","name","stop","object","state"]]`,
		`["heapx:stack",1,4243,"","frame pointer 0x10 is outside the thread's stack",null,""]`,
		`["heapx:frame_value",3,1,"jni local","",` + strconv.FormatUint(g.NodeID(1)+8, 10) + `,null,"\"text\""]`,
		`["record","heapx:frame",["stack","index","kind","type","function","script","line","column","pc","fp","function_node"]]`,
		`["heapx:frame_value",0,0,"argument","0",null,-3,"-3"]`,
		`["heapx:frame",0,2,"native","","node::Start(int, char**)","",0,0,18446744073709551615,140728898421504,null]`,
	} {
		if !strings.Contains(buf.String(), want+"\n") {
			t.Errorf("the file has no line %s", want)
		}
	}
	h, err := Read(bytes.NewReader(buf.Bytes()), "s.jsonl", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Compare(g, h, ignoreMeta); err != nil {
		t.Fatal(err)
	}
	if v, ok := h.MetaValue(exchange.KeyStackVersion); ok {
		t.Errorf("the reader kept %s=%s in the graph's metadata", exchange.KeyStackVersion, v)
	}
	var again bytes.Buffer
	if err := Write(&again, h, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Errorf("jsonl -> jsonl with stacks is not byte-identical")
	}
	// Without stacks nothing of them is written.
	g.Stacks = nil
	buf.Reset()
	if err := Write(&buf, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "heapx:stack") || strings.Contains(buf.String(), "heapx:frame") {
		t.Error("a graph without stacks was written with stack records or metadata")
	}
}

// TestStackErrors: stack records out of order, of an unknown kind or
// version are errors naming the line.
func TestStackErrors(t *testing.T) {
	const head = `["metadata","version_major","1"]` + "\n" +
		`["record","heapx:stack",["index","thread","name","stop"]]` + "\n" +
		`["record","heapx:frame",["stack","index","kind","type","function","script","line","column","pc","fp","function_node"]]` + "\n" +
		`["record","heapx:frame_value",["stack","frame","role","name","node","smi","text"]]` + "\n"
	const stack = `["heapx:stack",0,7,"main",""]` + "\n"
	const frame = `["heapx:frame",0,0,"javascript","","f","s.js",1,1,2,3,null]` + "\n"
	cases := map[string]struct{ in, msg string }{
		"version":          {`["metadata","version_major","1"]` + "\n" + `["metadata","heapx:stack_version","3"]` + "\n", `line 2: metadata heapx:stack_version is "3"; this heapx reads stack records of versions 1 to 2`},
		"frame first":      {head + frame, "line 5: heapx:frame names stack 0, but 0 heapx:stack records came before it"},
		"stack index":      {head + `["heapx:stack",1,7,"main",""]` + "\n", "line 5: heapx:stack index 1, want 0"},
		"frame index":      {head + stack + `["heapx:frame",0,1,"javascript","","f","s.js",1,1,2,3,null]` + "\n", "line 6: heapx:frame index 1 of stack 0, want 0"},
		"kind":             {head + stack + `["heapx:frame",0,0,"python","","f","s.js",1,1,2,3,null]` + "\n", `line 6: heapx:frame: unknown frame kind "python"`},
		"role":             {head + stack + frame + `["heapx:frame_value",0,0,"global","x",null,null,""]` + "\n", `line 7: heapx:frame_value: unknown frame value role "global"`},
		"version 1 layout": {head + stack + `["heapx:frame",0,0,"java","","f","s.js",1,1,2,3,null]` + "\n" + `["heapx:stack",7,7,"main",""]` + "\n", "line 7: heapx:stack index 7, want 1"},
		"value no frame":   {head + stack + `["heapx:frame_value",0,0,"argument","0",null,1,"1"]` + "\n", "line 6: heapx:frame_value: stack 0 has no frame 0"},
		"line too big":     {head + stack + `["heapx:frame",0,0,"javascript","","f","s.js",4294967296,1,2,3,null]` + "\n", "line"},
		"smi not integer":  {head + stack + frame + `["heapx:frame_value",0,0,"argument","0",null,"x",""]` + "\n", "frame_value smi"},
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
