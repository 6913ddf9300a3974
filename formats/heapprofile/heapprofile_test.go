package heapprofile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/hostile"
)

func fixture(name string) string { return filepath.Join("..", "..", "testdata", name) }

// TestReadNodeProfile reads what node --heap-prof wrote for
// testdata/gen/sites.js and checks it against the file's JSON, read with
// encoding/json in full.
func TestReadNodeProfile(t *testing.T) {
	p, err := ReadFile(fixture("node-sites.heapprofile"))
	if err != nil {
		t.Fatal(err)
	}
	// Counted with python3's json on the file: 45 call tree nodes, 384
	// samples, 6 of them of node id 53, which the tree lacks.
	if len(p.Nodes) != 45 || len(p.Samples) != 384 {
		t.Fatalf("%d nodes, %d samples; want 45 and 384", len(p.Nodes), len(p.Samples))
	}
	root := p.Nodes[0]
	if root.Function != "(root)" || root.Parent != -1 || root.ID != 1 || root.Line != -1 {
		t.Errorf("root %+v", root)
	}
	var mr *Node
	for i := range p.Nodes {
		n := &p.Nodes[i]
		if n.Parent >= int32(i) {
			t.Fatalf("node %d has parent %d: not preorder", i, n.Parent)
		}
		if n.Function == "makeRecord" {
			mr = n
		}
	}
	if mr == nil || mr.URL != "/tmp/heapx-sites-app/sites.js" || mr.Line != 3 || mr.Column != 19 || mr.SelfSize != 1015920 || mr.ID != 48 {
		t.Errorf("makeRecord %+v", mr)
	}
	if p.Nodes[mr.Parent].Function != "" || p.Nodes[mr.Parent].Line != 0 {
		t.Errorf("makeRecord called from %+v, want the script's top level", p.Nodes[mr.Parent])
	}
	var outside, ofMR int
	for _, s := range p.Samples {
		switch {
		case s.Node < 0:
			outside++
		case &p.Nodes[s.Node] == mr:
			ofMR++
		}
	}
	if outside != 6 || ofMR != 244 {
		t.Errorf("%d samples outside the tree, %d of makeRecord; want 6 and 244", outside, ofMR)
	}
	if s := p.Samples[0]; s.Size == 0 || s.Ordinal == 0 {
		t.Errorf("first sample %+v", s)
	}
}

// TestReadGzip reads the same profile gzip-compressed.
func TestReadGzip(t *testing.T) {
	raw, err := os.ReadFile(fixture("node-sites.heapprofile"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(raw)
	zw.Close()
	path := filepath.Join(t.TempDir(), "p.heapprofile.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if !DetectFile(path) {
		t.Error("DetectFile: gzip-compressed profile not detected")
	}
	p, err := ReadFile(path)
	if err != nil || len(p.Nodes) != 45 {
		t.Fatalf("gzip read: %v", err)
	}
}

func TestDetect(t *testing.T) {
	for _, name := range []string{"node-sites.heapprofile", "node-small.heapprofile"} {
		if !DetectFile(fixture(name)) {
			t.Errorf("%s not detected", name)
		}
	}
	for _, name := range []string{"node-small.cpuprofile", "node-basic.heapsnapshot.gz", "node-timeline.heaptimeline.gz", "missing"} {
		if DetectFile(fixture(name)) {
			t.Errorf("%s detected as a sampling heap profile", name)
		}
	}
}

// TestIsProfileFile: a profile by content or by name is read as one; a
// dump, a directory and a missing file are not.
func TestIsProfileFile(t *testing.T) {
	dir := t.TempDir()
	misnamed := filepath.Join(dir, "bad.HEAPPROFILE.gz")
	renamed := filepath.Join(dir, "profile.json")
	for path, body := range map[string]string{misnamed: "not json", renamed: `{"head":{"callFrame":{}}}`} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{fixture("node-sites.heapprofile"), misnamed, renamed} {
		if !IsProfileFile(path) {
			t.Errorf("%s is not read as a profile", path)
		}
	}
	for _, path := range []string{fixture("node-basic.heapsnapshot.gz"), fixture("missing.heapprofile"), dir} {
		if IsProfileFile(path) {
			t.Errorf("%s is read as a profile", path)
		}
	}
}

// TestBadInput: every malformed profile is an *Error naming the file and
// the byte offset, never a panic or a half profile.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, `expected "{"`},
		{`[]`, `expected "{", found [`},
		{`{"samples":[]}`, `no "head" call tree`},
		{`{"head":{"callFrame":{},"selfSize":0,"children":[]}}`, `without an "id"`},
		{`{"head":{"id":1,"selfSize":-5,"children":[]}}`, "non-negative integer"},
		{`{"head":{"id":1,"selfSize":1.5,"children":[]}}`, "non-negative integer"},
		{`{"head":{"id":1,"children":[{"id":1,"children":[]}]}}`, "node id 1 appears twice"},
		{`{"head":{"id":1,"children":[]},"samples":[{"size":8}]}`, `sample without a "nodeId"`},
		{`{"head":{"id":1,"children":[]},"samples":[{"size":8,"nodeId":"x"}]}`, "expected a number"},
		{`{"head":{"id":1,"children":[]},"samples":[`, "expected"},
		{deep(maxDepth + 2), "nested deeper"},
	} {
		_, err := Read(strings.NewReader(tc.in), "bad.heapprofile")
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bad.heapprofile: ") {
			t.Errorf("%.60q: %v, want an *Error with %q", tc.in, err, tc.want)
		}
	}
}

// deep is a call tree nested n levels.
func deep(n int) string {
	var b strings.Builder
	b.WriteString(`{"head":`)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":%d,"children":[`, i)
	}
	return b.String()
}

// FuzzRead: any input is a profile whose parents and sample nodes are
// in range, or an *Error; never a panic.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"node-sites.heapprofile", "node-small.heapprofile"} {
		b, err := os.ReadFile(fixture(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Add([]byte(`{"head":{"callFrame":{"functionName":"f","scriptId":"1","url":"a.js","lineNumber":2,"columnNumber":3},"selfSize":8,"id":1,"children":[]},"samples":[{"size":8,"nodeId":1,"ordinal":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for i, n := range p.Nodes {
			if n.Parent >= int32(i) || (i > 0 && n.Parent < 0) {
				t.Fatalf("node %d: parent %d", i, n.Parent)
			}
		}
		for _, s := range p.Samples {
			if s.Node >= int32(len(p.Nodes)) || s.Node < -1 {
				t.Fatalf("sample node %d of %d", s.Node, len(p.Nodes))
			}
		}
	})
}

// TestDeepProfile reads a call tree nested a million levels (26 MB of
// JSON, as bench/hostile.sh writes it gzip-compressed): refused at the
// depth bound, having read a few kilobytes, and a chain at the bound is
// read.
func TestDeepProfile(t *testing.T) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if err := hostile.HeapProfileDeep(zw, 1_000_000); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	path := filepath.Join(t.TempDir(), "deep.heapprofile.gz")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	var err error
	alloc := hostile.Allocated(func() { _, err = ReadFile(path) })
	if err == nil || !strings.Contains(err.Error(), "nested deeper than 1024") || !strings.HasPrefix(err.Error(), path+": ") || alloc > 16<<20 {
		t.Errorf("deep profile: %v, %d MB allocated", err, alloc>>20)
	}
	b.Reset()
	if err := hostile.HeapProfileChain(&b, maxDepth-2, 1); err != nil {
		t.Fatal(err)
	}
	if p, err := Read(&b, "chain"); err != nil || len(p.Nodes) != maxDepth || len(p.Samples) != maxDepth-1 {
		t.Errorf("a chain at the depth bound: %v", err)
	}
}
