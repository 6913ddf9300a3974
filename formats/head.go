package formats

import (
	"bufio"
	"errors"
	"io"
	"os"

	"github.com/heapx/heapx/model"
	"github.com/klauspost/compress/gzip"
)

// IsGzip reports whether b starts with the gzip magic bytes.
func IsGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Head returns up to HeadSize bytes from the start of r, decompressed when r
// holds gzip data, for format detection. A gzip stream too short or broken
// to yield any bytes gives the raw head instead, so detection can still say
// what the file is not.
func Head(r io.Reader) ([]byte, error) {
	br := bufio.NewReaderSize(r, HeadSize)
	raw, err := br.Peek(HeadSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	if !IsGzip(raw) {
		return append([]byte(nil), raw...), nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return append([]byte(nil), raw...), nil
	}
	defer zr.Close()
	buf := make([]byte, HeadSize)
	n, _ := io.ReadFull(zr, buf)
	if n == 0 {
		return append([]byte(nil), raw...), nil
	}
	return buf[:n], nil
}

// ReadFile opens the file at path and hands it to read with its size and
// path as the name for error messages; the file is closed when read
// returns. It is the ReadFile of every format that reads a stream.
func ReadFile(path string, read func(r io.Reader, size int64, name string) (*model.Graph, error)) (*model.Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return read(f, st.Size(), path)
}

// InputSize is the length r reports (as bytes.Reader, bytes.Buffer and
// strings.Reader do), or -1 if it reports none.
func InputSize(r io.Reader) int64 {
	if l, ok := r.(interface{ Len() int }); ok {
		return int64(l.Len())
	}
	return -1
}

// ProgressReader wraps r to call fn with the bytes read so far and total
// every 4 MB.
func ProgressReader(r io.Reader, total int64, fn func(done, total int64)) io.Reader {
	return &progressReader{r: r, total: total, fn: fn}
}

type progressReader struct {
	r     io.Reader
	done  int64
	total int64
	last  int64
	fn    func(done, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done-p.last >= 4<<20 {
		p.last = p.done
		p.fn(p.done, p.total)
	}
	return n, err
}

// recorder is a reader that keeps what it reads, so that what detection
// took from a stream can be read again.
type recorder struct {
	r io.Reader
	b []byte
}

func (r *recorder) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.b = append(r.b, p[:n]...)
	return n, err
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
