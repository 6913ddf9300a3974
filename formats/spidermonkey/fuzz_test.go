package spidermonkey

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/internal/testfixtures"
)

// realSeed returns the Metadata message of the small Firefox dump, its
// root (41 named edges) and the ten nodes after the Window, uncompressed:
// real messages, whose edges mostly point past the end (dangling). The
// Window itself (11 KB, 362 edges) is left out to keep the seed small: the
// fuzzer minimizes every input that finds new coverage, and that takes
// long on big ones.
func realSeed(t testing.TB) []byte {
	t.Helper()
	b := testfixtures.Gunzip(t, fixture("ff-small-page.fxsnapshot"))
	var out []byte
	p := 0
	for i := range 13 {
		l, k := protowire.ConsumeVarint(b[p:])
		if k < 0 {
			t.Fatal("bad fixture")
		}
		if i != 2 {
			out = append(out, b[p:p+k+int(l)]...)
		}
		p += k + int(l)
	}
	return out
}

// FuzzRead feeds arbitrary bytes to the reader: it must return a graph that
// validates or a FormatError, and never panic. Seeds: real messages of the
// small Firefox dump (realSeed), plain and gzip-compressed, the
// synthetic dump with allocation stacks, and issue 12.3's crafted dump
// (a message declared 2 GB long, here with 1 MB of its zeros).
func FuzzRead(f *testing.F) {
	real := realSeed(f)
	f.Add(real)
	f.Add(testfixtures.Gzip(f, real))
	f.Add(build(1234,
		node{id: 1, typeName: s("JS::ubi::RootList"), size: 1, edges: []edge{{2, s("e")}, {3, ref(1)}}},
		node{id: 2, typeName: s("JSObject"), size: 48, coarse: coarseObject, class: s("Function"),
			stack: frame(100, frame(200, nil, 1, 1, ref(3), s("outer")), 3, 5, s("a.js"), s("inner"))},
		node{id: 3, typeName: ref(2), size: 32, coarse: coarseObject, class: s("Object"), stack: stackRef(100)},
		node{id: 4, typeName: s("nsIContent"), size: 40, coarse: coarseDOMNode, desc: s("DIV")},
	))
	var bomb bytes.Buffer
	if err := hostile.FxsnapshotBomb(&bomb, 1<<20); err != nil {
		f.Fatal(err)
	}
	f.Add(bomb.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Read(bytes.NewReader(data), "fuzz", ReadOptions{})
		if !testfixtures.CheckRead(t, g, err) {
			return
		}
	})
}
