// Protobuf framing: the file is a stream of length-delimited messages,
// read a block at a time.

package spidermonkey

import "google.golang.org/protobuf/encoding/protowire"

// fill makes at least n bytes available in buf[pos:end], reading more
// input as needed; it reports false when the input ends first.
func (r *reader) fill(n int) bool {
	if r.end-r.pos >= n {
		return true
	}
	if r.pos > 0 {
		copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.end -= r.pos
		r.pos = 0
	}
	for r.end < n && !r.eof {
		if r.end == len(r.buf) {
			// Double, not jump to n: a corrupt length must not allocate
			// more than the input really holds.
			nb := make([]byte, min(n, 2*len(r.buf)))
			copy(nb, r.buf[:r.end])
			r.buf = nb
		}
		k, err := r.src.Read(r.buf[r.end:])
		r.end += k
		if err != nil {
			r.eof = true
		}
	}
	return r.end-r.pos >= n
}

// length reads the length of the next length-delimited message: n bytes
// that start k bytes on, at stream offset off. ok is false at the end of
// the input. Nothing is consumed.
func (r *reader) length(section string) (n, k int, off int64, ok bool, err error) {
	if !r.fill(1) {
		if r.src.Err() != nil {
			return 0, 0, 0, false, r.src.EndError(section)
		}
		return 0, 0, 0, false, nil
	}
	r.fill(binaryMaxVarint)
	off = r.base + int64(r.pos)
	v, k := protowire.ConsumeVarint(r.buf[r.pos:r.end])
	switch {
	case k < 0 && r.end-r.pos < binaryMaxVarint:
		// The input ends (or fails) inside a message length.
		return 0, 0, 0, false, r.src.EndError(section)
	case k < 0:
		return 0, 0, 0, false, r.errAt(section, off, "malformed message length: %v", protowire.ParseError(k))
	case v > maxMessage:
		return 0, 0, 0, false, r.errAt(section, off, "message length %d is more than protobuf's 2 GB limit", v)
	case v == 0:
		return 0, 0, 0, false, r.errAt(section, off, "empty message")
	}
	return int(v), k, off + int64(k), true, nil
}

// take makes the n bytes of the message whose length took k bytes
// available and consumes them; the message aliases the window and is
// valid until the window next moves.
func (r *reader) take(section string, n, k int, off int64) ([]byte, error) {
	if !r.fill(k + n) {
		return nil, r.src.EndError(section)
	}
	start := r.pos + k
	r.pos = start + n
	return r.buf[start:r.pos], nil
}

// next returns the next message, of at most maxField bytes, and the
// stream offset of its first byte, or nil at the end of the input.
func (r *reader) next(section string) ([]byte, int64, error) {
	n, k, off, ok, err := r.length(section)
	if !ok || err != nil {
		return nil, 0, err
	}
	if n > maxField {
		return nil, 0, r.errAt(section, off-int64(k), "message of %d bytes, more than the %d MB a %s message can need", n, maxField>>20, section)
	}
	msg, err := r.take(section, n, k, off)
	return msg, off, err
}

// tag is protowire.ConsumeTag with a fast path for one-byte tags: every
// field of CoreDump.proto has one.
func tag(b []byte) (protowire.Number, protowire.Type, int) {
	if len(b) > 0 && b[0] < 0x80 && b[0] >= 8 {
		return protowire.Number(b[0] >> 3), protowire.Type(b[0] & 7), 1
	}
	return protowire.ConsumeTag(b)
}

// varint is protowire.ConsumeVarint with a fast path for one-byte values
// (sizes, coarse types, string references, lengths).
func varint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return protowire.ConsumeVarint(b)
}

// wireErr reports a malformed field at off.
func (r *reader) wireErr(section string, off int64, k int) error {
	return r.errAt(section, off, "malformed protobuf field: %v", protowire.ParseError(k))
}
