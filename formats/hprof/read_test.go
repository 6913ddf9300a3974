package hprof

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/jsonl"
	_ "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// builder writes HPROF by hand for tests.
type builder = hostile.HPROF

func newBuilder(idSize int) *builder { return hostile.NewHPROF(idSize) }

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
		w.Record(tagUTF8, func(b *builder) { b.ID(uint64(i)).Raw([]byte(names[i])...) })
	}
	classes := [][2]uint64{{0x100, 1}, {0x200, 2}, {0x300, 5}, {0x400, 7}, {0x500, 8}, {0x600, 10}, {0x700, 13}, {0x800, 17}}
	for i, c := range classes {
		w.Record(tagLoadClass, func(b *builder) { b.U4(uint32(i + 1)).ID(c[0]).U4(0).ID(c[1]) })
	}
	w.Record(tagStackFrame, func(b *builder) { b.ID(0x9000).ID(12).ID(0).ID(14).U4(3).U4(7) })
	w.Record(tagStackTrace, func(b *builder) { b.U4(1).U4(1).U4(1).ID(0x9000) })
	w.Record(tagHeapDumpSegment, func(b *builder) {
		b.U1(subHeapDumpInfo).U4(0).ID(0)
		// A UTF-16 String and its array before String's CLASS DUMP.
		b.U1(subPrimArrayDump).ID(0x2102).U4(0).U4(2).U1(tByte).Raw(0xac, 0x20)
		b.U1(subInstanceDump).ID(0x2002).U4(0).ID(0x200).U4(uint32(idSize + 1)).ID(0x2102).U1(1)
		b.ClassDump(0x100, 0, objectSize, nil, nil)
		b.ClassDump(0x200, 0x100, objectSize+8, nil, [][2]uint64{{3, tObject}, {4, tByte}})
		b.ClassDump(0x300, 0x100, objectSize+8, [][3]uint64{{15, tObject, 0x1000}, {16, tInt, 2}}, [][2]uint64{{6, tObject}, {11, tObject}})
		b.ClassDump(0x400, 0x100, 0, nil, nil)
		b.ClassDump(0x500, 0x100, objectSize+4, nil, [][2]uint64{{9, tObject}})
		b.ClassDump(0x600, 0x500, objectSize+4, nil, nil)
		b.ClassDump(0x700, 0x100, 0, nil, nil)
		b.ClassDump(0x800, 0x100, 0, nil, nil)
		b.U1(rootJavaFrame).ID(0x1000).U4(1).U4(0)
		b.U1(rootStickyClass).ID(0x200)
		b.U1(rootInternedString).ID(0x2000)
		b.U1(rootJNIGlobal).ID(0x3000).ID(0x77)
		b.U1(rootUnknown).ID(0xdead)
		b.U1(rootThreadObject).ID(0x4000).U4(1).U4(1)
	})
	w.Record(tagHeapDumpSegment, func(b *builder) {
		b.U1(subInstanceDump).ID(0x1000).U4(0).ID(0x300).U4(uint32(2 * idSize)).ID(0x1001).ID(0x2000)
		b.U1(subInstanceDump).ID(0x1001).U4(0).ID(0x300).U4(uint32(2 * idSize)).ID(0xbad).ID(0)
		b.U1(subInstanceDump).ID(0x2000).U4(0).ID(0x200).U4(uint32(idSize + 1)).ID(0x2100).U1(0)
		b.U1(subInstanceDump).ID(0x2003).U4(0).ID(0x200).U4(uint32(idSize + 1)).ID(0x2100).U1(0)
		b.U1(subPrimArrayDump).ID(0x2100).U4(0).U4(5).U1(tByte).Raw('h', 0xe9, 'l', 'l', 'o')
		b.U1(subInstanceDump).ID(0x3000).U4(0).ID(0x600).U4(uint32(idSize)).ID(0x1001)
		b.U1(subObjArrayDump).ID(0x4000).U4(0).U4(3).ID(0x700).ID(0x1000).ID(0).ID(0x2000)
		b.U1(subPrimArrayNoData).ID(0x5000).U4(0).U4(3).U1(tInt)
	})
	w.Record(tagHeapDumpEnd, func(*builder) {})
	return w.B
}

func readBytes(t testing.TB, b []byte) (*model.Graph, error) {
	t.Helper()
	g, err := Read(bytes.NewReader(b), "tiny", ReadOptions{})
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
	for i := range g.Nodes.ID.Len() {
		x := g.Nodes.ID.At(i)
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
		s := fmt.Sprintf("%s->0x%x", g.EdgeName(e), g.NodeID(g.Edges.To[e]))
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
			if idSize == 8 && c.id != 0x3000 && g.NodeSize(n) != c.size {
				t.Errorf("0x%x: size %d, want %d", c.id, g.NodeSize(n), c.size)
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
	if got := g.NodeSize(node(t, g, 0x1000)); got != 20 {
		t.Errorf("Node with stated sizes: %d bytes, want 20", got)
	}
	if got := g.NodeSize(node(t, g, 0x4000)); got != 32 { // 12 + 4 + 3*4
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
		{"truncated", good[:len(good)-20], int64(len(good) - 20), "file ends early: the dump is truncated"},
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
		{"UTF8 length lies", append(bytes.Clone(good[:hdr]), tagUTF8, 0, 0, 0, 0, 0, 0, 0x10, 0, 'x'), int64(hdr + 10), "file ends early: the dump is truncated"},
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

// TestTruncated cuts a real dump, plain and gzip-compressed: each cut gives
// the error every reader gives for a dump cut short, where this reader
// said "file ends inside a PRIMITIVE ARRAY DUMP (truncated dump?)" or, for
// gzip, "bad gzip data in a record: unexpected EOF".
func TestTruncated(t *testing.T) {
	testfixtures.CheckTruncated(t, fixture("java-leakdemo-small.hprof.gz"), func(name string, b []byte) error {
		_, err := Read(bytes.NewReader(b), name, ReadOptions{})
		return err
	})
}

// TestReadNeedsAFile reads from a pipe: HPROF is read in passes, which a
// stream cannot give, and the error says so instead of failing at the
// second pass.
func TestReadNeedsAFile(t *testing.T) {
	_, err := Read(io.MultiReader(bytes.NewReader(tinyDump(8, 0))), "pipe", ReadOptions{})
	if want := "pipe: HPROF dumps are read in two passes, from a file: save the dump to a file first"; err == nil || err.Error() != want {
		t.Errorf("%v, want %s", err, want)
	}
}
