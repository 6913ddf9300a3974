package sqlquery_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/partitiontest"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/sqlquery"
)

// The leak fixture: one Node process holding 1,500 LeakedItem objects in
// an array (@80593) that a listener's closure keeps.
const leakDump = "node-leak-3.heapsnapshot.gz"

// copyDump copies a fixture into a fresh directory, where caches beside
// it can be made.
func copyDump(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// builder loads dumps through the heapx facade, with analysis results,
// and counts the loads: a reused cache loads nothing.
type builder struct {
	mu    sync.Mutex
	loads int
}

func (b *builder) Builder(writable func(string) bool) sqlquery.Builder {
	return sqlquery.Builder{
		Load: func(path string) (*model.Graph, *model.Results, error) {
			b.mu.Lock()
			b.loads++
			b.mu.Unlock()
			d, err := heapx.Open(path, heapx.Options{})
			if err != nil {
				return nil, nil, err
			}
			res, err := d.Results()
			return d.Graph(), res, err
		},
		Writable: writable,
	}
}

// sharedDB is one SQLite copy of the leak fixture for the tests that only
// query it.
var sharedDB = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "heapx-sqlquery")
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), leakDump))
	if err != nil {
		return "", err
	}
	src := filepath.Join(dir, leakDump)
	if err := os.WriteFile(src, b, 0o644); err != nil {
		return "", err
	}
	db, err := sqlquery.Cached(src, sqlquery.Choice{}, (&builder{}).Builder(nil))
	if err != nil {
		return "", err
	}
	return db.Path, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if p, err := sharedDB(); err == nil {
		os.RemoveAll(filepath.Dir(p))
	}
	os.Exit(code)
}

func leakDB(t *testing.T) string {
	t.Helper()
	p, err := sharedDB()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// rows runs stmt over the database at path and returns the column names
// and the rows as text, as heapx sql's table would show them.
type rows struct {
	columns []string
	rows    [][]string
	ended   bool
}

func (r *rows) Begin(columns []string) error { r.columns = columns; return nil }
func (r *rows) Row(cells []sqlquery.Cell) error {
	var row []string
	for _, c := range cells {
		row = append(row, c.Text())
	}
	r.rows = append(r.rows, row)
	return nil
}
func (r *rows) End() error { r.ended = true; return nil }

func run(t *testing.T, path, stmt string, cellBytes int) *rows {
	t.Helper()
	var r rows
	if err := sqlquery.Run(context.Background(), path, stmt, &r, cellBytes); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	if !r.ended {
		t.Fatalf("%s: the writer was not ended", stmt)
	}
	return &r
}

func same(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestRunAnswersFromTheAnalysis: the copy carries the graph and its
// analysis, so SQL finds what heapx's own commands find on the leak
// fixture: the 1,500 LeakedItem objects (56 bytes each), their retained
// size, the array that holds them and its path up to global.
func TestRunAnswersFromTheAnalysis(t *testing.T) {
	t.Parallel()
	db := leakDB(t)
	for _, c := range []struct {
		stmt    string
		columns []string
		rows    [][]string
	}{
		{
			"SELECT count(*) AS n, sum(self_size) AS self, sum(retained_size) AS retained FROM nodes_full WHERE name = 'LeakedItem' AND category = 'object'",
			[]string{"n", "self", "retained"},
			[][]string{{"1500", "84000", "431280"}},
		},
		{
			"SELECT identifier, name, type, retained_size, dominator, distance FROM nodes_full WHERE identifier IN (6049, 72585, 80593) ORDER BY identifier",
			[]string{"identifier", "name", "type", "retained_size", "dominator", "distance"},
			[][]string{
				{"6049", "global", "v8:object", "3079371", "1", "1"},
				{"72585", "LeakedItem", "v8:object", "288", "80593", "7"},
				{"80593", "Array", "v8:object", "447536", "80591", "6"},
			},
		},
		{
			"SELECT source, source_name, type, label FROM edges_full WHERE dest = 72585 ORDER BY source",
			[]string{"source", "source_name", "type", "label"},
			[][]string{{"80593", "Array", "v8:element", "13"}, {"100189", "(object elements)", "v8:internal", "13"}},
		},
		{ // two columns of one name are told apart as SQLite does in a subquery
			"SELECT a.name, b.name FROM nodes_full a JOIN nodes_named b ON b.identifier = a.dominator WHERE a.identifier = 72585",
			[]string{"name", "name:1"},
			[][]string{{"LeakedItem", "Array"}},
		},
	} {
		r := run(t, db, c.stmt, -1)
		if !same(r.columns, c.columns) || len(r.rows) != len(c.rows) {
			t.Errorf("%s:\ncolumns %q rows %q\nwant %q %q", c.stmt, r.columns, r.rows, c.columns, c.rows)
			continue
		}
		for i := range r.rows {
			if !same(r.rows[i], c.rows[i]) {
				t.Errorf("%s: row %d is %q, want %q", c.stmt, i, r.rows[i], c.rows[i])
			}
		}
	}
}

// TestRunRefuses: the connection is read-only, takes one statement, and
// SQLite's errors come back as "<file>: <SQLite's message>", before any
// header is written.
func TestRunRefuses(t *testing.T) {
	t.Parallel()
	db := leakDB(t)
	for stmt, want := range map[string]string{
		"DELETE FROM node":                    "(heapx sql is read-only: SELECT and PRAGMAs that only report)",
		"DROP VIEW nodes_full":                "(heapx sql is read-only",
		"SELECT 1; SELECT 2":                  `give one SQL statement; this text follows the first: "SELECT 2"`,
		" ; -- nothing\n":                     "the query has no SQL statement",
		"SELECT nosuchcolumn FROM nodes_full": "no such column: nosuchcolumn",
		"SELEC 1":                             `near "SELEC": syntax error`,
		"ATTACH DATABASE 'x.db' AS x":         "heapx sql is read-only",
		"SELECT * FROM no_such_table_here":    "no such table: no_such_table_here",
	} {
		var r rows
		err := sqlquery.Run(context.Background(), db, stmt, &r, -1)
		if err == nil || !strings.HasPrefix(err.Error(), db+": ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %s: ...%s", stmt, err, db, want)
		}
		if r.columns != nil || r.rows != nil {
			t.Errorf("%q: the writer got %q %q before the error", stmt, r.columns, r.rows)
		}
		if sqlquery.IsCorrupt(err) {
			t.Errorf("%q: %v counted as a damaged database", stmt, err)
		}
	}
}

// TestRunCancelled: cancelling the context interrupts a long statement.
func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := sqlquery.Run(ctx, leakDB(t), "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT count(*) FROM c", &rows{}, -1)
	if err == nil || time.Since(start) > 30*time.Second {
		t.Errorf("endless query cancelled after 200 ms: %v after %v", err, time.Since(start))
	}
}

// TestCellPrefix: with cellBytes >= 0 a text or blob value is read only
// that far (a table shows 80 characters of it); numbers and short values
// are whole.
func TestCellPrefix(t *testing.T) {
	t.Parallel()
	r := run(t, leakDB(t), "SELECT 'abcdef' AS t, x'00ff10' AS b, 'ab' AS short, 1234567 AS n, 0.25 AS f, NULL AS z", 2)
	want := []string{"ab", "00ff", "ab", "1234567", "0.25", ""}
	if !same(r.rows[0], want) {
		t.Errorf("cells cut at 2 bytes: %q, want %q", r.rows[0], want)
	}
	r = run(t, leakDB(t), "SELECT 'abcdef' AS t, x'00ff10' AS b", -1)
	if want := []string{"abcdef", "00ff10"}; !same(r.rows[0], want) {
		t.Errorf("whole cells: %q, want %q", r.rows[0], want)
	}
}

// TestJSONRows: heapx sql --json's array of objects, keys in column order,
// 64-bit integers exact, NULL as null, blobs as hex, NaN as text, invalid
// UTF-8 as U+FFFD, and a repeated key suffixed so no value is lost.
func TestJSONRows(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := &sqlquery.JSONRows{W: &out}
	stmt := "SELECT 9007199254740993 AS big, NULL AS z, x'00ff' AS b, CAST(x'61ff62' AS TEXT) AS bad, 0.5 AS f, 1e999 - 1e999 AS nan"
	if err := sqlquery.Run(context.Background(), leakDB(t), stmt, w, -1); err != nil {
		t.Fatal(err)
	}
	want := "[\n{\"big\":9007199254740993,\"z\":null,\"b\":\"00ff\",\"bad\":\"a\uFFFDb\",\"f\":0.5,\"nan\":null}\n]\n"
	if got := out.String(); got != want && got != strings.Replace(want, `"nan":null`, `"nan":"NaN"`, 1) {
		t.Errorf("JSON rows:\n%s\nwant\n%s", got, want)
	}
	var decoded []map[string]any
	dec := json.NewDecoder(&out)
	dec.UseNumber()
	if err := dec.Decode(&decoded); err != nil || decoded[0]["big"] != json.Number("9007199254740993") {
		t.Errorf("decoded %v (%v), want big exact", decoded, err)
	}

	if keys := sqlquery.Keys([]string{"name", "name", "id", "name"}); !same(keys, []string{"name", "name_2", "id", "name_3"}) {
		t.Errorf("Keys(name, name, id, name) = %q", keys)
	}
	out.Reset()
	w = &sqlquery.JSONRows{W: &out}
	w.Begin([]string{"x"})
	w.End()
	if out.String() != "[]\n" {
		t.Errorf("no rows: %q, want []", out.String())
	}
}

// TestCachedReusedWhileUnchanged: the copy of a dump is made once, beside
// it, and reused until the dump changes; a copy that cannot go beside the
// dump goes to a private directory in the user cache; --no-cache's copy
// is temporary.
func TestCachedReusedWhileUnchanged(t *testing.T) {
	src := copyDump(t, leakDump)
	var b builder
	db, err := sqlquery.Cached(src, sqlquery.Choice{}, b.Builder(nil))
	if err != nil {
		t.Fatal(err)
	}
	if db.Path != src+sqlquery.CacheSuffix || db.Source != src || db.Temp || b.loads != 1 {
		t.Fatalf("first query: %+v after %d loads, want %s built beside the dump", db, b.loads, src+sqlquery.CacheSuffix)
	}
	if again, err := sqlquery.Cached(src, sqlquery.Choice{}, b.Builder(nil)); err != nil || again.Path != db.Path || b.loads != 1 {
		t.Errorf("second query: %+v, %v after %d loads, want the copy reused", again, err, b.loads)
	}
	if r := run(t, db.Path, "SELECT count(*) FROM nodes_full WHERE name = 'LeakedItem' AND category = 'object'", -1); r.rows[0][0] != "1500" {
		t.Errorf("the copy has %s LeakedItem, want 1500", r.rows[0][0])
	}

	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(src, later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlquery.Cached(src, sqlquery.Choice{}, b.Builder(nil)); err != nil || b.loads != 2 {
		t.Errorf("after the dump changed: %v after %d loads, want the copy rebuilt", err, b.loads)
	}

	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	other := copyDump(t, "node-basic.heapsnapshot.gz")
	db, err = sqlquery.Cached(other, sqlquery.Choice{}, b.Builder(func(string) bool { return false }))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(db.Path) != filepath.Join(cache, "heapx") || !strings.HasSuffix(db.Path, "-node-basic.heapsnapshot.gz"+sqlquery.CacheSuffix) {
		t.Errorf("copy of a dump in a directory it cannot write: %s, want it in %s", db.Path, filepath.Join(cache, "heapx"))
	}
	if st, err := os.Stat(filepath.Dir(db.Path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the user cache directory: %v, %v; want mode 0700", st.Mode(), err)
	}

	db, err = sqlquery.Cached(src, sqlquery.Choice{None: true}, b.Builder(nil))
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(db.Path)
	if !db.Temp || filepath.Dir(db.Path) != filepath.Dir(src) || !strings.HasPrefix(name, "."+leakDump+".heapx-") || b.loads != 4 {
		t.Errorf("--no-cache: %+v after %d loads, want a new hidden temporary copy beside the dump", db, b.loads)
	}
}

// TestCacheChoice: --cache names a file or a directory to keep the copy
// in, and never overwrites a file heapx did not make as a cache; a .db is
// queried as it is.
func TestCacheChoice(t *testing.T) {
	t.Parallel()
	src := copyDump(t, "node-basic.heapsnapshot.gz")
	var b builder
	dir := t.TempDir()
	db, err := sqlquery.Cached(src, sqlquery.Choice{Path: dir}, b.Builder(nil))
	if err != nil || db.Path != filepath.Join(dir, "node-basic.heapsnapshot.gz"+sqlquery.CacheSuffix) {
		t.Fatalf("--cache DIR: %+v, %v", db, err)
	}
	named := filepath.Join(dir, "mine.db")
	if db, err = sqlquery.Cached(src, sqlquery.Choice{Path: named}, b.Builder(nil)); err != nil || db.Path != named {
		t.Fatalf("--cache FILE: %+v, %v", db, err)
	}
	if db, err = sqlquery.Cached(src, sqlquery.Choice{Path: named}, b.Builder(nil)); err != nil || b.loads != 2 {
		t.Errorf("--cache FILE again: %+v, %v after %d loads, want it reused", db, err, b.loads)
	}

	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("mine"), 0o644)
	plain := filepath.Join(dir, "plain.db")
	if err := hsql.Save(plain, mustGraph(t, src), hsql.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{notes, plain} {
		if _, err := sqlquery.Cached(src, sqlquery.Choice{Path: p}, b.Builder(nil)); err == nil || !strings.Contains(err.Error(), "is not a cache heapx sql made") {
			t.Errorf("--cache %s: %v, want a refusal", filepath.Base(p), err)
		}
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt is now %q", b)
	}

	db, err = sqlquery.Open(plain, sqlquery.Choice{}, b.Builder(nil))
	if err != nil || db.Path != plain || db.Source != "" || b.loads != 2 {
		t.Errorf("Open of a .db: %+v, %v after %d loads, want it queried as it is", db, err, b.loads)
	}
}

func mustGraph(t *testing.T, path string) *model.Graph {
	t.Helper()
	d, err := heapx.Open(path, heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d.Graph()
}

// TestDamagedCopy: a copy SQLite finds damaged is an error IsCorrupt
// recognizes, and Rebuild makes it whole again at the same place.
func TestDamagedCopy(t *testing.T) {
	t.Parallel()
	src := copyDump(t, leakDump)
	var b builder
	db, err := sqlquery.Cached(src, sqlquery.Choice{}, b.Builder(nil))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(db.Path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Truncate(st.Size() / 4)
	f.Close()
	err = sqlquery.Run(context.Background(), db.Path, "SELECT count(*) FROM edges_full", &rows{}, -1)
	if !sqlquery.IsCorrupt(err) || !strings.Contains(err.Error(), "database disk image is malformed") {
		t.Fatalf("query of a truncated copy: %v, want a damaged database", err)
	}
	if err := db.Rebuild(b.Builder(nil)); err != nil {
		t.Fatal(err)
	}
	if r := run(t, db.Path, "SELECT count(*) FROM edges_full", -1); r.rows[0][0] != "221573" {
		t.Errorf("the rebuilt copy has %s edges, want 221573", r.rows[0][0])
	}
	if sqlquery.IsCorrupt(io.EOF) {
		t.Error("IsCorrupt(io.EOF)")
	}
}

// TestCachedPartition: the copy of a Parquet partition (a directory)
// goes to the user cache directory, not among the partitions of its
// fleet, and is reused until a table of the partition changes.
func TestCachedPartition(t *testing.T) {
	part := partitiontest.Write(t, filepath.Join(testfixtures.Dir(), leakDump))
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	var b builder
	db, err := sqlquery.Cached(part, sqlquery.Choice{}, b.Builder(nil))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(db.Path) != filepath.Join(cache, "heapx") || !strings.HasSuffix(db.Path, "-"+filepath.Base(part)+sqlquery.CacheSuffix) || b.loads != 1 {
		t.Fatalf("copy of %s: %+v after %d loads, want it in %s", part, db, b.loads, filepath.Join(cache, "heapx"))
	}
	if r := run(t, db.Path, "SELECT count(*) FROM nodes_full WHERE name = 'LeakedItem' AND category = 'object'", -1); r.rows[0][0] != "1500" {
		t.Errorf("the copy has %s LeakedItem, want 1500", r.rows[0][0])
	}
	if again, err := sqlquery.Cached(part, sqlquery.Choice{}, b.Builder(nil)); err != nil || again.Path != db.Path || b.loads != 1 {
		t.Errorf("second query: %+v, %v after %d loads, want the copy reused", again, err, b.loads)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(part, "objects.parquet"), later, later); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlquery.Cached(part, sqlquery.Choice{}, b.Builder(nil)); err != nil || b.loads != 2 {
		t.Errorf("after a table changed: %v after %d loads, want the copy rebuilt", err, b.loads)
	}
	if ents, _ := os.ReadDir(filepath.Dir(part)); len(ents) != 1 {
		t.Errorf("the fleet directory holds %d entries, want only the partition", len(ents))
	}
}
