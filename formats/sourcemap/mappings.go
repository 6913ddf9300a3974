package sourcemap

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
)

// A map's mappings field is a string of base64 VLQ numbers: one group
// per generated line (';'), one segment per mapped position (','), each
// segment 1, 4 or 5 numbers relative to the same field of the segment
// before it. A 10 MB bundle's map holds a few million segments on a
// handful of lines (minified code is one long line), so neither decoding
// every segment into a struct (24 bytes each: 50-100 MB) nor decoding a
// line per lookup (the one line is the whole map) will do.
//
// index keeps the mappings text and, every checkpointEvery segments or
// checkpointBytes bytes, a checkpoint: one segment decoded in full (its
// absolute values) and where the text goes on after it. A lookup binary
// searches the checkpoints and decodes forward from one, 64 segments at
// most: a microsecond or two, for an index of about 6% of the map
// (BenchmarkParse, BenchmarkLookup). A map whose segments are not in order within a line (the
// format wants them sorted; a careless generator may not) gets every
// segment as a checkpoint, sorted, and no decoding at lookup.
type index struct {
	text []byte
	// Checkpoints, as columns, sorted by generated line and column.
	line, col              []uint32 // generated position, zero-based
	src, oline, ocol, name []int32  // the original fields' values
	fields                 []uint8  // 1 (unmapped), 4, or 5 (named)
	next                   []uint32 // offset in text after the segment
	// dense is set when every segment is a checkpoint: lookups do not
	// decode.
	dense bool
}

const (
	checkpointEvery = 64
	checkpointBytes = 512
)

// segment is one decoded segment with its absolute values.
type segment struct {
	line, col              uint32
	src, oline, ocol, name int32
	fields                 uint8
}

// b64 maps a base64 character to its value, 0xFF for other bytes.
var b64 = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	return t
}()

// vlq decodes the base64 VLQ number at text[i:] and returns it with the
// offset after it. A number that does not fit in 32 bits, a byte that is
// not base64 and a number cut short are errors.
func vlq(text []byte, i int) (int32, int, error) {
	var v uint64
	for shift := uint(0); ; shift += 5 {
		if i == len(text) {
			return 0, i, fmt.Errorf("a number cut short at the end")
		}
		d := b64[text[i]]
		if d == 0xFF {
			return 0, i, fmt.Errorf("%q is not a base64 digit", text[i])
		}
		if shift > 30 {
			return 0, i, fmt.Errorf("a number too large")
		}
		v |= uint64(d&0x1F) << shift
		i++
		if d&0x20 == 0 {
			break
		}
	}
	neg := v&1 == 1
	v >>= 1
	if v > 1<<31-1 && !(neg && v == 1<<31) {
		return 0, i, fmt.Errorf("a number too large")
	}
	if neg {
		return int32(-int64(v)), i, nil
	}
	return int32(v), i, nil
}

// decoder walks the segments of a mappings text, keeping the running
// values the relative numbers add to.
type decoder struct {
	text []byte
	i    int
	seg  segment
}

// next decodes the segment at the offset, stepping over the line breaks
// before it; ok is false at the end of the text.
func (d *decoder) next() (ok bool, err error) {
	for d.i < len(d.text) {
		switch d.text[d.i] {
		case ';':
			d.seg.line++
			d.seg.col = 0
			d.i++
			continue
		case ',':
			// An empty segment (",,"): nothing to decode.
			d.i++
			continue
		}
		break
	}
	if d.i == len(d.text) {
		return false, nil
	}
	var v [5]int32
	n, start := 0, d.i
	for n < 5 && d.i < len(d.text) && d.text[d.i] != ',' && d.text[d.i] != ';' {
		if c := b64[d.text[d.i]]; c < 0x20 {
			// One digit, as most numbers are (small steps): no call.
			v[n] = int32(c >> 1)
			if c&1 == 1 {
				v[n] = -v[n]
			}
			d.i++
			n++
			continue
		}
		x, i, err := vlq(d.text, d.i)
		if err != nil {
			d.i = i
			return false, d.errAt(err.Error())
		}
		v[n], d.i = x, i
		n++
	}
	if d.i < len(d.text) && d.text[d.i] != ',' && d.text[d.i] != ';' {
		d.i = start
		return false, d.errAt("a segment of more than 5 fields")
	}
	if n == 2 || n == 3 {
		d.i = start
		return false, d.errAt(fmt.Sprintf("a segment of %d fields: want 1, 4 or 5", n))
	}
	col := int64(d.seg.col) + int64(v[0])
	if col < 0 || col > 1<<32-1 {
		d.i = start
		return false, d.errAt("a generated column before the line's start")
	}
	d.seg.col = uint32(col)
	d.seg.fields = uint8(n)
	if n >= 4 {
		d.seg.src += v[1]
		d.seg.oline += v[2]
		d.seg.ocol += v[3]
	}
	if n == 5 {
		d.seg.name += v[4]
	}
	return true, nil
}

func (d *decoder) errAt(msg string) error {
	return &errAt{at: d.i, msg: msg}
}

// newIndex checks the whole mappings text and builds its checkpoints.
func newIndex(text []byte) (*index, error) {
	x := &index{text: text}
	// Room for the checkpoints there can be, so the columns are not
	// grown (and copied) as they fill.
	x.grow(bytes.Count(text, []byte(","))/checkpointEvery + len(text)/checkpointBytes + 1)
	d := decoder{text: text}
	sorted := true
	var prev segment
	since, lastAt := 0, 0
	for n := 0; ; n++ {
		start := d.i
		ok, err := d.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if n > 0 && d.seg.line == prev.line && d.seg.col < prev.col {
			sorted = false
		}
		prev = d.seg
		since++
		if n == 0 || since >= checkpointEvery || start-lastAt >= checkpointBytes {
			x.add(d.seg, d.i)
			since, lastAt = 0, d.i
		}
	}
	if !sorted {
		return x.denseIndex()
	}
	return x, nil
}

// grow makes room for n more checkpoints.
func (x *index) grow(n int) {
	x.line = slices.Grow(x.line, n)
	x.col = slices.Grow(x.col, n)
	x.src = slices.Grow(x.src, n)
	x.oline = slices.Grow(x.oline, n)
	x.ocol = slices.Grow(x.ocol, n)
	x.name = slices.Grow(x.name, n)
	x.fields = slices.Grow(x.fields, n)
	x.next = slices.Grow(x.next, n)
}

// add appends a checkpoint.
func (x *index) add(s segment, next int) {
	x.line = append(x.line, s.line)
	x.col = append(x.col, s.col)
	x.src = append(x.src, s.src)
	x.oline = append(x.oline, s.oline)
	x.ocol = append(x.ocol, s.ocol)
	x.name = append(x.name, s.name)
	x.fields = append(x.fields, s.fields)
	x.next = append(x.next, uint32(next))
}

// at returns checkpoint c.
func (x *index) at(c int) segment {
	return segment{line: x.line[c], col: x.col[c], src: x.src[c], oline: x.oline[c], ocol: x.ocol[c], name: x.name[c], fields: x.fields[c]}
}

// denseIndex rebuilds x with every segment a checkpoint, sorted by
// generated position (stable: segments at one position keep their
// order), for a map whose lines are not in order.
func (x *index) denseIndex() (*index, error) {
	var segs []segment
	d := decoder{text: x.text}
	for {
		ok, err := d.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		segs = append(segs, d.seg)
	}
	slices.SortStableFunc(segs, func(a, b segment) int {
		return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	y := &index{text: x.text, dense: true}
	y.grow(len(segs))
	for _, s := range segs {
		y.add(s, 0)
	}
	return y, nil
}

// lookup returns the segment that covers generated line and column
// (zero-based): the last one at or before it on that line, as Mozilla's
// source-map finds it (GREATEST_LOWER_BOUND); ok is false when the line
// has none there. Of several segments at one position the last in the
// map counts (Mozilla's binary search returns any of them).
func (x *index) lookup(line, col uint32) (segment, bool) {
	c := searchAfter(x, line, col) - 1
	if c < 0 {
		return segment{}, false
	}
	best := x.at(c)
	found := best.line == line
	if x.dense {
		return best, found
	}
	d := decoder{text: x.text, i: int(x.next[c]), seg: best}
	for {
		ok, err := d.next()
		if err != nil || !ok || d.seg.line > line || d.seg.line == line && d.seg.col > col {
			return best, found
		}
		if d.seg.line == line {
			best, found = d.seg, true
		}
	}
}

// searchAfter returns the first checkpoint after generated position
// (line, col), len(checkpoints) when none is.
func searchAfter(x *index, line, col uint32) int {
	lo, hi := 0, len(x.line)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x.line[m] < line || x.line[m] == line && x.col[m] <= col {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// size is the index's own memory in bytes, beside the text.
func (x *index) size() int {
	return 4*(len(x.line)+len(x.col)+len(x.src)+len(x.oline)+len(x.ocol)+len(x.name)+len(x.next)) + len(x.fields)
}

// between calls fn for each segment on generated line at columns from
// to to (zero-based, inclusive), in order of column.
func (x *index) between(line, from, to uint32, fn func(segment)) {
	c := max(searchAfter(x, line, from)-1, 0)
	if x.dense {
		for ; c < len(x.line) && (x.line[c] < line || x.line[c] == line && x.col[c] <= to); c++ {
			if x.line[c] == line && x.col[c] >= from {
				fn(x.at(c))
			}
		}
		return
	}
	if len(x.line) == 0 {
		return
	}
	d := decoder{text: x.text, i: int(x.next[c]), seg: x.at(c)}
	for ok := true; ok; ok, _ = d.next() {
		s := d.seg
		if s.line > line || s.line == line && s.col > to {
			return
		}
		if s.line == line && s.col >= from {
			fn(s)
		}
	}
}
