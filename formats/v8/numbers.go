package v8

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"

	"github.com/heapx/heapx/formats"
)

// The nodes and edges arrays are nearly the whole file (1.1 GB of a 1.15 GB
// snapshot), so they get a parallel pipeline instead of the scanner: the
// reading goroutine cuts the stream into blocks at commas and counts the
// numbers in each (bytes.Count is vectorized, so cutting costs a fraction of
// parsing); workers then parse blocks independently and write each number
// straight into its column, since a block's first number index is known.
// Memory stays at a few blocks in flight, whatever the file size.

// sink receives the numbers of one array. put is called with the index of
// the first value and a batch of consecutive values; batches of one array
// may arrive concurrently but never overlap. A returned error names the
// failing value by its offset in the batch.
//
// Before a block is dispatched, reserve tells the sink how many values the
// array will have at least; a sink whose columns are too small answers
// grow=true and is grown by grow once no worker is writing to it, so
// columns track the data actually read rather than a header's claim.
type sink interface {
	put(k0 uint64, vals []int64) (bad int, err error)
	reserve(n uint64) (grow bool, err error)
	grow(n uint64)
}

// pipeline is a pool of parse workers shared by all arrays of one read.
type pipeline struct {
	workers int
	jobs    chan job
	free    chan []byte
	wg      sync.WaitGroup

	mu     sync.Mutex
	err    error // first error by stream offset
	errOff int64
}

type job struct {
	blk   []byte
	k0    uint64 // index of the block's first number
	count uint64 // numbers the block must hold
	off   int64  // stream offset of blk[0]
	last  bool   // the array's final block (its last number has no comma)
	sink  sink
	cols  *columns // the sink's columns, for parseColumns; nil: put only
	file  string
	sect  string
	done  *sync.WaitGroup
}

// newPipeline starts workers that parse blocks of up to size bytes; size
// must equal the scanner's buffer size, whose unread bytes seed a block.
func newPipeline(workers, size int) *pipeline {
	p := &pipeline{
		workers: workers,
		jobs:    make(chan job, workers),
		free:    make(chan []byte, 2*workers+2),
	}
	for i := 0; i < cap(p.free); i++ {
		p.free <- make([]byte, 0, size)
	}
	for i := 0; i < workers; i++ {
		p.wg.Add(1)
		go p.work()
	}
	return p
}

func (p *pipeline) close() {
	close(p.jobs)
	p.wg.Wait()
}

func (p *pipeline) fail(off int64, err error) {
	p.mu.Lock()
	if p.err == nil || off < p.errOff {
		p.err, p.errOff = err, off
	}
	p.mu.Unlock()
}

func (p *pipeline) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pipeline) work() {
	defer p.wg.Done()
	batch := make([]int64, 0, 4096)
	for j := range p.jobs {
		if p.failed() == nil {
			if err := parseBlock(j, batch); err != nil {
				p.fail(j.off, err)
			}
		}
		p.free <- j.blk[:0]
		j.done.Done()
	}
}

// parseBlock parses the comma-separated integers of one block into batches
// for the sink, after parseColumns if the sink has columns.
func parseBlock(j job, batch []int64) error {
	if j.cols != nil && fastColumns && parseColumns(j, j.cols) {
		return nil
	}
	b := j.blk
	k := j.k0
	var n uint64
	i := 0
	for i < len(b) {
		c := b[i]
		if c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			i++
			continue
		}
		start := i
		neg := false
		if c == '-' {
			neg = true
			i++
		}
		if i >= len(b) || b[i]-'0' > 9 {
			return numberError(j, start, b, "expected a number")
		}
		var v uint64
		digits := 0
		if i+8 <= len(b) {
			// Up to 8 digits at once (SWAR): most numbers in a snapshot
			// are short, and the byte loop was a third of the read time.
			x := binary.LittleEndian.Uint64(b[i:]) - 0x3030303030303030
			nd := bits.TrailingZeros64(((x+0x7676767676767676)|x)&0x8080808080808080) / 8
			x <<= 8 * (8 - nd)
			x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
			x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
			x = (x*10000 + x>>32) & 0xFFFFFFFF
			v, digits = x, nd
			i += nd
		}
		for i < len(b) {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
			i++
			digits++
		}
		if digits > 18 {
			return numberError(j, start, b, "number too large")
		}
		x := int64(v)
		if neg {
			x = -x
		}
		batch = append(batch, x)
		n++
		// A number must be followed by a comma, except the array's last.
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
			i++
		}
		if i < len(b) {
			if b[i] != ',' {
				if b[i] == '.' || b[i] == 'e' || b[i] == 'E' {
					return numberError(j, start, b, "expected an integer")
				}
				return numberError(j, i, b, fmt.Sprintf("expected ',' or ']', found %s", quoteByte(b[i])))
			}
			i++
		} else if !j.last {
			return numberError(j, i, b, "expected ','")
		}
		if len(batch) == cap(batch) {
			if bad, err := j.sink.put(k, batch); err != nil {
				return valueError(j, k+uint64(bad)-j.k0, err)
			}
			k += uint64(len(batch))
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		if bad, err := j.sink.put(k, batch); err != nil {
			return valueError(j, k+uint64(bad)-j.k0, err)
		}
	}
	if n != j.count {
		return &formats.FormatError{File: j.file, Section: j.sect, Offset: j.off, Msg: fmt.Sprintf("malformed number list: block holds %d numbers but %d separators", n, j.count)}
	}
	return nil
}

func numberError(j job, i int, b []byte, msg string) error {
	return &formats.FormatError{File: j.file, Section: j.sect, Offset: j.off + int64(i), Msg: msg}
}

// valueError turns a sink's complaint about the idx-th number of a block
// into an error at that number's byte offset (found by rescanning, which
// only happens once, on failure).
func valueError(j job, idx uint64, err error) error {
	off := j.off
	var seen uint64
	b := j.blk
	for i := 0; i < len(b); i++ {
		if b[i]-'0' <= 9 || b[i] == '-' {
			if seen == idx {
				off = j.off + int64(i)
				break
			}
			seen++
			for i+1 < len(b) && (b[i+1]-'0' <= 9) {
				i++
			}
		}
	}
	return &formats.FormatError{File: j.file, Section: j.sect, Offset: off, Msg: err.Error()}
}

// numberArray reads a JSON array of integers whose '[' the scanner has just
// consumed, feeding all values to dst, and returns how many there were. With
// parallel false the blocks are parsed on this goroutine in order, so the
// sink may append.
func (p *pipeline) numberArray(s *scanner, dst sink, parallel bool) (uint64, error) {
	var wg sync.WaitGroup
	var k uint64
	// Start with what the scanner has buffered.
	pending := s.buf[s.pos:s.end]
	off := s.offset()
	s.pos = s.end
	finished := false
	var err error
	for !finished && err == nil {
		blk := <-p.free
		blk = append(blk, pending...)
		// Read until the block is full or the array ends, searching only
		// the new bytes for ']' (readers such as gzip return small pieces).
		e := bytes.IndexByte(blk, ']')
		for len(blk) < cap(blk) && e < 0 && !s.eof {
			m, rerr := s.r.Read(blk[len(blk):cap(blk)])
			if i := bytes.IndexByte(blk[len(blk):len(blk)+m], ']'); i >= 0 {
				e = len(blk) + i
			}
			blk = blk[:len(blk)+m]
			if rerr != nil {
				s.eof = true
			}
		}
		var body []byte
		last := false
		if e >= 0 {
			body, last, finished = blk[:e], true, true
			// Hand the bytes after ']' back to the scanner.
			rest := blk[e+1:]
			s.base = off + int64(e+1)
			s.pos, s.end = 0, copy(s.buf, rest)
		} else if s.eof {
			p.free <- blk[:0]
			end := off + int64(len(blk))
			s.base, s.pos, s.end = end, 0, 0
			return k, s.unexpectedEnd()
		} else {
			c := bytes.LastIndexByte(blk, ',')
			if c < 0 {
				p.free <- blk[:0]
				return k, &formats.FormatError{File: s.file, Section: s.section, Offset: off, Msg: fmt.Sprintf("no ',' in %d bytes of a number array", len(blk))}
			}
			body = blk[:c+1]
			pending = append(s.scratch[:0], blk[c+1:]...)
			s.scratch = pending
		}
		count := uint64(bytes.Count(body, []byte{','}))
		if last && len(bytes.TrimSpace(body)) > 0 {
			count++
		}
		if g, rerr := dst.reserve(k + count); rerr != nil {
			p.free <- blk[:0]
			wg.Wait()
			return k, &formats.FormatError{File: s.file, Section: s.section, Offset: off, Msg: rerr.Error()}
		} else if g {
			wg.Wait()
			dst.grow(k + count)
		}
		j := job{blk: body, k0: k, count: count, off: off, last: last, sink: dst, file: s.file, sect: s.section, done: &wg}
		if cs, ok := dst.(columnSink); ok {
			j.cols = cs.columns() // after any grow: the columns of now
		}
		k += count
		off += int64(len(body))
		if last {
			off++ // the ']'
		}
		wg.Add(1)
		if parallel {
			p.jobs <- j
		} else {
			if perr := parseBlock(j, make([]int64, 0, 4096)); perr != nil {
				p.fail(j.off, perr)
			}
			p.free <- body[:0]
			wg.Done()
		}
		err = p.failed()
	}
	wg.Wait()
	if err := p.failed(); err != nil {
		return k, err
	}
	return k, nil
}

// fastColumns turns parseColumns on; tests turn it off to compare it with
// the general parser.
var fastColumns = true

// columnSink is a sink whose values parseColumns can store itself.
type columnSink interface {
	sink
	// columns returns the sink's columns as they are now, or nil when
	// it has none to write (the edges only counted).
	columns() *columns
}

// Column codes: where parseColumns puts a field's value, and what range
// it checks.
const (
	colSkip       = iota // a field the model does not keep
	colNodeType          // < types
	colNodeName          // uint32
	colNodeID            // any non-negative value
	colNodeSize          // any non-negative value
	colNodeEdges         // uint32, into FirstEdge[n+1]
	colNodeTrace         // uint32
	colNodeDetach        // uint8
	colEdgeType          // < types
	colEdgeName          // uint32
	colEdgeTo            // the start of a node: a multiple of nodeF below nodes*nodeF
)

// columns are the destinations of one array's fields: code[f] says where
// field f goes. Only the slices of that array are set.
type columns struct {
	code   []uint8
	fields uint64
	types  uint64 // node or edge types in meta

	nodeType, detach           []uint8
	nodeName, firstEdge, trace []uint32
	nodeID, nodeSize           []uint32 // low words; values above 32 bits go to the sink

	edgeType     []uint8
	edgeName     []uint32
	edgeTo       []int32
	nodeF, nodes uint64 // node fields and node count, for to_node
}

// parseColumns is parseBlock's fast path for the nodes and edges arrays,
// which are nearly the whole file: it parses each number and stores it in
// its column in one pass, with the same range checks as the sinks' put,
// instead of batching values for put to dispatch. It handles what V8
// writes (unsigned integers of up to 18 digits, each followed by a comma,
// a newline before it at most) and returns false at anything else, a
// value out of range or a malformed list included, maybe after writing
// some values; parseBlock then parses the block the general way, which
// writes the same values and reports an error as it always has.
//
// Whole records of V8's own layouts (see recordLayout) go through a loop
// of their own, which parses a record's numbers before storing them in
// fixed columns: a third less CPU than one number at a time through the
// column switch (BenchmarkReadOneWorker). The values before the block's
// first whole record and after its last one take the general loop.
func parseColumns(j job, c *columns) bool {
	b := j.blk
	f := j.k0 % c.fields
	n := j.k0 / c.fields // the record being read
	var count uint64
	i := 0
	ok := true
	if f != 0 {
		i, f, n, count, ok = c.values(b, i, f, n, count, j.last, true)
	}
	if ok && f == 0 {
		switch c.layout() {
		case layoutEdges:
			i, n, count = c.edgeRecords(b, i, n, count)
		case layoutNodes:
			i, n, count = c.nodeRecords(b, i, n, count)
		}
	}
	if ok {
		_, _, _, count, ok = c.values(b, i, f, n, count, j.last, false)
	}
	return ok && count == j.count
}

// values parses numbers from b[i:] as fields f, f+1, ... of record n and
// stores them, until the block ends or, with toRecord, until the next
// record starts. It returns where it stopped and false at anything
// parseColumns does not handle.
func (c *columns) values(b []byte, i int, f, n, count uint64, last, toRecord bool) (int, uint64, uint64, uint64, bool) {
	for i < len(b) {
		start := i
		var v uint64
		if i+8 <= len(b) {
			// As parseBlock: 8 digits at a time.
			x, nd := digits8(binary.LittleEndian.Uint64(b[i:]))
			if nd == 0 {
				return i, f, n, count, false
			}
			v = x
			i += nd
		}
		for i < len(b) {
			d := b[i] - '0'
			if d > 9 {
				break
			}
			v = v*10 + uint64(d)
			i++
		}
		if i == start || i-start > 18 {
			return i, f, n, count, false
		}
		if i < len(b) && b[i] == '\n' {
			i++
		}
		if i < len(b) {
			if b[i] != ',' {
				return i, f, n, count, false
			}
			i++
		} else if !last {
			return i, f, n, count, false
		}
		count++
		if !c.store(f, n, v) {
			return i, f, n, count, false
		}
		f++
		if f == c.fields {
			f = 0
			n++
			if toRecord {
				break
			}
		}
	}
	return i, f, n, count, true
}

// store puts v, field f of record n, in its column, or reports false when
// it is out of the column's range.
func (c *columns) store(f, n, v uint64) bool {
	switch c.code[f] {
	case colNodeType:
		if v >= c.types {
			return false
		}
		c.nodeType[n] = uint8(v)
	case colNodeName:
		if v > 1<<32-1 {
			return false
		}
		c.nodeName[n] = uint32(v)
	case colNodeID:
		if v > 1<<32-1 {
			return false
		}
		c.nodeID[n] = uint32(v)
	case colNodeSize:
		if v > 1<<32-1 {
			return false
		}
		c.nodeSize[n] = uint32(v)
	case colNodeEdges:
		if v > 1<<32-1 {
			return false
		}
		c.firstEdge[n+1] = uint32(v)
	case colNodeTrace:
		if v > 1<<32-1 {
			return false
		}
		c.trace[n] = uint32(v)
	case colNodeDetach:
		if v > 255 {
			return false
		}
		if v != 0 {
			// The column is fresh, zeroed memory: a page only zeros are
			// written to is never faulted in, and Node.js writes 0 for
			// every node (it has no DOM), which saves the column's
			// memory, a byte a node (14 MB on a 1 GB snapshot).
			c.detach[n] = uint8(v)
		}
	case colEdgeType:
		if v >= c.types {
			return false
		}
		c.edgeType[n] = uint8(v)
	case colEdgeName:
		if v > 1<<32-1 {
			return false
		}
		c.edgeName[n] = uint32(v)
	case colEdgeTo:
		q, ok := c.toNode(v)
		if !ok {
			return false
		}
		c.edgeTo[n] = q
	}
	return true
}

// toNode turns a to_node value, an offset into the nodes array, into a
// node index, checking it is the start of a node. Division by a constant
// compiles to a multiplication, as in edgeSink.put.
func (c *columns) toNode(v uint64) (int32, bool) {
	var q, r uint64
	switch c.nodeF {
	case 7:
		q, r = v/7, v%7
	case 6:
		q, r = v/6, v%6
	default:
		q, r = v/c.nodeF, v%c.nodeF
	}
	return int32(q), r == 0 && q < c.nodes
}

// digits8 parses the decimal digits at the start of the 8 bytes in x
// (little-endian: the first byte lowest): it returns their value and
// count, 8 when all are digits. Subtracting '0' from every byte at once
// borrows across bytes only above the first non-digit, whose own byte
// then has its top bit set, as a byte above '9' gets by adding 0x76.
func digits8(x uint64) (v uint64, nd int) {
	x -= 0x3030303030303030
	nd = bits.TrailingZeros64(((x+0x7676767676767676)|x)&0x8080808080808080) / 8
	x <<= 8 * (8 - nd)
	x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
	x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
	x = (x*10000 + x>>32) & 0xFFFFFFFF
	return x, nd
}

// Record layouts with a loop of their own in parseColumns.
const (
	layoutNone  = iota
	layoutEdges // type, name_or_index, to_node
	layoutNodes // type, name, id, self_size, edge_count, then up to three of trace_node_id, detachedness and ignored fields
)

// layout returns c's record layout.
func (c *columns) layout() int {
	code := c.code
	switch {
	case len(code) == 3 && code[0] == colEdgeType && code[1] == colEdgeName && code[2] == colEdgeTo:
		return layoutEdges
	case len(code) >= 5 && len(code) <= maxRecord && code[0] == colNodeType && code[1] == colNodeName &&
		code[2] == colNodeID && code[3] == colNodeSize && code[4] == colNodeEdges:
		for _, x := range code[5:] {
			if x != colSkip && x != colNodeTrace && x != colNodeDetach {
				return layoutNone
			}
		}
		return layoutNodes
	}
	return layoutNone
}

// maxRecord is the most fields a record loop reads.
const maxRecord = 8

// numberRoom is the most bytes a number the record loops take can span
// with its separator: 16 digits, a newline and a comma, and the 8 bytes
// digits8 reads past the first 8 digits.
const numberRoom = 16 + 2 + 8

// pow10 holds 10^i for the digits of a number's second 8-byte group.
var pow10 = [8]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000}

// record parses the next len(v) numbers of b from i into v, each ending
// at its separator (a comma, a newline before it at most); b must have
// numberRoom bytes per number from i. It returns where the next number
// starts, or -1 at anything else, including numbers of 16 digits or more
// (the general loop takes those).
//
// Numbers of up to 7 digits, nearly all of them, take one 8-byte load:
// the byte after the digits is the separator, read from the loaded word,
// so the next number's position depends on that load alone and the
// conversion of the digits overlaps the next number's; a single digit
// followed by a comma (a type, a zero trace node or detachedness) skips
// the conversion.
func record(b []byte, i int, v []uint64) int {
	for k := range v {
		raw := binary.LittleEndian.Uint64(b[i:])
		if d := raw&0xFF - '0'; d <= 9 && raw>>8&0xFF == ',' {
			v[k] = d
			i += 2
			continue
		}
		x := raw - 0x3030303030303030
		m := ((x + 0x7676767676767676) | x) & 0x8080808080808080
		if m == 0 {
			// 8 digits or more.
			y, nd2 := digits8(binary.LittleEndian.Uint64(b[i+8:]))
			if nd2 == 8 {
				return -1
			}
			hi, _ := digits8(raw)
			v[k] = hi*pow10[nd2] + y
			i += 8 + nd2
			if b[i] == '\n' {
				i++
			}
			if b[i] != ',' {
				return -1
			}
			i++
			continue
		}
		nd := bits.TrailingZeros64(m) / 8
		sep := byte(raw >> (8 * nd))
		x <<= 8 * (8 - nd)
		x = (x*10 + x>>8) & 0x00FF00FF00FF00FF
		x = (x*100 + x>>16) & 0x0000FFFF0000FFFF
		v[k] = (x*10000 + x>>32) & 0xFFFFFFFF
		switch {
		case nd == 0:
			return -1
		case sep == ',':
			i += nd + 1
		case sep == '\n' && b[i+nd+1] == ',':
			i += nd + 2
		default:
			return -1
		}
	}
	return i
}

// edgeRecords stores whole edge records from b[i:], record n on, while b
// has room for one, and returns where it stopped (parseColumns): at the
// block's last records, or at one it does not handle, which the general
// loop then parses (and refuses, if it is wrong).
func (c *columns) edgeRecords(b []byte, i int, n, count uint64) (int, uint64, uint64) {
	var v [3]uint64
	for i+3*numberRoom <= len(b) {
		next := record(b, i, v[:])
		q, ok := c.toNode(v[2])
		if next < 0 || v[0] >= c.types || v[1] > 1<<32-1 || !ok {
			return i, n, count
		}
		c.edgeType[n] = uint8(v[0])
		c.edgeName[n] = uint32(v[1])
		c.edgeTo[n] = q
		i = next
		n++
		count += 3
	}
	return i, n, count
}

// nodeRecords is edgeRecords for node records (layoutNodes).
func (c *columns) nodeRecords(b []byte, i int, n, count uint64) (int, uint64, uint64) {
	var buf [maxRecord]uint64
	v := buf[:c.fields]
	room := int(c.fields) * numberRoom
	for i+room <= len(b) {
		next := record(b, i, v)
		if next < 0 || v[0] >= c.types || v[1]|v[2]|v[3]|v[4] > 1<<32-1 {
			return i, n, count
		}
		for f := 5; f < len(v); f++ {
			if c.code[f] != colSkip && !c.store(uint64(f), n, v[f]) {
				// The general loop redoes the record and fails there.
				return i, n, count
			}
		}
		c.nodeType[n] = uint8(v[0])
		c.nodeName[n] = uint32(v[1])
		c.nodeID[n] = uint32(v[2])
		c.nodeSize[n] = uint32(v[3])
		c.firstEdge[n+1] = uint32(v[4])
		i = next
		n++
		count += c.fields
	}
	return i, n, count
}
