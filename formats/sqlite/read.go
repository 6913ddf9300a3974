package sqlite

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats"
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
	ids      *idMap
	rootSeen bool
	smi      int // edges skipped for holding a small integer

	nStrings, nNodes, nEdges int64 // count(*) of the big tables

	// progress state: rows read of about total, reported scaled to the
	// file's size, since callers draw byte-based bars.
	done, total, size, lastReport int64

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
	steps := []func() error{r.metadata, r.counts, r.types, r.strings, r.nodes, r.edges, r.extensions, r.unknown, r.results}
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
		g.Meta = append(g.Meta, model.KV{Key: keySkippedRecs, Value: s})
	}
	for _, s := range r.skippedFields {
		g.Meta = append(g.Meta, model.KV{Key: keySkippedField, Value: s})
	}
	for key, n := range map[string]int{keyNodeCount: g.NumNodes(), keyEdgeCount: g.NumEdges() + r.smiEdges(), keyStringCount: g.Strings.Len()} {
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

// tick records n more rows read and reports progress now and then, in
// bytes of the file as the callers' bars count: rows read scaled to the
// file's size.
func (r *reader) tick(n int64) {
	if r.opt.Progress == nil {
		return
	}
	r.done += n
	if r.done-r.lastReport >= 1<<16 || r.done == r.total {
		r.lastReport = r.done
		r.opt.Progress(int64(float64(r.size)*float64(r.done)/float64(max(r.total, 1))), r.size)
	}
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
func (r *reader) intAt(st *sqlite.Stmt, i int, what string, row string) (int64, error) {
	if t := st.ColumnType(i); t != sqlite.TypeInteger {
		return 0, r.fail("row %s: %s is %s, want an integer", row, what, typeName(t))
	}
	return st.ColumnInt64(i), nil
}

// textAt is intAt for text columns.
func (r *reader) textAt(st *sqlite.Stmt, i int, what string, row string) (string, error) {
	if t := st.ColumnType(i); t != sqlite.TypeText {
		return "", r.fail("row %s: %s is %s, want text", row, what, typeName(t))
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
	v, ok := r.meta[keyVersion]
	if !ok {
		return r.fail("no version_major: not a heapx dump, or one cut short")
	}
	if v != strconv.Itoa(VersionMajor) {
		return r.fail("version_major is %q; this heapx reads version %d (a newer heapx may read it)", v, VersionMajor)
	}
	g := r.g
	g.Meta = append(g.Meta, model.KV{Key: keyFormat, Value: FormatName})
	for _, kv := range kvs {
		switch kv.Key {
		case keyVersion, keyRoot, keyNodeCount, keyEdgeCount, keyStringCount, keyAnalysis:
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

// splitName splits a namespaced type name at its first ':'.
func splitName(s string) (ns, name string) {
	if i := strings.IndexByte(s, ':'); i > 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

func parseCategory(s string) model.Category {
	for c := model.Category(0); c.String() != "other" || c == 0; c++ {
		if c.String() == s {
			return c
		}
	}
	return model.CatOther
}

func parseEdgeCategory(s string) model.EdgeCategory {
	for c := model.EdgeCategory(0); c.String() != "other" || c == 0; c++ {
		if c.String() == s {
			return c
		}
	}
	return model.EdgeOther
}

func parseStrength(s string) model.Strength {
	for _, x := range []model.Strength{model.Strong, model.Weak, model.Shortcut, model.Ephemeron} {
		if x.String() == s {
			return x
		}
	}
	return model.Strong
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
		ns, n := splitName(name)
		g.NodeTypes = append(g.NodeTypes, model.NodeType{Namespace: ns, Name: n, Category: parseCategory(cat)})
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
		ns, n := splitName(f[0])
		g.EdgeTypes = append(g.EdgeTypes, model.EdgeType{Namespace: ns, Name: n, Category: parseEdgeCategory(f[1]),
			Strength: parseStrength(f[2]), Indexed: f[3] == "index"})
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
				r.skippedFields = append(r.skippedFields, fmt.Sprintf("node.%s=%d", name, n))
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

// nodes reads the node table in seq order (1.8).
func (r *reader) nodes() error {
	g := r.g
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
	ns := &g.Nodes
	ns.Type = model.Alloc[uint8](int(n))
	ns.Name = model.Alloc[model.StringID](int(n))
	ns.ID = model.Alloc[uint64](int(n))
	ns.Size = model.Alloc[uint64](int(n))
	ns.FirstEdge = model.Alloc[uint32](int(n) + 1)
	// The optional columns exist in every heapx file and are NULL when
	// the dump has no such data; a model column is made on the first
	// value seen, so an all-NULL column costs nothing.
	r.ids = newIDMap(int(n))
	i := 0
	var prevSeq int64
	root, hasRoot := r.meta[keyRoot]
	var rootID uint64
	if hasRoot {
		v, err := strconv.ParseUint(root, 10, 64)
		if err != nil {
			r.section = "metadata"
			return r.fail("heapx:root is %q, not a node identifier", root)
		}
		rootID = v
	}
	err = query(r.conn, "SELECT "+sel+" FROM node ORDER BY seq", func(st *sqlite.Stmt) error {
		if i >= int(n) {
			return r.fail("more rows than count(*) said (%d): the table changed while read", n)
		}
		// Every value of a node row is an integer, so one type check
		// per row (the five required columns) is all the checking.
		for c := 0; c < 5; c++ {
			if st.ColumnType(c) != sqlite.TypeInteger {
				return r.fail("row %s: %s is %s, want an integer", rowOf(st, "identifier"), []string{"identifier", "seq", "nodetypeid", "name", "self_size"}[c], typeName(st.ColumnType(c)))
			}
		}
		id := st.ColumnInt64(0)
		seq := st.ColumnInt64(1)
		if i > 0 && seq == prevSeq {
			return r.fail("row identifier=%d: seq %d repeats", id, seq)
		}
		prevSeq = seq
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
		if !r.ids.insert(uint64(id), int32(i)) {
			return r.fail("row identifier=%d: the identifier repeats", id)
		}
		ns.ID[i], ns.Type[i], ns.Name[i], ns.Size[i] = uint64(id), uint8(t), model.StringID(name), uint64(size)
		if st.ColumnType(5) != sqlite.TypeNull {
			v, err := r.intAt(st, 5, "v8_trace_node_id", "identifier="+strconv.FormatInt(id, 10))
			if err != nil {
				return err
			}
			if v < 0 || v > math.MaxUint32 {
				return r.fail("row identifier=%d: v8_trace_node_id %d out of range", id, v)
			}
			if g.TraceNodeID == nil {
				g.TraceNodeID = model.Alloc[uint32](int(n))
			}
			g.TraceNodeID[i] = uint32(v)
		}
		if st.ColumnType(6) != sqlite.TypeNull {
			v, err := r.intAt(st, 6, "v8_detachedness", "identifier="+strconv.FormatInt(id, 10))
			if err != nil {
				return err
			}
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
		i++
		r.tick(1)
		return nil
	})
	if err != nil {
		return err
	}
	if i != int(n) {
		return r.fail("%d rows read, count(*) said %d", i, n)
	}
	if hasRoot && !r.rootSeen && n > 0 {
		r.section = "metadata"
		return r.fail("heapx:root %d is not a node", rootID)
	}
	return nil
}

// rowOf names the current row by its key column, for messages.
func rowOf(st *sqlite.Stmt, key string) string {
	return key + "=" + st.ColumnText(0)
}

// edges reads the edge table in seq order and builds the CSR columns. A
// heapx file has its edges grouped by source in node order, which is
// checked on the fly; any other order is regrouped with a stable counting
// sort, which keeps each node's edges in seq order (1.8).
func (r *reader) edges() error {
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
	ids := g.Nodes.ID
	counts := g.Nodes.FirstEdge // counts per node first, offsets after
	grouped := true
	cur := int32(0)
	k := 0
	err = query(r.conn, "SELECT "+sel+" FROM edge ORDER BY seq", func(st *sqlite.Stmt) error {
		for c := 0; c < 4; c++ {
			if st.ColumnType(c) != sqlite.TypeInteger {
				return r.fail("row %s: %s is %s, want an integer", rowOf(st, "seq"), []string{"seq", "source", "edgetypeid", "label"}[c], typeName(st.ColumnType(c)))
			}
		}
		if st.ColumnType(4) != sqlite.TypeInteger {
			if st.ColumnType(4) == sqlite.TypeNull && st.ColumnType(5) == sqlite.TypeInteger {
				// An edge to a small integer: the model has no place
				// for it (2.6).
				r.smi++
				return nil
			}
			return r.fail("row %s: dest is %s, want a node identifier (or NULL with smi set)", rowOf(st, "seq"), typeName(st.ColumnType(4)))
		}
		if k >= int(m) {
			return r.fail("more rows than count(*) said (%d): the table changed while read", m)
		}
		source := uint64(st.ColumnInt64(1))
		if len(ids) == 0 || ids[cur] != source {
			s := r.ids.get(source)
			if s < 0 {
				return r.fail("row %s: source %d is not a node identifier", rowOf(st, "seq"), int64(source))
			}
			if s < cur {
				grouped = false
			}
			cur = s
		}
		t := r.edgeT.find(st.ColumnInt64(2))
		if t < 0 {
			return r.fail("row %s: edgetypeid %d is not in edge_types", rowOf(st, "seq"), st.ColumnInt64(2))
		}
		label := st.ColumnInt64(3)
		var name uint32
		if g.EdgeTypes[t].Indexed {
			if label < 0 || label > math.MaxUint32 {
				return r.fail("row %s: label %d is not an index (0 to 2^32-1)", rowOf(st, "seq"), label)
			}
			name = uint32(label)
		} else {
			s := r.strs.find(label)
			if s < 0 {
				return r.fail("row %s: label %d is not a stringid in strings", rowOf(st, "seq"), label)
			}
			name = uint32(s)
		}
		to := r.ids.get(uint64(st.ColumnInt64(4)))
		if to < 0 {
			return r.fail("row %s: dest %d is not a node identifier", rowOf(st, "seq"), st.ColumnInt64(4))
		}
		es.Type[k], es.Name[k], es.To[k], src[k] = uint8(t), name, to, cur
		counts[cur+1]++
		k++
		r.tick(1)
		return nil
	})
	if err != nil {
		return err
	}
	es.Type, es.Name, es.To, src = es.Type[:k], es.Name[:k], es.To[:k], src[:k]
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	if !grouped {
		r.regroup(src)
	}
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
	node := func(v int64, row string) (model.NodeIndex, error) {
		n := r.ids.get(uint64(v))
		if n < 0 {
			return 0, r.fail("row %s: %d is not a node identifier", row, v)
		}
		return n, nil
	}
	u32 := func(v int64, what, row string) (uint32, error) {
		if v < 0 || v > math.MaxUint32 {
			return 0, r.fail("row %s: %s %d out of range", row, what, v)
		}
		return uint32(v), nil
	}
	str := func(v int64, what, row string) (model.StringID, error) {
		s := r.strs.find(v)
		if s < 0 {
			return 0, r.fail("row %s: %s %d is not a stringid in strings", row, what, v)
		}
		return model.StringID(s), nil
	}
	// ints reads an all-integer table in key order.
	ints := func(table, record, key string, cols []string, fn func(v []int64, row string) error) error {
		if _, ok := r.tables[table]; !ok {
			return nil
		}
		r.section = table
		sel, err := r.columns(table, record, cols, nil)
		if err != nil {
			return err
		}
		v := make([]int64, len(cols))
		return query(r.conn, "SELECT "+sel+" FROM "+quoteIdent(table)+" ORDER BY "+quoteIdent(key), func(st *sqlite.Stmt) error {
			row := key + "=" + st.ColumnText(0)
			for i := range v {
				if st.ColumnType(i) != sqlite.TypeInteger {
					return r.fail("row %s: %s is %s, want an integer", row, cols[i], typeName(st.ColumnType(i)))
				}
				v[i] = st.ColumnInt64(i)
			}
			return fn(v, row)
		})
	}
	err := ints("v8_location", "v8:location", "seq", []string{"seq", "node_identifier", "script_id", "line", "column"}, func(v []int64, row string) error {
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
		return nil
	})
	if err != nil {
		return err
	}
	trace := func() *model.AllocationTrace {
		if g.Trace == nil {
			g.Trace = &model.AllocationTrace{}
		}
		return g.Trace
	}
	err = ints("v8_trace_function", "v8:trace_function", "idx", []string{"idx", "function_id", "name", "script_name", "script_id", "line", "column"}, func(v []int64, row string) error {
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
	err = ints("v8_trace_node", "v8:trace_node", "idx", []string{"idx", "parent", "id", "function_index", "count", "size"}, func(v []int64, row string) error {
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
	err = ints("v8_sample", "v8:sample", "seq", []string{"seq", "timestamp_us", "last_assigned_id"}, func(v []int64, row string) error {
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
			row := "seq=" + st.ColumnText(0)
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
			row := "seq=" + st.ColumnText(0)
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

// results reads heapx_result into opt.Results when asked to and the file
// names their policy (4): results without one are ignored.
func (r *reader) results() error {
	res := r.opt.Results
	if res == nil {
		return nil
	}
	*res = model.Results{}
	policy, ok := r.meta[keyAnalysis]
	if _, has := r.tables["heapx_result"]; !has || !ok || policy == "" {
		return nil
	}
	r.section = "heapx_result"
	sel, err := r.columns("heapx_result", "heapx_result", []string{"node_identifier", "shallow_size", "retained_size", "dominator", "distance"}, nil)
	if err != nil {
		return err
	}
	n := r.g.NumNodes()
	out := model.Results{Policy: policy, Shallow: model.Alloc[uint64](n), Retained: model.Alloc[uint64](n),
		Dominator: model.Alloc[model.NodeIndex](n), Distance: model.Alloc[int32](n)}
	seen := make([]uint64, (n+63)/64)
	rows := 0
	err = query(r.conn, "SELECT "+sel+" FROM heapx_result", func(st *sqlite.Stmt) error {
		row := "node_identifier=" + st.ColumnText(0)
		for _, c := range []int{0, 1, 2, 4} {
			if st.ColumnType(c) != sqlite.TypeInteger {
				return r.fail("row %s: column %d is %s, want an integer", row, c+1, typeName(st.ColumnType(c)))
			}
		}
		i := r.ids.get(uint64(st.ColumnInt64(0)))
		if i < 0 {
			return r.fail("row %s: not a node identifier", row)
		}
		if seen[i/64]&(1<<(i%64)) != 0 {
			return r.fail("row %s: a second result for the node", row)
		}
		seen[i/64] |= 1 << (i % 64)
		out.Shallow[i], out.Retained[i] = uint64(st.ColumnInt64(1)), uint64(st.ColumnInt64(2))
		out.Dominator[i] = model.NoNode
		switch st.ColumnType(3) {
		case sqlite.TypeNull:
		case sqlite.TypeInteger:
			d := r.ids.get(uint64(st.ColumnInt64(3)))
			if d < 0 {
				return r.fail("row %s: dominator %d is not a node identifier", row, st.ColumnInt64(3))
			}
			out.Dominator[i] = d
		default:
			return r.fail("row %s: dominator is %s, want a node identifier or NULL", row, typeName(st.ColumnType(3)))
		}
		dist := st.ColumnInt64(4)
		if dist < math.MinInt32 || dist > math.MaxInt32 {
			return r.fail("row %s: distance %d out of range", row, dist)
		}
		out.Distance[i] = int32(dist)
		rows++
		return nil
	})
	if err != nil {
		return err
	}
	if rows == 0 {
		return nil
	}
	if rows != n {
		return r.fail("results for %d of the %d nodes; results are all or nothing (4)", rows, n)
	}
	*res = out
	return nil
}
