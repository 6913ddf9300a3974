package hprof

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/jsonl"
	_ "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// builder writes HPROF by hand for tests.
type builder struct {
	b      []byte
	idSize int
}

func (w *builder) u1(v byte) *builder   { w.b = append(w.b, v); return w }
func (w *builder) u2(v uint16) *builder { w.b = binary.BigEndian.AppendUint16(w.b, v); return w }
func (w *builder) u4(v uint32) *builder { w.b = binary.BigEndian.AppendUint32(w.b, v); return w }
func (w *builder) raw(p ...byte) *builder {
	w.b = append(w.b, p...)
	return w
}
func (w *builder) id(v uint64) *builder {
	if w.idSize == 4 {
		return w.u4(uint32(v))
	}
	w.b = binary.BigEndian.AppendUint64(w.b, v)
	return w
}

// record appends a top-level record whose body body writes.
func (w *builder) record(tag byte, body func(*builder)) *builder {
	x := &builder{idSize: w.idSize}
	body(x)
	w.u1(tag).u4(0).u4(uint32(len(x.b)))
	w.b = append(w.b, x.b...)
	return w
}

func newBuilder(idSize int) *builder {
	w := &builder{idSize: idSize}
	w.raw([]byte("JAVA PROFILE 1.0.2\x00")...).u4(uint32(idSize)).u4(0).u4(1000)
	return w
}

// classDump writes a CLASS DUMP with object statics and instance fields
// (name string id, type).
func (w *builder) classDump(id, super uint64, size uint32, statics [][3]uint64, fields [][2]uint64) {
	w.u1(subClassDump).id(id).u4(0).id(super).id(0).id(0).id(0).id(0).id(0).u4(size).u2(0)
	w.u2(uint16(len(statics)))
	for _, s := range statics {
		w.id(s[0]).u1(byte(s[1]))
		if s[1] == tObject {
			w.id(s[2])
		} else {
			w.u4(uint32(s[2]))
		}
	}
	w.u2(uint16(len(fields)))
	for _, f := range fields {
		w.id(f[0]).u1(byte(f[1]))
	}
}

// tinyDump is a small dump with one of everything: classes with a
// superclass, an object static, instances with references (one dangling),
// Latin-1 and UTF-16 Strings (one shared array, one array before a String
// that comes before String's CLASS DUMP), a weak reference, object and
// primitive arrays, Android's sub-records and every kind of GC root
// record used here. objectSize is java.lang.Object's instance size.
func tinyDump(idSize int, objectSize uint32) []byte {
	w := newBuilder(idSize)
	names := []string{1: "java/lang/Object", "java/lang/String", "value", "coder", "Node", "next", "[B", "java/lang/ref/Reference",
		"referent", "java/lang/ref/WeakReference", "name", "main", "[LNode;", "Main.java", "head", "count", "[I"}
	for i := 1; i < len(names); i++ {
		w.record(tagUTF8, func(b *builder) { b.id(uint64(i)).raw([]byte(names[i])...) })
	}
	classes := [][2]uint64{{0x100, 1}, {0x200, 2}, {0x300, 5}, {0x400, 7}, {0x500, 8}, {0x600, 10}, {0x700, 13}, {0x800, 17}}
	for i, c := range classes {
		w.record(tagLoadClass, func(b *builder) { b.u4(uint32(i + 1)).id(c[0]).u4(0).id(c[1]) })
	}
	w.record(tagStackFrame, func(b *builder) { b.id(0x9000).id(12).id(0).id(14).u4(3).u4(7) })
	w.record(tagStackTrace, func(b *builder) { b.u4(1).u4(1).u4(1).id(0x9000) })
	w.record(tagHeapDumpSegment, func(b *builder) {
		b.u1(subHeapDumpInfo).u4(0).id(0)
		// A UTF-16 String and its array before String's CLASS DUMP.
		b.u1(subPrimArrayDump).id(0x2102).u4(0).u4(2).u1(tByte).raw(0xac, 0x20)
		b.u1(subInstanceDump).id(0x2002).u4(0).id(0x200).u4(uint32(idSize + 1)).id(0x2102).u1(1)
		b.classDump(0x100, 0, objectSize, nil, nil)
		b.classDump(0x200, 0x100, objectSize+8, nil, [][2]uint64{{3, tObject}, {4, tByte}})
		b.classDump(0x300, 0x100, objectSize+8, [][3]uint64{{15, tObject, 0x1000}, {16, tInt, 2}}, [][2]uint64{{6, tObject}, {11, tObject}})
		b.classDump(0x400, 0x100, 0, nil, nil)
		b.classDump(0x500, 0x100, objectSize+4, nil, [][2]uint64{{9, tObject}})
		b.classDump(0x600, 0x500, objectSize+4, nil, nil)
		b.classDump(0x700, 0x100, 0, nil, nil)
		b.classDump(0x800, 0x100, 0, nil, nil)
		b.u1(rootJavaFrame).id(0x1000).u4(1).u4(0)
		b.u1(rootStickyClass).id(0x200)
		b.u1(rootInternedString).id(0x2000)
		b.u1(rootJNIGlobal).id(0x3000).id(0x77)
		b.u1(rootUnknown).id(0xdead)
		b.u1(rootThreadObject).id(0x4000).u4(1).u4(1)
	})
	w.record(tagHeapDumpSegment, func(b *builder) {
		b.u1(subInstanceDump).id(0x1000).u4(0).id(0x300).u4(uint32(2 * idSize)).id(0x1001).id(0x2000)
		b.u1(subInstanceDump).id(0x1001).u4(0).id(0x300).u4(uint32(2 * idSize)).id(0xbad).id(0)
		b.u1(subInstanceDump).id(0x2000).u4(0).id(0x200).u4(uint32(idSize + 1)).id(0x2100).u1(0)
		b.u1(subInstanceDump).id(0x2003).u4(0).id(0x200).u4(uint32(idSize + 1)).id(0x2100).u1(0)
		b.u1(subPrimArrayDump).id(0x2100).u4(0).u4(5).u1(tByte).raw('h', 0xe9, 'l', 'l', 'o')
		b.u1(subInstanceDump).id(0x3000).u4(0).id(0x600).u4(uint32(idSize)).id(0x1001)
		b.u1(subObjArrayDump).id(0x4000).u4(0).u4(3).id(0x700).id(0x1000).id(0).id(0x2000)
		b.u1(subPrimArrayNoData).id(0x5000).u4(0).u4(3).u1(tInt)
	})
	w.record(tagHeapDumpEnd, func(*builder) {})
	return w.b
}

func readBytes(t testing.TB, b []byte) (*model.Graph, error) {
	t.Helper()
	g, err := Read(bytes.NewReader(b), "tiny", Options{})
	if err == nil {
		if verr := g.Validate(); verr != nil {
			t.Fatalf("graph does not validate: %v", verr)
		}
	}
	return g, err
}

// node returns the index of the node with id.
func node(t *testing.T, g *model.Graph, id uint64) int32 {
	t.Helper()
	for i, x := range g.Nodes.ID {
		if x == id {
			return int32(i)
		}
	}
	t.Fatalf("no node 0x%x", id)
	return -1
}

// edges lists n's edges as "name->0xid" (weak ones with a "~").
func edges(g *model.Graph, n int32) string {
	var out []string
	start, end := g.EdgeRange(n)
	for e := start; e < end; e++ {
		s := fmt.Sprintf("%s->0x%x", g.EdgeName(e), g.Nodes.ID[g.Edges.To[e]])
		if g.EdgeType(e).Strength == model.Weak {
			s = "~" + s
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func TestTinyDump(t *testing.T) {
	for _, idSize := range []int{8, 4} {
		g, err := readBytes(t, tinyDump(idSize, 0))
		if err != nil {
			t.Fatal(err)
		}
		// root + 8 classes + 2 arrays before the class dumps + 8 objects.
		if g.NumNodes() != 19 {
			t.Fatalf("id size %d: %d nodes, want 19", idSize, g.NumNodes())
		}
		for _, c := range []struct {
			id          uint64
			name, edges string
			size        uint64
		}{
			{0x1000, "Node", "<class>->0x300 next->0x1001 name->0x2000", 16 + 2*uint64(idSize)},
			{0x1001, "Node", "<class>->0x300", 16 + 2*uint64(idSize)},
			{0x2000, "héllo", "<class>->0x200 value->0x2100", 32},
			{0x2003, "héllo", "<class>->0x200 value->0x2100", 32},
			{0x2002, "€", "<class>->0x200 value->0x2102", 32},
			{0x3000, "java.lang.ref.WeakReference", "<class>->0x600 ~referent->0x1001", 24},
			{0x4000, "Node[]", "<class>->0x700 0->0x1000 2->0x2000", (2*uint64(idSize) + 4 + 3*uint64(idSize) + 7) &^ 7},
			{0x2100, "byte[]", "<class>->0x400", (2*uint64(idSize) + 4 + 5 + 7) &^ 7},
			{0x5000, "int[]", "<class>->0x800", (2*uint64(idSize) + 4 + 12 + 7) &^ 7},
			{0x300, "class Node", "<super>->0x100 head->0x1000", 0},
		} {
			n := node(t, g, c.id)
			if got := g.NodeName(n); got != c.name {
				t.Errorf("id size %d: 0x%x named %q, want %q", idSize, c.id, got, c.name)
			}
			if got := edges(g, n); got != c.edges {
				t.Errorf("id size %d: 0x%x edges %q, want %q", idSize, c.id, got, c.edges)
			}
			if idSize == 8 && c.id != 0x3000 && g.Nodes.Size[n] != c.size {
				t.Errorf("0x%x: size %d, want %d", c.id, g.Nodes.Size[n], c.size)
			}
		}
		if got := edges(g, g.Root); got != "Java frame->0x1000 sticky class->0x200 interned string->0x2000 JNI global->0x3000 thread object->0x4000" {
			t.Errorf("root edges %q", got)
		}
		if len(g.GCRoots) != 5 || g.RootKinds[g.GCRoots[2].Kind] != "hprof:interned string" {
			t.Errorf("GC roots %v kinds %v", g.GCRoots, g.RootKinds)
		}
		for k, want := range map[string]string{"hprof:dangling_refs": "1", "hprof:dangling_roots": "1", "hprof:oop_size": "8",
			"hprof:stack_trace": "1 thread 1: Node.main(Main.java:7)", "hprof:id_size": string(rune('0' + idSize))} {
			if idSize == 4 && k == "hprof:oop_size" {
				want = "4"
			}
			if got, _ := g.MetaValue(k); got != want {
				t.Errorf("id size %d: meta %s = %q, want %q", idSize, k, got, want)
			}
		}
		if _, ok := g.MetaValue("hprof:undecoded_strings"); ok {
			t.Errorf("undecoded strings reported")
		}
	}
	// With java.lang.Object's size stated (Android), sizes are the CLASS
	// DUMP's and references are that size minus the id size.
	g, err := readBytes(t, tinyDump(8, 12))
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Nodes.Size[node(t, g, 0x1000)]; got != 20 {
		t.Errorf("Node with stated sizes: %d bytes, want 20", got)
	}
	if got := g.Nodes.Size[node(t, g, 0x4000)]; got != 32 { // 12 + 4 + 3*4
		t.Errorf("Node[3] with stated sizes: %d bytes, want 32", got)
	}
}

// TestRoundTrip writes a real dump to .jsonl.gz and .db through the
// registry and reads it back unchanged, its source format named.
func TestRoundTrip(t *testing.T) {
	testfixtures.CheckExchangeRoundTrip(t, open(t, "java-jshell-agent.hprof.gz"))
}

// TestBadInput checks that broken dumps give a FormatError at the right
// byte, never a panic.
func TestBadInput(t *testing.T) {
	good := tinyDump(8, 0)
	hdr := len("JAVA PROFILE 1.0.2") + 13
	firstSeg := bytes.Index(good, []byte{tagHeapDumpSegment, 0, 0, 0, 0})
	cases := []struct {
		name   string
		data   []byte
		offset int64
		msg    string
	}{
		{"truncated", good[:len(good)-20], -2, "file ends inside"},
		{"identifier size 5", func() []byte {
			b := bytes.Clone(good)
			b[hdr-9] = 5
			return b
		}(), int64(hdr - 12), "identifier size 5"},
		{"unknown record tag", append(bytes.Clone(good[:hdr]), 0x42, 0, 0, 0, 0, 0, 0, 0, 0), int64(hdr), "unknown record tag 0x42"},
		{"unknown sub-record tag", func() []byte {
			b := bytes.Clone(good)
			b[firstSeg+9] = 0x42
			return b
		}(), int64(firstSeg + 9), "unknown heap dump sub-record tag 0x42"},
		{"segment length lies", func() []byte {
			b := bytes.Clone(good)
			n := binary.BigEndian.Uint32(b[firstSeg+5:])
			binary.BigEndian.PutUint32(b[firstSeg+5:], n-3)
			return b
		}(), -2, "runs past the end"},
		{"UTF8 length lies", append(bytes.Clone(good[:hdr]), tagUTF8, 0, 0, 0, 0, 0, 0, 0x10, 0, 'x'), int64(hdr), "file ends inside a record"},
		{"not hprof", []byte("JAVA PROFILE 9\x00"), 0, "not an HPROF dump"},
	}
	for _, c := range cases {
		_, err := readBytes(t, c.data)
		var fe *formats.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %T %v, want a FormatError", c.name, err, err)
			continue
		}
		if !strings.Contains(fe.Msg, c.msg) || (c.offset >= 0 && fe.Offset != c.offset) || fe.Offset < 0 {
			t.Errorf("%s: %v; want %q at byte %d", c.name, err, c.msg, c.offset)
		}
	}
	// Every prefix either reads (it ends between records) or fails with a
	// FormatError.
	for n := range len(good) {
		g, err := readBytes(t, good[:n])
		var fe *formats.FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("prefix %d: %T %v", n, err, err)
		}
		if err == nil && g == nil {
			t.Fatalf("prefix %d: no graph and no error", n)
		}
	}
}
