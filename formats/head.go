package formats

import (
	"bufio"
	"errors"
	"io"

	"github.com/klauspost/compress/gzip"

	"github.com/heapx/heapx/internal/gz"
)

// peekHead returns up to HeadSize bytes from the start of r, decompressed
// when r holds gzip data, for format detection. A gzip stream too short or
// broken to yield any bytes gives the raw head instead, so detection can
// still say what the file is not.
func peekHead(r io.Reader) ([]byte, error) {
	br := bufio.NewReaderSize(r, HeadSize)
	raw, err := br.Peek(HeadSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	if !gz.HasMagic(raw) {
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
