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
// the columns and reading every other line itself, as before. Workers and
// reader decode with the same cursor and decoder tables (records.go); a
// line a worker cannot read alone (a syntax error, a type not declared
// yet, subtype fields) is left to the reader, which reads it in its turn
// and reports the error with its line number.

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

type pipeline struct {
	// node and edge are the declarations of the records the workers
	// parse, fixed when the pipeline starts (record types are declared
	// before their records, and only once); nil: not pre-parsed. Workers
	// only read them. Edges are pre-parsed in heapx's own layout only
	// (from, type, name, to; see parse).
	node, edge *decl
	jobs       chan *chunk
	order      chan *chunk // chunks in input order
	free       chan *chunk
	stop       chan struct{}

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
	workers := runtime.GOMAXPROCS(0)
	p := &pipeline{
		node:  rd.nodeD,
		jobs:  make(chan *chunk, workers),
		order: make(chan *chunk, 2*workers+2),
		free:  make(chan *chunk, 2*workers+4),
		stop:  make(chan struct{}),
	}
	if d := rd.edgeD; d != nil && d.plain {
		p.edge = d
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
	var c cursor
	for ch := range p.jobs {
		p.parse(&c, ch)
		ch.done <- struct{}{}
	}
}

// parse splits a block into runs of pre-parsed records and other lines.
func (p *pipeline) parse(c *cursor, ch *chunk) {
	b := ch.blk
	items, nodes, edges := ch.items[:0], ch.nodes[:0], ch.edges[:0]
	p.mu.RLock()
	defer p.mu.RUnlock()
	ids := p.ids
	var line uint32
	for i := 0; i < len(b); line++ {
		var next int
		var ok bool
		switch {
		case p.node != nil && len(b)-i > len(nodeTag) && string(b[i:i+len(nodeTag)]) == nodeTag:
			// Decoded in place: a record of its own would escape to
			// the heap, an allocation per line.
			nodes = append(nodes, nodeRec{})
			r := &nodes[len(nodes)-1]
			c.b, c.i = b[i+len(nodeTag):], 0
			if _, err := decodeFields(c, p.node, &nodeRecord, r, r.num[:], &r.null); err == nil && c.end() == nil {
				r.line, r.off, next, ok = line, uint32(i), i+len(nodeTag)+c.i, true
				items = extendRun(items, itemNodes, len(nodes))
			} else {
				nodes = nodes[:len(nodes)-1]
			}
		case p.edge != nil && len(b)-i > len(edgeTag) && string(b[i:i+len(edgeTag)]) == edgeTag:
			// Only compact lines, each ending right after its ']', as
			// heapx writes them (readRow): which edges the workers look
			// up in the frozen id map, and when it is frozen, decide
			// the order in which a node read twice and dangling
			// references are reported, and that order is the line
			// parser's for every other edge line. Those go to the
			// reader.
			edges = append(edges, edgeRecord.blank)
			r := &edges[len(edges)-1]
			j, isNull, fast := readRow(b, i+len(edgeTag), p.edge.row.fields, r.num[:], false)
			r.null = r.null&^p.edge.row.slots | isNull
			if fast && r.check() == nil && j < len(b) && b[j] == ']' && (j+1 == len(b) || b[j+1] == '\n') {
				r.line, r.off, next, ok = line, uint32(i), min(j+2, len(b)), true
				items = extendRun(items, itemEdges, len(edges))
			} else {
				edges = edges[:len(edges)-1]
			}
		}
		if !ok {
			next = lineEnd(b, i) + 1
			items = append(items, item{kind: itemLine, line: line, from: uint32(i), to: uint32(next - 1)})
		}
		i = next
	}
	ch.items, ch.nodes, ch.edges = items, nodes, edges
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
		if from := r.num[edgeFrom]; from != lastFrom || lastIx < 0 {
			lastFrom, lastIx = from, ids.Get(from)
		}
		r.fromIx, r.toIx, r.looked = lastIx, ids.Get(r.num[edgeTo]), true
	}
}

// The tags of the lines the workers decode, up to the ',' before the first
// field (constants: comparing with one compiles to a few loads).
const nodeTag, edgeTag = `["node"`, `["edge"`

// extendRun extends the last run of kind to end at record n, or starts one.
func extendRun(items []item, kind uint8, n int) []item {
	if k := len(items) - 1; k >= 0 && items[k].kind == kind {
		items[k].to = uint32(n)
		return items
	}
	return append(items, item{kind: kind, from: uint32(n - 1), to: uint32(n)})
}

// blockPos is where a pre-parsed record's line is in its block.
type blockPos struct {
	line, off uint32 // line number (from 0) and byte offset
}

// lineAt is the line of the block that starts at byte off.
func (ch *chunk) lineAt(off uint32) []byte {
	return ch.blk[off:lineEnd(ch.blk, int(off))]
}

// lineEnd is the index of the newline ending the line at b[i:], or len(b).
func lineEnd(b []byte, i int) int {
	if k := bytes.IndexByte(b[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(b)
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

// applyNodes adds pre-parsed nodes. One whose type is not declared, or
// has subtype fields, goes back to the line parser, which reports the
// error or reads the fields.
func (rd *reader) applyNodes(ch *chunk, recs []nodeRec, base int64) error {
	added := int64(0)
	for k := range recs {
		r := &recs[k]
		rd.line = base + int64(r.line)
		typ, ok := rd.nodeTypes.get(r.num[nodeType])
		if !ok || len(rd.subFields[typ]) > 0 {
			if err := rd.handle(ch.lineAt(r.off)); err != nil {
				return err
			}
			continue
		}
		added++
		if err := rd.addNode(r, typ); err != nil {
			return rd.errorf("%v", err)
		}
	}
	rd.nodeD.count += added
	return nil
}

// applyEdges adds pre-parsed edges; one of an undeclared type goes back to
// the line parser for its error.
func (rd *reader) applyEdges(ch *chunk, recs []edgeRec, base int64) error {
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
		typ, ok := rd.edgeTypes.get(r.num[edgeType])
		if !ok {
			if err := rd.handle(ch.lineAt(r.off)); err != nil {
				return err
			}
			continue
		}
		added++
		if err := rd.addEdge(r, typ); err != nil {
			return rd.errorf("%v", err)
		}
	}
	rd.edgeD.count += added
	return nil
}
