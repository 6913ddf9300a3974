package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
)

// FormatName is the value the reader records under the metadata key
// "format" (the V8 reader records "v8.heapsnapshot" there).
const FormatName = "heapx.sqlite"

// ReadMeta returns the metadata table of the database at path, in order,
// without reading anything else.
func ReadMeta(path string) ([]model.KV, error) {
	conn, err := OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var kv []model.KV
	err = query(conn, "SELECT key, value FROM metadata ORDER BY seq", func(st *sqlite.Stmt) error {
		kv = append(kv, model.KV{Key: st.ColumnText(0), Value: st.ColumnText(1)})
		return nil
	})
	return kv, err
}

// query runs a statement and calls fn for each row.
func query(conn *sqlite.Conn, q string, fn func(st *sqlite.Stmt) error) error {
	st, _, err := conn.PrepareTransient(q)
	if err != nil {
		return err
	}
	defer st.Finalize()
	for {
		more, err := st.Step()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		if err := fn(st); err != nil {
			return err
		}
	}
}

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with an estimate of the
	// bytes read so far and the file's size.
	Progress func(done, total int64)
	// Results, if set, receives the analysis results the file carries
	// (heapx_result, with their policy in heapx:analysis); without them
	// its columns stay nil.
	Results *model.Results
}

// ReadFile reads the SQLite dump at path into a graph, and the analysis
// results it carries into opt.Results when that is set.
func ReadFile(path string, opt ReadOptions) (_ *model.Graph, err error) {
	conn, err := OpenReadOnly(path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := checkLength(path); err != nil {
		return nil, err
	}
	r := &reader{conn: conn, file: path, g: &model.Graph{}, opt: opt}
	if err := r.read(); err != nil {
		var fe *formats.FormatError
		if errors.As(err, &fe) {
			return nil, err
		}
		// A driver error: the file is damaged or not a database.
		return nil, &formats.FormatError{File: path, Section: r.section, Offset: -1, Msg: cleanError(err)}
	}
	return r.g, nil
}

// checkLength gives the error every format gives for a dump cut short
// when the database at path is shorter than its header says. SQLite
// itself reads a cut file as far as its pages go, then says "database
// disk image is malformed", or nothing when only the last page is cut.
func checkLength(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	// The header (sqlite.org/fileformat.html, 1.3): the page size at byte
	// 16 (1 for 65536), the change counter at 24, the database size in
	// pages at 28, valid when the counter is the same at 92.
	var h [100]byte
	if _, err := io.ReadFull(f, h[:]); err != nil || string(h[:16]) != "SQLite format 3\x00" {
		return nil // no header: SQLite says what the file is
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	pages := int64(binary.BigEndian.Uint32(h[28:]))
	valid := pages > 0 && binary.BigEndian.Uint32(h[24:]) == binary.BigEndian.Uint32(h[92:])
	if valid && st.Size() < pages*pageSize {
		return input.Truncated(path, "page "+strconv.FormatInt(st.Size()/pageSize+1, 10), st.Size())
	}
	return nil
}

// cleanError drops the driver's prefixes from a SQLite error, leaving
// SQLite's own message ("file is not a database").
func cleanError(err error) string {
	msg := err.Error()
	for _, p := range []string{"sqlite: prepare: ", "sqlite: step: ", "sqlite: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	return msg
}

type reader struct {
	conn    *sqlite.Conn
	file    string
	g       *model.Graph
	opt     ReadOptions
	section string // the table being read, for driver errors

	tables map[string][]string // table -> columns, from the schema
	meta   map[string]string   // first value of each metadata key

	strs     idIndex
	nodeT    idIndex // nodetypeid -> model index
	edgeT    idIndex // edgetypeid -> model index
	ids      *model.IDMap
	rootSeen bool
	// fromPacked: nodes, edges, locations and the results asked for came
	// from heapx_packed, and their tables are not read.
	fromPacked bool
	smi        int // edges skipped for holding a small integer

	nStrings, nNodes, nEdges int64 // count(*) of the big tables

	// progress state: rows read of about total, reported scaled to the
	// file's size, since callers draw byte-based bars.
	done        atomic.Int64
	pending     int64 // rows not yet added to done (single-threaded tick)
	total, size int64

	skippedRecs   []string // "<type>=<count>"
	skippedFields []string // "<record>.<field>=<count>"
}

// fail returns a FormatError for the table being read.
func (r *reader) fail(format string, args ...any) error {
	sec := ""
	if r.section != "" {
		sec = "table " + r.section
	}
	return &formats.FormatError{File: r.file, Section: sec, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) read() error {
	if err := r.schema(); err != nil {
		return err
	}
	steps := []func() error{r.metadata, r.counts, r.types, r.cached, r.nodes, r.edges, r.extensions, r.unknown, r.results}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	r.section = ""
	g := r.g
	sort.Strings(r.skippedRecs)
	sort.Strings(r.skippedFields)
	for _, s := range r.skippedRecs {
		g.Meta = append(g.Meta, model.KV{Key: exchange.KeySkippedRecords, Value: s})
	}
	for _, s := range r.skippedFields {
		g.Meta = append(g.Meta, model.KV{Key: exchange.KeySkippedFields, Value: s})
	}
	for key, n := range map[string]int{exchange.KeyNodeCount: g.NumNodes(), exchange.KeyEdgeCount: g.NumEdges() + r.smiEdges(), exchange.KeyStringCount: g.Strings.Len()} {
		if v, ok := r.meta[key]; ok && v != strconv.Itoa(n) {
			return r.fail("metadata %s is %s but the file holds %d", key, v, n)
		}
	}
	if err := g.Validate(); err != nil {
		return r.fail("%v", err)
	}
	return nil
}

// counts counts the rows of the big tables, for allocating columns once
// and for progress.
func (r *reader) counts() error {
	r.section = ""
	err := query(r.conn, "SELECT (SELECT count(*) FROM strings), (SELECT count(*) FROM node), (SELECT count(*) FROM edge)", func(st *sqlite.Stmt) error {
		r.nStrings, r.nNodes, r.nEdges = st.ColumnInt64(0), st.ColumnInt64(1), st.ColumnInt64(2)
		return nil
	})
	if err != nil {
		return err
	}
	r.total = r.nStrings + r.nNodes + r.nEdges
	if st, err := os.Stat(r.file); err == nil {
		r.size = st.Size()
	}
	return nil
}

// tick records one more row read; see tickN.
func (r *reader) tick(n int64) {
	if r.pending++; r.pending == 1<<12 {
		r.pending = 0
		r.tickN(1 << 12)
	}
}

// tickN records n more rows read and reports progress, in bytes of the
// file as the callers' bars count: rows read scaled to the file's size.
// The edge workers call it concurrently.
func (r *reader) tickN(n int64) {
	if r.opt.Progress == nil {
		return
	}
	done := r.done.Add(n)
	r.opt.Progress(int64(float64(r.size)*float64(done)/float64(max(r.total, 1))), r.size)
}

// smiEdges is how many edges were skipped for holding a small integer,
// which heapx:edge_count counts.
func (r *reader) smiEdges() int { return r.smi }

// schema lists the tables and their columns.
func (r *reader) schema() error {
	r.section = "sqlite_schema"
	r.tables = map[string][]string{}
	var names []string
	err := query(r.conn, "SELECT name FROM sqlite_schema WHERE type = 'table'", func(st *sqlite.Stmt) error {
		names = append(names, st.ColumnText(0))
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range names {
		var cols []string
		err := query(r.conn, "SELECT name FROM pragma_table_info("+quoteString(t)+")", func(st *sqlite.Stmt) error {
			cols = append(cols, st.ColumnText(0))
			return nil
		})
		if err != nil {
			return err
		}
		r.tables[t] = cols
	}
	for _, t := range []string{"metadata", "strings", "node_types", "edge_types", "node", "edge"} {
		if _, ok := r.tables[t]; !ok {
			if t == "metadata" {
				return &formats.FormatError{File: r.file, Offset: -1,
					Msg: "a SQLite database without a metadata table: not a heapx dump (docs/format.md, section 6)"}
			}
			return &formats.FormatError{File: r.file, Offset: -1, Msg: "no table " + t + " (docs/format.md 6.1)"}
		}
	}
	return nil
}

// quoteString quotes an SQL string literal.
func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// columns checks that table has every required column and returns the
// select list of the required and the optional columns it has (absent
// optional ones as NULL), so result column i is always wanted[i]. Columns
// the table has beyond known are counted as skipped fields of record.
func (r *reader) columns(table, record string, required, optional []string, known ...string) (string, error) {
	have := map[string]bool{}
	for _, c := range r.tables[table] {
		have[c] = true
	}
	var sel []string
	for _, c := range required {
		if !have[c] {
			return "", r.fail("no column %s", c)
		}
		sel = append(sel, quoteIdent(c))
	}
	for _, c := range optional {
		if have[c] {
			sel = append(sel, quoteIdent(c))
		} else {
			sel = append(sel, "NULL")
		}
	}
	isKnown := map[string]bool{}
	for _, c := range append(append(append([]string{}, required...), optional...), known...) {
		isKnown[c] = true
	}
	for _, c := range r.tables[table] {
		if isKnown[c] {
			continue
		}
		var n int64
		err := query(r.conn, "SELECT count("+quoteIdent(c)+") FROM "+quoteIdent(table), func(st *sqlite.Stmt) error {
			n = st.ColumnInt64(0)
			return nil
		})
		if err != nil {
			return "", err
		}
		if n > 0 {
			r.skippedFields = append(r.skippedFields, fmt.Sprintf("%s.%s=%d", record, c, n))
		}
	}
	return strings.Join(sel, ", "), nil
}

// intAt returns column i of the current row as an integer, or an error
// naming what was expected when it holds anything else. SQLite would
// silently read text as 0; the spec makes a value of the wrong kind an
// error (7.2).
func (r *reader) intAt(st *sqlite.Stmt, i int, what string, row any) (int64, error) {
	if t := st.ColumnType(i); t != sqlite.TypeInteger {
		return 0, r.fail("row %v: %s is %s, want an integer", row, what, typeName(t))
	}
	return st.ColumnInt64(i), nil
}

// textAt is intAt for text columns.
func (r *reader) textAt(st *sqlite.Stmt, i int, what string, row any) (string, error) {
	if t := st.ColumnType(i); t != sqlite.TypeText {
		return "", r.fail("row %v: %s is %s, want text", row, what, typeName(t))
	}
	return st.ColumnText(i), nil
}

func typeName(t sqlite.ColumnType) string {
	switch t {
	case sqlite.TypeInteger:
		return "an integer"
	case sqlite.TypeFloat:
		return "a real"
	case sqlite.TypeText:
		return "text"
	case sqlite.TypeBlob:
		return "a blob"
	}
	return "NULL"
}

func (r *reader) metadata() error {
	r.section = "metadata"
	sel, err := r.columns("metadata", "metadata", []string{"key", "value"}, nil, "seq")
	if err != nil {
		return err
	}
	order := ""
	if hasColumn(r.tables["metadata"], "seq") {
		order = " ORDER BY seq"
	}
	var kvs []model.KV
	row := 0
	err = query(r.conn, "SELECT "+sel+" FROM metadata"+order, func(st *sqlite.Stmt) error {
		row++
		id := strconv.Itoa(row)
		k, err := r.textAt(st, 0, "key", id)
		if err != nil {
			return err
		}
		v, err := r.textAt(st, 1, "value", id)
		if err != nil {
			return err
		}
		kvs = append(kvs, model.KV{Key: k, Value: v})
		return nil
	})
	if err != nil {
		return err
	}
	r.meta = map[string]string{}
	for _, kv := range kvs {
		if _, ok := r.meta[kv.Key]; !ok {
			r.meta[kv.Key] = kv.Value
		}
	}
	// The version decides how to read everything else: check it first.
	v, ok := r.meta[exchange.KeyVersion]
	if !ok {
		return r.fail("no version_major: not a heapx dump, or one cut short")
	}
	if v != strconv.Itoa(exchange.VersionMajor) {
		return r.fail("version_major is %q; this heapx reads version %d (a newer heapx may read it)", v, exchange.VersionMajor)
	}
	g := r.g
	g.Meta = append(g.Meta, model.KV{Key: exchange.KeyFormat, Value: FormatName})
	for _, kv := range kvs {
		switch kv.Key {
		case exchange.KeyVersion, exchange.KeyRoot, exchange.KeyNodeCount, exchange.KeyEdgeCount, exchange.KeyStringCount, exchange.KeyAnalysis:
			continue
		case exchange.KeyStackVersion:
			if err := exchange.CheckStackVersion(kv.Value); err != nil {
				return r.fail("%v", err)
			}
			continue
		}
		g.Meta = append(g.Meta, kv)
	}
	return nil
}

func hasColumn(cols []string, c string) bool {
	for _, x := range cols {
		if x == c {
			return true
		}
	}
	return false
}

func (r *reader) types() error {
	g := r.g
	r.section = "node_types"
	sel, err := r.columns("node_types", "node_type", []string{"nodetypeid", "name", "category"}, nil, "table_name")
	if err != nil {
		return err
	}
	var ids []int64
	err = query(r.conn, "SELECT "+sel+" FROM node_types ORDER BY nodetypeid", func(st *sqlite.Stmt) error {
		id, err := r.intAt(st, 0, "nodetypeid", "?")
		if err != nil {
			return err
		}
		row := "nodetypeid=" + strconv.FormatInt(id, 10)
		name, err := r.textAt(st, 1, "name", row)
		if err != nil {
			return err
		}
		cat, err := r.textAt(st, 2, "category", row)
		if err != nil {
			return err
		}
		if len(g.NodeTypes) == 256 {
			return r.fail("more than 256 node types; heapx holds at most 256")
		}
		g.NodeTypes = append(g.NodeTypes, exchange.NodeType(name, cat))
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return err
	}
	r.nodeT = newIDIndex(ids)

	r.section = "edge_types"
	sel, err = r.columns("edge_types", "edge_type", []string{"edgetypeid", "name", "category", "strength", "name_kind"}, nil)
	if err != nil {
		return err
	}
	ids = ids[:0]
	err = query(r.conn, "SELECT "+sel+" FROM edge_types ORDER BY edgetypeid", func(st *sqlite.Stmt) error {
		id, err := r.intAt(st, 0, "edgetypeid", "?")
		if err != nil {
			return err
		}
		row := "edgetypeid=" + strconv.FormatInt(id, 10)
		var f [4]string
		for i, what := range []string{"name", "category", "strength", "name_kind"} {
			if f[i], err = r.textAt(st, i+1, what, row); err != nil {
				return err
			}
		}
		if f[3] != "string" && f[3] != "index" {
			return r.fail("row %s: name_kind is %q, want \"string\" or \"index\"", row, f[3])
		}
		if len(g.EdgeTypes) == 256 {
			return r.fail("more than 256 edge types; heapx holds at most 256")
		}
		g.EdgeTypes = append(g.EdgeTypes, exchange.EdgeType(f[0], f[1], f[2], f[3]))
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return err
	}
	r.edgeT = newIDIndex(ids)

	// Subtype fields: heapx's model has no place for them (1.4).
	if _, ok := r.tables["node_type_fields"]; ok {
		r.section = "node_type_fields"
		err := query(r.conn, "SELECT nodetypeid, name FROM node_type_fields ORDER BY nodetypeid, seq", func(st *sqlite.Stmt) error {
			tid, name := st.ColumnInt64(0), st.ColumnText(1)
			ti := r.nodeT.find(tid)
			if ti < 0 {
				return r.fail("row nodetypeid=%d: not in node_types", tid)
			}
			table := "node_fields_" + strconv.FormatInt(tid, 10)
			if !hasColumn(r.tables[table], name) {
				return nil
			}
			var n int64
			err := query(r.conn, "SELECT count("+quoteIdent(name)+") FROM "+quoteIdent(table), func(st *sqlite.Stmt) error {
				n = st.ColumnInt64(0)
				return nil
			})
			if err == nil && n > 0 {
				r.skippedFields = append(r.skippedFields, fmt.Sprintf("node_type %s.%s=%d", g.NodeTypes[ti].QualifiedName(), name, n))
			}
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (r *reader) strings() error {
	r.section = "strings"
	sel, err := r.columns("strings", "string", []string{"stringid", "data"}, nil)
	if err != nil {
		return err
	}
	n := r.nStrings
	if n > math.MaxUint32 {
		return r.fail("%d strings; heapx holds at most 2^32", n)
	}
	ids := make([]int64, 0, n)
	s := &r.g.Strings
	err = query(r.conn, "SELECT "+sel+" FROM strings ORDER BY stringid", func(st *sqlite.Stmt) error {
		id, err := r.intAt(st, 0, "stringid", "?")
		if err != nil {
			return err
		}
		if st.ColumnType(1) != sqlite.TypeText {
			return r.fail("row stringid=%d: data is %s, want text", id, typeName(st.ColumnType(1)))
		}
		ids = append(ids, id)
		s.AddString(st.ColumnText(1))
		r.tick(1)
		return nil
	})
	if err != nil {
		return err
	}
	r.strs = newIDIndex(ids)
	return nil
}

// cached reads the columns from heapx_packed when it can, and else the
// strings, which the row path needs first.
func (r *reader) cached() (err error) {
	if r.fromPacked, err = r.packed(); err != nil || r.fromPacked {
		return err
	}
	return r.strings()
}

// rowKey names a row by its key column in messages. It is formatted only
// when a message is made, so naming the row costs nothing per row.
type rowKey struct {
	key string
	val int64
}

func (k rowKey) String() string { return k.key + "=" + strconv.FormatInt(k.val, 10) }

// rowOf names the current row by its key column, for messages.
func rowOf(st *sqlite.Stmt, key string) string {
	return key + "=" + st.ColumnText(0)
}

// knownTables are the tables docs/format.md defines; every other table
// (other than SQLite's own and the node_fields_N tables) holds records of
// a type this reader does not know.
var knownTables = map[string]bool{
	"metadata": true, "strings": true, "node_types": true, "node_type_fields": true, "edge_types": true,
	"node": true, "edge": true, "v8_location": true, "v8_trace_function": true, "v8_trace_node": true,
	"v8_sample": true, "v8_section": true, "heapx_gc_root": true, "extension_record": true, "heapx_result": true,
	"heapx_packed": true, "heapx_stack": true, "heapx_frame": true, "heapx_frame_value": true,
}

// unknown counts the records heapx cannot hold (7.2): rows of unknown
// tables, extension_record rows by record type, and edges to small
// integers.
func (r *reader) unknown() error {
	if r.smi > 0 {
		r.skippedRecs = append(r.skippedRecs, fmt.Sprintf("edge(smi)=%d", r.smi))
	}
	if _, ok := r.tables["extension_record"]; ok {
		r.section = "extension_record"
		err := query(r.conn, "SELECT record_type, count(*) FROM extension_record GROUP BY record_type ORDER BY record_type", func(st *sqlite.Stmt) error {
			r.skippedRecs = append(r.skippedRecs, fmt.Sprintf("%s=%d", st.ColumnText(0), st.ColumnInt64(1)))
			return nil
		})
		if err != nil {
			return err
		}
	}
	for t := range r.tables {
		if knownTables[t] || strings.HasPrefix(t, "sqlite_") || strings.HasPrefix(t, "node_fields_") {
			continue
		}
		r.section = t
		var n int64
		if err := query(r.conn, "SELECT count(*) FROM "+quoteIdent(t), func(st *sqlite.Stmt) error { n = st.ColumnInt64(0); return nil }); err != nil {
			return err
		}
		if n > 0 {
			r.skippedRecs = append(r.skippedRecs, fmt.Sprintf("%s=%d", t, n))
		}
	}
	return nil
}
