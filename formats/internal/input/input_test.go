package input

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// data is incompressible enough to span many read-ahead blocks when
// compressed.
func data(n int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = "abcdefghijklmnop\n"[r.IntN(17)]
	}
	return b
}

// readAll reads in with reads of odd sizes, as the readers do.
func readAll(in *Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 12345)
	for {
		n, err := in.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// TestReadPlainAndGzip reads the same data plain and gzip-compressed (one
// member and several, as gz.Writer and pigz write): the same bytes, the
// offset at their end, and the bound each allows.
func TestReadPlainAndGzip(t *testing.T) {
	want := data(3 << 20)
	gz := testfixtures.Gzip(t, want)
	members := append(testfixtures.Gzip(t, want[:1<<20]), testfixtures.Gzip(t, want[1<<20:])...)
	for _, c := range []struct {
		name  string
		in    []byte
		gzip  bool
		bound int64
	}{
		{"plain", want, false, int64(len(want))},
		{"gzip", gz, true, int64(len(gz)) * MaxGzipRatio},
		{"members", members, true, int64(len(members)) * MaxGzipRatio},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, err := Open(bytes.NewReader(c.in), -1, c.name, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			got, err := readAll(in)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes, err %v; want %d", len(got), err, len(want))
			}
			if in.Gzip() != c.gzip || in.Size() != int64(len(c.in)) || in.Bound() != c.bound || in.Offset() != int64(len(want)) || in.Err() != nil {
				t.Errorf("gzip %v size %d bound %d offset %d err %v", in.Gzip(), in.Size(), in.Bound(), in.Offset(), in.Err())
			}
		})
	}
	// A stream says nothing of its size: no bound.
	in, err := Open(io.MultiReader(bytes.NewReader(gz)), -1, "pipe", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Size() != -1 || in.Bound() != NoBound {
		t.Errorf("stream: size %d, bound %d", in.Size(), in.Bound())
	}
}

// TestTruncated cuts a gzip stream in its data, in its trailer and in its
// header, and a plain input where its reader needs more: one error, at the
// offset where the data ends, matching formats.ErrTruncated.
func TestTruncated(t *testing.T) {
	want := data(1 << 20)
	gz := testfixtures.Gzip(t, want)
	for _, cut := range []int{len(gz) / 2, len(gz) - 4, 5} {
		in, err := Open(bytes.NewReader(gz[:cut]), -1, "cut.gz", nil)
		if err != nil {
			// Cut inside the header: nothing to read.
			if want := "cut.gz: byte 0: file ends early: the dump is truncated"; err.Error() != want || !errors.Is(err, formats.ErrTruncated) {
				t.Errorf("cut at %d: %v, want %s", cut, err, want)
			}
			continue
		}
		got, err := readAll(in)
		in.Close()
		if err != formats.ErrTruncated || !bytes.Equal(got, want[:len(got)]) {
			t.Errorf("cut at %d: %v after %d bytes", cut, err, len(got))
		}
		end := in.EndError("strings")
		if w := "cut.gz: strings: byte " + strconv.Itoa(len(got)) + ": file ends early: the dump is truncated"; end.Error() != w || !errors.Is(end, formats.ErrTruncated) {
			t.Errorf("cut at %d: %v, want %s", cut, end, w)
		}
	}
	in, err := Open(bytes.NewReader(want[:1000]), -1, "cut", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := readAll(in); err != nil || len(got) != 1000 {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if end := in.EndError("nodes"); end.Error() != "cut: nodes: byte 1000: file ends early: the dump is truncated" {
		t.Errorf("plain: %v", end)
	}
	if err := in.ShortError("snapshot", errors.New("a lie")); err.Error() != "cut: snapshot: byte 1000: file ends early: the dump is truncated" {
		t.Errorf("plain count past the end: %v", err)
	}
}

// TestCorruptGzip damages the compressed data and the header: errors that
// say the gzip data is bad, not that the dump is truncated.
func TestCorruptGzip(t *testing.T) {
	gz := testfixtures.Gzip(t, data(1<<20))
	bad := bytes.Clone(gz)
	for i := 100; i < 200; i++ {
		bad[i] ^= 0x55
	}
	in, err := Open(bytes.NewReader(bad), -1, "bad.gz", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, rerr := readAll(in)
	in.Close()
	end := in.EndError("nodes")
	if rerr == nil || errors.Is(end, formats.ErrTruncated) || !strings.HasPrefix(end.Error(), "bad.gz: nodes: byte ") || !strings.Contains(end.Error(), ": corrupt gzip data: ") {
		t.Errorf("read %v, then %v", rerr, end)
	}
	var fe *formats.FormatError
	if !errors.As(end, &fe) {
		t.Errorf("%T is not a FormatError", end)
	}
	header := bytes.Clone(gz)
	header[3] = 0xff // reserved flags
	if _, err := Open(bytes.NewReader(header), -1, "bad.gz", nil); err == nil || err.Error() != "bad.gz: byte 0: bad gzip header: gzip: invalid header" {
		t.Errorf("bad header: %v", err)
	}
}

// failing fails with an I/O error after n bytes.
type failing struct {
	r io.Reader
	n int
}

var errDisk = errors.New("input/output error")

func (f *failing) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errDisk
	}
	p = p[:min(len(p), f.n)]
	n, err := f.r.Read(p)
	f.n -= n
	return n, err
}

// TestIOError fails the input under the decompressor and under a plain
// reader: the error is the I/O error, naming the input, not a FormatError
// (it says nothing about the format) and not a truncation.
func TestIOError(t *testing.T) {
	raw := data(1 << 20)
	for name, b := range map[string][]byte{"plain": raw, "gzip": testfixtures.Gzip(t, raw)} {
		in, err := Open(&failing{bytes.NewReader(b), len(b) / 2}, int64(len(b)), name, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, rerr := readAll(in)
		in.Close()
		end := in.EndError("nodes")
		var fe *formats.FormatError
		if rerr != errDisk || !errors.Is(end, errDisk) || errors.As(end, &fe) || end.Error() != name+": input/output error" {
			t.Errorf("%s: read %v, then %v", name, rerr, end)
		}
	}
}

// TestProgress counts the input's own bytes, compressed ones for gzip
// input, on the reading goroutine, every 4 MB and once at the end.
func TestProgress(t *testing.T) {
	raw := data(20 << 20)
	for name, b := range map[string][]byte{"plain": raw, "gzip": testfixtures.Gzip(t, raw)} {
		var calls [][2]int64
		_, err := Read(bytes.NewReader(b), -1, name, func(done, total int64) { calls = append(calls, [2]int64{done, total}) }, func(in *Reader) (*model.Graph, error) {
			_, err := readAll(in)
			return nil, err
		})
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(b))
		if len(calls) < int(size/progressStep) || calls[len(calls)-1] != [2]int64{size, size} {
			t.Errorf("%s: %d calls, last %v; want %d and [%d %d]", name, len(calls), calls[len(calls)-1], size/progressStep, size, size)
		}
		for i, c := range calls {
			if c[1] != size || i > 0 && c[0] < calls[i-1][0] {
				t.Errorf("%s: call %d: %v", name, i, c)
			}
		}
	}
}

// TestRewind reads a file twice, as HPROF's passes do, plain and gzip: the
// same data each time, progress counting on; a stream cannot be rewound.
func TestRewind(t *testing.T) {
	raw := data(5 << 20)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"plain": raw, "gzip": testfixtures.Gzip(t, raw)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var last int64
		_, err := ReadFile(path, func(done, _ int64) { last = done }, func(in *Reader) (*model.Graph, error) {
			for pass := range 2 {
				if pass > 0 {
					if err := in.Rewind(); err != nil {
						return nil, err
					}
				}
				got, err := readAll(in)
				if err != nil || !bytes.Equal(got, raw) || in.Offset() != int64(len(raw)) {
					t.Errorf("%s pass %d: %d bytes, %v", name, pass, len(got), err)
				}
			}
			return nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if last != 2*int64(len(b)) {
			t.Errorf("%s: progress at %d after two passes of %d", name, last, len(b))
		}
	}
	in, err := Open(io.MultiReader(bytes.NewReader(raw)), -1, "pipe", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := in.Rewind(); err == nil || !strings.Contains(err.Error(), "pipe: cannot be read twice") {
		t.Errorf("rewinding a stream: %v", err)
	}
}

// TestCloseStopsInflating closes inputs read only in part: the inflating
// goroutine is gone when Close returns.
func TestCloseStopsInflating(t *testing.T) {
	gz := testfixtures.Gzip(t, data(8<<20))
	before := runtime.NumGoroutine()
	for range 20 {
		in, err := Open(bytes.NewReader(gz), -1, "gz", nil)
		if err != nil {
			t.Fatal(err)
		}
		in.Read(make([]byte, 1000))
		in.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines, %d before", n, before)
	}
}

// TestRealDump reads a testdata dump through the layer and checks the
// data against the standard library's gunzip.
func TestRealDump(t *testing.T) {
	path := filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz")
	want := testfixtures.Gunzip(t, path)
	_, err := ReadFile(path, nil, func(in *Reader) (*model.Graph, error) {
		got, err := readAll(in)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes, %v; want %d", len(got), err, len(want))
		}
		return nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
