package hprof

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestSuperclassCycle checks that classes extending each other in a cycle
// are an error that says so, found for a cost linear in the fields (issue
// 12.4: the 970 KB dump of 1,000 classes of 100 fields needed 3 GB, and
// the instance's error said its field data did not fit).
func TestSuperclassCycle(t *testing.T) {
	for _, c := range []struct {
		classes, fields int
		msg             string
	}{
		{1000, 100, "superclass cycle: C0 extends C1 extends C2 extends C3 extends ... (1000 classes)"},
		{3, 1, "superclass cycle: C0 extends C1 extends C2 extends C0"},
		{1, 5, "superclass cycle: C0 extends C0"},
	} {
		data := hostile.SuperclassCycle(c.classes, c.fields)
		var err error
		mem := testfixtures.Allocated(func() { _, err = readBytes(t, data) })
		var fe *formats.FormatError
		if !errors.As(err, &fe) || fe.Msg != c.msg {
			t.Fatalf("%d classes: %v, want %q", c.classes, err, c.msg)
		}
		// At C0's CLASS DUMP, where the walk came back.
		at := bytes.Index(data, binary.BigEndian.AppendUint64([]byte{hostile.SubClassDump}, hostile.ClassID(0)))
		if fe.Offset != int64(at) {
			t.Errorf("%d classes: error at byte %d, want %d", c.classes, fe.Offset, at)
		}
		if limit := uint64(8*len(data)) + 8<<20; mem > limit {
			t.Errorf("%d classes: reading %d bytes allocated %d MB, more than %d MB", c.classes, len(data), mem>>20, limit>>20)
		}
	}
}

// TestSuperclassChain checks a chain of 5,000 classes: each instance
// field is found where HotSpot puts it (own fields first, then the
// superclass's), for memory linear in the fields (it took 263 MB).
func TestSuperclassChain(t *testing.T) {
	const classes, fields = 5000, 2
	data := hostile.SuperclassChain(classes, fields)
	var g any
	mem := testfixtures.Allocated(func() {
		gr, err := readBytes(t, data)
		if err != nil {
			t.Fatal(err)
		}
		g = gr
		inst := node(t, gr, 0x7000000)
		start, end := gr.EdgeRange(inst)
		if n := int(end - start); n != 1+classes*fields {
			t.Fatalf("%d edges, want %d", n, 1+classes*fields)
		}
		for e := start + 1; e < end; e++ {
			k := int(e-start-1) / fields
			want := fmt.Sprintf("f%d->C%d", int(e-start-1)%fields, k)
			if got := gr.EdgeName(e) + "->" + strings.TrimPrefix(gr.NodeName(gr.Edges.To[e]), "class "); got != want {
				t.Fatalf("edge %d: %s, want %s", e-start, got, want)
			}
		}
	})
	runtime.KeepAlive(g)
	if limit := uint64(16*len(data)) + 16<<20; mem > limit {
		t.Errorf("reading %d bytes allocated %d MB, more than %d MB", len(data), mem>>20, limit>>20)
	}
}

// TestWrappingFieldOffset checks the dump whose class is its own
// superclass and whose layout wrapped past 2^32 bytes (issue 12.5): it
// panicked with slice bounds out of range.
func TestWrappingFieldOffset(t *testing.T) {
	_, err := readBytes(t, hostile.WrappingFieldOffset())
	var fe *formats.FormatError
	if !errors.As(err, &fe) || fe.Msg != "superclass cycle: Wrap extends Wrap" {
		t.Fatalf("%v, want a superclass cycle", err)
	}
}
