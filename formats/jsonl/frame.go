package jsonl

import (
	"bytes"
	"strconv"

	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/formats/internal/input"
)

// framing cuts the input into lines, for the reader's own line parser: the
// header and whatever the parallel parser leaves (parallel.go cuts the
// rest into blocks).
type framing struct {
	src  *input.Reader
	buf  []byte
	pos  int
	end  int
	eof  bool
	line int64 // the number of the line being read, from 1
	// cutLine is the number of the input's last line when no newline
	// ends it (0 before the end).
	cutLine int64
	pipe    *pipeline // the parallel parser, while it runs
}

// nextLine returns the next line without its newline, or nil at the end.
func (rd *reader) nextLine() ([]byte, error) {
	for {
		if i := bytes.IndexByte(rd.buf[rd.pos:rd.end], '\n'); i >= 0 {
			l := rd.buf[rd.pos : rd.pos+i]
			rd.pos += i + 1
			rd.line++
			return l, nil
		}
		if rd.eof {
			if rd.pos < rd.end {
				l := rd.buf[rd.pos:rd.end]
				rd.pos = rd.end
				rd.line++
				rd.cutLine = rd.line
				return l, nil
			}
			return nil, nil
		}
		// Move the partial line to the front, growing the buffer for a
		// line longer than it.
		if rd.pos == 0 && rd.end == len(rd.buf) {
			if len(rd.buf) >= maxLine {
				rd.line++
				return nil, rd.errorf("line longer than %d bytes (is this a JSON Lines file?)", maxLine)
			}
			nb := make([]byte, 2*len(rd.buf))
			copy(nb, rd.buf[:rd.end])
			rd.buf = nb
		} else {
			copy(rd.buf, rd.buf[rd.pos:rd.end])
			rd.end -= rd.pos
			rd.pos = 0
		}
		n, eof, err := fill(rd.src, rd.buf[rd.end:])
		rd.end += n
		rd.eof = eof
		if err != nil {
			rd.line++
			return nil, rd.inputError()
		}
	}
}

// version checks the first line: ["metadata","version_major","1"].
func (rd *reader) version(l []byte) error {
	l = bytes.TrimPrefix(l, []byte("\xef\xbb\xbf"))
	c := &rd.c
	c.b, c.i = l, 0
	want := `not a heapx flat file: the first line must be ["metadata","version_major","1"]`
	if c.expect('[', "'['") != nil {
		return rd.errorf("%s", want)
	}
	if t, err := c.str("record type"); err != nil || string(t) != "metadata" {
		return rd.errorf("%s", want)
	}
	if k, err := c.nextStr("key"); err != nil || string(k) != exchange.KeyVersion {
		return rd.errorf("%s", want)
	}
	v, err := c.nextStr("version_major")
	if err != nil {
		return rd.errorf("%v", err)
	}
	if string(v) != strconv.Itoa(exchange.VersionMajor) {
		return rd.errorf("unsupported heapx format version_major %q: this heapx reads version %d", v, exchange.VersionMajor)
	}
	if err := c.end(); err != nil {
		return rd.errorf("%v", err)
	}
	return nil
}
