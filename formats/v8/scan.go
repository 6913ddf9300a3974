package v8

import (
	"fmt"
	"runtime/debug"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/formats/internal/jsonstr"
	"github.com/heapx/heapx/internal/wtf8"
)

// blockSize is the unit of reading: the scanner's buffer and the blocks the
// number-array pipeline hands to its workers.
const blockSize = 1 << 20

// scanner is a minimal streaming JSON tokenizer over an io.Reader. It keeps
// one block of input in memory, so a snapshot of any size is read with a
// constant buffer; the hot numeric arrays bypass it (see numbers.go).
type scanner struct {
	r       *input.Reader
	buf     []byte
	pos     int
	end     int
	base    int64 // stream offset of buf[0]
	eof     bool
	file    string
	section string
	scratch []byte
	// outgrown says appendDoubling left a buffer of returnAfter or more
	// behind.
	outgrown bool
}

func newScanner(r *input.Reader, size int) *scanner {
	return &scanner{r: r, buf: make([]byte, size), file: r.Name()}
}

// offset is the stream offset of the next unread byte.
func (s *scanner) offset() int64 { return s.base + int64(s.pos) }

func (s *scanner) errorf(format string, args ...any) error {
	return &formats.FormatError{File: s.file, Section: s.section, Offset: s.offset(), Msg: fmt.Sprintf(format, args...)}
}

// fill makes sure at least one unread byte is buffered; it reports false at
// end of input.
func (s *scanner) fill() bool {
	if s.pos < s.end {
		return true
	}
	if s.eof {
		return false
	}
	s.base += int64(s.end)
	s.pos, s.end = 0, 0
	for s.end == 0 {
		n, err := s.r.Read(s.buf)
		s.end = n
		if err != nil {
			s.eof = true // the input keeps the error (see unexpectedEnd)
			break
		}
	}
	return s.end > 0
}

// unexpectedEnd is the error for input that ends, or fails, where more was
// expected: the input layer's, which is the same in every format.
func (s *scanner) unexpectedEnd() error {
	return s.r.EndError(s.section)
}

// ensure makes at least n unread bytes available, compacting the buffer; it
// reports false if the input ends first.
func (s *scanner) ensure(n int) bool {
	for s.end-s.pos < n {
		if s.eof {
			return false
		}
		copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.end -= s.pos
		s.pos = 0
		m, err := s.r.Read(s.buf[s.end:])
		s.end += m
		if err != nil {
			s.eof = true
		}
	}
	return true
}

// skipSpace advances past JSON whitespace and returns the next byte without
// consuming it.
func (s *scanner) skipSpace() (byte, bool) {
	for s.fill() {
		c := s.buf[s.pos]
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c, true
		}
		s.pos++
	}
	return 0, false
}

// expect consumes the byte c after optional whitespace.
func (s *scanner) expect(c byte, what string) error {
	got, ok := s.skipSpace()
	if !ok {
		return s.unexpectedEnd()
	}
	if got != c {
		return s.errorf("expected %s, found %s", what, quoteByte(got))
	}
	s.pos++
	return nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

// maxStringBytes bounds a decoded string: V8's longest string
// (String::kMaxLength, 2^29-24 UTF-16 code units on 64-bit) takes at most
// 3 bytes of UTF-8 a unit. A longer one is crafted, and would otherwise
// be buffered whole however long it claims to be.
const maxStringBytes = 3 << 29

// readString reads a JSON string and returns its decoded bytes. The result
// aliases a scratch buffer valid until the next call (or until the caller
// takes the buffer, setting s.scratch to nil). Lone UTF-16 surrogates
// (which V8 writes for broken strings) are kept as WTF-8 so the exact text
// can be written back (jsonstr decodes the escapes).
func (s *scanner) readString() ([]byte, error) {
	if err := s.expect('"', "a string"); err != nil {
		return nil, err
	}
	start := s.offset()
	out := s.scratch[:0]
	for {
		if !s.fill() {
			return nil, s.unexpectedEnd()
		}
		if len(out) > maxStringBytes {
			s.scratch = nil // do not keep the gigabytes
			return nil, s.errorf("a string (from byte %d) longer than %d bytes, more than V8 strings can hold", start, maxStringBytes)
		}
		chunk := s.buf[s.pos:s.end]
		i := jsonstr.Literal(chunk, false)
		out = s.appendDoubling(out, chunk[:i])
		s.releaseOutgrown()
		s.pos += i
		if i == len(chunk) {
			continue
		}
		if chunk[i] == '"' {
			s.pos++
			s.scratch = out
			// V8 escapes every non-ASCII character, so raw bytes that
			// are not UTF-8 come from another writer or an edit; they
			// read as DevTools' UTF-8 decoder reads them, U+FFFD, so
			// what is read can be written back as it was read.
			return wtf8.Sanitize(out), nil
		}
		// An escape, which may run past the buffered block.
		s.ensure(jsonstr.MaxEscape)
		var n int
		var p jsonstr.Problem
		out, n, p = jsonstr.Unescape(out, s.buf[s.pos:s.end])
		s.pos += n
		switch p {
		case jsonstr.Cut, jsonstr.CutHex:
			return nil, s.unexpectedEnd()
		case jsonstr.BadHex:
			return nil, s.errorf("invalid hex digit %s in \\u escape", quoteByte(s.buf[s.pos-1]))
		case jsonstr.BadEscape:
			return nil, s.errorf("invalid escape \\%c in string", s.buf[s.pos-1])
		}
	}
}

// appendDoubling is append that doubles a full buffer. append grows large
// slices by a quarter at a time, which for a string of hundreds of
// megabytes leaves several dead copies of it for the collector (a 500 MB
// string cost 2-4 GB); doubling leaves one, and the capacity it reserves
// beyond the string is memory the process never touches. From
// returnAfter on, the caller hands that dead copy back to the system at
// once (releaseOutgrown): the collector would otherwise keep it until the
// heap doubled again.
func (s *scanner) appendDoubling(out, b []byte) []byte {
	if cap(out)-len(out) >= len(b) {
		return append(out, b...)
	}
	n := make([]byte, len(out), max(2*cap(out), len(out)+len(b), 64))
	copy(n, out)
	if cap(out) >= returnAfter {
		s.scratch = nil
		s.outgrown = true
	}
	return append(n, b...)
}

// releaseOutgrown returns the buffer appendDoubling outgrew to the
// system, once the caller no longer holds it.
func (s *scanner) releaseOutgrown() {
	if s.outgrown {
		s.outgrown = false
		debug.FreeOSMemory()
	}
}

// returnAfter is the buffer size from which appendDoubling returns the
// outgrown buffer to the system: a full collection costs milliseconds,
// against the tens of megabytes it frees.
const returnAfter = 8 << 20

// skipString consumes a JSON string without decoding or keeping it.
func (s *scanner) skipString() error {
	if err := s.expect('"', "a string"); err != nil {
		return err
	}
	for {
		if !s.fill() {
			return s.unexpectedEnd()
		}
		chunk := s.buf[s.pos:s.end]
		i := jsonstr.Literal(chunk, false)
		if i == len(chunk) {
			s.pos = s.end
			continue
		}
		s.pos += i + 1
		if chunk[i] == '"' {
			return nil
		}
		// Skip the escaped character; a \u escape's hex digits are
		// plain characters.
		if !s.fill() {
			return s.unexpectedEnd()
		}
		s.pos++
	}
}

// skipValue skips one JSON value of any shape without materializing it. It
// is iterative, so deeply nested input cannot exhaust the stack. When keep
// is non-nil the raw bytes are appended to it, up to limit bytes.
func (s *scanner) skipValue(keep *[]byte, limit int) error {
	depth := 0
	for {
		c, ok := s.skipSpace()
		if !ok {
			return s.unexpectedEnd()
		}
		start := s.pos
		switch {
		case c == '{' || c == '[':
			depth++
			s.pos++
		case c == '}' || c == ']':
			if depth == 0 {
				return s.errorf("unexpected %s", quoteByte(c))
			}
			depth--
			s.pos++
		case c == ',' || c == ':':
			if depth == 0 {
				return s.errorf("unexpected %s", quoteByte(c))
			}
			s.pos++
		case c == '"':
			if keep != nil {
				// Keep the raw text: re-encode the decoded string.
				b, err := s.readString()
				if err != nil {
					return err
				}
				*keep = appendJSONString(*keep, b)
				if len(*keep) > limit {
					return s.errorf("value longer than %d bytes", limit)
				}
				if depth == 0 {
					return nil
				}
				continue
			}
			if err := s.skipString(); err != nil {
				return err
			}
		default:
			// A number or a literal: consume its characters.
			if !isScalarByte(c) {
				return s.errorf("unexpected %s", quoteByte(c))
			}
			for s.fill() && isScalarByte(s.buf[s.pos]) {
				if keep != nil {
					*keep = append(*keep, s.buf[s.pos])
				}
				s.pos++
			}
			start = -1
		}
		if keep != nil && start >= 0 && s.pos > start {
			*keep = append(*keep, s.buf[start:s.pos]...)
			if len(*keep) > limit {
				return s.errorf("value longer than %d bytes", limit)
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

func isScalarByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '+' || c == '.'
}

// appendJSONString appends b as a JSON string literal.
func appendJSONString(dst, b []byte) []byte {
	dst = append(dst, '"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, fmt.Sprintf(`\u%04x`, c)...)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}
