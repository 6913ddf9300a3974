package spidermonkey

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/jsonl"
	_ "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// dumps are the Firefox dumps in testdata/spidermonkey, each with the
// oracle Firefox computed for it.
var dumps = []string{"ff-small-page", "ff-medium-page"}

func readFixture(t testing.TB, name string) *model.Graph {
	t.Helper()
	g, err := ReadFile(fixture(name+".fxsnapshot"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// coarseOf is the census bucket (Firefox's takeCensus by coarseType) of a
// node category; the root, synthetic, is in no bucket.
func coarseOf(c model.Category) string {
	switch c {
	case model.CatObject, model.CatClosure:
		return "objects"
	case model.CatFunctionInfo, model.CatCode:
		return "scripts"
	case model.CatString:
		return "strings"
	case model.CatNative:
		return "domNode"
	case model.CatSynthetic:
		return ""
	}
	return "other"
}

// TestOracle compares what the reader makes of Firefox's dumps with the
// counts of the corpus's own parser (verify.txt) and with Firefox's census
// and dominator tree (oracle.json).
func TestOracle(t *testing.T) {
	for _, name := range dumps {
		t.Run(name, func(t *testing.T) {
			var v verify
			var o oracle
			loadJSON(t, fixture(name+".verify.txt"), &v)
			loadJSON(t, fixture(name+".oracle.json"), &o)
			g := readFixture(t, name)
			if g.NumNodes() != v.Nodes || g.NumEdges() != v.Edges || g.TotalSize() != v.TotalShallowSize {
				t.Fatalf("%d nodes, %d edges, %d bytes; verify.txt says %d, %d, %d",
					g.NumNodes(), g.NumEdges(), g.TotalSize(), v.Nodes, v.Edges, v.TotalShallowSize)
			}
			if g.Root != 0 || g.NodeID(0) != v.RootID || g.NodeName(0) != "JS::ubi::RootList" {
				t.Errorf("root %d id %d %q, want node 0 id %d", g.Root, g.NodeID(g.Root), g.NodeName(g.Root), v.RootID)
			}
			for k, want := range map[string]string{
				"format": "spidermonkey.fxsnapshot", MetaDanglingEdges: "0",
				MetaTimestamp: strconv.FormatUint(v.Metadata.TimeStamp, 10),
			} {
				if got, _ := g.MetaValue(k); got != want {
					t.Errorf("meta %s = %q, want %q", k, got, want)
				}
			}

			// Census: Firefox's leaves out the root (size 1).
			if n, b := g.NumNodes()-1, g.TotalSize()-1; n != o.CensusTotal.Count || b != o.CensusTotal.Bytes {
				t.Errorf("census total %d nodes %d bytes, oracle %d %d", n, b, o.CensusTotal.Count, o.CensusTotal.Bytes)
			}
			coarse := map[string]count{}
			class := map[string]count{}
			types := map[string]count{}
			for n := range g.NumNodes() {
				if model.NodeIndex(n) == g.Root {
					continue
				}
				c, size := g.NodeType(int32(n)).Category, g.Nodes.Size.At(n)
				add := func(m map[string]count, k string) {
					x := m[k]
					x.Count++
					x.Bytes += size
					m[k] = x
				}
				add(coarse, coarseOf(c))
				add(types, g.NodeType(int32(n)).Name)
				if c == model.CatObject || c == model.CatClosure {
					add(class, g.NodeName(int32(n)))
				} else {
					add(class, "other")
				}
			}
			for k, want := range o.CensusByCoarseType {
				if coarse[k] != want {
					t.Errorf("census %s: %+v, oracle %+v", k, coarse[k], want)
				}
			}
			if len(coarse) != len(o.CensusByCoarseType) {
				t.Errorf("census buckets %v, oracle %v", coarse, o.CensusByCoarseType)
			}
			for _, want := range o.TopObjectClasses {
				if class[want.Class] != want.count {
					t.Errorf("class %s: %+v, oracle %+v", want.Class, class[want.Class], want.count)
				}
			}
			for _, want := range o.TopInternalTypes {
				if types[want.Type] != want.count {
					t.Errorf("type %s: %+v, oracle %+v", want.Type, types[want.Type], want.count)
				}
			}

			// Retained sizes: Firefox's dominator tree counts every edge.
			a, err := analysis.Analyze(g, analysis.Options{NoDistances: true, NoClasses: true})
			if err != nil {
				t.Fatal(err)
			}
			d := a.Dominators
			if d.Retained[g.Root] != o.Root.Retained {
				t.Errorf("root retained %d, oracle %d", d.Retained[g.Root], o.Root.Retained)
			}
			index := map[uint64]model.NodeIndex{}
			for n := range g.Nodes.ID.Len() {
				id := g.Nodes.ID.At(n)
				index[id] = model.NodeIndex(n)
			}
			for _, want := range o.TopDominatedByRoot {
				n, ok := index[want.ID]
				if !ok {
					t.Errorf("oracle node %d (%s) not read", want.ID, want.Shallow)
					continue
				}
				if d.IDom[n] != g.Root || d.Retained[n] != want.Retained {
					t.Errorf("node %d (%s, %s): idom %d retained %d, oracle: the root, %d",
						want.ID, want.Shallow, g.NodeName(n), d.IDom[n], d.Retained[n], want.Retained)
				}
				// The oracle labels objects by class, DOM nodes by
				// descriptive type and scripts by type.
				label := g.NodeName(n)
				if coarseOf(g.NodeType(n).Category) == "scripts" {
					label = g.NodeType(n).Name
				}
				if _, w, _ := strings.Cut(want.Shallow, "/"); label != w {
					t.Errorf("node %d named %q, oracle %q", want.ID, g.NodeName(n), want.Shallow)
				}
			}
		})
	}
}

// TestSynthetic reads a hand-made dump with everything Firefox's test dumps
// lack: allocation stacks (shared by ref, strings interned child frame
// first), a dangling edge, a DOM node, a script and a Function.
func TestSynthetic(t *testing.T) {
	b := build(1234,
		node{id: 1, typeName: s("JS::ubi::RootList"), size: 1, edges: []edge{
			{2, s("vector element")}, {3, ref(1)}, {999, ref(1)}}},
		node{id: 2, typeName: s("JSObject"), size: 48, coarse: coarseObject, class: s("Function"),
			edges: []edge{{3, s("shape")}},
			// Two-byte table so far: 0 RootList, 1 vector element,
			// 2 JSObject, 3 shape. Gecko interns the frame's source (4)
			// and name (5) before its parent's, so the parent, written
			// first, refers to 4.
			stack: frame(100, frame(200, nil, 1, 1, ref(4), s("outer")), 3, 5, s("a.js"), s("inner"))},
		node{id: 3, typeName: ref(2), size: 32, coarse: coarseObject, class: s("Object"), stack: stackRef(100)},
		node{id: 4, typeName: s("nsIContent"), size: 40, coarse: coarseDOMNode, desc: s("DIV")},
		node{id: 5, typeName: s("js::BaseScript"), size: 64, coarse: coarseScript, file: s("a.js")},
	)
	for _, in := range [][]byte{b, testfixtures.Gzip(t, b)} {
		g, err := Read(bytes.NewReader(in), "synthetic", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkSynthetic(t, g)
	}
}

func checkSynthetic(t *testing.T, g *model.Graph) {
	t.Helper()
	names := []string{"JS::ubi::RootList", "Function", "Object", "DIV", "a.js"}
	cats := []model.Category{model.CatSynthetic, model.CatClosure, model.CatObject, model.CatNative, model.CatFunctionInfo}
	types := []string{"JS::ubi::RootList", "JSObject", "JSObject", "nsIContent", "js::BaseScript"}
	if g.NumNodes() != len(names) {
		t.Fatalf("%d nodes", g.NumNodes())
	}
	for n := range names {
		nt := g.NodeType(int32(n))
		if g.NodeName(int32(n)) != names[n] || nt.Category != cats[n] || nt.Name != types[n] || nt.Namespace != Namespace {
			t.Errorf("node %d: %q %v %s", n, g.NodeName(int32(n)), nt.Category, nt.QualifiedName())
		}
	}
	if want := (model.EdgeType{Namespace: Namespace, Name: EdgeTypeName, Category: model.EdgeProperty}); len(g.EdgeTypes) != 1 || g.EdgeTypes[0] != want {
		t.Errorf("edge types %+v", g.EdgeTypes)
	}
	var edges []string
	for e := range g.NumEdges() {
		edges = append(edges, g.EdgeName(uint32(e))+">"+g.NodeName(g.Edges.To[e]))
	}
	if got := strings.Join(edges, " "); got != "vector element>Function vector element>Object shape>Object" {
		t.Errorf("edges %s", got)
	}
	if fe := g.Nodes.FirstEdge; fe[1] != 2 || fe[2] != 3 || fe[5] != 3 {
		t.Errorf("first edges %v", fe)
	}
	if v, _ := g.MetaValue(MetaDanglingEdges); v != "1" {
		t.Errorf("dangling edges %q", v)
	}
	if v, _ := g.MetaValue(MetaTimestamp); v != "1234" {
		t.Errorf("timestamp %q", v)
	}
	tr := g.Trace
	if tr == nil || len(tr.Tree) != 2 || len(tr.Functions) != 2 {
		t.Fatalf("trace %+v", tr)
	}
	outer, inner := tr.Functions[0], tr.Functions[1]
	if outer.ID != 200 || g.Strings.At(outer.Name) != "outer" || g.Strings.At(outer.ScriptName) != "a.js" || outer.Line != 1 || outer.Column != 1 {
		t.Errorf("outer frame %+v", outer)
	}
	if inner.ID != 100 || g.Strings.At(inner.Name) != "inner" || g.Strings.At(inner.ScriptName) != "a.js" || inner.Line != 3 || inner.Column != 5 {
		t.Errorf("inner frame %+v", inner)
	}
	if tr.Tree[0] != (model.TraceNode{ID: 1, Function: 0, Parent: -1}) || tr.Tree[1] != (model.TraceNode{ID: 2, Function: 1, Count: 2, Size: 80, Parent: 0}) {
		t.Errorf("trace tree %+v", tr.Tree)
	}
	if want := []uint32{0, 2, 2, 0, 0}; !equal(g.TraceNodeID, want) {
		t.Errorf("trace node ids %v, want %v", g.TraceNodeID, want)
	}
}

// TestStackPreorder has a frame reached only after an unrelated stack:
// the tree must still come out in preorder, node ids moving with nodes.
func TestStackPreorder(t *testing.T) {
	b := build(1,
		node{id: 1, typeName: s("JS::ubi::RootList"), size: 1},
		// Two-byte table: 0 RootList, 1 JSObject, 2 a.js, 3 inner, 4 outer.
		node{id: 2, typeName: s("JSObject"), size: 8, coarse: coarseObject, class: s("Object"),
			stack: frame(100, frame(200, nil, 1, 1, ref(2), s("outer")), 2, 1, s("a.js"), s("inner"))},
		node{id: 3, typeName: ref(1), size: 8, coarse: coarseObject, class: ref(0),
			stack: frame(300, nil, 9, 1, ref(2), s("other"))},
		node{id: 4, typeName: ref(1), size: 8, coarse: coarseObject, class: ref(0),
			stack: frame(400, stackRef(200), 5, 1, ref(2), s("mid"))},
	)
	g, err := Read(bytes.NewReader(b), "preorder", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range g.Trace.Tree {
		got = append(got, g.Strings.At(g.Trace.Functions[x.Function].Name)+"/"+strconv.Itoa(int(x.ID))+"/"+strconv.Itoa(int(x.Parent)))
	}
	if s := strings.Join(got, " "); s != "outer/1/-1 inner/2/0 mid/4/0 other/3/-1" {
		t.Errorf("tree (name/id/parent) %s", s)
	}
	if want := []uint32{0, 2, 3, 4}; !equal(g.TraceNodeID, want) {
		t.Errorf("trace node ids %v, want %v", g.TraceNodeID, want)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestFoldTypes gives the reader more type names than the model's 256
// node types.
func TestFoldTypes(t *testing.T) {
	nodes := []node{{id: 1, typeName: s("JS::ubi::RootList"), size: 1}}
	for i := range 300 {
		nodes = append(nodes, node{id: uint64(10 + i), typeName: s("T" + strconv.Itoa(i)), size: 8})
	}
	g, err := Read(bytes.NewReader(build(1, nodes...)), "fold", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.NodeTypes) != maxOwnTypes+1 {
		t.Errorf("%d node types", len(g.NodeTypes))
	}
	var folded []string
	for _, kv := range g.Meta {
		if kv.Key == MetaFoldedType {
			folded = append(folded, kv.Value)
		}
	}
	if len(folded) != 301-maxOwnTypes || folded[0] != "T"+strconv.Itoa(maxOwnTypes-1) {
		t.Errorf("folded %d types starting %v", len(folded), folded[:1])
	}
	last := int32(g.NumNodes() - 1)
	if nt := g.NodeType(last); nt.Name != FoldedTypeName || nt.Category != model.CatInternal || g.NodeName(last) != "T299" {
		t.Errorf("last node %s %v %q", nt.QualifiedName(), nt.Category, g.NodeName(last))
	}
}

// TestRoundTrip converts the small dump and the synthetic one to the
// exchange format's two forms through the registry and back.
func TestRoundTrip(t *testing.T) {
	synth := filepath.Join(t.TempDir(), "synthetic.fxsnapshot")
	b := build(7,
		node{id: 1, typeName: s("JS::ubi::RootList"), size: 1, edges: []edge{{2, s("x")}}},
		node{id: 2, typeName: s("JSObject"), size: 48, coarse: coarseObject, class: s("Object"),
			stack: frame(5, frame(6, nil, 1, 2, ref(3), nil), 3, 4, s("b.js"), s("f"))},
	)
	if err := os.WriteFile(synth, testfixtures.Gzip(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fixture("ff-small-page.fxsnapshot"), synth} {
		g, f, err := formats.Open(path, formats.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if f.Name != "spidermonkey" {
			t.Fatalf("%s detected as %s", path, f.Name)
		}
		testfixtures.CheckExchangeRoundTrip(t, g)
	}
}

func TestDetect(t *testing.T) {
	f, err := formats.Detect(fixture("ff-small-page.fxsnapshot"))
	if err != nil || f.Name != "spidermonkey" {
		t.Fatalf("detected %v, %v", f, err)
	}
	tiny := build(1, node{id: 1, typeName: s("JS::ubi::RootList"), size: 1})
	if !Detect(tiny) {
		t.Error("a minimal dump is not detected")
	}
	for _, head := range []string{
		`{"snapshot":{"meta":{}}}`,
		`["metadata","version_major",1]`,
		"JAVA PROFILE 1.0.2\x00",
		"SQLite format 3\x00",
		"\x00\x00\x00",
		string(tiny[:3]), // cut before the root's first tag
	} {
		if Detect([]byte(head)) {
			t.Errorf("%q detected as a core dump", head)
		}
	}
}

// TestTruncated cuts Firefox's small dump, plain and gzip-compressed (as
// Firefox writes it): each cut gives the error every reader gives for a
// dump cut short, where the plain reader said "message of N bytes runs
// past the end of the input" and the gzip one "corrupt or truncated gzip
// stream: unexpected EOF".
func TestTruncated(t *testing.T) {
	testfixtures.CheckTruncated(t, fixture("ff-small-page.fxsnapshot"), func(name string, b []byte) error {
		_, err := Read(bytes.NewReader(b), name, ReadOptions{})
		return err
	})
}

// TestBadInput feeds broken dumps: each must give a FormatError at the
// right byte, never a panic.
func TestBadInput(t *testing.T) {
	good := build(1, node{id: 1, typeName: s("JS::ubi::RootList"), size: 1, edges: []edge{{2, s("e")}}},
		node{id: 2, typeName: s("JSObject"), size: 8, coarse: coarseObject, class: s("Object")})
	metaLen := len(delimited(nil, appendVarint(nil, metaTimeStamp, 1)))
	small, err := os.ReadFile(fixture("ff-small-page.fxsnapshot"))
	if err != nil {
		t.Fatal(err)
	}
	// A node whose typeNameRef (1) is the only field after the id: the
	// offset of its value is length (1 byte) + id tag and value + ref tag.
	badRef := appendVarint(appendVarint(nil, nodeID, 1), nodeTypeNameRef, 1)
	dup := build(1, node{id: 1, typeName: s("R"), size: 1}, node{id: 1, typeName: ref(0), size: 1})
	// A duplicate found when a full batch of ids goes into the table.
	many := []node{{id: 1, typeName: s("R"), size: 1}}
	for i := range idBatch + 10 {
		many = append(many, node{id: uint64(10 + i), typeName: ref(0), size: 1})
	}
	late := len(build(1, many...)) + 1
	many = append(many, node{id: 100, typeName: ref(0), size: 1})
	for i := range idBatch {
		many = append(many, node{id: uint64(1_000_000 + i), typeName: ref(0), size: 1})
	}
	for _, c := range []struct {
		name string
		in   []byte
		msg  string
		off  int64
	}{
		{"duplicate id in a later batch", build(1, many...), "duplicate node id 100", int64(late)},
		{"truncated gzip", small[:len(small)/2], "file ends early: the dump is truncated", -1},
		{"gzip trailer missing", testfixtures.Gzip(t, good)[:len(testfixtures.Gzip(t, good))-4], "file ends early: the dump is truncated", int64(len(good))},
		{"varint overflow", append(good[:metaLen:metaLen], bytes.Repeat([]byte{0xff}, 11)...), "malformed message length", int64(metaLen)},
		{"length past the end", append(append(good[:metaLen:metaLen], 0xe8, 0x07), good[metaLen+1:]...), "file ends early: the dump is truncated", int64(len(good) + 1)},
		{"length ends early", append(good[:metaLen:metaLen], 0x80), "file ends early: the dump is truncated", int64(metaLen + 1)},
		{"undefined string ref", delimited(good[:metaLen:metaLen], badRef), "reference to two-byte string 1, but only 0 are defined", int64(metaLen + 1 + 2 + 1)},
		{"undefined frame ref", build(1, node{id: 1, typeName: s("R"), size: 1, stack: stackRef(9)}), "reference to stack frame 9", -1},
		{"duplicate id", dup, "duplicate node id 1", int64(len(build(1, node{id: 1, typeName: s("R"), size: 1})) + 1)},
		{"no id", build(1, node{id: 1, typeName: s("R"), size: 1})[:metaLen], "no root node", int64(metaLen)},
		{"bad coarse type", build(1, node{id: 1, typeName: s("R"), size: 1, coarse: 9}), "coarse type 9", int64(metaLen + 1)},
		{"odd two-byte string", delimited(good[:metaLen:metaLen], protowire.AppendBytes(protowire.AppendTag(appendVarint(nil, nodeID, 1), nodeTypeName, protowire.BytesType), []byte("abc"))), "odd length 3", int64(metaLen + 1 + 2 + 2)},
		{"bad field", delimited(good[:metaLen:metaLen], []byte{0x08, 0x01, 0x07}), "malformed protobuf field", int64(metaLen + 3)},
		{"empty", nil, "no Metadata message", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := Read(bytes.NewReader(c.in), "bad", ReadOptions{})
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, %v; want a FormatError", g != nil, err)
			}
			if !strings.Contains(fe.Msg, c.msg) || fe.Offset < 0 || (c.off >= 0 && fe.Offset != c.off) {
				t.Errorf("%v (offset %d), want %q at %d", err, fe.Offset, c.msg, c.off)
			}
		})
	}
}
