package jsonl

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// benchFile is the Chromium fixture (1.9 MB gzip, 12 MB of JSON) as heapx
// convert writes it, with its analysis results when analysed is set.
func benchFile(b *testing.B, analysed bool) []byte {
	b.Helper()
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "chromium-small-page.heapsnapshot.gz"), v8.Options{})
	if err != nil {
		b.Fatal(err)
	}
	opt := WriteOptions{}
	if analysed {
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			b.Fatal(err)
		}
		opt.Results = &model.Results{Policy: a.Policy.Name, Shallow: a.Self, Retained: a.Dominators.Retained, Dominator: a.Dominators.IDom, Distance: a.Distances}
	}
	var buf bytes.Buffer
	if err := Write(&buf, g, opt); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchRead(b *testing.B, in []byte, opt func() ReadOptions) {
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(in), "bench.jsonl", opt()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRead reads a converted V8 snapshot: mostly node and edge lines,
// which the parallel parser takes.
func BenchmarkRead(b *testing.B) {
	benchRead(b, benchFile(b, false), func() ReadOptions { return ReadOptions{} })
}

// BenchmarkReadResults reads an analysed file with its results (node lines
// of eight fields, dominators resolved at the end).
func BenchmarkReadResults(b *testing.B) {
	benchRead(b, benchFile(b, true), func() ReadOptions { return ReadOptions{Results: &model.Results{}} })
}

// BenchmarkReadSpaced reads the same file with a space after every comma,
// as another writer might: every line goes through the line parser.
func BenchmarkReadSpaced(b *testing.B) {
	benchRead(b, bytes.ReplaceAll(benchFile(b, false), []byte(","), []byte(", ")), func() ReadOptions { return ReadOptions{} })
}
