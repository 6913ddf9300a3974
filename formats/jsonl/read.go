package jsonl

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with the number of input
	// bytes consumed (compressed bytes for gzip input) and the input size
	// (-1 if unknown).
	Progress func(done, total int64)
	// Results, if set, receives the analysis results the file carries;
	// without them its columns stay nil.
	Results *model.Results
}

// maxLine caps one line. Real lines are short (a string record holds at
// most a few MB, V8 cuts names at 1024 characters); the cap keeps a file
// without newlines from growing the buffer without end.
const maxLine = 256 << 20

// ReadFile reads the flat file at path, plain or gzip-compressed.
func ReadFile(path string, opt ReadOptions) (*model.Graph, error) {
	return formats.ReadFile(path, func(r io.Reader, size int64, name string) (*model.Graph, error) {
		return read(r, size, name, opt)
	})
}

// Read reads a flat file from r; name is used in error messages.
func Read(r io.Reader, name string, opt ReadOptions) (*model.Graph, error) {
	return read(r, formats.InputSize(r), name, opt)
}

func read(r io.Reader, size int64, name string, opt ReadOptions) (*model.Graph, error) {
	if opt.Progress != nil {
		r = formats.ProgressReader(r, size, opt.Progress)
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var in io.Reader = br
	bound := size // most bytes the text can have, for sanity-checking counts
	if head, _ := br.Peek(2); formats.IsGzip(head) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &formats.FormatError{File: name, Offset: 0, Msg: "bad gzip header: " + err.Error()}
		}
		defer zr.Close()
		// Inflate on the other core while this one parses.
		pr := newPrefetch(zr)
		defer pr.close()
		in = pr
		if size >= 0 {
			bound = size * 1032 // deflate's largest ratio
		}
	}
	if bound < 0 {
		bound = 1 << 62
	}
	rd := newReader(in, name, bound, opt)
	defer func() {
		if rd.rs != nil {
			rd.rs.close()
		}
	}()
	if err := rd.run(); err != nil {
		return nil, err
	}
	if opt.Progress != nil && size >= 0 {
		opt.Progress(size, size)
	}
	return rd.g, nil
}

// prefetch reads its source on its own goroutine, a block ahead, so
// inflating a .jsonl.gz and parsing it use both cores.
type prefetch struct {
	ch   chan []byte
	free chan []byte
	err  error  // set before ch is closed
	blk  []byte // the block being consumed
	cur  []byte // its unread part
	stop chan struct{}
}

func newPrefetch(src io.Reader) *prefetch {
	p := &prefetch{ch: make(chan []byte, 3), free: make(chan []byte, 4), stop: make(chan struct{})}
	for i := 0; i < 4; i++ {
		p.free <- make([]byte, 1<<20)
	}
	go func() {
		defer close(p.ch)
		for {
			var b []byte
			select {
			case b = <-p.free:
			case <-p.stop:
				return
			}
			n, err := io.ReadFull(src, b[:cap(b)])
			if n > 0 {
				select {
				case p.ch <- b[:n]:
				case <-p.stop:
					return
				}
			}
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF {
					p.err = err
				} else if err == io.ErrUnexpectedEOF && n == 0 {
					p.err = err
				}
				return
			}
		}
	}()
	return p
}

func (p *prefetch) Read(b []byte) (int, error) {
	if len(p.cur) == 0 {
		blk, ok := <-p.ch
		if !ok {
			if p.err != nil {
				return 0, p.err
			}
			return 0, io.EOF
		}
		p.blk, p.cur = blk, blk
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	if len(p.cur) == 0 {
		p.free <- p.blk[:0]
		p.blk, p.cur = nil, nil
	}
	return n, nil
}

func (p *prefetch) close() {
	close(p.stop)
	for range p.ch {
	}
}

// fill reads into b until b is full or the input ends (eof). A read
// error comes back worded for the user.
func fill(src io.Reader, b []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(src, b)
	switch {
	case err == nil:
		return n, false, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) && n > 0:
		return n, true, nil
	case errors.Is(err, io.ErrUnexpectedEOF):
		return n, false, errors.New("compressed input ends early (truncated file?)")
	}
	return n, false, fmt.Errorf("reading input: %v", err)
}
