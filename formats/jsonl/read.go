package jsonl

import (
	"io"
	"strconv"

	"github.com/heapx/heapx/formats/internal/input"
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
	return input.ReadFile(path, opt.Progress, opt.read)
}

// Read reads a flat file from r; name is used in error messages.
func Read(r io.Reader, name string, opt ReadOptions) (*model.Graph, error) {
	return input.Read(r, -1, name, opt.Progress, opt.read)
}

func (opt ReadOptions) read(in *input.Reader) (*model.Graph, error) {
	rd := newReader(in, in.Name(), in.Bound(), opt)
	defer func() {
		if rd.rs != nil {
			rd.rs.close()
		}
	}()
	if err := rd.run(); err != nil {
		return nil, err
	}
	return rd.g, nil
}

// fill reads into b until b is full or the input ends (eof). A read
// error is the input's (see inputError).
func fill(src io.Reader, b []byte) (n int, eof bool, err error) {
	n, err = io.ReadFull(src, b)
	switch err {
	case nil:
		return n, false, nil
	case io.EOF, io.ErrUnexpectedEOF: // io.ReadFull's: the input ended
		return n, true, nil
	}
	return n, false, err
}

// inputError is the error for input that failed, or ended, inside line
// rd.line: the input layer's, which every format gives.
func (rd *reader) inputError() error {
	return rd.src.EndError("line " + strconv.FormatInt(rd.line, 10))
}
