package jsonl

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/heapx/heapx/model"
)

// Node and edge lines are nearly all of a file (16 of 17 million lines in
// a 600 MB one) and parsing them was the reader's bound, on one core. Once
// the header is read, the rest of the input goes through a pipeline: a
// producer cuts it into line-aligned blocks, workers pre-parse the node and
// edge lines of each block into records (raw numbers, no reader state),
// and the reader takes the blocks back in order, applying the records to
// the columns and reading every other line itself, as before. Whatever the
// fast parse does not accept (whitespace, an unusual layout, a value out of
// range, a syntax error) is left as a plain line for the reader's own
// parser, so the result and the error messages are the sequential reader's.

// blockSize is the pipeline's block. At 1 MB a block holds ~30,000 lines:
// enough to make the hand-offs rare, small enough to keep a few in flight
// in cache-friendly memory.
const blockSize = 1 << 20

// Item kinds: what a stretch of a block is.
const (
	itemLine  = iota // one line for the reader's parser
	itemNodes        // a run of pre-parsed node lines
	itemEdges        // a run of pre-parsed edge lines
)

// item is a stretch of a block. For itemLine, line is its line number in
// the block (from 0) and [from, to) its bytes; for runs, [from, to) are
// indexes into the chunk's nodes or edges.
type item struct {
	kind     uint8
	line     uint32
	from, to uint32
}

// edgeRec is one edge line with heapx's layout (from, type, name, to),
// parsed.
type edgeRec struct {
	from, typ, name, to uint64
	line, off           uint32 // line number and byte offset in the block
	// looked: a worker looked the endpoints up in the frozen id map, and
	// fromIx and toIx are their indexes (-1: no such node yet).
	fromIx, toIx int32
	looked       bool
}

// chunk is one block and what the workers made of it.
type chunk struct {
	blk   []byte
	lines int64 // lines in blk
	items []item
	nodes []nodeRec
	edges []edgeRec
	err   error         // a read error after blk, reported once blk is read
	done  chan struct{} // receives when the worker is done with it
}

// minRecord is the shortest pre-parsed line, ["edge",0,0,0,0] and a
// newline: a block holds at most blockSize/minRecord records.
const minRecord = 16

// newChunk allocates a chunk whose record slices never need to grow for a
// block of blockSize: growing them was a tenth of the parse, mostly first
// touches of fresh memory.
func newChunk() *chunk {
	n := blockSize / minRecord
	return &chunk{
		blk:   model.Alloc[byte](blockSize)[:0],
		items: model.Alloc[item](n)[:0],
		nodes: model.Alloc[nodeRec](n)[:0],
		edges: model.Alloc[edgeRec](n)[:0],
		done:  make(chan struct{}, 1),
	}
}

// plan is what the workers parse: fixed when the pipeline starts, from the
// declarations read before (record types are declared before their
// records, and only once).
type plan struct {
	node []uint8 // node field roles; nil: node lines are not pre-parsed
	edge bool    // edge lines are pre-parsed (heapx's layout only)
}

type pipeline struct {
	plan  plan
	jobs  chan *chunk
	order chan *chunk // chunks in input order
	free  chan *chunk
	stop  chan struct{}

	// ids, while not nil, is the id map frozen: every node read so far
	// is in it and none is being added, so the workers look edge
	// endpoints up themselves, on every core, instead of the resolver
	// goroutine alone (a cache miss per edge). The reader freezes it at
	// the first edges and thaws it before it adds a node again; a worker
	// holds mu for reading while it uses ids.
	mu      sync.RWMutex
	ids     *model.IDMap
	freezes int
}

// maxFreezes bounds the freezes of one read: each waits for the resolver,
// which a file alternating nodes and edges would otherwise do per block.
const maxFreezes = 4

func (p *pipeline) freeze(ids *model.IDMap) {
	p.mu.Lock()
	p.ids = ids
	p.mu.Unlock()
	p.freezes++
}

// thaw waits for the workers to stop using the id map.
func (p *pipeline) thaw() {
	if p.ids != nil {
		p.mu.Lock()
		p.ids = nil
		p.mu.Unlock()
	}
}

// bulkAhead reports whether the next line is a node or edge record the
// pipeline can pre-parse: the point to switch to it.
func (rd *reader) bulkAhead() bool {
	l := rd.buf[rd.pos:rd.end]
	return rd.nodeD != nil && bytes.HasPrefix(l, []byte(`["node",`)) ||
		rd.edgeD != nil && bytes.HasPrefix(l, []byte(`["edge",`))
}

// runParallel reads the rest of the input through the pipeline.
func (rd *reader) runParallel() error {
	var pl plan
	if d := rd.nodeD; d != nil {
		pl.node = d.roles
	}
	if d := rd.edgeD; d != nil && d.plain {
		pl.edge = true
	}
	workers := runtime.GOMAXPROCS(0)
	p := &pipeline{
		plan:  pl,
		jobs:  make(chan *chunk, workers),
		order: make(chan *chunk, 2*workers+2),
		free:  make(chan *chunk, 2*workers+4),
		stop:  make(chan struct{}),
	}
	defer func() {
		close(p.stop)
		// The producer reads the input: it must be done before the
		// read returns and the input is closed.
		for range p.order {
		}
	}()
	for i := 0; i < cap(p.free); i++ {
		p.free <- newChunk()
	}
	for i := 0; i < workers; i++ {
		go p.work()
	}
	rd.pipe = p
	defer func() { rd.pipe = nil }()
	seed := rd.buf[rd.pos:rd.end]
	go p.produce(rd.src, seed, rd.eof)
	for ch := range p.order {
		<-ch.done
		if err := rd.apply(ch); err != nil {
			return err
		}
		if ch.err != nil {
			rd.line++
			if ch.err == rd.src.Err() {
				return rd.inputError()
			}
			return rd.errorf("%v", ch.err)
		}
		p.free <- ch
	}
	return nil
}

// produce cuts the input into blocks that end at a newline and hands them
// to the workers and, in order, to the reader. seed is input read already.
func (p *pipeline) produce(src io.Reader, seed []byte, eof bool) {
	defer close(p.jobs)
	defer close(p.order)
	cur := p.get()
	if cur == nil {
		return
	}
	cur.blk = append(cur.blk[:0], seed...)
	for {
		var err error
		cut := -1
		for {
			if !eof && len(cur.blk) < cap(cur.blk) {
				var n int
				n, eof, err = fill(src, cur.blk[len(cur.blk):cap(cur.blk)])
				cur.blk = cur.blk[:len(cur.blk)+n]
			}
			if cut = bytes.LastIndexByte(cur.blk, '\n'); cut >= 0 || eof || err != nil {
				break
			}
			// A line longer than the block: grow it, up to a cap that
			// keeps a file without newlines from taking all memory.
			if cap(cur.blk) >= maxLine {
				err = fmt.Errorf("line longer than %d bytes (is this a JSON Lines file?)", maxLine)
				break
			}
			cur.blk = append(make([]byte, 0, 2*cap(cur.blk)), cur.blk...)
		}
		if eof && err == nil {
			cut = len(cur.blk) - 1 // the last line need not end with a newline
		}
		var next *chunk
		if !eof && err == nil {
			if next = p.get(); next == nil {
				return
			}
			next.blk = append(next.blk[:0], cur.blk[cut+1:]...)
		}
		cur.blk, cur.err = cur.blk[:cut+1], err
		if !p.send(cur) || next == nil {
			return
		}
		cur = next
	}
}

// get takes a free chunk; nil if the reader stopped.
func (p *pipeline) get() *chunk {
	select {
	case ch := <-p.free:
		return ch
	case <-p.stop:
		return nil
	}
}

// send queues ch for a worker and then for the reader, so every chunk the
// reader waits for is being worked on.
func (p *pipeline) send(ch *chunk) bool {
	select {
	case p.jobs <- ch:
	case <-p.stop:
		return false
	}
	select {
	case p.order <- ch:
		return true
	case <-p.stop:
		return false
	}
}

func (p *pipeline) work() {
	for ch := range p.jobs {
		p.parse(ch)
		ch.done <- struct{}{}
	}
}

// parse splits a block into runs of pre-parsed records and other lines.
func (p *pipeline) parse(ch *chunk) {
	b := ch.blk
	ch.items, ch.nodes, ch.edges = ch.items[:0], ch.nodes[:0], ch.edges[:0]
	p.mu.RLock()
	defer p.mu.RUnlock()
	ids := p.ids
	var line uint32
	for i := 0; i < len(b); line++ {
		if p.plan.node != nil && bytes.HasPrefix(b[i:], []byte(`["node"`)) {
			if r, next, ok := p.node(b, i+len(`["node"`)); ok {
				r.line, r.off = line, uint32(i)
				ch.nodes = append(ch.nodes, r)
				ch.run(itemNodes, len(ch.nodes))
				i = next
				continue
			}
		} else if p.plan.edge && bytes.HasPrefix(b[i:], []byte(`["edge"`)) {
			if r, next, ok := parseEdge(b, i+len(`["edge"`)); ok {
				r.line, r.off = line, uint32(i)
				ch.edges = append(ch.edges, r)
				ch.run(itemEdges, len(ch.edges))
				i = next
				continue
			}
		}
		end := lineEnd(b, i)
		ch.items = append(ch.items, item{kind: itemLine, line: line, from: uint32(i), to: uint32(end)})
		i = end + 1
	}
	ch.lines = int64(line)
	if ids == nil {
		return
	}
	// Lookups in a tight loop of their own: between the parsing of
	// lines, each would wait for its cache miss; here the CPU overlaps
	// several (as in the resolver).
	lastFrom, lastIx := uint64(0), int32(-1) // edges come grouped by source
	for k := range ch.edges {
		r := &ch.edges[k]
		if r.from != lastFrom || lastIx < 0 {
			lastFrom, lastIx = r.from, ids.Get(r.from)
		}
		r.fromIx, r.toIx, r.looked = lastIx, ids.Get(r.to), true
	}
}

// run extends the last run of kind to end at record n, or starts one.
func (ch *chunk) run(kind uint8, n int) {
	if k := len(ch.items) - 1; k >= 0 && ch.items[k].kind == kind {
		ch.items[k].to = uint32(n)
		return
	}
	ch.items = append(ch.items, item{kind: kind, from: uint32(n - 1), to: uint32(n)})
}

// lineEnd is the index of the newline ending the line at b[i:], or len(b).
func lineEnd(b []byte, i int) int {
	if k := bytes.IndexByte(b[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(b)
}

// The fast parse accepts only compact lines: no whitespace, integers
// without sign (but for distances), leading zeros or more than 19 digits.
// It reports ok=false for anything else, leaving the line to the reader.

// num parses an unsigned integer at b[i:], returning the index after it.
func num(b []byte, i int) (uint64, int, bool) {
	v, j := digits(b, i)
	n := j - i
	ok := n > 0 && (n == 1 || b[i] != '0') && (j == len(b) || b[j]-'0' > 9)
	return v, j, ok
}

// null reports whether b[i:] starts with null.
func null(b []byte, i int) bool {
	return len(b)-i >= 4 && string(b[i:i+4]) == "null"
}

// lineDone checks that the record ends at b[i] and returns the start of
// the next line.
func lineDone(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != ']' {
		return 0, false
	}
	i++
	if i == len(b) {
		return i, true
	}
	return i + 1, b[i] == '\n'
}

// node parses the fields of a node line after its tag.
func (p *pipeline) node(b []byte, i int) (r nodeRec, next int, ok bool) {
	for _, role := range p.plan.node {
		if i >= len(b) || b[i] != ',' {
			return r, 0, false
		}
		i++
		var v uint64
		switch role {
		case fID:
			r.id, i, ok = num(b, i)
		case fType:
			r.typ, i, ok = num(b, i)
		case fName:
			r.name, i, ok = num(b, i)
		case fSize:
			r.size, i, ok = num(b, i)
		case fShallow:
			r.shallow, i, ok = num(b, i)
		case fRetained:
			r.retained, i, ok = num(b, i)
		case fDominator:
			if r.domNull = null(b, i); r.domNull {
				i, ok = i+4, true
			} else {
				r.dom, i, ok = num(b, i)
			}
		case fTraceNode:
			if null(b, i) {
				i, ok = i+4, true
			} else {
				v, i, ok = num(b, i)
				ok = ok && v <= 1<<32-1
				r.trace = uint32(v)
			}
		case fDetach:
			if null(b, i) {
				i, ok = i+4, true
			} else {
				v, i, ok = num(b, i)
				ok = ok && v <= 255
				r.det = uint8(v)
			}
		case fDistance:
			neg := i < len(b) && b[i] == '-'
			if neg {
				i++
			}
			v, i, ok = num(b, i)
			if neg {
				ok = ok && v <= 1<<31
				r.dist = int32(-int64(v))
			} else {
				ok = ok && v <= 1<<31-1
				r.dist = int32(v)
			}
		default: // fQuiet, fSkip: an integer or null, not kept
			switch {
			case null(b, i):
				i, ok = i+4, true
			case i < len(b) && b[i] == '-':
				v, i, ok = num(b, i+1)
				ok = ok && v <= 1<<63
			default:
				_, i, ok = num(b, i)
			}
		}
		if !ok {
			return r, 0, false
		}
	}
	next, ok = lineDone(b, i)
	return r, next, ok
}

// parseEdge parses the fields of an edge line with heapx's layout after its
// tag. A null target (an error, or a small integer in another layout) is
// left to the reader.
func parseEdge(b []byte, i int) (r edgeRec, next int, ok bool) {
	for k := 0; k < 4; k++ {
		if i >= len(b) || b[i] != ',' {
			return r, 0, false
		}
		var v uint64
		if v, i, ok = num(b, i+1); !ok {
			return r, 0, false
		}
		switch k {
		case 0:
			r.from = v
		case 1:
			r.typ = v
		case 2:
			r.name = v
		case 3:
			r.to = v
		}
	}
	next, ok = lineDone(b, i)
	return r, next, ok
}

// apply reads a parsed block into the graph, in line order.
func (rd *reader) apply(ch *chunk) error {
	base := rd.line + 1 // the block's first line
	if n := len(ch.blk); n > 0 && ch.blk[n-1] != '\n' {
		rd.cutLine = base + ch.lines - 1 // only the last block can end so
	}
	for _, it := range ch.items {
		var err error
		switch it.kind {
		case itemLine:
			rd.line = base + int64(it.line)
			err = rd.handle(ch.blk[it.from:it.to])
		case itemNodes:
			err = rd.applyNodes(ch, ch.nodes[it.from:it.to], base)
		case itemEdges:
			err = rd.applyEdges(ch, ch.edges[it.from:it.to], base)
		}
		if err != nil {
			return err
		}
	}
	rd.line = base - 1 + ch.lines
	return nil
}

// applyNodes adds pre-parsed nodes. A node whose type is not declared, or
// has subtype fields, goes back to the line parser, which reports the
// error or skips the fields.
func (rd *reader) applyNodes(ch *chunk, recs []nodeRec, base int64) error {
	d := rd.nodeD
	added := int64(0)
	for k := range recs {
		r := &recs[k]
		rd.line = base + int64(r.line)
		typ, ok := rd.nodeTypeOf(r.typ)
		if !ok || len(rd.subFields[typ]) > 0 {
			if err := rd.handle(ch.blk[r.off:lineEnd(ch.blk, int(r.off))]); err != nil {
				return err
			}
			continue
		}
		if err := rd.addNode(r, typ); err != nil {
			return rd.errorf("%v", err)
		}
		added++
	}
	d.count += added
	for _, k := range rd.nodeSkips(d) {
		d.skipped[k] += added
	}
	return nil
}

// nodeSkips lists the node fields a pre-parsed node skips.
func (rd *reader) nodeSkips(d *decl) []int {
	var out []int
	for k, r := range d.roles {
		if r == fSkip {
			out = append(out, k)
		}
	}
	return out
}

// applyEdges adds pre-parsed edges; one of an undeclared type goes back to
// the line parser for its error.
func (rd *reader) applyEdges(ch *chunk, recs []edgeRec, base int64) error {
	d := rd.edgeD
	if p := rd.pipe; p.ids == nil && p.freezes < maxFreezes {
		if err := rd.sync(); err != nil {
			return err
		}
		p.freeze(rd.rs.ids)
	}
	added := int64(0)
	for k := range recs {
		r := &recs[k]
		rd.line = base + int64(r.line)
		typ, ok := rd.edgeTypeOf(r.typ)
		if !ok {
			if err := rd.handle(ch.blk[r.off:lineEnd(ch.blk, int(r.off))]); err != nil {
				return err
			}
			continue
		}
		if err := rd.addEdge(r, typ); err != nil {
			return rd.errorf("%v", err)
		}
		added++
	}
	d.count += added
	return nil
}

// addLooked appends edge m, whose endpoints a worker looked up; one not
// found is resolved at the end, like any reference to a later node.
func (rd *reader) addLooked(r *edgeRec, typ uint8, name uint32, m int) error {
	if rd.toJob != nil && len(rd.toJob.vals) > 0 {
		rd.flushEdges() // a lookup job covers consecutive edges
	}
	if r.fromIx >= 0 {
		rd.lastFrom, rd.lastIdx = r.from, r.fromIx
	} else {
		rd.pend = append(rd.pend, pending{line: rd.line, id: r.from, at: uint32(m), kind: refEdgeFrom})
	}
	if r.toIx < 0 {
		rd.pend = append(rd.pend, pending{line: rd.line, id: r.to, at: uint32(m), kind: refEdgeTo})
	}
	es := &rd.g.Edges
	es.Type = append(es.Type, typ)
	es.Name = append(es.Name, name)
	es.To = append(es.To, r.toIx)
	rd.from = append(rd.from, r.fromIx)
	return nil
}
