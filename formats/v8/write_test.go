package v8

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestWriteByteForByte writes every fixture back and compares the bytes
// with the original: Node's and Chrome's snapshots (with newer V8's
// script_object_index in its locations) come back identical, and the
// rewritten snapshot reads back to the same graph.
func TestWriteByteForByte(t *testing.T) {
	for _, path := range testfixtures.V8Dumps(t) {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			orig := testfixtures.Gunzip(t, path)
			g, err := Read(bytes.NewReader(orig), name, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if chrome := strings.HasPrefix(name, "chromium"); chrome != (g.LocationScripts != nil) {
				t.Fatalf("location scripts read: %v; the fixture is Chrome's: %v", g.LocationScripts != nil, chrome)
			}
			var out bytes.Buffer
			if err := Write(&out, g, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			h, err := Read(bytes.NewReader(out.Bytes()), "rewritten", ReadOptions{})
			if err != nil {
				t.Fatalf("rewritten snapshot does not read back: %v", err)
			}
			if err := model.Compare(g, h, model.CompareOptions{}); err != nil {
				t.Fatalf("rewritten snapshot reads back different: %v", err)
			}
			if !bytes.Equal(orig, out.Bytes()) {
				i := 0
				for i < len(orig) && i < out.Len() && orig[i] == out.Bytes()[i] {
					i++
				}
				t.Fatalf("output differs from the original at byte %d of %d/%d:\norig %q\nout  %q",
					i, len(orig), out.Len(), around(orig, i), around(out.Bytes(), i))
			}
		})
	}
}

func around(b []byte, i int) []byte {
	return b[max(0, i-60):min(len(b), i+60)]
}

func TestV8StringEscaping(t *testing.T) {
	for in, want := range map[string]string{
		"plain /":            `"plain /"`,
		"q\"b\\":             `"q\"b\\"`,
		"\b\f\n\r\t\x01\x1f": `"\b\f\n\r\t\u0001\u001F"`,
		"\x7f":               "\"\x7f\"",
		"é€":                 `"\u00E9\u20AC"`,
		"😀":                  `"\uD83D\uDE00"`,
		"\xed\xa0\x80x":      `"\uD800x"`, // a lone surrogate kept as WTF-8
		"\xff":               `"\uFFFD"`,
	} {
		if got := string(appendV8String(nil, in)); got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
	// What V8 wrote comes back: read, then written.
	src := `"a\u00E9\uD83D\uDE00\uD800b\n"`
	in, err := input.Open(strings.NewReader(src), -1, "x", nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := newScanner(in, 64).readString()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(appendV8String(nil, string(dec))); got != src {
		t.Errorf("round trip %s -> %s", src, got)
	}
}

// TestWriteOtherRuntime writes a graph that does not come from V8: its
// types are mapped by category and it reads back with the same structure.
func TestWriteOtherRuntime(t *testing.T) {
	g := &model.Graph{}
	obj, _ := g.AddNodeType(model.NodeType{Namespace: "hprof", Name: "instance", Category: model.CatObject})
	root, _ := g.AddNodeType(model.NodeType{Namespace: "hprof", Name: "root", Category: model.CatSynthetic})
	ref, _ := g.AddEdgeType(model.EdgeType{Namespace: "hprof", Name: "field", Category: model.EdgeProperty})
	el, _ := g.AddEdgeType(model.EdgeType{Namespace: "hprof", Name: "slot", Category: model.EdgeOther, Indexed: true})
	weak, _ := g.AddEdgeType(model.EdgeType{Namespace: "hprof", Name: "referent", Category: model.EdgeOther, Strength: model.Weak, Indexed: true})
	for _, s := range []string{"", "java.lang.Object", "next"} {
		g.Strings.AddString(s)
	}
	g.Nodes = model.Nodes{Type: []uint8{root, obj, obj}, Name: []uint32{0, 1, 1}, ID: model.NewUint64s(0x1000, 0x2000, 0x3000), Size: model.NewUint64s(0, 16, 24), FirstEdge: []uint32{0, 2, 3, 3}}
	g.Edges = model.Edges{Type: []uint8{el, ref, weak}, Name: []uint32{0, 2, 7}, To: []model.NodeIndex{1, 2, 2}}
	var out bytes.Buffer
	if err := Write(&out, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := Read(bytes.NewReader(out.Bytes()), "hprof", ReadOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	if h.NumNodes() != 3 || h.NumEdges() != 3 || h.NodeID(2) != 0x3000 || h.NodeType(1).Name != "object" || h.NodeType(0).Name != "synthetic" {
		t.Fatalf("read back %d nodes, %d edges, types %v", h.NumNodes(), h.NumEdges(), h.NodeTypes)
	}
	got := []string{}
	for e := uint32(0); e < 3; e++ {
		got = append(got, h.EdgeType(e).Name+":"+h.EdgeName(e))
	}
	if strings.Join(got, " ") != "element:0 property:next weak:7" {
		t.Errorf("edges %v", got)
	}
}

// TestWriteOtherRuntimeForDevTools: a graph of another runtime is written
// with the types that make DevTools show heapx's classes and sizes (no
// "array" or "hidden" node, whose sizes DevTools would fold into their
// owner; closures stay closures only when named Function), and the root's
// repeated edges to one target are merged into the first, keeping their
// names, since DevTools cannot load a root that references a node twice.
func TestWriteOtherRuntimeForDevTools(t *testing.T) {
	g := &model.Graph{}
	root, _ := g.AddNodeType(model.NodeType{Namespace: "hprof", Name: "root", Category: model.CatSynthetic})
	arr, _ := g.AddNodeType(model.NodeType{Namespace: "hprof", Name: "array", Category: model.CatArray})
	internal, _ := g.AddNodeType(model.NodeType{Namespace: "sm", Name: "js::Scope", Category: model.CatInternal})
	fn, _ := g.AddNodeType(model.NodeType{Namespace: "sm", Name: "JSObject", Category: model.CatClosure})
	named, _ := g.AddNodeType(model.NodeType{Namespace: "x", Name: "fn", Category: model.CatClosure})
	str, _ := g.AddNodeType(model.NodeType{Namespace: "hprof", Name: "java.lang.String", Category: model.CatString})
	gc, _ := g.AddEdgeType(model.EdgeType{Namespace: "hprof", Name: "gc root", Category: model.EdgeOther})
	for _, s := range []string{"", "byte[]", "js::Scope", "Function", "run", "hello", "sticky class", "JNI global", "Java frame"} {
		g.Strings.AddString(s)
	}
	// Root -> byte[] three times (two names), -> Scope, -> byte[] again
	// under the first name; the others are unreferenced.
	g.Nodes = model.Nodes{
		Type:      []uint8{root, arr, internal, fn, named, str},
		Name:      []uint32{0, 1, 2, 3, 4, 5},
		ID:        model.NewUint64s(0, 8, 16, 24, 32, 1<<40),
		Size:      model.NewUint64s(0, 100, 20, 30, 40, 50),
		FirstEdge: []uint32{0, 5, 5, 5, 5, 5, 5},
	}
	g.Edges = model.Edges{Type: []uint8{gc, gc, gc, gc, gc}, Name: []uint32{6, 7, 6, 8, 6}, To: []model.NodeIndex{1, 1, 2, 2, 1}}
	if n := DuplicateRootEdges(g); n != 3 {
		t.Errorf("DuplicateRootEdges = %d, want 3", n)
	}
	var out bytes.Buffer
	if err := Write(&out, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h, err := Read(bytes.NewReader(out.Bytes()), "other", ReadOptions{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	var types []string
	for i := range h.NumNodes() {
		types = append(types, h.NodeType(int32(i)).Name+":"+h.NodeName(int32(i)))
	}
	if got := strings.Join(types, " "); got != "synthetic: object:byte[] object:js::Scope closure:Function object:run string:hello" {
		t.Errorf("nodes %s", got)
	}
	if h.NumEdges() != 2 || h.EdgeName(0) != "sticky class / JNI global" || h.EdgeName(1) != "sticky class / Java frame" || h.Edges.To[0] != 1 || h.Edges.To[1] != 2 {
		t.Errorf("%d edges: %q -> %d, %q -> %d", h.NumEdges(), h.EdgeName(0), h.Edges.To[0], h.EdgeName(1), h.Edges.To[1])
	}
	if h.NodeID(5) != 1<<40 || h.NodeSize(1) != 100 {
		t.Errorf("ids %v, sizes %v", h.Nodes.ID, h.Nodes.Size)
	}
	// A V8 graph is written as read, repeats and all.
	if n := DuplicateRootEdges(h); n != 0 {
		t.Errorf("DuplicateRootEdges on a V8 graph = %d", n)
	}
}
