package sqlite

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/internal/input"
	"github.com/heapx/heapx/model"
)

// FormatName is the value the reader records under the metadata key
// "format" (the V8 reader records "v8.heapsnapshot" there).
const FormatName = "heapx.sqlite"

// OpenReadOnly opens the database at path for reading only, three times
// over: the file is opened with SQLITE_OPEN_READONLY, PRAGMA query_only
// makes SQLite refuse any statement that would write, and an authorizer
// refuses, when a statement is prepared, everything but reading (readOnly),
// which also stops what the first two let through: ATTACH and VACUUM INTO
// create files elsewhere, and a PRAGMA could turn query_only off. Neither
// a user's query nor a bug can change a dump or write a file. The path is
// taken as a plain file name, never as a URI.
func OpenReadOnly(path string) (*sqlite.Conn, error) {
	if _, err := os.Stat(path); err != nil {
		// SQLite would say "unable to open database file"; say what is
		// wrong instead.
		return nil, err
	}
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	if err := exec(conn, "PRAGMA query_only = ON"); err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.SetAuthorizer(sqlite.AuthorizeFunc(readOnly)); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// readOnly is the authorizer of read-only connections: SELECT and what it
// reads and calls, transactions (harmless without writes), and PRAGMAs
// that only report something.
func readOnly(a sqlite.Action) sqlite.AuthResult {
	switch a.Type() {
	case sqlite.OpSelect, sqlite.OpRead, sqlite.OpFunction, sqlite.OpRecursive, sqlite.OpTransaction, sqlite.OpSavepoint:
		return sqlite.AuthResultOK
	case sqlite.OpPragma:
		name := strings.ToLower(a.Pragma())
		if introspection[name] || a.PragmaArg() == "" && !sideEffects[name] {
			return sqlite.AuthResultOK
		}
	}
	return sqlite.AuthResultDeny
}

// introspection are the PRAGMAs whose argument names what to describe
// (a table, an index), not a new setting.
var introspection = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true, "integrity_check": true,
	"quick_check": true,
}

// sideEffects are the PRAGMAs that act even without an argument.
var sideEffects = map[string]bool{
	"optimize": true, "shrink_memory": true, "wal_checkpoint": true, "incremental_vacuum": true,
}

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

// ReadFile reads the SQLite dump at path into a graph. When opt.Results
// is set and the file carries analysis results (heapx_result, with their
// policy in heapx:analysis), they are read into it.
func ReadFile(path string, opt formats.ReadOptions) (_ *model.Graph, err error) {
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
	opt     formats.ReadOptions
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

// errNotDense stops the fast node scan when seq is not 0..n-1.
var errNotDense = errors.New("seq is not 0..n-1")

// nodes reads the node table into node order (seq, 1.8). heapx numbers
// seq 0..n-1, so the table is scanned in its own order (by identifier, the
// rowid) and each row put at its seq: walking the seq index instead would
// cost a B-tree lookup per row. Only a file whose seq values are not
// 0..n-1 is read a second time, ORDER BY seq.
// cached reads the columns from heapx_packed when it can, and else the
// strings, which the row path needs first.
func (r *reader) cached() (err error) {
	if r.fromPacked, err = r.packed(); err != nil || r.fromPacked {
		return err
	}
	return r.strings()
}

// idMap makes sure r.ids is built: by the node scan, or here, from the
// identifiers heapx_packed held, for the first row that names a node.
func (r *reader) idMap() error {
	if r.ids != nil {
		return nil
	}
	ids := r.g.Nodes.ID
	r.ids = model.NewIDMap(len(ids))
	for i, id := range ids {
		if !r.ids.Insert(id, int32(i)) {
			return r.fail("node identifier %d repeats", int64(id))
		}
	}
	return nil
}

func (r *reader) nodes() error {
	if r.fromPacked {
		return nil
	}
	r.section = "node"
	sel, err := r.columns("node", "node", []string{"identifier", "seq", "nodetypeid", "name", "self_size"},
		[]string{"v8_trace_node_id", "v8_detachedness"})
	if err != nil {
		return err
	}
	n := r.nNodes
	if n > math.MaxInt32-1 {
		return r.fail("%d nodes; heapx holds at most 2^31-1", n)
	}
	ns := &r.g.Nodes
	ns.Type = model.Alloc[uint8](int(n))
	ns.Name = model.Alloc[model.StringID](int(n))
	ns.ID = model.Alloc[uint64](int(n))
	ns.Size = model.Alloc[uint64](int(n))
	ns.FirstEdge = model.Alloc[uint32](int(n) + 1)
	var rootID uint64
	root, hasRoot := r.meta[exchange.KeyRoot]
	if hasRoot {
		v, err := strconv.ParseUint(root, 10, 64)
		if err != nil {
			r.section = "metadata"
			return r.fail("heapx:root is %q, not a node identifier", root)
		}
		rootID = v
	}
	err = r.nodeRows(sel, false, hasRoot, rootID)
	if err == errNotDense {
		err = r.nodeRows(sel, true, hasRoot, rootID)
	}
	if err != nil {
		return err
	}
	if hasRoot && !r.rootSeen && n > 0 {
		r.section = "metadata"
		return r.fail("heapx:root %d is not a node", rootID)
	}
	return nil
}

// nodeColumns name the node query's columns, for messages.
var nodeColumns = []string{"identifier", "seq", "nodetypeid", "name", "self_size", "v8_trace_node_id", "v8_detachedness"}

// nodeRows is one pass over the node table: in table order, placing rows
// at their seq (ordered false; errNotDense if seq is not 0..n-1), or
// ORDER BY seq, placing rows one after the other.
func (r *reader) nodeRows(sel string, ordered, hasRoot bool, rootID uint64) error {
	g := r.g
	ns := &g.Nodes
	n := r.nNodes
	// The optional columns exist in every heapx file and are NULL when
	// the dump has no such data; a model column is made on the first
	// value seen, so an all-NULL column costs nothing.
	g.TraceNodeID, g.Detachedness, g.Root, r.rootSeen = nil, nil, 0, false
	r.ids = model.NewIDMap(int(n))
	var placed []uint64 // bitset of the seq values seen (fast pass)
	q := "SELECT " + sel + " FROM node"
	if ordered {
		q += " ORDER BY seq"
	} else {
		placed = make([]uint64, (n+63)/64)
	}
	k := int64(0)
	var prevSeq int64
	err := query(r.conn, q, func(st *sqlite.Stmt) error {
		if k >= n {
			return r.fail("more rows than count(*) said (%d): the table changed while read", n)
		}
		for c := 0; c < 7; c++ {
			if t := st.ColumnType(c); t != sqlite.TypeInteger && (c < 5 || t != sqlite.TypeNull) {
				return r.fail("row %s: %s is %s, want an integer", rowOf(st, "identifier"), nodeColumns[c], typeName(t))
			}
		}
		id := st.ColumnInt64(0)
		seq := st.ColumnInt64(1)
		i := k
		if ordered {
			if k > 0 && seq == prevSeq {
				return r.fail("row identifier=%d: seq %d repeats", id, seq)
			}
			prevSeq = seq
		} else {
			if seq < 0 || seq >= n || placed[seq/64]&(1<<(seq%64)) != 0 {
				return errNotDense
			}
			placed[seq/64] |= 1 << (seq % 64)
			i = seq
		}
		t := r.nodeT.find(st.ColumnInt64(2))
		if t < 0 {
			return r.fail("row identifier=%d: nodetypeid %d is not in node_types", id, st.ColumnInt64(2))
		}
		name := r.strs.find(st.ColumnInt64(3))
		if name < 0 {
			return r.fail("row identifier=%d: name %d is not a stringid in strings", id, st.ColumnInt64(3))
		}
		size := st.ColumnInt64(4)
		if size < 0 {
			return r.fail("row identifier=%d: self_size %d is negative", id, size)
		}
		ns.ID[i], ns.Type[i], ns.Name[i], ns.Size[i] = uint64(id), uint8(t), model.StringID(name), uint64(size)
		if st.ColumnType(5) == sqlite.TypeInteger {
			v := st.ColumnInt64(5)
			if v < 0 || v > math.MaxUint32 {
				return r.fail("row identifier=%d: v8_trace_node_id %d out of range", id, v)
			}
			if g.TraceNodeID == nil {
				g.TraceNodeID = model.Alloc[uint32](int(n))
			}
			g.TraceNodeID[i] = uint32(v)
		}
		if st.ColumnType(6) == sqlite.TypeInteger {
			v := st.ColumnInt64(6)
			if v < 0 || v > 255 {
				return r.fail("row identifier=%d: v8_detachedness %d out of range", id, v)
			}
			if g.Detachedness == nil {
				g.Detachedness = model.Alloc[uint8](int(n))
			}
			g.Detachedness[i] = uint8(v)
		}
		if hasRoot && uint64(id) == rootID {
			g.Root = int32(i)
			r.rootSeen = true
		}
		k++
		r.tick(1)
		return nil
	})
	if err != nil {
		return err
	}
	if k != n {
		return r.fail("%d rows read, count(*) said %d", k, n)
	}
	// The identifier index is filled in a loop of its own: independent
	// inserts let the CPU overlap their cache misses, which inserts
	// interleaved with SQLite's work cannot.
	for i, id := range ns.ID {
		if !r.ids.Insert(id, int32(i)) {
			return r.fail("row identifier=%d: the identifier repeats", int64(id))
		}
	}
	return nil
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

// edgeWorkers is how many connections read the edge table at once: the
// edge scan is most of a read, and SQLite runs a statement on one core.
const edgeWorkers = 2

// parallelEdges is the table size from which the scan is split: below it
// a second connection costs more than it saves.
const parallelEdges = 1 << 16

// edges reads the edge table in seq order and builds the CSR columns. A
// heapx file numbers its edges 0..m-1 (seq), so each row goes to position
// seq and the table is read in edgeWorkers ranges at once; other files are
// read in one pass ORDER BY seq. Edges are grouped by source in node order
// in a heapx file, which is checked; any other order is regrouped with a
// stable counting sort, which keeps each node's edges in seq order (1.8).
func (r *reader) edges() error {
	if r.fromPacked {
		return nil
	}
	g := r.g
	r.section = "edge"
	sel, err := r.columns("edge", "edge", []string{"seq", "source", "edgetypeid", "label", "dest"}, []string{"smi"})
	if err != nil {
		return err
	}
	m := r.nEdges
	if m > math.MaxUint32 {
		return r.fail("%d edges; heapx holds at most 2^32-1", m)
	}
	es := &g.Edges
	es.Type = model.Alloc[uint8](int(m))
	es.Name = model.Alloc[uint32](int(m))
	es.To = model.Alloc[model.NodeIndex](int(m))
	src := model.Alloc[int32](int(m))

	var lo, hi int64
	if err := query(r.conn, "SELECT (SELECT min(seq) FROM edge), (SELECT max(seq) FROM edge)", func(st *sqlite.Stmt) error {
		lo, hi = st.ColumnInt64(0), st.ColumnInt64(1)
		return nil
	}); err != nil {
		return err
	}
	q := "SELECT " + sel + " FROM edge"
	var smi int
	if m > 0 && lo == 0 && hi == m-1 && m >= parallelEdges {
		// seq is 0..m-1: split it.
		var wg sync.WaitGroup
		errs := make([]error, edgeWorkers)
		smis := make([]int, edgeWorkers)
		var stop atomic.Bool
		for w := 0; w < edgeWorkers; w++ {
			from, to := m*int64(w)/int64(edgeWorkers), m*int64(w+1)/int64(edgeWorkers)
			wg.Add(1)
			go func() {
				defer wg.Done()
				conn := r.conn
				if w > 0 {
					c, err := OpenReadOnly(r.file)
					if err != nil {
						errs[w] = err
						stop.Store(true)
						return
					}
					defer c.Close()
					conn = c
				}
				sc := r.newEdgeScan(src, true, &stop)
				errs[w] = sc.run(conn, fmt.Sprintf("%s WHERE seq >= %d AND seq < %d", q, from, to))
				smis[w] = sc.smi
				if errs[w] != nil {
					stop.Store(true)
				}
			}()
		}
		wg.Wait()
		for w := range errs {
			if errs[w] != nil && errs[w] != errStopped {
				return errs[w]
			}
			smi += smis[w]
		}
		if smi > 0 {
			// Rows to small integers left holes: close them up.
			k := 0
			for e := range es.To {
				if es.To[e] >= 0 {
					es.Type[k], es.Name[k], es.To[k], src[k] = es.Type[e], es.Name[e], es.To[e], src[e]
					k++
				}
			}
			es.Type, es.Name, es.To, src = es.Type[:k], es.Name[:k], es.To[:k], src[:k]
		}
	} else {
		sc := r.newEdgeScan(src, false, new(atomic.Bool))
		if err := sc.run(r.conn, q+" ORDER BY seq"); err != nil {
			return err
		}
		smi = sc.smi
		es.Type, es.Name, es.To, src = es.Type[:sc.k], es.Name[:sc.k], es.To[:sc.k], src[:sc.k]
	}
	r.smi = smi

	counts := g.Nodes.FirstEdge // counts per node first, offsets after
	grouped := true
	for e, s := range src {
		counts[s+1]++
		if e > 0 && s < src[e-1] {
			grouped = false
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	if !grouped {
		r.regroup(src)
	}
	return nil
}

// errStopped ends a worker whose sibling failed.
var errStopped = errors.New("stopped")

// edgeScan is one reader of edge rows. Targets are looked up in batches:
// a tight loop of independent hash lookups lets the CPU overlap their
// cache misses, which lookups interleaved with SQLite's work cannot.
type edgeScan struct {
	r       *reader
	src     []int32
	atSeq   bool // rows go to position seq (else one after the other)
	stop    *atomic.Bool
	k       int64 // rows placed (one after the other)
	cur     int32 // the current source node, for the fast path
	smi     int
	pending []pendingDest
}

// pendingDest is a row whose target (or dominator) is still to be looked
// up: its identifier, where the index goes, and the row's key for
// messages.
type pendingDest struct {
	dest uint64
	pos  int64
	seq  int64
}

const destBatch = 4096

func (r *reader) newEdgeScan(src []int32, atSeq bool, stop *atomic.Bool) *edgeScan {
	return &edgeScan{r: r, src: src, atSeq: atSeq, stop: stop, pending: make([]pendingDest, 0, destBatch)}
}

// edgeColumns name the edge query's columns, for messages.
var edgeColumns = []string{"seq", "source", "edgetypeid", "label", "dest", "smi"}

func (sc *edgeScan) run(conn *sqlite.Conn, q string) error {
	r := sc.r
	g := r.g
	es := &g.Edges
	ids := g.Nodes.ID
	m := int64(len(es.To))
	n := 0
	err := query(conn, q, func(st *sqlite.Stmt) error {
		for c := 0; c < 4; c++ {
			if t := st.ColumnType(c); t != sqlite.TypeInteger {
				return r.fail("row %s: %s is %s, want an integer", rowOf(st, "seq"), edgeColumns[c], typeName(t))
			}
		}
		seq := st.ColumnInt64(0)
		pos := sc.k
		if sc.atSeq {
			pos = seq
		}
		if st.ColumnType(4) != sqlite.TypeInteger {
			if st.ColumnType(4) == sqlite.TypeNull && st.ColumnType(5) == sqlite.TypeInteger {
				// An edge to a small integer: the model has no place
				// for it (2.6). A hole at its seq marks it.
				sc.smi++
				if sc.atSeq {
					es.To[pos] = -1
				}
				return nil
			}
			return r.fail("row seq=%d: dest is %s, want a node identifier (or NULL with smi set)", seq, typeName(st.ColumnType(4)))
		}
		if pos >= m {
			return r.fail("more rows than count(*) said (%d): the table changed while read", m)
		}
		// Edges come grouped by source in node order: the source is the
		// previous edge's or the next node, and is looked up only when
		// neither (once per table part, or in a file in another order).
		source := uint64(st.ColumnInt64(1))
		if int(sc.cur)+1 < len(ids) && ids[sc.cur] != source && ids[sc.cur+1] == source {
			sc.cur++
		} else if len(ids) == 0 || ids[sc.cur] != source {
			s := r.ids.Get(source)
			if s < 0 {
				return r.fail("row seq=%d: source %d is not a node identifier", seq, int64(source))
			}
			sc.cur = s
		}
		t := r.edgeT.find(st.ColumnInt64(2))
		if t < 0 {
			return r.fail("row seq=%d: edgetypeid %d is not in edge_types", seq, st.ColumnInt64(2))
		}
		label := st.ColumnInt64(3)
		var name uint32
		if g.EdgeTypes[t].Indexed {
			if label < 0 || label > math.MaxUint32 {
				return r.fail("row seq=%d: label %d is not an index (0 to 2^32-1)", seq, label)
			}
			name = uint32(label)
		} else {
			s := r.strs.find(label)
			if s < 0 {
				return r.fail("row seq=%d: label %d is not a stringid in strings", seq, label)
			}
			name = uint32(s)
		}
		es.Type[pos], es.Name[pos], sc.src[pos] = uint8(t), name, sc.cur
		sc.pending = append(sc.pending, pendingDest{uint64(st.ColumnInt64(4)), pos, seq})
		if len(sc.pending) == destBatch {
			if err := sc.resolve(); err != nil {
				return err
			}
		}
		sc.k++
		if n++; n == destBatch {
			n = 0
			if sc.stop.Load() {
				return errStopped
			}
			r.tickN(destBatch)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return sc.resolve()
}

// resolve looks up the pending targets.
func (sc *edgeScan) resolve() error {
	to := sc.r.g.Edges.To
	ids := sc.r.ids
	for _, p := range sc.pending {
		n := ids.Get(p.dest)
		if n < 0 {
			return sc.r.fail("row seq=%d: dest %d is not a node identifier", p.seq, int64(p.dest))
		}
		to[p.pos] = n
	}
	sc.pending = sc.pending[:0]
	return nil
}

// regroup reorders the edge columns by source node with a stable counting
// sort over FirstEdge, already holding the offsets.
func (r *reader) regroup(src []int32) {
	g := r.g
	es := &g.Edges
	m := len(src)
	next := make([]uint32, g.NumNodes())
	copy(next, g.Nodes.FirstEdge[:len(next)])
	t, nm, to := make([]uint8, m), make([]uint32, m), make([]model.NodeIndex, m)
	for e := 0; e < m; e++ {
		p := next[src[e]]
		next[src[e]]++
		t[p], nm[p], to[p] = es.Type[e], es.Name[e], es.To[e]
	}
	es.Type, es.Name, es.To = t, nm, to
}

// extensions reads the extension tables the model holds (6.2); missing
// tables are empty.
func (r *reader) extensions() error {
	g := r.g
	// node resolves an identifier. Locations come in node order, so the
	// node after the last one found is tried before the hash table.
	ids, last := g.Nodes.ID, model.NodeIndex(-1)
	node := func(v int64, row fmt.Stringer) (model.NodeIndex, error) {
		if next := int(last) + 1; next < len(ids) && ids[next] == uint64(v) {
			last++
			return last, nil
		}
		if err := r.idMap(); err != nil {
			return 0, err
		}
		n := r.ids.Get(uint64(v))
		if n < 0 {
			return 0, r.fail("row %s: %d is not a node identifier", row, v)
		}
		last = n
		return n, nil
	}
	u32 := func(v int64, what string, row fmt.Stringer) (uint32, error) {
		if v < 0 || v > math.MaxUint32 {
			return 0, r.fail("row %s: %s %d out of range", row, what, v)
		}
		return uint32(v), nil
	}
	str := func(v int64, what string, row fmt.Stringer) (model.StringID, error) {
		s := r.strs.find(v)
		if s < 0 {
			return 0, r.fail("row %s: %s %d is not a stringid in strings", row, what, v)
		}
		return model.StringID(s), nil
	}
	// ints reads an all-integer table in key order; optional columns may
	// be NULL (has[i] says, for optional column i).
	ints := func(table, record, key string, cols, optional []string, fn func(v []int64, has []bool, row fmt.Stringer) error) error {
		if _, ok := r.tables[table]; !ok {
			return nil
		}
		r.section = table
		sel, err := r.columns(table, record, cols, optional)
		if err != nil {
			return err
		}
		v := make([]int64, len(cols)+len(optional))
		has := make([]bool, len(optional))
		return query(r.conn, "SELECT "+sel+" FROM "+quoteIdent(table)+" ORDER BY "+quoteIdent(key), func(st *sqlite.Stmt) error {
			row := rowKey{key, st.ColumnInt64(0)}
			for i := range v {
				t := st.ColumnType(i)
				if i >= len(cols) {
					if has[i-len(cols)] = t != sqlite.TypeNull; !has[i-len(cols)] {
						continue
					}
				}
				if t != sqlite.TypeInteger {
					return r.fail("row %s: %s is %s, want an integer", row, append(cols, optional...)[i], typeName(t))
				}
				v[i] = st.ColumnInt64(i)
			}
			return fn(v, has, row)
		})
	}
	// A location's script node is all or nothing (2.7): kept only when
	// every location has one, else dropped and reported.
	var scripts []model.NodeIndex
	withScript := 0
	var err error
	if !r.fromPacked { // else the locations came with the nodes
		err = ints("v8_location", "v8:location", "seq", []string{"seq", "node_identifier", "script_id", "line", "column"}, []string{"script_node_identifier"}, func(v []int64, has []bool, row fmt.Stringer) error {
			n, err := node(v[1], row)
			if err != nil {
				return err
			}
			var l [3]uint32
			for i, what := range []string{"script_id", "line", "column"} {
				if l[i], err = u32(v[2+i], what, row); err != nil {
					return err
				}
			}
			g.Locations = append(g.Locations, model.Location{Node: n, ScriptID: l[0], Line: l[1], Column: l[2]})
			script := model.NoNode
			if has[0] {
				if script = r.ids.Get(uint64(v[5])); script < 0 {
					return r.fail("row %s: script_node_identifier %d is not a node identifier", row, v[5])
				}
				withScript++
			}
			scripts = append(scripts, script)
			return nil
		})
	}
	if err != nil {
		return err
	}
	switch {
	case withScript > 0 && withScript == len(g.Locations):
		g.LocationScripts = scripts
	case withScript > 0:
		r.skippedFields = append(r.skippedFields, fmt.Sprintf("v8:location.script=%d", withScript))
	}
	trace := func() *model.AllocationTrace {
		if g.Trace == nil {
			g.Trace = &model.AllocationTrace{}
		}
		return g.Trace
	}
	err = ints("v8_trace_function", "v8:trace_function", "idx", []string{"idx", "function_id", "name", "script_name", "script_id", "line", "column"}, nil, func(v []int64, _ []bool, row fmt.Stringer) error {
		t := trace()
		if v[0] != int64(len(t.Functions)) {
			return r.fail("row %s: idx must count from 0 without gaps", row)
		}
		name, err := str(v[2], "name", row)
		if err != nil {
			return err
		}
		script, err := str(v[3], "script_name", row)
		if err != nil {
			return err
		}
		sid, err := u32(v[4], "script_id", row)
		if err != nil {
			return err
		}
		if v[5] < math.MinInt32 || v[5] > math.MaxInt32 || v[6] < math.MinInt32 || v[6] > math.MaxInt32 {
			return r.fail("row %s: line or column out of range", row)
		}
		t.Functions = append(t.Functions, model.TraceFunction{ID: uint64(v[1]), Name: name, ScriptName: script,
			ScriptID: sid, Line: int32(v[5]), Column: int32(v[6])})
		return nil
	})
	if err != nil {
		return err
	}
	err = ints("v8_trace_node", "v8:trace_node", "idx", []string{"idx", "parent", "id", "function_index", "count", "size"}, nil, func(v []int64, _ []bool, row fmt.Stringer) error {
		t := trace()
		if v[0] != int64(len(t.Tree)) {
			return r.fail("row %s: idx must count from 0 without gaps", row)
		}
		if v[1] < -1 || v[1] >= v[0] {
			return r.fail("row %s: parent %d must be -1 or an earlier idx", row, v[1])
		}
		id, err := u32(v[2], "id", row)
		if err != nil {
			return err
		}
		fn, err := u32(v[3], "function_index", row)
		if err != nil {
			return err
		}
		t.Tree = append(t.Tree, model.TraceNode{ID: id, Function: fn, Count: uint64(v[4]), Size: uint64(v[5]), Parent: int32(v[1])})
		return nil
	})
	if err != nil {
		return err
	}
	err = ints("v8_sample", "v8:sample", "seq", []string{"seq", "timestamp_us", "last_assigned_id"}, nil, func(v []int64, _ []bool, row fmt.Stringer) error {
		t := trace()
		t.Samples = append(t.Samples, model.TraceSample{TimestampMicros: uint64(v[1]), LastAssignedID: uint64(v[2])})
		return nil
	})
	if err != nil {
		return err
	}
	if t := g.Trace; t != nil {
		for i, n := range t.Tree {
			if int(n.Function) >= len(t.Functions) {
				r.section = "v8_trace_node"
				return r.fail("row idx=%d: function_index %d is not a v8_trace_function idx", i, n.Function)
			}
		}
	}
	if _, ok := r.tables["v8_section"]; ok {
		r.section = "v8_section"
		sel, err := r.columns("v8_section", "v8:section", []string{"seq", "name", "fields", "values"}, nil)
		if err != nil {
			return err
		}
		err = query(r.conn, "SELECT "+sel+" FROM v8_section ORDER BY seq", func(st *sqlite.Stmt) error {
			row := rowKey{"seq", st.ColumnInt64(0)}
			name, err := r.textAt(st, 1, "name", row)
			if err != nil {
				return err
			}
			fj, err := r.textAt(st, 2, "fields", row)
			if err != nil {
				return err
			}
			vj, err := r.textAt(st, 3, "values", row)
			if err != nil {
				return err
			}
			s := model.Section{Name: name}
			if err := json.Unmarshal([]byte(fj), &s.Fields); err != nil {
				return r.fail("row %s: fields is not a JSON array of strings", row)
			}
			if err := json.Unmarshal([]byte(vj), &s.Values); err != nil {
				return r.fail("row %s: values is not a JSON array of integers", row)
			}
			g.Sections = append(g.Sections, s)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if _, ok := r.tables["heapx_gc_root"]; ok {
		r.section = "heapx_gc_root"
		sel, err := r.columns("heapx_gc_root", "heapx:gc_root", []string{"seq", "node_identifier", "kind"}, nil)
		if err != nil {
			return err
		}
		err = query(r.conn, "SELECT "+sel+" FROM heapx_gc_root ORDER BY seq", func(st *sqlite.Stmt) error {
			row := rowKey{"seq", st.ColumnInt64(0)}
			v, err := r.intAt(st, 1, "node_identifier", row)
			if err != nil {
				return err
			}
			n, err := node(v, row)
			if err != nil {
				return err
			}
			kind, err := r.textAt(st, 2, "kind", row)
			if err != nil {
				return err
			}
			k := -1
			for i, x := range g.RootKinds {
				if x == kind {
					k = i
				}
			}
			if k < 0 {
				if len(g.RootKinds) > math.MaxUint16 {
					return r.fail("more than 65536 kinds of GC root")
				}
				g.RootKinds = append(g.RootKinds, kind)
				k = len(g.RootKinds) - 1
			}
			g.GCRoots = append(g.GCRoots, model.GCRoot{Node: n, Kind: uint16(k)})
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// knownTables are the tables docs/format.md defines; every other table
// (other than SQLite's own and the node_fields_N tables) holds records of
// a type this reader does not know.
var knownTables = map[string]bool{
	"metadata": true, "strings": true, "node_types": true, "node_type_fields": true, "edge_types": true,
	"node": true, "edge": true, "v8_location": true, "v8_trace_function": true, "v8_trace_node": true,
	"v8_sample": true, "v8_section": true, "heapx_gc_root": true, "extension_record": true, "heapx_result": true,
	"heapx_packed": true,
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

// results reads heapx_result into opt.Results when asked to. Results are
// all or nothing (4): a table with rows for some nodes only is skipped,
// and reported as skipped fields (7.2), whether asked for or not. The
// policy in heapx:analysis goes with them; a consumer that applies
// another policy must not use them.
func (r *reader) results() error {
	if r.fromPacked {
		return nil // read with the nodes, if asked for
	}
	res := r.opt.Results
	if res != nil {
		*res = model.Results{}
	}
	if _, has := r.tables["heapx_result"]; !has {
		return nil
	}
	r.section = "heapx_result"
	var rows int64
	if err := query(r.conn, "SELECT count(*) FROM heapx_result", func(st *sqlite.Stmt) error { rows = st.ColumnInt64(0); return nil }); err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	if rows != int64(r.g.NumNodes()) {
		for _, f := range []string{"heapx:shallow_size", "heapx:retained_size", "heapx:dominator", "heapx:distance"} {
			r.skippedFields = append(r.skippedFields, fmt.Sprintf("node.%s=%d", f, rows))
		}
		return nil
	}
	if res == nil {
		return nil
	}
	policy := r.meta[exchange.KeyAnalysis]
	sel, err := r.columns("heapx_result", "heapx_result", []string{"node_identifier", "shallow_size", "retained_size", "dominator", "distance"}, nil)
	if err != nil {
		return err
	}
	n := r.g.NumNodes()
	out := model.Results{Policy: policy, Shallow: model.Alloc[uint64](n), Retained: model.Alloc[uint64](n),
		Dominator: model.Alloc[model.NodeIndex](n), Distance: model.Alloc[int32](n)}
	seen := make([]uint64, (n+63)/64)
	got := 0
	// Rows come in identifier order, which is nearly node order: the node
	// after the last one is tried before the hash table. Dominators are
	// looked up in batches, as edge targets are (edgeScan).
	ids, last := r.g.Nodes.ID, -1
	pending := make([]pendingDest, 0, destBatch)
	resolve := func() error {
		for _, p := range pending {
			d := r.ids.Get(p.dest)
			if d < 0 {
				return r.fail("row node_identifier=%d: dominator %d is not a node identifier", p.seq, int64(p.dest))
			}
			out.Dominator[p.pos] = d
		}
		pending = pending[:0]
		return nil
	}
	err = query(r.conn, "SELECT "+sel+" FROM heapx_result", func(st *sqlite.Stmt) error {
		row := rowKey{"node_identifier", st.ColumnInt64(0)}
		for _, c := range []int{0, 1, 2, 4} {
			if st.ColumnType(c) != sqlite.TypeInteger {
				return r.fail("row %s: %s is %s, want an integer", row, resultColumns[c], typeName(st.ColumnType(c)))
			}
		}
		id := uint64(st.ColumnInt64(0))
		var i int32
		if last+1 < len(ids) && ids[last+1] == id {
			i = int32(last + 1)
		} else if i = r.ids.Get(id); i < 0 {
			return r.fail("row %s: not a node identifier", row)
		}
		last = int(i)
		if seen[i/64]&(1<<(i%64)) != 0 {
			return r.fail("row %s: a second result for the node", row)
		}
		seen[i/64] |= 1 << (i % 64)
		out.Shallow[i], out.Retained[i] = uint64(st.ColumnInt64(1)), uint64(st.ColumnInt64(2))
		out.Dominator[i] = model.NoNode
		switch st.ColumnType(3) {
		case sqlite.TypeNull:
		case sqlite.TypeInteger:
			pending = append(pending, pendingDest{dest: uint64(st.ColumnInt64(3)), pos: int64(i), seq: int64(id)})
			if len(pending) == destBatch {
				if err := resolve(); err != nil {
					return err
				}
			}
		default:
			return r.fail("row %s: dominator is %s, want a node identifier or NULL", row, typeName(st.ColumnType(3)))
		}
		dist := st.ColumnInt64(4)
		if dist < math.MinInt32 || dist > math.MaxInt32 {
			return r.fail("row %s: distance %d out of range", row, dist)
		}
		out.Distance[i] = int32(dist)
		got++
		return nil
	})
	if err == nil {
		err = resolve()
	}
	if err != nil {
		return err
	}
	if got != n {
		return r.fail("%d results for the %d nodes: the table changed while read", got, n)
	}
	if err := out.Check(r.g); err != nil {
		return r.fail("%v", err)
	}
	*res = out
	return nil
}

// resultColumns name the heapx_result query's columns, for messages.
var resultColumns = []string{"node_identifier", "shallow_size", "retained_size", "dominator", "distance"}
