package sqlite

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// WriteOptions tune a write.
type WriteOptions struct {
	// Progress, if set, is called now and then with the rows written so
	// far and the total.
	Progress func(done, total int64)
	// Results, if set, are written to heapx_result (docs/format.md 6.3).
	// They must fit the graph.
	Results *model.Results
	// Meta is extra metadata appended after the graph's own (heapx sql
	// records there which input a cached copy was made from).
	Meta []model.KV
	// NoPacked leaves heapx_packed out of a file with results. heapx sql's
	// copies are read only by SQL, never reopened as a dump, and the
	// packed columns were a quarter of such a file (docs/benchmarks.md).
	NoPacked bool
	// Sources are the dumps the graph was read from; Save makes the file
	// no more readable than they are (formats.WriteFileAtomic).
	Sources []string
	// Generator names the program writing, as the file's generator
	// metadata ("" for exchange.DefaultGenerator).
	Generator string
	// NodeFields become extra INTEGER columns of node, named as the
	// format names namespaced columns (":" as "_"; docs/format.md 6).
	NodeFields []formats.NodeField
}

// pageSize is the database page size. 16 KB pages make the bulk insert
// and the index builds measurably faster than SQLite's default 4 KB (fewer
// pages to link and balance; measured 1.45 s against 1.85 s for 5M edge
// rows, and 1.6 s against 2.1 s for an index on them), while a 64 KB page
// gained nothing more and makes each random lookup read more.
// It is a variable so the fuzz test can write a small seed (512-byte pages).
var pageSize = 16384

// cacheKiB is the page cache during a write. Small on purpose: the rows
// go in in key order, so pages are written once and never revisited, and
// the index builds' sorter, whose memory budget follows the cache size,
// sorts runs that fit the CPU caches and merges them from temporary files.
// Measured on 4M nodes / 12M edges, a 2-8 MB cache wrote the file in
// 21-22 s, 32 MB in 29 s, 256 MB in 36 s and 1 GB in 42 s.
const cacheKiB = 4 << 10

// writePragmas are the settings that make the bulk load fast. None of them weakens the result:
// a write goes to a temporary file renamed into place only when complete
// (Save), so SQLite's journal and fsyncs, which protect a database being
// changed in place, would protect nothing here; Save syncs the finished
// file once before the rename.
func writePragmas() []string {
	return []string{
		"PRAGMA page_size = " + strconv.Itoa(pageSize),
		"PRAGMA journal_mode = OFF",
		"PRAGMA synchronous = OFF",
		"PRAGMA locking_mode = EXCLUSIVE",
		"PRAGMA cache_size = -" + strconv.Itoa(cacheKiB),
		"PRAGMA temp_store = FILE",
		"PRAGMA application_id = " + strconv.Itoa(ApplicationID),
	}
}

// Save writes g to a new SQLite file at path, atomically: the database
// is built in a temporary file beside path and renamed over it only once
// it is complete and synced, so an interrupted write never leaves a file
// that looks complete.
func Save(path string, g *model.Graph, opt WriteOptions) error {
	return formats.WriteFileAtomic(path, func(tmp string) error {
		if err := WriteFile(tmp, g, opt); err != nil {
			return err
		}
		return syncFile(tmp)
	}, opt.Sources...)
}

// syncFile flushes a finished file to stable storage before it is renamed
// into place.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteFile writes g as a SQLite database into the file at path, which
// must not exist or be empty. It is not atomic by itself; Save and
// formats.Save are.
func WriteFile(path string, g *model.Graph, opt WriteOptions) (err error) {
	res, err := exchange.Writable(g, opt.Results)
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if err := formats.CheckNodeFields(opt.NodeFields, g.NumNodes()); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		return fmt.Errorf("sqlite: %s is not empty; a dump is written into a new file", path)
	}
	conn, err := openForWrite(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := conn.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	// One transaction for everything: SQLite commits (and, with a
	// journal, syncs) once instead of per statement.
	if err := exec(conn, "BEGIN"); err != nil {
		return err
	}
	w := &writer{conn: conn, g: g, res: res, opt: opt}
	// Progress counts rows inserted and rows indexed: an index build
	// sorts its table, which takes about as long as writing its rows
	// (edge_dest is a third of a write).
	for _, t := range []string{"strings", "node", "edge", "v8_location", "heapx_result"} {
		w.total += w.rows(t)
	}
	for _, ix := range indexSQL {
		w.total += w.rows(ix.table)
	}
	if err := w.write(); err != nil {
		exec(conn, "ROLLBACK")
		return err
	}
	if err := exec(conn, "COMMIT"); err != nil {
		return err
	}
	if opt.Progress != nil {
		opt.Progress(w.total, w.total)
	}
	return nil
}

// openForWrite opens the database at path with the bulk-load settings. A
// file that already exists (the temporary file formats.Save made) is
// opened without OpenCreate: if an interrupt removed it in the meantime
// (formats.RemoveTemps), the open fails instead of creating it again and
// leaving it behind when the process exits.
func openForWrite(path string) (*sqlite.Conn, error) {
	flags := sqlite.OpenReadWrite
	if _, err := os.Stat(path); err != nil {
		flags |= sqlite.OpenCreate
	}
	conn, err := sqlite.OpenConn(path, flags)
	if err != nil {
		return nil, err
	}
	for _, p := range writePragmas() {
		if err := exec(conn, p); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return conn, nil
}

// exec runs one statement that returns no rows.
func exec(conn *sqlite.Conn, query string) error {
	st, _, err := conn.PrepareTransient(query)
	if err != nil {
		return err
	}
	defer st.Finalize()
	_, err = st.Step()
	return err
}

// script runs the statements of a ;-separated script (without string
// literals containing ';') one by one.
func script(conn *sqlite.Conn, sql string) error {
	for _, s := range strings.Split(sql, ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if err := exec(conn, s); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(s), err)
		}
	}
	return nil
}

type writer struct {
	conn        *sqlite.Conn
	g           *model.Graph
	res         *model.Results
	opt         WriteOptions
	done, total int64
	lastReport  int64
}

// progress records n more rows written and reports now and then.
func (w *writer) progress(n int64) {
	w.done += n
	if w.opt.Progress != nil && w.done-w.lastReport >= 1<<16 {
		w.lastReport = w.done
		w.opt.Progress(w.done, w.total)
	}
}

func (w *writer) write() error {
	if err := script(w.conn, coreSchema); err != nil {
		return err
	}
	blobs := w.startPacked()
	// edge_source is built as the edges go in when node identifiers
	// ascend in node order (V8's do, but for a handful): the edges come
	// grouped by source in node order, so the index grows at its end,
	// which was measured 1.3 s cheaper on 12M edges than sorting them
	// all afterwards. Identifiers in another order (addresses) would make
	// those inserts random, and then the index is built at the end.
	early := idsAscend(&w.g.Nodes.ID)
	if early {
		if err := exec(w.conn, indexSQL[0].sql); err != nil {
			return err
		}
	}
	steps := []func() error{w.metadata, w.types, w.strings, w.nodes, w.edges, w.extensions, w.stacks, w.results}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	for i, ix := range indexSQL {
		if i > 0 || !early {
			if err := exec(w.conn, ix.sql); err != nil {
				return fmt.Errorf("%s: %w", ix.sql, err)
			}
		}
		w.progress(w.rows(ix.table))
	}
	for _, v := range viewsSQL(w.g, w.res != nil) {
		if err := exec(w.conn, v); err != nil {
			return fmt.Errorf("creating a view: %w", err)
		}
	}
	return w.packed(blobs)
}

// rows is the number of rows the big table t gets.
func (w *writer) rows(t string) int64 {
	g := w.g
	switch t {
	case "strings":
		return int64(g.Strings.Len())
	case "node":
		return int64(g.NumNodes())
	case "edge":
		return int64(g.NumEdges())
	case "v8_location":
		return int64(len(g.Locations))
	case "heapx_result":
		if w.res != nil {
			return int64(g.NumNodes())
		}
	}
	return 0
}

// Bytes per row of a file Save writes, with the row's entries in the
// indexes, measured with SQLite's dbstat on real dumps whose identifiers
// are 48-bit addresses (Firefox's; V8's small ids need less): an
// edge row is 28 bytes, its two index entries 15 each; a node row 28, its
// seq index entry 17, its node_name and node_type entries 14 and 12; a
// result row 29 and its retained_size entry 13; a string row about 12
// plus its text, twice with strings_data.
const (
	edgeBytes     = 58
	nodeBytes     = 72
	resultBytes   = 42
	locationBytes = 40
	stringBytes   = 24 // plus the text twice
	// heapx_packed, per node with results and per edge (docs/format.md
	// 6.5), before compression
	packedNodeBytes = 8 + 1 + 4 + 8 + 4 + 8 + 8 + 4 + 4
	packedEdgeBytes = 1 + 4 + 4
	// packedRatio is about how much zstd shrinks the packed columns:
	// 4.3 times for a Node dump, 7.8 for Firefox's and for the synthetic
	// V8 snapshots.
	packedRatio = 5
)

// EstimateSize returns about how large a file Save writes for g with opt
// (within 5% for Java's and Firefox's dumps; up to a third more than the
// file for V8's, whose small ids take fewer bytes), so that a caller can
// choose where to put it before writing.
func EstimateSize(g *model.Graph, opt WriteOptions) int64 {
	n, m, text := int64(g.NumNodes()), int64(g.NumEdges()), int64(g.Strings.Bytes())
	size := m*edgeBytes + n*nodeBytes + int64(len(g.Locations))*locationBytes + int64(g.Strings.Len())*stringBytes + 2*text
	if opt.Results != nil {
		size += n * resultBytes
		if !opt.NoPacked {
			size += (n*packedNodeBytes + m*packedEdgeBytes + int64(g.Strings.Len())*4 + text) / packedRatio
		}
	}
	return size + int64(len(coreSchema)+pageSize*32) // schema, views and each table's first page
}

// idsAscend reports whether identifiers ascend in node order with at most
// one exception in a hundred.
func idsAscend(ids *model.Uint64s) bool {
	down := 0
	for i := 1; i < ids.Len(); i++ {
		if ids.At(i) < ids.At(i-1) {
			down++
		}
	}
	return down*100 <= ids.Len()
}

func (w *writer) metadata() error {
	g := w.g
	ms := exchange.Metadata(g, w.res, w.opt.Generator)
	ms = append(ms, w.opt.Meta...)
	return insertAll(w.conn, "metadata", len(ms), []string{"seq", "key", "value"}, func(in *inserter, i int) {
		in.Seq(int64(i))
		in.Text(ms[i].Key)
		in.Text(ms[i].Value)
	})
}

func (w *writer) types() error {
	g := w.g
	err := insertAll(w.conn, "node_types", len(g.NodeTypes), []string{"nodetypeid", "name", "category", "table_name"}, func(in *inserter, i int) {
		t := g.NodeTypes[i]
		in.Int(int64(i))
		in.Text(exchange.TypeName(t.Namespace, t.Name))
		in.Text(t.Category.String())
		if v := tableName(t.Category); v != "" {
			in.Text(v)
		} else {
			in.Null()
		}
	})
	if err != nil {
		return err
	}
	return insertAll(w.conn, "edge_types", len(g.EdgeTypes), []string{"edgetypeid", "name", "category", "strength", "name_kind"}, func(in *inserter, i int) {
		t := g.EdgeTypes[i]
		in.Int(int64(i))
		in.Text(exchange.TypeName(t.Namespace, t.Name))
		in.Text(t.Category.String())
		in.Text(t.Strength.String())
		if t.Indexed {
			in.Text("index")
		} else {
			in.Text("string")
		}
	})
}

func (w *writer) strings() error {
	s := &w.g.Strings
	in, err := newInserter(w.conn, "strings", int64(s.Len()), "stringid", "data")
	if err != nil {
		return err
	}
	for i := 0; i < s.Len(); i++ {
		in.Seq(int64(i))
		in.Text(s.At(model.StringID(i)))
		if err := in.End(); err != nil {
			in.Close()
			return err
		}
		if i&0xfff == 0xfff {
			w.progress(0x1000)
		}
	}
	w.progress(int64(s.Len() & 0xfff))
	return in.Close()
}

func (w *writer) nodes() error {
	g := w.g
	cols := []string{"identifier", "seq", "nodetypeid", "name", "self_size"}
	if g.TraceNodeID != nil {
		cols = append(cols, "v8_trace_node_id")
	}
	if g.Detachedness != nil {
		cols = append(cols, "v8_detachedness")
	}
	for _, x := range w.opt.NodeFields {
		col := strings.ReplaceAll(x.Name, ":", "_")
		if err := exec(w.conn, "ALTER TABLE node ADD COLUMN "+quoteIdent(col)+" INTEGER"); err != nil {
			return err
		}
		cols = append(cols, col)
	}
	n := g.NumNodes()
	in, err := newInserter(w.conn, "node", int64(n), cols...)
	if err != nil {
		return err
	}
	ns := &g.Nodes
	for i := 0; i < n; i++ {
		// Identifiers are unsigned 64-bit; SQLite's integers are signed,
		// so one >= 2^63 is stored as its two's complement (6).
		in.Int(int64(ns.ID.At(i)))
		in.Int(int64(i))
		in.Int(int64(ns.Type[i]))
		in.Int(int64(ns.Name[i]))
		in.Int(int64(ns.Size.At(i)))
		if g.TraceNodeID != nil {
			in.Int(int64(g.TraceNodeID[i]))
		}
		if g.Detachedness != nil {
			in.Int(int64(g.Detachedness[i]))
		}
		for _, x := range w.opt.NodeFields {
			if x.Missing != nil && x.Missing[i] {
				in.Null()
			} else {
				in.Int(int64(x.Values[i]))
			}
		}
		if err := in.End(); err != nil {
			in.Close()
			if strings.Contains(err.Error(), "UNIQUE") {
				return fmt.Errorf("sqlite: node identifiers are not unique (a node near index %d repeats an earlier id): %w", i, err)
			}
			return err
		}
		if i&0xffff == 0xffff {
			w.progress(0x10000)
		}
	}
	w.progress(int64(n & 0xffff))
	return in.Close()
}

func (w *writer) edges() error {
	g := w.g
	m := g.NumEdges()
	in, err := newInserter(w.conn, "edge", int64(m), "seq", "source", "edgetypeid", "label", "dest")
	if err != nil {
		return err
	}
	ids := g.Nodes.ID
	fe := g.Nodes.FirstEdge
	es := &g.Edges
	for n := 0; n+1 < len(fe); n++ {
		src := int64(ids.At(n))
		for e := fe[n]; e < fe[n+1]; e++ {
			in.Seq(int64(e))
			in.Int(src)
			in.Int(int64(es.Type[e]))
			in.Int(int64(es.Name[e]))
			in.Int(int64(ids.At(int(es.To[e]))))
			if err := in.End(); err != nil {
				in.Close()
				return err
			}
			if e&0xffff == 0xffff {
				w.progress(0x10000)
			}
		}
	}
	w.progress(int64(m & 0xffff))
	return in.Close()
}

func (w *writer) extensions() error {
	g := w.g
	ids := g.Nodes.ID
	if len(g.Locations) > 0 {
		cols := []string{"seq", "node_identifier", "script_id", "line", "column"}
		scripts := g.LocationScripts
		if scripts != nil {
			cols = append(cols, "script_node_identifier") // else NULL
		}
		err := insertAll(w.conn, "v8_location", len(g.Locations), cols, func(in *inserter, i int) {
			l := g.Locations[i]
			in.Seq(int64(i))
			in.Int(int64(ids.At(int(l.Node))))
			in.Int(int64(l.ScriptID))
			in.Int(int64(l.Line))
			in.Int(int64(l.Column))
			if scripts != nil {
				in.Int(int64(ids.At(int(scripts[i]))))
			}
		})
		if err != nil {
			return err
		}
		w.progress(int64(len(g.Locations)))
	}
	if t := g.Trace; t != nil {
		if err := w.trace(t); err != nil {
			return err
		}
	}
	err := insertAll(w.conn, "v8_section", len(g.Sections), []string{"seq", "name", "fields", "values"}, func(in *inserter, i int) {
		s := g.Sections[i]
		fields := s.Fields
		if fields == nil {
			fields = []string{}
		}
		fj, _ := json.Marshal(fields)
		vals := make([]byte, 0, 8*len(s.Values)+2)
		vals = append(vals, '[')
		for j, v := range s.Values {
			if j > 0 {
				vals = append(vals, ',')
			}
			vals = strconv.AppendInt(vals, v, 10)
		}
		vals = append(vals, ']')
		in.Seq(int64(i))
		in.Text(s.Name)
		in.Text(string(fj))
		in.Text(string(vals))
	})
	if err != nil {
		return err
	}
	return insertAll(w.conn, "heapx_gc_root", len(g.GCRoots), []string{"seq", "node_identifier", "kind"}, func(in *inserter, i int) {
		r := g.GCRoots[i]
		in.Seq(int64(i))
		in.Int(int64(ids.At(int(r.Node))))
		in.Text(g.RootKinds[r.Kind])
	})
}

func (w *writer) trace(t *model.AllocationTrace) error {
	err := insertAll(w.conn, "v8_trace_function", len(t.Functions),
		[]string{"idx", "function_id", "name", "script_name", "script_id", "line", "column"}, func(in *inserter, i int) {
			f := t.Functions[i]
			in.Seq(int64(i))
			in.Int(int64(f.ID))
			in.Int(int64(f.Name))
			in.Int(int64(f.ScriptName))
			in.Int(int64(f.ScriptID))
			in.Int(int64(f.Line))
			in.Int(int64(f.Column))
		})
	if err != nil {
		return err
	}
	err = insertAll(w.conn, "v8_trace_node", len(t.Tree), []string{"idx", "parent", "id", "function_index", "count", "size"}, func(in *inserter, i int) {
		n := t.Tree[i]
		in.Seq(int64(i))
		in.Int(int64(n.Parent))
		in.Int(int64(n.ID))
		in.Int(int64(n.Function))
		in.Int(int64(n.Count))
		in.Int(int64(n.Size))
	})
	if err != nil {
		return err
	}
	return insertAll(w.conn, "v8_sample", len(t.Samples), []string{"seq", "timestamp_us", "last_assigned_id"}, func(in *inserter, i int) {
		in.Seq(int64(i))
		in.Int(int64(t.Samples[i].TimestampMicros))
		in.Int(int64(t.Samples[i].LastAssignedID))
	})
}

func (w *writer) results() error {
	r := w.res
	if r == nil {
		return nil
	}
	g := w.g
	n := g.NumNodes()
	in, err := newInserter(w.conn, "heapx_result", int64(n),
		"node_identifier", "shallow_size", "retained_size", "dominator", "distance")
	if err != nil {
		return err
	}
	ids := g.Nodes.ID
	for i := 0; i < n; i++ {
		in.Int(int64(ids.At(i)))
		in.Int(int64(r.Shallow[i]))
		in.Int(int64(r.Retained[i]))
		if d := r.Dominator[i]; d == model.NoNode {
			in.Null()
		} else {
			in.Int(int64(ids.At(int(d))))
		}
		in.Int(int64(r.Distance[i]))
		if err := in.End(); err != nil {
			in.Close()
			return err
		}
		if i&0xffff == 0xffff {
			w.progress(0x10000)
		}
	}
	w.progress(int64(n & 0xffff))
	return in.Close()
}
