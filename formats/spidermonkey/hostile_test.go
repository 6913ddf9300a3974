package spidermonkey

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestDeclaredLength reads the crafted dump of issue 12.3, a Node message
// declared 2 GB long whose zeros inflate from almost nothing: the reader
// buffered the zeros that came (6.3 GB for the 2 GB of the 2.1 MB file)
// before finding that a zero byte is no field. Here 64 MB of them, which
// it must reject after the first window.
func TestDeclaredLength(t *testing.T) {
	var in bytes.Buffer
	if err := hostile.FxsnapshotBomb(&in, 64<<20); err != nil {
		t.Fatal(err)
	}
	var err error
	mem := testfixtures.Allocated(func() { _, err = Read(bytes.NewReader(in.Bytes()), "bomb", ReadOptions{}) })
	var fe *formats.FormatError
	if !errors.As(err, &fe) || !strings.Contains(fe.Msg, "malformed protobuf field") {
		t.Fatalf("%v, want a malformed field", err)
	}
	// The metadata message (1 + 9 bytes), the length (5 bytes), the id
	// (2 bytes).
	if fe.Offset != 17 {
		t.Errorf("error at byte %d, want 17", fe.Offset)
	}
	if mem > 8<<20 {
		t.Errorf("reading %d compressed bytes allocated %d MB", in.Len(), mem>>20)
	}
}

// TestStreamedNode reads a node whose message is longer than a window:
// 100,000 edges and a 1 MB class name, both across window boundaries,
// must read as when buffered whole.
func TestStreamedNode(t *testing.T) {
	var edges []edge
	for i := range 100_000 {
		edges = append(edges, edge{uint64(2 + i%2), s(fmt.Sprintf("objectElements[%d]", i))})
	}
	long := strings.Repeat("x", 1<<20)
	in := build(7,
		node{id: 1, typeName: s("JS::ubi::RootList"), size: 1, edges: edges, class: s(long)},
		node{id: 2, typeName: s("JSObject"), size: 48, coarse: coarseObject, class: s("Object")},
		node{id: 3, typeName: ref(1), size: 32, coarse: coarseObject, class: s("Array")},
	)
	if len(in) < 3*streamChunk {
		t.Fatalf("the message is only %d bytes", len(in))
	}
	for _, data := range [][]byte{in, testfixtures.Gzip(t, in)} {
		g, err := Read(bytes.NewReader(data), "big", ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g.NumNodes() != 3 || g.NumEdges() != len(edges) {
			t.Fatalf("%d nodes, %d edges", g.NumNodes(), g.NumEdges())
		}
		if g.NodeName(0) != long {
			t.Errorf("root named %d bytes", len(g.NodeName(0)))
		}
		for _, e := range []int{0, 1, 12345, 99_999} {
			if got, want := g.EdgeName(uint32(e)), fmt.Sprintf("objectElements[%d]", e); got != want || g.Edges.To[e] != int32(1+e%2) {
				t.Errorf("edge %d: %q to %d, want %q to %d", e, got, g.Edges.To[e], want, 1+e%2)
			}
		}
	}
}

// TestStreamedNodeErrors checks the errors of a message decoded a window
// at a time: a field that says it is longer than any real one, a field
// that runs past its message, input that ends inside the message (the
// error every reader gives for a dump cut short, where the data ends).
func TestStreamedNodeErrors(t *testing.T) {
	meta := delimited(nil, appendVarint(nil, metaTimeStamp, 1))
	field := func(n uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(appendVarint(nil, nodeID, 1), nodeTypeName, protowire.BytesType), n)
	}
	pad := make([]byte, 2*streamChunk)
	ends := append(protowire.AppendVarint(bytes.Clone(meta), 3*streamChunk), append(field(2*streamChunk), pad...)...)
	for _, c := range []struct {
		name string
		in   []byte
		msg  string
		off  int64
	}{
		{"field longer than any", append(protowire.AppendVarint(bytes.Clone(meta), math.MaxInt32), field(1<<30)...),
			"field of 1073741830 bytes, more than the 64 MB a node's field can need", int64(len(meta) + 5 + 2)},
		{"field past its message", append(protowire.AppendVarint(bytes.Clone(meta), 3*streamChunk), append(field(4*streamChunk), pad...)...),
			"field of 1048580 bytes runs past the end of its message (786430 bytes left)", int64(len(meta) + 3 + 2)},
		{"input ends", ends, "file ends early: the dump is truncated", int64(len(ends))},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(c.in), "bad", ReadOptions{})
			var fe *formats.FormatError
			if !errors.As(err, &fe) || !strings.Contains(fe.Msg, c.msg) || fe.Offset != c.off {
				t.Errorf("%v, want %q at byte %d", err, c.msg, c.off)
			}
		})
	}
}
