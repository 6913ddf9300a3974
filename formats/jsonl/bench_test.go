package jsonl

import (
	"bytes"
	"path/filepath"
	"testing"

	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// flatFile is the flat file of the V8 dump testdata/name.
func flatFile(t testing.TB, name string) []byte {
	t.Helper()
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), name), v8.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkRead reads the Chromium fixture's flat file from memory, plain
// and gzip-compressed. Bytes are those of the plain file.
func BenchmarkRead(b *testing.B) {
	plain := flatFile(b, "chromium-small-page.heapsnapshot.gz")
	for _, c := range []struct {
		name string
		in   []byte
	}{{"plain", plain}, {"gzip", testfixtures.Gzip(b, plain)}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			for b.Loop() {
				if _, err := Read(bytes.NewReader(c.in), "bench", ReadOptions{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
