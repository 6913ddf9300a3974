package sqlite

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/zstd"
	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// heapx_packed (docs/format.md 6.5) holds the model's big columns as
// little-endian arrays, next to the rows they are made from, in a file
// written with analysis results: reading 20 million rows through SQLite
// took 5 s on 4M nodes / 12M edges, twice re-analysing the original
// dump, while the same columns as blobs are a copy. The rows stay the
// format; the blobs are a cache of them, trusted only while the header's
// counts match the tables' and dropped by triggers when any row of a
// table they derive from changes.

// packedVersion is the layout of heapx_packed this package writes: 3,
// each part a zstd frame of the column's bytes. Layout 2, the same parts
// uncompressed, is still read (files written before 2026-11-25); a reader
// ignores a table of any other version and reads the rows.
const packedVersion = 3

// packedRawVersion is layout 2: the parts are the column's bytes.
const packedRawVersion = 2

// packedPart caps one blob: columns are cut into parts well below
// SQLite's 1 GB limit on a value.
const packedPart = 16 << 20

// packedSources are the tables heapx_packed is made from: a change to any
// of them empties it.
var packedSources = []string{"metadata", "strings", "node_types", "edge_types", "node", "edge", "v8_location", "heapx_result"}

// packedSchema creates the table and its triggers, one statement each.
func packedSchema() []string {
	out := []string{"CREATE TABLE heapx_packed (name TEXT NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (name, part))"}
	for _, t := range packedSources {
		for _, op := range []string{"INSERT", "UPDATE", "DELETE"} {
			out = append(out, fmt.Sprintf("CREATE TRIGGER heapx_packed_%s_%s AFTER %s ON %s BEGIN DELETE FROM heapx_packed; END", t, strings.ToLower(op), op, t))
		}
	}
	return out
}

// Header fields, in order: uint64 each.
const (
	hVersion    = iota
	hNodes      // node rows
	hEdges      // edge rows (heapx writes no edges to small integers)
	hStrings    // string rows
	hLocations  // v8_location rows
	hRoot       // the root's node index
	hTraceIDs   // 1 if node.v8_trace_node_id is present
	hDetached   // 1 if node.v8_detachedness is present
	hScripts    // 1 if location.script is present
	hResults    // 1 if the result.* columns are present
	hTextBytes  // bytes of string.data
	headerWords // the header's length
)

// asBytes views a column as its bytes, which are little-endian on the
// machines heapx runs on (checked by littleEndian).
func asBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// littleEndian reports whether columns can be copied to and from the
// blobs as they are; elsewhere the cache is neither written nor read.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// packedColumns lists the columns of g (and res, if not nil) by their
// names in heapx_packed, with a header describing them.
func packedColumns(g *model.Graph, res *model.Results) map[string][]byte {
	flag := func(b bool) uint64 {
		if b {
			return 1
		}
		return 0
	}
	h := make([]uint64, headerWords)
	h[hVersion], h[hNodes], h[hEdges] = packedVersion, uint64(g.NumNodes()), uint64(g.NumEdges())
	h[hStrings], h[hLocations], h[hRoot] = uint64(g.Strings.Len()), uint64(len(g.Locations)), uint64(g.Root)
	h[hTraceIDs], h[hDetached], h[hScripts], h[hResults] = flag(g.TraceNodeID != nil), flag(g.Detachedness != nil), flag(g.LocationScripts != nil), flag(res != nil)
	text, lens := make([]byte, 0, g.Strings.Bytes()), make([]uint32, g.Strings.Len())
	for i := range lens {
		v := g.Strings.At(model.StringID(i))
		text, lens[i] = append(text, v...), uint32(len(v))
	}
	h[hTextBytes] = uint64(len(text))
	cols := map[string][]byte{
		"string.data":     text,
		"string.length":   asBytes(lens),
		"header":          asBytes(h),
		"node.identifier": asBytes(g.Nodes.ID.Slice()), // the format's 8 bytes a value
		"node.type":       asBytes(g.Nodes.Type),
		"node.name":       asBytes(g.Nodes.Name),
		"node.self_size":  asBytes(g.Nodes.Size.Slice()),
		"node.first_edge": asBytes(g.Nodes.FirstEdge),
		"edge.type":       asBytes(g.Edges.Type),
		"edge.name":       asBytes(g.Edges.Name),
		"edge.to":         asBytes(g.Edges.To),
		"location":        asBytes(g.Locations),
	}
	if g.TraceNodeID != nil {
		cols["node.v8_trace_node_id"] = asBytes(g.TraceNodeID)
	}
	if g.Detachedness != nil {
		cols["node.v8_detachedness"] = asBytes(g.Detachedness)
	}
	if g.LocationScripts != nil {
		cols["location.script"] = asBytes(g.LocationScripts)
	}
	if res != nil {
		cols["result.shallow_size"] = asBytes(res.Shallow)
		cols["result.retained_size"] = asBytes(res.Retained)
		cols["result.dominator"] = asBytes(res.Dominator)
		cols["result.distance"] = asBytes(res.Distance)
	}
	return cols
}

// packedBlob is one row of heapx_packed.
type packedBlob struct {
	name string
	part int
	data []byte
}

// compressPacked cuts the columns of g and res into parts and compresses
// each (layout 3), the header excepted. zstd's fastest level shrank the
// columns of the synthetic 300 MB snapshot 6.2 times (333 MB to 53 MB,
// from 27 % of the file to 5 %), and inflating them costs a reader about
// what the pager's copies of the raw bytes did (docs/benchmarks.md). The
// writer runs it on the other core while the rows go in.
func compressPacked(g *model.Graph, res *model.Results) ([]packedBlob, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	var out []packedBlob
	// Each part is compressed into one reused buffer and copied out at its
	// size: parts compress 4-8 times, and capacity reserved per part would
	// stay allocated until the blobs are written (a quarter of each part
	// made the 300 MB snapshot's convert peak at 625 MB instead of 562).
	scratch := make([]byte, 0, packedPart/2)
	for name, b := range packedColumns(g, res) {
		if name == "header" {
			out = append(out, packedBlob{name, 0, b})
			continue
		}
		for part := 0; part == 0 || len(b) > 0; part++ {
			k := min(len(b), packedPart)
			var z []byte
			if k > 0 {
				scratch = enc.EncodeAll(b[:k], scratch[:0])
				z = append([]byte(nil), scratch...)
			}
			out = append(out, packedBlob{name, part, z})
			b = b[k:]
		}
	}
	return out, nil
}

// packed writes heapx_packed and its triggers, after every row is in,
// from the blobs compressPacked made meanwhile.
func (w *writer) packed(blobs <-chan packedResult) error {
	if blobs == nil {
		return nil
	}
	got := <-blobs
	if got.err != nil {
		return got.err
	}
	for _, q := range packedSchema() {
		if err := exec(w.conn, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	st, err := w.conn.Prepare("INSERT INTO heapx_packed (name, part, data) VALUES (?, ?, ?)")
	if err != nil {
		return err
	}
	defer st.Finalize()
	for _, b := range got.blobs {
		st.BindText(1, b.name)
		st.BindInt64(2, int64(b.part))
		st.BindBytes(3, b.data)
		if _, err := st.Step(); err != nil {
			return err
		}
		if err := st.Reset(); err != nil {
			return err
		}
	}
	return nil
}

// packedResult is what compressPacked hands the writer.
type packedResult struct {
	blobs []packedBlob
	err   error
}

// startPacked compresses the packed columns in the background when the
// file gets heapx_packed, and returns where the result will come (nil:
// no cache).
func (w *writer) startPacked() <-chan packedResult {
	if w.res == nil || !littleEndian || w.opt.NoPacked {
		return nil
	}
	ch := make(chan packedResult, 1)
	go func() {
		blobs, err := compressPacked(w.g, w.res)
		ch <- packedResult{blobs, err}
	}()
	return ch
}

// packed reads strings, nodes, edges, locations and (if asked for)
// results from heapx_packed, when the file has it and it agrees with the
// tables' counts; ok=false sends the reader to the rows.
func (r *reader) packed() (ok bool, err error) {
	if _, has := r.tables["heapx_packed"]; !has || !littleEndian {
		return false, nil
	}
	r.section = "heapx_packed"
	// The header first: it says what to expect.
	h := make([]uint64, headerWords)
	var hn int
	err = query(r.conn, "SELECT data FROM heapx_packed WHERE name = 'header' AND part = 0", func(st *sqlite.Stmt) error {
		if st.ColumnLen(0) == len(asBytes(h)) {
			hn = st.ColumnBytes(0, asBytes(h))
		}
		return nil
	})
	if err != nil || hn == 0 || h[hVersion] != packedVersion && h[hVersion] != packedRawVersion {
		return false, err
	}
	compressed := h[hVersion] == packedVersion
	var locRows, resRows int64
	count := func(table string, n *int64) error {
		if _, has := r.tables[table]; !has {
			return nil
		}
		return query(r.conn, "SELECT count(*) FROM "+quoteIdent(table), func(st *sqlite.Stmt) error { *n = st.ColumnInt64(0); return nil })
	}
	if err := count("v8_location", &locRows); err != nil {
		return false, err
	}
	if err := count("heapx_result", &resRows); err != nil {
		return false, err
	}
	// The string positions in the columns are stringids only when those
	// are 0..n-1, as heapx writes them.
	var minString, maxString int64
	if err := query(r.conn, "SELECT ifnull(min(stringid), 0), ifnull(max(stringid), -1) FROM strings", func(st *sqlite.Stmt) error {
		minString, maxString = st.ColumnInt64(0), st.ColumnInt64(1)
		return nil
	}); err != nil {
		return false, err
	}
	results := h[hResults] == 1 && resRows == int64(h[hNodes])
	if int64(h[hNodes]) != r.nNodes || int64(h[hEdges]) != r.nEdges || int64(h[hStrings]) != r.nStrings ||
		int64(h[hLocations]) != locRows || h[hNodes] > 1<<31-1 || h[hResults] == 1 && !results ||
		minString != 0 || maxString != r.nStrings-1 || h[hTextBytes] > uint64(r.size) {
		return false, nil
	}
	// Columns are filled in a graph of their own and taken only when all
	// are complete.
	var p model.Graph
	n, m := int(h[hNodes]), int(h[hEdges])
	// The blobs hold 8-byte ids and sizes, which become the model's
	// columns once read.
	ids, selfSizes := model.Alloc[uint64](n), model.Alloc[uint64](n)
	p.Nodes = model.Nodes{Type: model.Alloc[uint8](n), Name: model.Alloc[model.StringID](n), FirstEdge: model.Alloc[uint32](n + 1)}
	p.Edges = model.Edges{Type: model.Alloc[uint8](m), Name: model.Alloc[uint32](m), To: model.Alloc[model.NodeIndex](m)}
	p.Locations = model.Alloc[model.Location](int(h[hLocations]))
	text, lens := model.Alloc[byte](int(h[hTextBytes])), model.Alloc[uint32](int(h[hStrings]))
	want := map[string][]byte{
		"string.data": text, "string.length": asBytes(lens),
		"node.identifier": asBytes(ids), "node.type": asBytes(p.Nodes.Type), "node.name": asBytes(p.Nodes.Name),
		"node.self_size": asBytes(selfSizes), "node.first_edge": asBytes(p.Nodes.FirstEdge),
		"edge.type": asBytes(p.Edges.Type), "edge.name": asBytes(p.Edges.Name), "edge.to": asBytes(p.Edges.To),
		"location": asBytes(p.Locations),
	}
	if h[hTraceIDs] == 1 {
		p.TraceNodeID = model.Alloc[uint32](n)
		want["node.v8_trace_node_id"] = asBytes(p.TraceNodeID)
	}
	if h[hDetached] == 1 {
		p.Detachedness = model.Alloc[uint8](n)
		want["node.v8_detachedness"] = asBytes(p.Detachedness)
	}
	if h[hScripts] == 1 {
		p.LocationScripts = model.Alloc[model.NodeIndex](len(p.Locations))
		want["location.script"] = asBytes(p.LocationScripts)
	}
	var res model.Results
	if results && r.opt.Results != nil {
		res = model.Results{Policy: r.meta[exchange.KeyAnalysis], Shallow: model.Alloc[uint64](n), Retained: model.Alloc[uint64](n),
			Dominator: model.Alloc[model.NodeIndex](n), Distance: model.Alloc[int32](n)}
		want["result.shallow_size"], want["result.retained_size"] = asBytes(res.Shallow), asBytes(res.Retained)
		want["result.dominator"], want["result.distance"] = asBytes(res.Dominator), asBytes(res.Distance)
	}
	// Two connections read half the bytes each: a blob comes through
	// SQLite's pager a page (a read system call) at a time, which is most
	// of the time, and both are faster than one at reading 330 MB.
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return len(want[names[i]]) > len(want[names[j]]) })
	var halves [2][]string
	var sizes [2]int
	for _, name := range names {
		k := 0
		if sizes[1] < sizes[0] {
			k = 1
		}
		halves[k] = append(halves[k], name)
		sizes[k] += len(want[name])
	}
	var complete [2]bool
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := OpenReadOnly(r.file)
		if err != nil {
			errs[1] = err
			return
		}
		defer c.Close()
		complete[1], errs[1] = readParts(c, halves[1], want, compressed)
	})
	complete[0], errs[0] = readParts(r.conn, halves[0], want, compressed)
	wg.Wait()
	for k := range errs {
		if errs[k] != nil {
			return false, errs[k]
		}
		if !complete[k] {
			return false, nil // not what the header promised: the rows are the truth
		}
	}
	// The root index is the header's word: it must be a node, the one
	// heapx:root names (a 2^32+2 would become node 2 as an index).
	if h[hRoot] >= uint64(max(n, 1)) {
		return false, nil
	}
	if id, ok := r.meta[exchange.KeyRoot]; ok && n > 0 && id != strconv.FormatUint(ids[h[hRoot]], 10) {
		return false, nil
	}
	p.Nodes.ID, p.Nodes.Size = model.NewUint64s(ids...), model.NewUint64s(selfSizes...)
	g := r.g
	if g.Strings.Len() != 0 || !g.Strings.AddBlock(text, lens) {
		return false, nil
	}
	r.strs = idIndex{dense: true, n: len(lens)}
	g.Nodes, g.Edges, g.Locations, g.LocationScripts = p.Nodes, p.Edges, p.Locations, p.LocationScripts
	g.TraceNodeID, g.Detachedness = p.TraceNodeID, p.Detachedness
	g.Root = model.NodeIndex(h[hRoot])
	r.rootSeen = true
	if res.Shallow != nil {
		if err := res.Check(g); err != nil {
			return false, r.fail("%v", err)
		}
		*r.opt.Results = res
	}
	r.tickN(r.total)
	return true, nil
}

// readParts fills the named columns from their parts, in order, and
// reports whether each got exactly its length. The parts are read as
// blobs (sqlite3_blob_read, through a small buffer) rather than as column
// values: a column value is first copied whole into memory SQLite
// allocates, and those fresh pages' faults made reading 320 MB take 0.84 s
// against 0.19 s this way. Compressed parts (layout 3) are read into one
// reused buffer and inflated into their place in the column: every part
// but a column's last holds packedPart bytes, so where each goes is known
// before it is inflated, and a part that inflates to any other length
// sends the reader to the rows.
func readParts(conn *sqlite.Conn, names []string, want map[string][]byte, compressed bool) (bool, error) {
	quoted := make([]string, len(names))
	for i, name := range names {
		quoted[i] = quoteString(name)
	}
	type part struct {
		row  int64
		size int // stored bytes
		dst  []byte
	}
	var parts []part
	filled := map[string]int{}
	next := map[string]int64{}
	// length() counts bytes only of a blob (of text, characters), so a
	// part of another type is not used.
	err := query(conn, "SELECT rowid, name, part, length(data), typeof(data) FROM heapx_packed WHERE name IN ("+strings.Join(quoted, ", ")+") ORDER BY name, part", func(st *sqlite.Stmt) error {
		name := st.ColumnText(1)
		dst, at, size := want[name], filled[name], int(st.ColumnInt64(3))
		n := size
		if compressed {
			// zstd stores what does not compress in raw blocks: 3 bytes
			// per 128 KiB block and a frame header of at most 18, so a
			// part larger than this is not one heapx wrote, and is not
			// read into memory.
			n = min(len(dst)-at, packedPart)
			if size > n+n/64+64 {
				return errStopped
			}
		}
		if st.ColumnInt64(2) != next[name] || n > len(dst)-at || st.ColumnText(4) != "blob" || n == 0 && at > 0 {
			return errStopped
		}
		next[name]++
		filled[name] = at + n
		parts = append(parts, part{st.ColumnInt64(0), size, dst[at : at+n]})
		return nil
	})
	if err == errStopped {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, name := range names {
		if filled[name] != len(want[name]) {
			return false, nil
		}
	}
	var dec *zstd.Decoder
	var buf []byte
	if compressed {
		dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true),
			zstd.WithDecoderMaxMemory(packedPart))
		if err != nil {
			return false, err
		}
		defer dec.Close()
	}
	for _, p := range parts {
		if compressed && p.size == 0 {
			if len(p.dst) != 0 {
				return false, nil
			}
			continue
		}
		b, err := conn.OpenBlob("main", "heapx_packed", "data", p.row, false)
		if err != nil {
			return false, err
		}
		if !compressed {
			_, err = io.ReadFull(b, p.dst)
			b.Close()
			if err != nil {
				return false, err
			}
			continue
		}
		if cap(buf) < p.size {
			buf = make([]byte, p.size)
		}
		_, err = io.ReadFull(b, buf[:p.size])
		b.Close()
		if err != nil {
			return false, err
		}
		out, err := dec.DecodeAll(buf[:p.size], p.dst[:0:len(p.dst)])
		if err != nil || len(out) != len(p.dst) || len(out) > 0 && &out[0] != &p.dst[0] {
			return false, nil // damaged or not what the header promised: the rows are the truth
		}
	}
	return true, nil
}
