package hprof

import (
	"encoding/binary"
	"fmt"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
)

// window is a forward-only byte window over the (decompressed) dump. It
// tracks the absolute offset for error messages and grows its buffer only
// by doubling as data arrives, so a record whose length lies cannot make it
// allocate more than twice what the input really holds.
type window struct {
	src  *input.Reader
	buf  []byte
	r, w int   // unread bytes are buf[r:w]
	base int64 // stream offset of buf[0]
}

// pos is the stream offset of the next unread byte.
func (in *window) pos() int64 { return in.base + int64(in.r) }

// fill makes at least n unread bytes available in buf[r:w]; it reports
// false when the input ends (or fails) first.
func (in *window) fill(n int) bool {
	if in.w-in.r >= n {
		return true
	}
	if in.r > 0 {
		copy(in.buf, in.buf[in.r:in.w])
		in.base += int64(in.r)
		in.w -= in.r
		in.r = 0
	}
	for in.w < n {
		if in.w == len(in.buf) {
			nb := make([]byte, 2*len(in.buf))
			copy(nb, in.buf[:in.w])
			in.buf = nb
		}
		m, err := in.src.Read(in.buf[in.w:])
		in.w += m
		if err != nil { // the input ended, or failed (src keeps why)
			return in.w >= n
		}
	}
	return true
}

// skip advances n bytes; it reports false when the input ends first.
func (in *window) skip(n int64) bool {
	for {
		if k := int64(in.w - in.r); n <= k {
			in.r += int(n)
			return true
		} else {
			n -= k
		}
		in.base += int64(in.w)
		in.r, in.w = 0, 0
		m, err := in.src.Read(in.buf)
		in.w = m
		if err != nil && m == 0 {
			return false
		}
	}
}

// errorf returns a FormatError at offset off.
func (in *window) errorf(off int64, section, format string, args ...any) error {
	return &formats.FormatError{File: in.src.Name(), Section: section, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// truncated is the error for input that ended (or failed) inside what
// section holds: the input layer's, the same in every format.
func (in *window) truncated(section string) error {
	return in.src.EndError(section)
}

func u2(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func u4(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func u8(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
