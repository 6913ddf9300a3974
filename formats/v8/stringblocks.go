package v8

import (
	"bytes"
	"unicode/utf8"
	"unsafe"

	"github.com/heapx/heapx/formats/internal/jsonstr"
	"github.com/heapx/heapx/internal/wtf8"
	"github.com/heapx/heapx/model"
)

// The strings array is the last few percent of a snapshot, and read one
// string at a time it was a tenth of the read (0.31 s of the 3.5 GB
// synthetic snapshot, on one core). V8 writes it one string a line, a
// newline before each, and raw newlines cannot be inside a string it
// writes (it escapes every control character), so the array is cut into
// blocks after V8's separator '",\n' and the blocks are decoded on every
// core. A block's strings are accepted only if it decodes whole: it must
// hold a run of complete strings, each followed by a comma, ending right
// after one, so a cut that fell inside a string (other writers may leave
// control characters raw) shows as a block that does not decode, from
// which on the strings are read one at a time again. Errors are always
// found by that sequential reading, so they are reported as before. The
// block that holds the array's end does not decode whole either (a ']'
// where a comma should be), nor do those read after it, which the
// scanner is given back.

// stringBlock is the size of the blocks of the strings array: small enough
// that the blocks in flight (stringsInFlight of them) fit a buffer the
// scanner takes back when decoding in blocks stops.
const (
	stringBlock     = 256 << 10
	stringsInFlight = 4
)

// stringBlocks turns readStringBlocks on; tests turn it off to compare.
var stringBlocks = true

// decodedStrings is what decoding one block gave.
type decodedStrings struct {
	data []byte   // the strings, back to back
	buf  []byte   // the buffer they were decoded in, to reuse
	lens []uint32 // their lengths
	// weakMap lists, for the strings that name a WeakMap entry's edges,
	// their index in the block and the table's id (see markEphemerons).
	weakMap []weakMapName
	ok      bool // the block decoded whole
}

type weakMapName struct {
	i       int
	tableID uint64
}

// decodeStrings decodes a block of the strings array that must start with
// a string (after whitespace) and end right after a comma that follows
// one (and whitespace); it reports ok false otherwise. It decodes as
// scanner.readString does, and with weakMap it also finds the names of
// WeakMap entries' edges.
//
// buf and lens are buffers for the strings and their lengths, reused from
// an earlier block: the strings are then copied into a slice of their own
// size, which the table keeps, and the table copies the lengths into its
// index. Decoded straight into a block-sized slice each, with lengths
// grown by appending, the strings took 435 MB of memory on the 3.5 GB
// synthetic snapshot, 298 MB this way (215 MB read one at a time, without
// the 20 MB of WeakMap names noted here).
func decodeStrings(b []byte, weakMap bool, buf []byte, lens []uint32) decodedStrings {
	d := decodedStrings{data: buf[:0], lens: lens[:0]}
	i := 0
	for {
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) {
			// Right after a comma, or an empty block.
			d.ok = len(d.lens) > 0
			d.buf, d.data = d.data, append([]byte(nil), d.data...)
			return d
		}
		if b[i] != '"' {
			return d
		}
		i++
		start := len(d.data)
		for {
			j := jsonstr.Literal(b[i:], false)
			d.data = append(d.data, b[i:i+j]...)
			i += j
			if i == len(b) {
				return d
			}
			if b[i] == '"' {
				i++
				break
			}
			var n int
			var p jsonstr.Problem
			d.data, n, p = jsonstr.Unescape(d.data, b[i:])
			if p != jsonstr.OK {
				return d
			}
			i += n
		}
		if s := d.data[start:]; !utf8.Valid(s) {
			fixed := wtf8.Sanitize(s)
			d.data = append(d.data[:start], fixed...)
		}
		n := len(d.data) - start
		if weakMap && n > 0 {
			if id, ok := weakMapTableID(unsafe.String(&d.data[start], n)); ok {
				d.weakMap = append(d.weakMap, weakMapName{len(d.lens), id})
			}
		}
		d.lens = append(d.lens, uint32(n))
		for i < len(b) && isSpace(b[i]) {
			i++
		}
		if i == len(b) || b[i] != ',' {
			return d
		}
		i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// stringsJob is a block of the strings array being decoded.
type stringsJob struct {
	raw  []byte   // the block, the reader's buffer until done
	buf  []byte   // a buffer to decode it in
	lens []uint32 // a buffer for its lengths
	off  int64    // its stream offset
	res  decodedStrings
	done chan struct{}
}

// readStringBlocks decodes the strings array from the scanner's position,
// which must be at a string's start or the whitespace before it, a block
// at a time on every core, adding the strings to the graph, until it meets
// a block it cannot take whole (see above). It leaves the scanner at the
// first byte not taken, with everything read after it buffered, and
// reports whether it took any.
func (r *reader) readStringBlocks() bool {
	s := r.s
	pending := append([]byte(nil), s.buf[s.pos:s.end]...)
	off := s.offset()
	s.pos = s.end
	var inFlight []*stringsJob
	var free [][]byte
	var freeLens [][]uint32
	var freeBufs [][]byte
	sem := make(chan struct{}, r.p.workers)
	took := false
	// commit adds a decoded block's strings to the graph.
	commit := func(j *stringsJob) {
		first := r.g.Strings.Len()
		if len(j.res.data) > 0 || len(j.res.lens) > 0 {
			r.g.Strings.AddBlock(j.res.data[:len(j.res.data):len(j.res.data)], j.res.lens)
		}
		for _, w := range j.res.weakMap {
			r.weakMapTables[model.StringID(first+w.i)] = w.tableID
		}
		free = append(free, j.raw[:0])
		freeLens = append(freeLens, j.res.lens[:0])
		if j.res.buf != nil {
			freeBufs = append(freeBufs, j.res.buf[:0])
		}
		took = true
	}
	// stop waits for the blocks in flight, takes those that decoded whole
	// up to the first that did not, and gives the scanner back the bytes
	// from there on.
	stop := func() {
		var back []byte
		backOff := off
		failed := false
		for _, j := range inFlight {
			<-j.done
			if !failed && j.res.ok {
				commit(j)
				continue
			}
			if !failed {
				failed, backOff = true, j.off
			}
			back = append(back, j.raw...)
		}
		back = append(back, pending...)
		if cap(back) < len(s.buf) {
			// The scanner's buffer keeps its size at least.
			b := make([]byte, len(back), len(s.buf))
			copy(b, back)
			back = b
		}
		s.buf = back[:cap(back)]
		s.base, s.pos, s.end = backOff, 0, len(back)
	}
	for {
		var blk []byte
		if k := len(free); k > 0 {
			blk, free = free[k-1], free[:k-1]
		} else {
			blk = make([]byte, 0, stringBlock)
		}
		blk = append(blk, pending...)
		for len(blk) < cap(blk) && !s.eof {
			m, err := s.r.Read(blk[len(blk):cap(blk)])
			blk = blk[:len(blk)+m]
			if err != nil {
				s.eof = true
			}
		}
		c := bytes.LastIndex(blk, []byte("\",\n"))
		if c < 0 || len(blk) < cap(blk) {
			// A string longer than a block, or the input's end: the
			// scanner reads on.
			pending = blk
			stop()
			return took
		}
		body := blk[:c+3]
		pending = append([]byte(nil), blk[c+3:]...)
		j := &stringsJob{raw: body, off: off, done: make(chan struct{})}
		if k := len(freeLens); k > 0 {
			j.lens, freeLens = freeLens[k-1], freeLens[:k-1]
		} else {
			// A string a line, in V8's layout.
			j.lens = make([]uint32, 0, bytes.Count(body, []byte{'\n'})+1)
		}
		if k := len(freeBufs); k > 0 {
			j.buf, freeBufs = freeBufs[k-1], freeBufs[:k-1]
		} else {
			j.buf = make([]byte, 0, len(body))
		}
		off += int64(len(body))
		sem <- struct{}{}
		go func() {
			j.res = decodeStrings(j.raw, r.internal >= 0, j.buf, j.lens)
			<-sem
			close(j.done)
		}()
		inFlight = append(inFlight, j)
		if len(inFlight) == stringsInFlight {
			oldest := inFlight[0]
			<-oldest.done
			if !oldest.res.ok {
				stop()
				return took
			}
			commit(oldest)
			inFlight = inFlight[1:]
		}
	}
}
