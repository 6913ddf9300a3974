package formats_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	// Only V8, so that TestUnlinkedFormat sees a program missing the
	// other formats (formats/all links them all).
	_ "github.com/heapx/heapx/formats/v8"
)

func TestDetect(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"snapshot":{}}`))
	zw.Close()
	for path, want := range map[string]string{
		write("a.heapsnapshot", []byte(`{"snapshot":{}}`)): "v8",
		write("b.bin", gz.Bytes()):                         "v8",
		"../testdata/node-basic.heapsnapshot.gz":           "v8",
	} {
		f, err := formats.Detect(path)
		if err != nil || f.Name != want {
			t.Errorf("%s: %v %v, want %s", path, f, err, want)
		}
	}
	for path, msg := range map[string]string{
		write("empty", nil):                    "empty file",
		write("junk", []byte("hello")):         "not a heap dump heapx can read",
		dir:                                    "is a directory",
		filepath.Join(dir, "missing"):          "no such file",
		write("bad.gz", []byte{0x1f, 0x8b, 1}): "not a heap dump",
	} {
		if _, err := formats.Detect(path); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: error %v, want %q", path, err, msg)
		}
	}
}

// TestUnlinkedFormat opens an HPROF dump in a program that links only
// the V8 format (this test): the error says which formats are missing
// and what to import.
func TestUnlinkedFormat(t *testing.T) {
	path := "../testdata/hprof/java-leakdemo-small.hprof.gz"
	_, err := formats.Detect(path)
	want := path + ": not a heap dump heapx can read (known formats: v8; hprof, jsonl, nodecore, parquet, spidermonkey, sqlite not linked into this program: import github.com/heapx/heapx/formats/all)"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestByExtension(t *testing.T) {
	for path, want := range map[string]string{"x.heapsnapshot": "v8", "X.HEAPTIMELINE.gz": "v8"} {
		if f, ok := formats.ByExtension(path); !ok || f.Name != want {
			t.Errorf("%s: %v", path, f)
		}
	}
	if _, ok := formats.ByExtension("x.txt"); ok {
		t.Error("x.txt has a format")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	err := formats.WriteFileAtomic(out, func(tmp string) error {
		os.WriteFile(tmp, []byte("half"), 0o644)
		return errors.New("interrupted")
	})
	if err == nil {
		t.Fatal("no error")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a failed write left %v", ents)
	}
	if err := formats.WriteFileAtomic(out, func(tmp string) error { return os.WriteFile(tmp, []byte("done"), 0o600) }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "done" {
		t.Errorf("wrote %q", b)
	}
	if st, _ := os.Stat(out); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestFormatError(t *testing.T) {
	e := &formats.FormatError{File: "f", Section: "nodes", Offset: 12, Msg: "bad"}
	if e.Error() != "f: nodes: byte 12: bad" {
		t.Error(e.Error())
	}
	e = &formats.FormatError{File: "f", Offset: -1, Msg: "bad"}
	if e.Error() != "f: bad" {
		t.Error(e.Error())
	}
}

func TestCheckNodeFields(t *testing.T) {
	good := formats.NodeField{Name: "heapx_lifetime:alloc_time", Values: []uint64{1, 2}}
	for _, c := range []struct {
		fields []formats.NodeField
		want   string
	}{
		{[]formats.NodeField{good}, ""},
		{[]formats.NodeField{{Name: "alloc_time", Values: []uint64{1, 2}}}, "not a namespaced name"},
		{[]formats.NodeField{{Name: "heapx-lifetime:alloc_time", Values: []uint64{1, 2}}}, "not a namespaced name"},
		{[]formats.NodeField{{Name: "heapx:", Values: []uint64{1, 2}}}, "not a namespaced name"},
		{[]formats.NodeField{good, good}, "given twice"},
		{[]formats.NodeField{{Name: "x:y", Values: []uint64{1}}}, "has 1 values for 2 nodes"},
		{[]formats.NodeField{{Name: "x:y", Values: []uint64{1, 2}, Missing: []bool{true}}}, "for 2 nodes"},
	} {
		err := formats.CheckNodeFields(c.fields, 2)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckNodeFields(%+v): %v, want %q", c.fields, err, c.want)
		}
	}
}
