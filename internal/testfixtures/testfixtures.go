// Package testfixtures is what the tests of several packages share to get
// at the heap dumps in testdata/.
package testfixtures

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// Allocated returns the bytes f allocates, for tests that bound what a
// read or a rendering costs.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Dir is the repository's testdata directory.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata")
}

// V8Dumps are every V8 dump in testdata/, each with its own quirks: Node
// 20's layout, Chrome's sections and detachedness, a --track-heap-objects
// trace, a heap timeline's samples.
func V8Dumps(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.heapsnapshot.gz", "*.heaptimeline.gz"} {
		m, err := filepath.Glob(filepath.Join(Dir(), pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 8 {
		t.Fatalf("found only %d fixtures", len(out))
	}
	return out
}

// Gunzip returns the decompressed contents of the .gz file at path.
func Gunzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// CheckRead is what every reader promises for any input, fuzzed or
// damaged: it returns a *formats.FormatError (naming file, section and
// offset), or a graph that validates. It fails t otherwise and reports
// whether g was read.
func CheckRead(t testing.TB, g *model.Graph, err error) bool {
	t.Helper()
	if err != nil {
		var fe *formats.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("error %T is not a FormatError: %v", err, err)
		}
		return false
	}
	if err := g.Validate(); err != nil {
		t.Fatalf("graph returned without error does not validate: %v", err)
	}
	return true
}

// CheckExchangeRoundTrip writes g to both forms of the exchange format
// (.jsonl.gz and .db, through the registry: the caller imports
// formats/jsonl and formats/sqlite) and fails t unless each reads back
// equal to g and names g's format as its source.
func CheckExchangeRoundTrip(t testing.TB, g *model.Graph) {
	t.Helper()
	source, _ := g.MetaValue("format")
	for _, out := range []string{"rt.jsonl.gz", "rt.db"} {
		p := filepath.Join(t.TempDir(), out)
		to, ok := formats.ByExtension(p)
		if !ok {
			t.Fatalf("no format writes %s: import formats/jsonl and formats/sqlite", out)
		}
		if err := formats.Save(p, to, g, formats.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		h, _, err := formats.Open(p, formats.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := model.Compare(g, h, model.CompareOptions{IgnoreMeta: []string{"format", "heapx:source_format", "generator"}}); err != nil {
			t.Errorf("%s: %v", out, err)
		}
		if v, _ := h.MetaValue("heapx:source_format"); v != source {
			t.Errorf("%s: source format %q, want %q", out, v, source)
		}
	}
}

// Gzip returns b gzip-compressed.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// CheckTruncated cuts a real dump short, the gzip-compressed file at path,
// and checks that read (a reader given the cut file's name and
// bytes) gives for each cut the one error every reader gives for a dump
// that ends early:
//
//	NAME: SECTION: byte N: file ends early: the dump is truncated
//
// with N the offset in the dump where the data ends. The plain dump is cut
// early, in its middle and near its end; the gzip stream in its middle and
// inside its trailer, where all the data is there but the stream is not.
// A plain cut that falls between two records of a format that does not
// count them (Firefox's) leaves a smaller dump, which reads; the byte
// before is inside a record.
func CheckTruncated(t *testing.T, path string, read func(name string, b []byte) error) {
	t.Helper()
	gz, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := inflate(gz)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{len(plain) / 20, len(plain) / 3, len(plain) / 2, len(plain) - 3} {
		err := read("cut.dump", plain[:cut])
		if err == nil {
			cut--
			err = read("cut.dump", plain[:cut])
		}
		checkTruncated(t, "cut.dump", err, int64(cut))
	}
	for _, cut := range []int{len(gz) / 2, len(gz) - 3} {
		// N is what the gzip stream yields before it ends.
		data, _ := inflate(gz[:cut])
		checkTruncated(t, "cut.dump.gz", read("cut.dump.gz", gz[:cut]), int64(len(data)))
	}
}

func checkTruncated(t *testing.T, name string, err error, offset int64) {
	t.Helper()
	var fe *formats.FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s (data ends at byte %d): %v, want a FormatError", name, offset, err)
		return
	}
	want := name + ": " + fe.Section + ": byte " + strconv.FormatInt(offset, 10) + ": file ends early: the dump is truncated"
	if fe.Section == "" || err.Error() != want || !errors.Is(err, formats.ErrTruncated) {
		t.Errorf("%s:\n got %v\nwant %s", name, err, want)
	}
}

// inflate is what the gzip stream b yields, with the decompressor the
// readers use, and how it ends.
func inflate(b []byte) ([]byte, error) {
	zr, err := kgzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
