package jsonl

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// flatFile is the flat file of the V8 dump testdata/name as heapx convert
// writes it, with its analysis results when analysed is set.
func flatFile(t testing.TB, name string, analysed bool) []byte {
	t.Helper()
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), name), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := WriteOptions{}
	if analysed {
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			t.Fatal(err)
		}
		opt.Results = a.Results()
	}
	var b bytes.Buffer
	if err := Write(&b, g, opt); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// benchFixture is the Chromium fixture (1.9 MB gzip, 12 MB of JSON) the
// benchmarks read.
const benchFixture = "chromium-small-page.heapsnapshot.gz"

// benchRead reads in, from memory, b.N times; bytes are those of plain,
// the uncompressed file.
func benchRead(b *testing.B, in, plain []byte, opt func() ReadOptions) {
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(in), "bench.jsonl", opt()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads a converted V8 snapshot, plain and gzip-compressed:
// mostly node and edge lines, which the parallel parser takes.
func BenchmarkRead(b *testing.B) {
	plain := flatFile(b, benchFixture, false)
	for _, c := range []struct {
		name string
		in   []byte
	}{{"plain", plain}, {"gzip", testfixtures.Gzip(b, plain)}} {
		b.Run(c.name, func(b *testing.B) {
			benchRead(b, c.in, plain, func() ReadOptions { return ReadOptions{} })
		})
	}
}

// BenchmarkReadResults reads an analysed file with its results (node lines
// of eight fields, dominators resolved at the end).
func BenchmarkReadResults(b *testing.B) {
	in := flatFile(b, benchFixture, true)
	benchRead(b, in, in, func() ReadOptions { return ReadOptions{Results: &model.Results{}} })
}

// BenchmarkReadSpaced reads the same file with a space after every comma,
// as another writer might: every line goes through the line parser.
func BenchmarkReadSpaced(b *testing.B) {
	in := bytes.ReplaceAll(flatFile(b, benchFixture, false), []byte(","), []byte(", "))
	benchRead(b, in, in, func() ReadOptions { return ReadOptions{} })
}
