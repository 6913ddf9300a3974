// Package input is how every format reader gets its bytes (formats/v8,
// formats/jsonl, formats/spidermonkey, formats/hprof). It opens the dump,
// a file or a stream read once; recognizes gzip by its magic bytes and
// inflates it on a goroutine of its own, a few blocks ahead of the parser,
// so that inflating and parsing use two cores; reports progress in the
// file's own bytes; bounds how much data the input can hold, for checking
// a header's counts before trusting them; and gives one error for input
// that ends before its reader is done, whether the file was cut short or
// its gzip stream was (Reader.EndError), the same in every format.
package input

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/gz"
	"github.com/heapx/heapx/model"
)

// MaxGzipRatio bounds how much a gzip stream can expand: deflate's limit is
// about 1032:1 (RFC 1951 codes 258 bytes in 2 bits at best), and each
// member of a multi-member stream is bounded alike.
const MaxGzipRatio = 1032

// NoBound is Bound for input of unknown size: more than any input holds,
// small enough to compute with.
const NoBound = 1 << 62

// progressStep is how many input bytes pass between progress reports.
const progressStep = 4 << 20

// rawBuffer is the buffer over the raw input: the magic bytes are peeked
// from it, and the decompressor reads through it.
const rawBuffer = 64 << 10

// Reader is a dump's data, decompressed when the input is gzip, for a
// format reader. It is not safe for concurrent use.
type Reader struct {
	name  string
	size  int64     // the input's length, -1 if unknown
	src   io.Reader // the input as given, for Rewind
	raw   counter   // src, counted for progress
	br    *bufio.Reader
	gzip  bool
	zr    *gzip.Reader
	ahead *readAhead // inflates zr ahead of Read; nil for plain input
	off   int64      // data bytes Read delivered since the start (or Rewind)

	// err is what Read returned other than io.EOF: formats.ErrTruncated
	// for a stream cut short, else the failure; corrupt says it is the
	// decompressor's complaint about the data, not an I/O error.
	err     error
	corrupt bool

	progress func(done, total int64)
	reported int64 // raw bytes at the last progress report
}

// counter counts the bytes read through it and keeps the first error
// other than io.EOF, which tells an I/O error from what a decompressor
// makes of it.
type counter struct {
	r   io.Reader
	n   atomic.Int64 // read by progress while the inflater adds to it
	err error
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// Open readies r for a reader: size is its length (-1 if unknown: then the
// length r reports, as bytes.Reader does, if any), name names it in
// messages, progress (if not nil) is called now and then on the reading
// goroutine with the input bytes consumed and size. Gzip input is
// recognized by its magic bytes; a bad gzip header is a FormatError.
// Close must be called.
func Open(r io.Reader, size int64, name string, progress func(done, total int64)) (*Reader, error) {
	if l, ok := r.(interface{ Len() int }); ok && size < 0 {
		size = int64(l.Len())
	}
	in := &Reader{name: name, size: size, src: r, raw: counter{r: r}, progress: progress}
	in.br = bufio.NewReaderSize(&in.raw, rawBuffer)
	head, _ := in.br.Peek(2)
	in.gzip = gz.HasMagic(head)
	if err := in.start(); err != nil {
		return nil, err
	}
	return in, nil
}

// start starts reading the data from the start of br.
func (in *Reader) start() error {
	if !in.gzip {
		return nil
	}
	var err error
	if in.zr == nil {
		in.zr, err = gzip.NewReader(in.br)
	} else {
		err = in.zr.Reset(in.br)
	}
	if err != nil {
		if in.fail(err); in.corrupt {
			return &formats.FormatError{File: in.name, Offset: 0, Msg: "bad gzip header: " + err.Error()}
		}
		return in.EndError("")
	}
	in.ahead = newReadAhead(in.zr)
	return nil
}

// ReadFile opens the dump at path and calls read with it (see Read).
func ReadFile(path string, progress func(done, total int64), read func(*Reader) (*model.Graph, error)) (*model.Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return Read(f, st.Size(), path, progress, read)
}

// Read opens r (see Open), calls read with it and closes it; when read
// succeeds, progress hears that the input was read whole.
func Read(r io.Reader, size int64, name string, progress func(done, total int64), read func(*Reader) (*model.Graph, error)) (*model.Graph, error) {
	in, err := Open(r, size, name, progress)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	g, err := read(in)
	if err != nil {
		return nil, err
	}
	if progress != nil && in.size >= 0 {
		progress(in.raw.n.Load(), in.size)
	}
	return g, nil
}

// Read reads decompressed data. At the end of the data it returns io.EOF;
// when the input fails first, an error the reader should stop at and
// replace with EndError's.
func (in *Reader) Read(p []byte) (int, error) {
	var n int
	var err error
	if in.ahead != nil {
		n, err = in.ahead.Read(p)
	} else {
		n, err = in.br.Read(p)
	}
	in.off += int64(n)
	if in.progress != nil {
		if done := in.raw.n.Load(); done-in.reported >= progressStep {
			in.reported = done
			in.progress(done, in.size)
		}
	}
	if err != nil && err != io.EOF {
		err = in.fail(err)
	}
	return n, err
}

// fail records why the input failed (the first time) and returns it: a
// stream that ends early, which gzip and io.ReadFull report as
// io.ErrUnexpectedEOF, is formats.ErrTruncated; an error of the input
// itself is an I/O error, whatever the decompressor made of it; any other
// error of the decompressor is corrupt data.
func (in *Reader) fail(err error) error {
	if in.err != nil {
		return in.err
	}
	switch rerr := in.raw.err; {
	case errors.Is(err, io.ErrUnexpectedEOF) && (rerr == nil || errors.Is(rerr, io.ErrUnexpectedEOF)):
		in.err = formats.ErrTruncated
	case rerr != nil:
		in.err = rerr
	default:
		in.err, in.corrupt = err, in.gzip
	}
	return in.err
}

// EndError is the error for a reader that stopped in section (a name for
// messages, "" for none) because the data ended or Read failed: the one
// error every format gives for a dump cut short (a FormatError at the
// offset where the data ends, matching formats.ErrTruncated), whether the
// file ends early or its gzip stream does; for gzip data that does not
// decompress, a FormatError that says so; for an I/O error, that error
// naming the input, since it says nothing about the format.
func (in *Reader) EndError(section string) error {
	switch {
	case in.err == nil || in.err == formats.ErrTruncated:
		return in.truncated(section, in.off)
	case in.corrupt:
		return &formats.FormatError{File: in.name, Section: section, Offset: in.off, Msg: "corrupt gzip data: " + in.err.Error(), Err: in.err}
	}
	return fmt.Errorf("%s: %w", in.name, in.err)
}

// ShortError is the error for a header, read in section, whose counts
// need more bytes than Bound. A plain file's Bound is its length: it ends
// before the data its header promises, which is the one error for a dump
// cut short, at the file's end, whether the file was cut or the header
// lies. Gzip input can hold MaxGzipRatio times its length, far more than a
// cut stream leaves out: there the header lies, and ShortError returns lie.
func (in *Reader) ShortError(section string, lie error) error {
	if in.gzip || in.size < 0 {
		return lie
	}
	return in.truncated(section, in.size)
}

// truncated is the error for the dump whose data ends at offset, in
// section.
func (in *Reader) truncated(section string, offset int64) error {
	return Truncated(in.name, section, offset)
}

// Truncated is the error every format gives for the dump named name whose
// data ends early, at offset, in section: for a reader that does not read
// through a Reader (SQLite's), which finds the end itself.
func Truncated(name, section string, offset int64) error {
	return &formats.FormatError{File: name, Section: section, Offset: offset, Msg: formats.ErrTruncated.Error(), Err: formats.ErrTruncated}
}

// Err is the error Read returned other than io.EOF, nil while there is
// none: a reader that also stops for reasons of its own tells them apart
// with it.
func (in *Reader) Err() error { return in.err }

// Name is the input's name for messages.
func (in *Reader) Name() string { return in.name }

// Size is the input's length in bytes (compressed, for gzip input), -1 if
// unknown.
func (in *Reader) Size() int64 { return in.size }

// Gzip says the input is gzip-compressed.
func (in *Reader) Gzip() bool { return in.gzip }

// Bound is the most data bytes the input can hold: its size, MaxGzipRatio
// times that for gzip input, or NoBound when the size is unknown. A count
// in a header that would take more bytes than this is a lie.
func (in *Reader) Bound() int64 {
	switch {
	case in.size < 0:
		return NoBound
	case in.gzip:
		return in.size * MaxGzipRatio
	}
	return in.size
}

// Offset is the offset in the data (decompressed) of the next byte Read
// returns.
func (in *Reader) Offset() int64 { return in.off }

// Rewind starts the data again from its first byte, for a reader that
// reads it more than once (HPROF's passes): the input must be an
// io.Seeker (a file; a pipe cannot be read twice). Progress counts on.
func (in *Reader) Rewind() error {
	s, ok := in.src.(io.Seeker)
	if !ok {
		return fmt.Errorf("%s: cannot be read twice (a pipe?): save the dump to a file first", in.name)
	}
	in.stopAhead()
	if _, err := s.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("%s: %w", in.name, err)
	}
	in.raw.err = nil
	in.br.Reset(&in.raw)
	in.off, in.err, in.corrupt = 0, nil, false
	return in.start()
}

// Close stops the inflating goroutine, if there is one, and waits for it,
// so nothing reads the input once Close returns. It does not close the
// input.
func (in *Reader) Close() {
	in.stopAhead()
	if in.zr != nil {
		in.zr.Close()
	}
}

func (in *Reader) stopAhead() {
	if in.ahead != nil {
		in.ahead.close()
		in.ahead = nil
	}
}
