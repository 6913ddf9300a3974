package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// smallDB writes a small graph (a chain of 5 nodes, ids 1, 3, 5, 7, 9)
// to a new .db and returns its path.
func smallDB(t testing.TB, g *model.Graph) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "small.db")
	if err := Save(db, g, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return db
}

// mutate runs statements on the database at path through a read-write
// connection, as another program editing the file would.
func mutate(t testing.TB, path string, stmts ...string) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if err := exec(conn, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestBadDatabases changes one thing in a good file per case: each must
// fail with a FormatError that names the file, the table and the row.
func TestBadDatabases(t *testing.T) {
	cases := []struct {
		name  string
		stmts []string
		want  string // substring of the error
	}{
		{"unknown version", []string{`UPDATE metadata SET value = '2' WHERE key = 'version_major'`},
			`table metadata: version_major is "2"; this heapx reads version 1`},
		{"no version", []string{`DELETE FROM metadata WHERE key = 'version_major'`}, "no version_major"},
		{"no edge table", []string{`DROP TABLE edge`}, "no table edge"},
		{"no metadata table", []string{`DROP TABLE metadata`}, "without a metadata table"},
		{"missing column", []string{`DROP VIEW nodes_named`, `DROP VIEW nodes_full`, `ALTER TABLE node DROP COLUMN self_size`},
			"table node: no column self_size"},
		{"text size", []string{`UPDATE node SET self_size = 'big' WHERE seq = 1`},
			"table node: row identifier=3: self_size is text, want an integer"},
		{"negative size", []string{`UPDATE node SET self_size = -1 WHERE seq = 1`}, "self_size -1 is negative"},
		{"dangling dest", []string{`UPDATE edge SET dest = 999999 WHERE seq = 0`},
			"table edge: row seq=0: dest 999999 is not a node identifier"},
		{"dangling source", []string{`UPDATE edge SET source = 999999 WHERE seq = 0`}, "source 999999 is not a node identifier"},
		{"null dest", []string{`UPDATE edge SET dest = NULL WHERE seq = 0`}, "dest is NULL"},
		{"unknown edge type", []string{`UPDATE edge SET edgetypeid = 77 WHERE seq = 0`}, "edgetypeid 77 is not in edge_types"},
		{"unknown node type", []string{`UPDATE node SET nodetypeid = 9 WHERE seq = 2`}, "row identifier=5: nodetypeid 9"},
		{"dangling name", []string{`UPDATE node SET name = 4242 WHERE seq = 0`}, "name 4242 is not a stringid"},
		{"dangling label", []string{`UPDATE edge SET label = 4242 WHERE seq = 1`}, "label 4242 is not a stringid"},
		{"bad name kind", []string{`UPDATE edge_types SET name_kind = 'weird'`}, `name_kind is "weird"`},
		{"count promise", []string{`UPDATE metadata SET value = '6' WHERE key = 'heapx:node_count'`},
			"heapx:node_count is 6 but the file holds 5"},
		{"edge count promise", []string{`DELETE FROM edge WHERE seq = 3`}, "heapx:edge_count is 4 but the file holds 3"},
		{"root not a node", []string{`UPDATE metadata SET value = '12345' WHERE key = 'heapx:root'`}, "heapx:root 12345 is not a node"},
		{"root not a number", []string{`UPDATE metadata SET value = 'x' WHERE key = 'heapx:root'`}, `heapx:root is "x"`},
		{"blob key", []string{`UPDATE metadata SET key = x'00' WHERE seq = 1`}, "row 2: key is a blob, want text"},
		{"bad section json", []string{`INSERT INTO v8_section VALUES (0, 'scopes', '[', '[]')`}, "fields is not a JSON array"},
		{"trace parent", []string{`INSERT INTO v8_trace_function VALUES (0, 1, 0, 0, 0, 0, 0)`,
			`INSERT INTO v8_trace_node VALUES (0, 3, 1, 0, 0, 0)`}, "parent 3 must be -1 or an earlier idx"},
		{"location node", []string{`INSERT INTO v8_location VALUES (0, 4, 1, 2, 3, NULL)`}, "4 is not a node identifier"},
		{"location script", []string{`INSERT INTO v8_location VALUES (0, 1, 1, 2, 3, 4)`},
			"table v8_location: row seq=0: script_node_identifier 4 is not a node identifier"},
		{"location script text", []string{`INSERT INTO v8_location VALUES (0, 1, 1, 2, 3, 'x')`},
			"row seq=0: script_node_identifier is text, want an integer"},
		{"location line", []string{`INSERT INTO v8_location VALUES (0, 1, 1, -2, 3, NULL)`},
			"table v8_location: row seq=0: line -2 out of range"},
		{"trace function gap", []string{`INSERT INTO v8_trace_function VALUES (1, 1, 0, 0, 0, 0, 0)`},
			"table v8_trace_function: row idx=1: idx must count from 0 without gaps"},
		{"trace function name", []string{`INSERT INTO v8_trace_function VALUES (0, 1, 4242, 0, 0, 0, 0)`},
			"table v8_trace_function: row idx=0: name 4242 is not a stringid in strings"},
		{"trace function line", []string{`INSERT INTO v8_trace_function VALUES (0, 1, 0, 0, 0, 4294967296, 0)`},
			"table v8_trace_function: row idx=0: line or column out of range"},
		{"trace node function", []string{`INSERT INTO v8_trace_function VALUES (0, 1, 0, 0, 0, 0, 0)`,
			`INSERT INTO v8_trace_node VALUES (0, -1, 1, 1, 0, 0)`},
			"table v8_trace_node: row idx=0: function_index 1 is not a v8_trace_function idx"},
		{"sample text", []string{`INSERT INTO v8_sample VALUES (0, 'x', 0)`},
			"table v8_sample: row seq=0: timestamp_us is text, want an integer"},
		{"gc root node", []string{`INSERT INTO heapx_gc_root VALUES (0, 4, 'stack')`},
			"table heapx_gc_root: row seq=0: 4 is not a node identifier"},
		{"gc root kind", []string{`INSERT INTO heapx_gc_root VALUES (0, 1, x'00')`},
			"table heapx_gc_root: row seq=0: kind is a blob, want text"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := smallDB(t, chain(5))
			mutate(t, db, c.stmts...)
			_, err := ReadFile(db, ReadOptions{})
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T is not a FormatError: %v", err, err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), db+":") {
				t.Errorf("error %q does not start with the file and say %q", err, c.want)
			}
		})
	}
}

// TestNotADatabase reads files that are not SQLite databases, or damaged
// ones: a FormatError, never a panic.
func TestNotADatabase(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(smallDB(t, chain(300)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"garbage.db":   []byte("this is not a database at all, but it is long enough to have a header......................................................"),
		"truncated.db": good[:len(good)/2],
		"header.db":    good[:100],
	}
	for name, b := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path, ReadOptions{})
		var fe *formats.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %T is not a FormatError: %v", name, err, err)
		}
	}
}

// TestDetect checks that only SQLite files with heapx's application id, or
// a small schema with a metadata table, are taken for heapx dumps.
func TestDetect(t *testing.T) {
	head := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b[:min(len(b), formats.HeadSize)]
	}
	if !Detect(head(smallDB(t, chain(3)))) {
		t.Error("heapx's own file not detected")
	}
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	foreign := filepath.Join(dir, "foreign.db")
	for path, stmts := range map[string][]string{
		other:   {`CREATE TABLE t(x)`, `INSERT INTO t VALUES (1)`},
		foreign: {`CREATE TABLE metadata(seq INTEGER PRIMARY KEY, key TEXT NOT NULL, value TEXT NOT NULL)`},
	} {
		conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stmts {
			if err := exec(conn, s); err != nil {
				t.Fatal(err)
			}
		}
		conn.Close()
	}
	if Detect(head(other)) {
		t.Error("an unrelated SQLite database was taken for a heap dump")
	}
	if !Detect(head(foreign)) {
		t.Error("a database another program wrote with a metadata table was not detected")
	}
	if Detect([]byte("SQLite format 3\x00")) || Detect([]byte(`["metadata","version_major","1"]`)) {
		t.Error("short or non-SQLite heads detected")
	}
}

// TestUnknownIsSkipped adds what a newer heapx or another tool might: a
// namespaced column, a table, extension records, subtype fields, an edge
// to a small integer. The file still reads, and what was skipped is
// counted in the metadata (docs/format.md 7.2).
func TestUnknownIsSkipped(t *testing.T) {
	g := chain(5)
	db := smallDB(t, g)
	mutate(t, db,
		`ALTER TABLE node ADD COLUMN acme_color TEXT`,
		`UPDATE node SET acme_color = 'red' WHERE seq < 2`,
		`ALTER TABLE edge ADD COLUMN acme_weight REAL`,
		`CREATE TABLE acme_thing (x)`,
		`INSERT INTO acme_thing VALUES (1), (2)`,
		`CREATE TABLE acme_empty (x)`,
		`INSERT INTO extension_record VALUES (0, 'acme:timer', '["acme:timer",1]'), (1, 'acme:timer', '["acme:timer",2]')`,
		`INSERT INTO node_type_fields VALUES (0, 0, 'length', 'smi')`,
		`CREATE TABLE node_fields_0 (node_identifier INTEGER PRIMARY KEY, length INTEGER)`,
		`INSERT INTO node_fields_0 VALUES (1, 5), (3, 7), (5, NULL)`,
		`INSERT INTO edge (seq, source, edgetypeid, label, dest, smi) VALUES (100, 9, 0, 1, NULL, 42)`,
		`UPDATE metadata SET value = '5' WHERE key = 'heapx:edge_count'`,
		`CREATE INDEX acme_ix ON node(acme_color)`,
		`CREATE VIEW acme_view AS SELECT 1`,
	)
	h, err := ReadFile(db, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	var rest []model.KV
	for _, kv := range h.Meta {
		switch kv.Key {
		case exchange.KeySkippedRecords, exchange.KeySkippedFields:
			skipped = append(skipped, kv.Key+" "+kv.Value)
		default:
			rest = append(rest, kv)
		}
	}
	want := []string{
		"heapx:skipped_records acme:timer=2",
		"heapx:skipped_records acme_thing=2",
		"heapx:skipped_records edge(smi)=1",
		"heapx:skipped_fields node.acme_color=2",
		"heapx:skipped_fields node_type test:object.length=2",
	}
	slices.Sort(want)
	slices.Sort(skipped)
	if !slices.Equal(skipped, want) {
		t.Errorf("skipped:\n%s\nwant:\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	h.Meta = rest
	compareGraphs(t, g, h)
}

// TestForeignLayouts reads files laid out as another writer may: string
// ids that are not 0..n-1, edges not grouped by source, identifiers at
// and above 2^63.
func TestForeignLayouts(t *testing.T) {
	t.Run("sparse string ids", func(t *testing.T) {
		g := chain(5)
		db := smallDB(t, g)
		mutate(t, db,
			`UPDATE strings SET stringid = stringid * 10 + 100`,
			`UPDATE node SET name = name * 10 + 100`,
			`UPDATE edge SET label = label * 10 + 100 WHERE edgetypeid IN (SELECT edgetypeid FROM edge_types WHERE name_kind = 'string')`)
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compareGraphs(t, g, h)
	})
	t.Run("edges interleaved", func(t *testing.T) {
		g := fan()
		db := smallDB(t, g)
		// Node 1's edges move behind everyone else's, node 3's in front.
		mutate(t, db, `UPDATE edge SET seq = seq + 1000 WHERE source = 1`, `UPDATE edge SET seq = seq - 1000 WHERE source = 3`)
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compareGraphs(t, g, h)
	})
	t.Run("big identifiers", func(t *testing.T) {
		g := chain(4)
		g.Nodes.ID = model.NewUint64s(1<<63, 1<<64-1, 0, 1<<63-1)
		db := smallDB(t, g)
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		compareGraphs(t, g, h)
	})
}

// skippedOf returns the skipped-field entries of a graph's metadata.
func skippedOf(g *model.Graph) []string {
	var out []string
	if g == nil {
		return nil
	}
	for _, kv := range g.Meta {
		if kv.Key == exchange.KeySkippedFields {
			out = append(out, kv.Value)
		}
	}
	return out
}

// TestLocationScripts carries the locations' Script nodes (Chrome's
// script_object_index) in v8_location.script_node_identifier: they come
// back; with some rows NULL the column is dropped and its values reported
// (all or nothing, docs/format.md 2.7); a file without the column, or with
// only NULLs, reads as a dump without them.
func TestLocationScripts(t *testing.T) {
	g := chain(5)
	g.Locations = []model.Location{{Node: 1, ScriptID: 7, Line: 1, Column: 2}, {Node: 2, ScriptID: 7, Line: 3, Column: 4}, {Node: 4, ScriptID: 8}}
	g.LocationScripts = []model.NodeIndex{3, 3, 0}
	db := smallDB(t, g)
	h, err := ReadFile(db, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	compareGraphs(t, g, h)

	mutate(t, db, `UPDATE v8_location SET script_node_identifier = NULL WHERE seq = 1`)
	h, err = ReadFile(db, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h.LocationScripts != nil || len(h.Locations) != 3 || !slices.Equal(skippedOf(h), []string{"v8:location.script=2"}) {
		t.Errorf("some NULL: scripts %v, %d locations, skipped %v", h.LocationScripts, len(h.Locations), skippedOf(h))
	}

	for name, stmt := range map[string]string{
		"all NULL":  `UPDATE v8_location SET script_node_identifier = NULL`,
		"no column": `ALTER TABLE v8_location DROP COLUMN script_node_identifier`,
	} {
		db := smallDB(t, g)
		mutate(t, db, stmt)
		h, err := ReadFile(db, ReadOptions{})
		if err != nil {
			t.Fatal(name, err)
		}
		if h.LocationScripts != nil || len(h.Locations) != 3 || len(skippedOf(h)) != 0 {
			t.Errorf("%s: scripts %v, %d locations, skipped %v", name, h.LocationScripts, len(h.Locations), skippedOf(h))
		}
	}
}

// fan is a graph whose nodes 0 and 1 both have several edges, so edge
// order within and across nodes shows.
func fan() *model.Graph {
	g := chain(4)
	// node 0 -> 1, 2, 3; node 1 -> 2, 3, 0; node 2 -> 3; node 3 none.
	g.Nodes.FirstEdge = []uint32{0, 3, 6, 7, 7}
	g.Edges.Type = make([]uint8, 7)
	g.Edges.Name = []uint32{1, 2, 0, 1, 2, 0, 1}
	g.Edges.To = []model.NodeIndex{1, 2, 3, 2, 3, 0, 3}
	return g
}

// TestResultsAllOrNothing: results for some nodes only are skipped and
// reported, whether asked for or not; complete ones not asked for are not
// read; results without a policy come with an empty one.
func TestResultsAllOrNothing(t *testing.T) {
	g := chain(3)
	res := &model.Results{Policy: "raw", Shallow: []uint64{0, 1, 2}, Retained: []uint64{3, 3, 2},
		Dominator: []model.NodeIndex{model.NoNode, 0, 1}, Distance: []int32{0, 1, 2}}
	db := filepath.Join(t.TempDir(), "r.db")
	if err := Save(db, g, WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	var back model.Results
	if _, err := ReadFile(db, ReadOptions{Results: &back}); err != nil {
		t.Fatal(err)
	}
	if back.Policy != "raw" || !slices.Equal(back.Dominator, res.Dominator) || !slices.Equal(back.Retained, res.Retained) {
		t.Errorf("results read back as %+v", back)
	}
	if h, err := ReadFile(db, ReadOptions{}); err != nil || len(skippedOf(h)) != 0 {
		t.Errorf("complete results not asked for: %v, skipped %v", err, skippedOf(h))
	}
	mutate(t, db, `DELETE FROM metadata WHERE key = 'heapx:analysis'`)
	back = model.Results{Policy: "stale"}
	if _, err := ReadFile(db, ReadOptions{Results: &back}); err != nil || back.Shallow == nil || back.Policy != "" {
		t.Errorf("results without a policy: %v, %+v", err, back)
	}
	mutate(t, db, `DELETE FROM heapx_result WHERE node_identifier = 3`)
	want := []string{"node.heapx:distance=2", "node.heapx:dominator=2", "node.heapx:retained_size=2", "node.heapx:shallow_size=2"}
	for _, asked := range []*model.Results{nil, &back} {
		h, err := ReadFile(db, ReadOptions{Results: asked})
		if err != nil || !slices.Equal(skippedOf(h), want) {
			t.Errorf("partial results (asked: %v): %v, skipped %v", asked != nil, err, skippedOf(h))
		}
	}
	if back.Shallow != nil {
		t.Error("partial results were handed out")
	}
}

// TestAtomicWrite: a write that fails leaves neither the output nor a
// temporary file behind, and a write never goes into an existing file.
func TestAtomicWrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.db")
	g := chain(250)
	g.Nodes.ID.Set(200, g.NodeID(3)) // a repeated identifier fails mid-way
	err := Save(out, g, WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "not unique") {
		t.Fatalf("repeated identifiers: %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed write left %v", left)
	}
	if err := os.WriteFile(out, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(out, chain(3), WriteOptions{}); err == nil {
		t.Error("WriteFile wrote into an existing file")
	}
	if b, _ := os.ReadFile(out); string(b) != "precious" {
		t.Error("the existing file changed")
	}
}

// TestReadOnlyConnection: OpenReadOnly refuses writes, file creation
// through ATTACH or VACUUM INTO, and turning query_only off.
func TestReadOnlyConnection(t *testing.T) {
	db := smallDB(t, chain(3))
	before, _ := os.ReadFile(db)
	conn, err := OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dir := t.TempDir()
	for _, q := range []string{
		`INSERT INTO metadata (key, value) VALUES ('a', 'b')`,
		`UPDATE node SET self_size = 0`,
		`DELETE FROM edge`,
		`DROP TABLE node`,
		`CREATE TABLE x (y)`,
		`CREATE TEMP TABLE x (y)`,
		`ATTACH DATABASE '` + filepath.Join(dir, "a.db") + `' AS a`,
		`VACUUM INTO '` + filepath.Join(dir, "v.db") + `'`,
		`PRAGMA query_only = OFF`,
		`PRAGMA writable_schema = ON`,
		`ANALYZE`,
		`REINDEX`,
	} {
		if err := exec(conn, q); err == nil {
			t.Errorf("%s: allowed", q)
		}
	}
	for _, q := range []string{`SELECT count(*) FROM nodes_full`, `PRAGMA table_info(node)`, `PRAGMA page_size`, `BEGIN`, `COMMIT`} {
		if err := exec(conn, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("files were created: %v", left)
	}
	if after, _ := os.ReadFile(db); string(after) != string(before) {
		t.Error("the database changed")
	}
}

// TestSmallIntegerEdgesInParallelScan: an edge to a small integer in a
// table big enough to be read by several connections leaves a hole that
// is closed up, and the graph is still the one written.
func TestSmallIntegerEdgesInParallelScan(t *testing.T) {
	g := chain(parallelEdges + 10)
	db := smallDB(t, g)
	m := g.NumEdges()
	mutate(t, db,
		// Shift the later rows up by one, through negative numbers so
		// no two rows share a seq on the way.
		fmt.Sprintf(`UPDATE edge SET seq = -(seq + 1) WHERE seq >= %d`, m/3),
		`UPDATE edge SET seq = -seq WHERE seq < 0`,
		fmt.Sprintf(`INSERT INTO edge (seq, source, edgetypeid, label, dest, smi) VALUES (%d, 1, 0, 1, NULL, 42)`, m/3),
		fmt.Sprintf(`UPDATE metadata SET value = '%d' WHERE key = 'heapx:edge_count'`, m+1))
	h, err := ReadFile(db, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := h.MetaValue(exchange.KeySkippedRecords); v != "edge(smi)=1" {
		t.Errorf("skipped %q", v)
	}
	var rest []model.KV
	for _, kv := range h.Meta {
		if kv.Key != exchange.KeySkippedRecords {
			rest = append(rest, kv)
		}
	}
	h.Meta = rest
	compareGraphs(t, g, h)
}

// TestNodesFullView: nodes_full lists every node, with the results when
// the file has them and NULLs when not.
func TestNodesFullView(t *testing.T) {
	g := chain(3)
	res := &model.Results{Policy: "raw", Shallow: []uint64{0, 1, 2}, Retained: []uint64{3, 3, 2},
		Dominator: []model.NodeIndex{model.NoNode, 0, 1}, Distance: []int32{0, 1, 2}}
	for _, r := range []*model.Results{nil, res} {
		db := filepath.Join(t.TempDir(), "v.db")
		if err := Save(db, g, WriteOptions{Results: r}); err != nil {
			t.Fatal(err)
		}
		conn, err := OpenReadOnly(db)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		err = query(conn, "SELECT identifier, name, retained_size, dominator FROM nodes_full ORDER BY seq", func(st *sqlite.Stmt) error {
			got = append(got, st.ColumnText(0)+" "+st.ColumnText(1)+" "+st.ColumnText(2)+" "+st.ColumnText(3))
			return nil
		})
		conn.Close()
		want := []string{"1 Node  ", "3 Node  ", "5 Node  "}
		if r != nil {
			want = []string{"1 Node 3 ", "3 Node 3 1", "5 Node 2 3"}
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("results %v: nodes_full %q, %v; want %q", r != nil, got, err, want)
		}
	}
}

// TestPackedCache: a file written with results carries heapx_packed, which
// the reader uses instead of the rows while it is complete and no row it
// derives from has changed: a change empties it (the triggers), missing
// parts send the reader to the rows, and the rows always win.
func TestPackedCache(t *testing.T) {
	g := fan()
	g.Locations = []model.Location{{Node: 2, ScriptID: 7, Line: 8, Column: 9}}
	res := &model.Results{Policy: "raw", Shallow: []uint64{0, 1, 2, 3}, Retained: []uint64{6, 3, 2, 3},
		Dominator: []model.NodeIndex{model.NoNode, 0, 1, 0}, Distance: []int32{0, 1, 2, 1}}
	db := filepath.Join(t.TempDir(), "p.db")
	if err := Save(db, g, WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	read := func() (*model.Graph, model.Results) {
		t.Helper()
		var back model.Results
		h, err := ReadFile(db, ReadOptions{Results: &back})
		if err != nil {
			t.Fatal(err)
		}
		return h, back
	}
	h, back := read()
	if err := model.Compare(g, h, ignoreMeta); err != nil || !reflect.DeepEqual(*res, back) || len(skippedOf(h)) != 0 {
		t.Fatalf("round trip: %v; results %+v; skipped %v", err, back, skippedOf(h))
	}
	// Without its triggers, the cache is what is read (which is why a
	// tool that drops them must drop the cache too).
	name0 := g.Strings.At(g.Nodes.Name[0])
	mutate(t, db, `DROP TRIGGER heapx_packed_node_update`, `UPDATE node SET self_size = 99 WHERE seq = 0`,
		`DROP TRIGGER heapx_packed_strings_update`, fmt.Sprintf(`UPDATE strings SET data = 'renamed' WHERE stringid = %d`, g.Nodes.Name[0]))
	if h, _ := read(); h.NodeSize(0) != g.NodeSize(0) || h.Strings.At(h.Nodes.Name[0]) != name0 {
		t.Fatalf("self_size %d, name %q: the cache was not used", h.NodeSize(0), h.Strings.At(h.Nodes.Name[0]))
	}
	// With them, changing a row empties it.
	mutate(t, db, `UPDATE edge SET dest = 1 WHERE seq = 6`)
	if n := countRows(t, db, "heapx_packed"); n != 0 {
		t.Fatalf("%d cache rows left after an edge changed", n)
	}
	h, back = read()
	if h.NodeSize(0) != 99 || h.NodeID(h.Edges.To[6]) != 1 || !reflect.DeepEqual(*res, back) {
		t.Errorf("rows after the change: size %d, edge 6 to id %d, results %+v", h.NodeSize(0), h.NodeID(h.Edges.To[6]), back)
	}
	// A cache that does not hold what its header says is not used.
	db2 := filepath.Join(t.TempDir(), "p2.db")
	if err := Save(db2, g, WriteOptions{Results: res}); err != nil {
		t.Fatal(err)
	}
	mutate(t, db2, `DROP TRIGGER heapx_packed_edge_update`, `UPDATE edge SET dest = 1 WHERE seq = 6`,
		`UPDATE heapx_packed SET data = substr(data, 1, 8) WHERE name = 'edge.to'`)
	db = db2
	if h, _ := read(); h.NodeID(h.Edges.To[6]) != 1 {
		t.Error("a truncated cache column was used")
	}
	// Nor is one whose strings are not at stringids 0..n-1, or whose
	// column is not a blob.
	rename := func(shift int) string {
		return fmt.Sprintf(`UPDATE strings SET data = 'renamed' WHERE stringid = %d`, int(g.Nodes.Name[0])+shift)
	}
	for i, change := range [][]string{
		{`UPDATE strings SET stringid = stringid + 1000`, `UPDATE node SET name = name + 1000`,
			`UPDATE edge SET label = label + 1000 WHERE edgetypeid IN (SELECT edgetypeid FROM edge_types WHERE name_kind = 'string')`, rename(1000)},
		{`UPDATE heapx_packed SET data = CAST(data AS TEXT) WHERE name = 'string.length'`, rename(0)},
	} {
		db = filepath.Join(t.TempDir(), fmt.Sprintf("s%d.db", i))
		if err := Save(db, g, WriteOptions{Results: res}); err != nil {
			t.Fatal(err)
		}
		mutate(t, db, append([]string{`DROP TRIGGER heapx_packed_strings_update`, `DROP TRIGGER heapx_packed_node_update`,
			`DROP TRIGGER heapx_packed_edge_update`}, change...)...)
		if h, _ := read(); h.Strings.At(h.Nodes.Name[0]) != "renamed" {
			t.Errorf("%s: name %q, the cache was used", change[0], h.Strings.At(h.Nodes.Name[0]))
		}
	}
}

// countRows counts a table's rows.
func countRows(t *testing.T, path, table string) int64 {
	t.Helper()
	conn, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var n int64
	if err := query(conn, "SELECT count(*) FROM "+table, func(st *sqlite.Stmt) error { n = st.ColumnInt64(0); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
