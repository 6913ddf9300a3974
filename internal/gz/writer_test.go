package gz_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/heapx/heapx/internal/gz"
)

// TestWriter checks that the parallel multi-member output is one gzip
// stream to a standard reader, whatever the write sizes, and that an empty
// stream is still valid gzip.
func TestWriter(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 4 << 20, 4<<20 + 1, 9<<20 + 123} {
		in := make([]byte, size)
		for i := range in {
			in[i] = "abcdefgh\n"[r.IntN(9)]
		}
		var out bytes.Buffer
		zw := gz.NewWriter(&out)
		for rest := in; len(rest) > 0; {
			k := min(len(rest), 1+r.IntN(3<<20))
			if _, err := zw.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(&out)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("size %d: read back %d bytes, err %v", size, len(got), err)
		}
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.n--; f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func TestWriterError(t *testing.T) {
	zw := gz.NewWriter(&failingWriter{n: 1})
	big := bytes.Repeat([]byte("x"), 20<<20)
	zw.Write(big)
	zw.Write(big)
	if err := zw.Close(); err == nil || err.Error() != "disk full" {
		t.Errorf("Close: %v, want disk full", err)
	}
}
