package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hx "github.com/heapx/heapx"

	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/sqlquery"
)

// copyFixture copies a testdata dump into a fresh directory, so the cache
// heapx sql writes beside its input never lands in testdata/.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", name)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), filepath.Base(name))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// sqlOK runs heapx sql like ok, except that stderr may hold the two lines
// that say a cache is being built and where, and returns stdout.
func sqlOK(t *testing.T, args ...string) string {
	t.Helper()
	r := heapx(t, append([]string{"sql"}, args...)...)
	if r.code != 0 || !isCacheNote(r.stderr) {
		t.Fatalf("heapx sql %v: exit %d, stderr:\n%s", args, r.code, r.stderr)
	}
	return r.stdout
}

// cacheNote is what heapx sql prints on stderr while it builds a cache.
var cacheNote = regexp.MustCompile(`^heapx: building (the|a temporary) SQL cache of .+ at .+ \(about [0-9.]+ [kMG]?B; (reused while the dump is unchanged|deleted after the query)\)\nheapx: SQL cache ready: .+ \([0-9.]+ [kMG]?B, [0-9.]+ s\)\n$`)

// isCacheNote reports whether stderr is empty or just the cache note.
func isCacheNote(stderr string) bool { return stderr == "" || cacheNote.MatchString(stderr) }

// sqlJSON runs heapx sql --json and decodes the rows.
func sqlJSON(t *testing.T, file, query string) []map[string]any {
	t.Helper()
	out := sqlOK(t, "--json", file, query)
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var rows []map[string]any
	if err := dec.Decode(&rows); err != nil {
		t.Fatalf("sql --json printed something that is not an array of objects: %v\n%s", err, out)
	}
	return rows
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// The five example queries of docs/sql.md's heapx sql section, verbatim. The
// tests below run each through the binary and check the answer against
// the graph read in-process.
const (
	exampleLargest = `SELECT identifier, name, type, retained_size FROM nodes_full WHERE dominator IS NOT NULL ORDER BY retained_size DESC LIMIT 10`
	exampleRetains = `SELECT source, source_name, type, label FROM edges_full WHERE dest = %d`
	exampleStrings = `SELECT name AS text, count(*) AS copies, sum(self_size) AS bytes FROM nodes_named WHERE category = 'flat string' GROUP BY name ORDER BY copies DESC, bytes DESC, text LIMIT 10`
	exampleClasses = `SELECT name AS class, count(*) AS objects, sum(self_size) AS self_size FROM nodes_named WHERE category = 'object' GROUP BY name ORDER BY objects DESC, class LIMIT 10`
	exampleEdges   = `SELECT type, label, dest, dest_name FROM edges_full WHERE source = %d ORDER BY seq`
)

// TestSQLExamplesInDocs keeps docs/sql.md's examples and these tests the
// same queries.
func TestSQLExamplesInDocs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "sql.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{exampleLargest, exampleRetains, exampleStrings, exampleClasses, exampleEdges} {
		if q = strings.Replace(q, "%d", "72585", 1); !strings.Contains(string(b), q) {
			t.Errorf("docs/sql.md lacks the example %s", q)
		}
	}
}

// TestSQLExamples runs docs/sql.md's example queries on the leak fixture.
func TestSQLExamples(t *testing.T) {
	t.Parallel()
	file := copyFixture(t, "node-leak-3.heapsnapshot.gz")
	g, err := v8.ReadFile(file, v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The first query builds the cache; the others reuse it.

	t.Run("largest objects", func(t *testing.T) {
		rows := sqlJSON(t, file, exampleLargest)
		var top struct {
			Nodes []query.NodeJSON `json:"nodes"`
		}
		if err := json.Unmarshal([]byte(ok(t, "top", "--json", "-n", "11", file)), &top); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 10 || len(top.Nodes) != 11 {
			t.Fatalf("%d rows, top has %d", len(rows), len(top.Nodes))
		}
		for i, r := range rows {
			if got, want := num(t, r["retained_size"]), int64(top.Nodes[i].RetainedSize); got != want {
				t.Errorf("row %d: retained %d, heapx top says %d", i, got, want)
			}
		}
		// Equal sizes may come in another order; the set is the same
		// unless the tenth ties with the eleventh.
		if top.Nodes[9].RetainedSize != top.Nodes[10].RetainedSize {
			var a, b []int64
			for i, r := range rows {
				a = append(a, num(t, r["identifier"]))
				b = append(b, int64(top.Nodes[i].ID))
			}
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				t.Errorf("objects %v, heapx top says %v", a, b)
			}
		}
	})

	// X is the first LeakedItem instance.
	x := model.NodeIndex(-1)
	for n := range g.Nodes.ID.Len() {
		if g.NodeName(model.NodeIndex(n)) == "LeakedItem" && g.NodeType(model.NodeIndex(n)).Category == model.CatObject {
			x = model.NodeIndex(n)
			break
		}
	}
	if x < 0 {
		t.Fatal("no LeakedItem in node-leak-3")
	}
	xid := g.NodeID(x)

	t.Run("who retains X", func(t *testing.T) {
		rows := sqlJSON(t, file, fmt.Sprintf(exampleRetains, xid))
		var got, want []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%d %s %s %s", num(t, r["source"]), r["source_name"], r["type"], r["label"]))
		}
		ret := model.BuildRetainers(g)
		s, e := ret.Of(x)
		for i := s; i < e; i++ {
			from, edge := ret.From(i), ret.Edge[i]
			want = append(want, fmt.Sprintf("%d %s %s %s", g.NodeID(from), g.NodeName(from), g.EdgeType(edge).QualifiedName(), g.EdgeName(edge)))
		}
		slices.Sort(got)
		slices.Sort(want)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("retainers of @%d:\n%s\nwant:\n%s", xid, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("edges from X", func(t *testing.T) {
		rows := sqlJSON(t, file, fmt.Sprintf(exampleEdges, xid))
		var got, want []string
		for _, r := range rows {
			got = append(got, fmt.Sprintf("%s %s %d %s", r["type"], r["label"], num(t, r["dest"]), r["dest_name"]))
		}
		s, e := g.EdgeRange(x)
		for i := s; i < e; i++ {
			to := g.Edges.To[i]
			want = append(want, fmt.Sprintf("%s %s %d %s", g.EdgeType(i).QualifiedName(), g.EdgeName(i), g.NodeID(to), g.NodeName(to)))
		}
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("edges of @%d:\n%s\nwant:\n%s", xid, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// A LeakedItem's own properties are among them.
		if !strings.Contains(strings.Join(got, "\n"), "v8:property payload ") {
			t.Errorf("no payload property among\n%s", strings.Join(got, "\n"))
		}
	})

	// group counts nodes of a category by name, ordered as the queries
	// order them.
	type group struct {
		name         string
		count, bytes int64
	}
	groups := func(c model.Category, byBytes bool) []group {
		m := map[string]*group{}
		for n := range g.Nodes.ID.Len() {
			if g.NodeType(model.NodeIndex(n)).Category != c {
				continue
			}
			name := g.NodeName(model.NodeIndex(n))
			if m[name] == nil {
				m[name] = &group{name: name}
			}
			m[name].count++
			m[name].bytes += int64(g.Nodes.Size.At(n))
		}
		var out []group
		for _, v := range m {
			out = append(out, *v)
		}
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.count != b.count {
				return a.count > b.count
			}
			if byBytes && a.bytes != b.bytes {
				return a.bytes > b.bytes
			}
			return a.name < b.name
		})
		return out[:min(10, len(out))]
	}
	check := func(t *testing.T, rows []map[string]any, want []group, nameKey, countKey, bytesKey string) {
		t.Helper()
		var got []group
		for _, r := range rows {
			got = append(got, group{r[nameKey].(string), num(t, r[countKey]), num(t, r[bytesKey])})
		}
		if !slices.Equal(got, want) {
			t.Errorf("got\n%v\nwant\n%v", got, want)
		}
	}

	t.Run("strings by duplicate count", func(t *testing.T) {
		check(t, sqlJSON(t, file, exampleStrings), groups(model.CatString, true), "text", "copies", "bytes")
	})

	t.Run("classes by count", func(t *testing.T) {
		rows := sqlJSON(t, file, exampleClasses)
		check(t, rows, groups(model.CatObject, false), "class", "objects", "self_size")
		found := false
		for _, r := range rows {
			found = found || r["class"] == "LeakedItem" && num(t, r["objects"]) == 1500
		}
		if !found {
			t.Errorf("LeakedItem x 1500 is not among the top classes: %v", rows)
		}
	})
}

// TestSQLOutputFormats checks the table, --json and --csv renderings.
func TestSQLOutputFormats(t *testing.T) {
	t.Parallel()
	file := copyFixture(t, "node-basic.heapsnapshot.gz")
	q := `SELECT 'a' AS s, 12 AS n, NULL AS z UNION ALL SELECT 'b,"c"', 3, 2.5`
	if got, want := sqlOK(t, file, q), "s       n     z\na      12  NULL\nb,\"c\"   3   2.5\n"; got != want {
		t.Errorf("table:\n%q\nwant\n%q", got, want)
	}
	if got, want := sqlOK(t, "--csv", file, q), "s,n,z\na,12,\n\"b,\"\"c\"\"\",3,2.5\n"; got != want {
		t.Errorf("csv:\n%q\nwant\n%q", got, want)
	}
	if got, want := sqlOK(t, "--json", file, q), "[\n{\"s\":\"a\",\"n\":12,\"z\":null},\n{\"s\":\"b,\\\"c\\\"\",\"n\":3,\"z\":2.5}\n]\n"; got != want {
		t.Errorf("json:\n%s\nwant\n%s", got, want)
	}
	if got := sqlOK(t, "--json", file, `SELECT 1 WHERE 0`); got != "[]\n" {
		t.Errorf("empty json %q", got)
	}
	// Two columns with one name (a join's) both keep a name.
	if got := sqlOK(t, "--csv", file, `SELECT s.name, d.name FROM node s JOIN node d ON d.identifier = s.identifier LIMIT 1`); !strings.HasPrefix(got, "name,name:1\n") {
		t.Errorf("duplicate column names: %q", got)
	}
	// 64-bit integers stay exact in JSON.
	if got := sqlOK(t, "--json", file, `SELECT 9007199254740993 AS big`); !strings.Contains(got, `"big":9007199254740993`) {
		t.Errorf("big integer: %s", got)
	}
}

// TestSQLReadOnly: nothing heapx sql runs may change the database or
// create a file.
func TestSQLReadOnly(t *testing.T) {
	t.Parallel()
	file := copyFixture(t, "node-basic.heapsnapshot.gz")
	sqlOK(t, file, "SELECT 1") // builds the cache
	db := file + sqlquery.CacheSuffix
	sum := func() [32]byte {
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()
	dir := filepath.Dir(file)
	for _, q := range []string{
		`INSERT INTO metadata (key, value) VALUES ('a', 'b')`,
		`DROP TABLE node`,
		`UPDATE node SET self_size = 0`,
		`DELETE FROM edge`,
		`CREATE TABLE t (x)`,
		`ATTACH DATABASE '` + filepath.Join(dir, "x.db") + `' AS x`,
		`VACUUM INTO '` + filepath.Join(dir, "y.db") + `'`,
		`PRAGMA query_only = OFF`,
	} {
		for _, target := range []string{file, db} {
			r := heapx(t, "sql", target, q)
			if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "heapx: "+db+": ") || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "read-only") {
				t.Errorf("sql %s %q: exit %d, stdout %q, stderr %q", target, q, r.code, r.stdout, r.stderr)
			}
		}
	}
	if sum() != before {
		t.Error("the database changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files beside the input: %v", entries)
	}
}

// TestSQLErrors: mistakes fail with one "heapx: <file>: <message>" line.
func TestSQLErrors(t *testing.T) {
	t.Parallel()
	file := copyFixture(t, "node-basic.heapsnapshot.gz")
	db := file + sqlquery.CacheSuffix
	sqlOK(t, file, "SELECT 1") // builds the cache, which the errors name
	cases := map[string]string{
		`SELEC 1`:                         db + `: near "SELEC": syntax error`,
		`SELECT * FROM nope`:              db + ": no such table: nope",
		`SELECT 1; SELECT 2`:              db + `: give one SQL statement; this text follows the first: "SELECT 2"`,
		` ; -- nothing`:                   db + ": the query has no SQL statement",
		`SELECT no_such_column FROM node`: db + ": no such column: no_such_column",
	}
	for q, want := range cases {
		r := heapx(t, "sql", file, q)
		if r.code != 1 || r.stdout != "" || r.stderr != "heapx: "+want+"\n" {
			t.Errorf("sql %q: exit %d, stdout %q, stderr %q; want %q", q, r.code, r.stdout, r.stderr, want)
		}
	}
	for _, args := range [][]string{
		{"sql", file},
		{"sql", "--json", "--csv", file, "SELECT 1"},
		{"sql", filepath.Join(t.TempDir(), "missing.db"), "SELECT 1"},
	} {
		r := heapx(t, args...)
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "heapx: ") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("heapx %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestSQLCache: the SQLite copy of a dump is made once, reused while the
// dump is unchanged, and rebuilt when its mtime, size or first megabyte
// change, or when the copy is damaged.
func TestSQLCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "app.heapsnapshot")
	raw := testfixtures.Gunzip(t, filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"))
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	db := file + sqlquery.CacheSuffix
	rootSize := func() string { return sqlOK(t, "--csv", file, "SELECT self_size FROM node WHERE seq = 0") }
	stat := func() os.FileInfo {
		st, err := os.Stat(db)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if got := rootSize(); got != "self_size\n0\n" {
		t.Fatalf("root self size %q", got)
	}
	first := stat()
	time.Sleep(10 * time.Millisecond)
	rootSize()
	if again := stat(); !os.SameFile(first, again) || !again.ModTime().Equal(first.ModTime()) {
		t.Error("the cache was rebuilt although the input did not change")
	}

	// Same size and mtime, different first megabyte: the root's self
	// size, the first node's fourth field, goes from 0 to 7.
	st, _ := os.Stat(file)
	i := strings.Index(string(raw), `"nodes":[`)
	line := string(raw[i : i+40])
	fields := strings.SplitN(line[len(`"nodes":[`):], ",", 5)
	if fields[3] != "0" {
		t.Fatalf("unexpected first node %q", line)
	}
	off := i + len(`"nodes":[`) + len(fields[0]) + len(fields[1]) + len(fields[2]) + 3
	changed := append([]byte(nil), raw...)
	changed[off] = '7'
	if err := os.WriteFile(file, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if got := rootSize(); got != "self_size\n7\n" {
		t.Errorf("after a same-size, same-mtime edit the root's self size is %q: stale cache", got)
	}
	second := stat()
	if os.SameFile(first, second) {
		t.Error("the cache was not rebuilt")
	}

	// A new mtime alone rebuilds it.
	later := st.ModTime().Add(time.Hour)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
	rootSize()
	third := stat()
	if os.SameFile(second, third) {
		t.Error("the cache was not rebuilt after the input's mtime changed")
	}

	// A damaged cache is rebuilt, not reported.
	if err := os.WriteFile(db, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := rootSize(); got != "self_size\n7\n" {
		t.Errorf("after damaging the cache: %q", got)
	}
	// No temporary files stay behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("directory holds %v", entries)
	}
}

// TestSQLCacheUnwritableDir: when the input's directory cannot be written,
// the copy goes to the user cache directory, and is reused from there.
func TestSQLCacheUnwritableDir(t *testing.T) {
	file := copyFixture(t, "node-internals.heapsnapshot.gz")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	readOnlyDir := func(string) bool { return false }
	c, err := sqlquery.Cached(file, sqlquery.Choice{}, copyBuilder(os.Stderr, readOnlyDir))
	if err != nil {
		t.Fatal(err)
	}
	db := c.Path
	if !strings.HasPrefix(db, filepath.Join(cache, "heapx")+string(filepath.Separator)) || !strings.HasSuffix(db, "-node-internals.heapsnapshot.gz"+sqlquery.CacheSuffix) {
		t.Errorf("cache at %s, want it under %s", db, cache)
	}
	if _, err := os.Stat(file + sqlquery.CacheSuffix); err == nil {
		t.Error("a cache was written beside the input")
	}
	st1, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	c, err = sqlquery.Cached(file, sqlquery.Choice{}, copyBuilder(os.Stderr, readOnlyDir))
	if err != nil {
		t.Fatal(err)
	}
	again := c.Path
	st2, err := os.Stat(again)
	if err != nil {
		t.Fatal(err)
	}
	if again != db || !os.SameFile(st1, st2) {
		t.Error("the user-cache copy was not reused")
	}
	var rows bytesRows
	if err := sqlquery.Run(context.Background(), db, "SELECT count(*) FROM node", &rows, -1); err != nil || len(rows.rows) != 1 {
		t.Errorf("query on the user-cache copy: %v %v", err, rows.rows)
	}
}

// bytesRows collects a result's cells as text, for in-process tests.
type bytesRows struct{ rows [][]string }

func (b *bytesRows) Begin([]string) error { return nil }
func (b *bytesRows) Row(c []sqlquery.Cell) error {
	var r []string
	for _, x := range c {
		r = append(r, x.Text())
	}
	b.rows = append(b.rows, r)
	return nil
}
func (b *bytesRows) End() error { return nil }

// TestAnalysisCommandsReadDB converts every fixture to .db with analysis
// results and runs the analysis commands on it: they answer exactly as on
// the original snapshot.
func TestAnalysisCommandsReadDB(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			db, out := analysedCopy(t, f, ".db")
			if !strings.HasPrefix(out, "wrote "+db+" (sqlite, ") {
				t.Errorf("convert printed %q", out)
			}
			var info hx.Info
			if err := json.Unmarshal([]byte(ok(t, "info", "--json", db)), &info); err != nil {
				t.Fatal(err)
			}
			want := readGolden(t, f.name)
			if info.NodeCount != want.NodeCount || info.EdgeCount != want.EdgeCount || info.TotalSelfSize != want.TotalSelfSize || info.Format != "heapx.sqlite" {
				t.Errorf("info on the .db: %d nodes, %d edges, %d bytes, format %q", info.NodeCount, info.EdgeCount, info.TotalSelfSize, info.Format)
			}
			same := func(args ...string) {
				a := ok(t, append(args, f.path)...)
				b := ok(t, append(args, db)...)
				a = strings.Replace(a, strconv.Quote(f.path), `""`, 1)
				b = strings.Replace(b, strconv.Quote(db), `""`, 1)
				if a != b {
					t.Errorf("heapx %v differs between the snapshot and its .db", args)
				}
			}
			same("summary", "--json", "-n", "0")
			same("top", "--json", "-n", "30")
			// The persisted retained sizes are those the analysis computes.
			rows := sqlJSON(t, db, `SELECT identifier, retained_size FROM nodes_full WHERE dominator IS NOT NULL ORDER BY retained_size DESC, identifier LIMIT 5`)
			var top struct {
				Nodes []query.NodeJSON `json:"nodes"`
			}
			if err := json.Unmarshal([]byte(ok(t, "top", "--json", "-n", "1", db)), &top); err != nil {
				t.Fatal(err)
			}
			if len(rows) == 0 || num(t, rows[0]["retained_size"]) != int64(top.Nodes[0].RetainedSize) {
				t.Errorf("largest persisted retained size %v, top says %d", rows, top.Nodes[0].RetainedSize)
			}
		})
	}
}

// TestSQLCacheInterrupted: a signal while heapx sql writes its cached copy
// leaves neither the copy nor its temporary file behind.
func TestSQLCacheInterrupted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("writes a large snapshot")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "big.heapsnapshot")
	writeBigSnapshot(t, in, 300_000)
	cmd := heapxCommand(t, "sql", in, "SELECT 1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the temporary copy to appear: the analysis is over and
	// writing has begun.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, ".big.heapsnapshot"+sqlquery.CacheSuffix+".tmp-*")); len(m) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no temporary file appeared")
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, stderr %q; want 130 (did it finish before the signal?)", err, stderr.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after SIGINT the directory holds %v, want only the input", ents)
	}
}

// TestSQLBigCacheInUserCacheDir: heapx sql on a Firefox page dump (6.8 MB,
// the 22 MB dump's smaller sibling) says what it builds, where and
// how large, puts the 282 MB cache under the user cache directory instead
// of beside the dump, and leaves the packed columns out of it (only SQL
// reads a cache; it has the filter indexes, 31 MB of it). The second query
// reuses it silently.
func TestSQLBigCacheInUserCacheDir(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 282 MB cache")
	}
	file := copyFixture(t, "spidermonkey/ff-medium-page.fxsnapshot")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	q := "SELECT count(*) AS n FROM edge"
	r := heapx(t, "sql", "--csv", file, q)
	if r.code != 0 || r.stdout != "n\n2840467\n" || !cacheNote.MatchString(r.stderr) {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	dbs, _ := filepath.Glob(filepath.Join(cache, "heapx", "*-ff-medium-page.fxsnapshot"+sqlquery.CacheSuffix))
	if len(dbs) != 1 {
		t.Fatalf("caches in the user cache directory: %v", dbs)
	}
	st, err := os.Stat(dbs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.stderr, "at "+dbs[0]+" (about 283 MB;") || !strings.Contains(r.stderr, "SQL cache ready: "+dbs[0]+" ("+humanize.Size(uint64(st.Size()))+", ") {
		t.Errorf("the note does not say where the cache goes and how large it is (%d bytes):\n%s", st.Size(), r.stderr)
	}
	if st.Size() > 275<<20 || st.Size() < sqlquery.BesideLimit {
		t.Errorf("cache of %d bytes; without the packed columns it is 282 MB", st.Size())
	}
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Errorf("files beside the dump: %v", ents)
	}
	if r := heapx(t, "sql", "--csv", file, "SELECT count(*) AS n FROM sqlite_schema WHERE name = 'heapx_packed'"); r.code != 0 || r.stdout != "n\n0\n" || r.stderr != "" {
		t.Errorf("reuse: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestSQLNoCache: --no-cache answers from a temporary cache, says so, and
// leaves no file anywhere.
func TestSQLNoCache(t *testing.T) {
	file := copyFixture(t, "spidermonkey/ff-small-page.fxsnapshot")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	for i := 0; i < 2; i++ {
		r := heapx(t, "sql", "--no-cache", "--csv", file, "SELECT count(*) AS n FROM node")
		if r.code != 0 || r.stdout != "n\n155233\n" || !cacheNote.MatchString(r.stderr) || !strings.Contains(r.stderr, "a temporary SQL cache") {
			t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Errorf("files beside the dump: %v", ents)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("files in the user cache directory: %v", ents)
	}
	if r := heapx(t, "sql", "--no-cache", "--cache", cache, file, "SELECT 1"); r.code != 1 || !strings.Contains(r.stderr, "cannot be used together") {
		t.Errorf("--no-cache --cache: exit %d, %q", r.code, r.stderr)
	}
}

// TestSQLCacheFlag: --cache names the cache's file or directory; the cache
// there is reused, and a file that is not a heapx sql cache is never
// overwritten.
func TestSQLCacheFlag(t *testing.T) {
	file := copyFixture(t, "hprof/java-leakdemo-small.hprof.gz")
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	q := "SELECT count(*) AS n FROM node"
	for _, c := range []struct{ flag, db string }{
		{dir, filepath.Join(dir, "java-leakdemo-small.hprof.gz"+sqlquery.CacheSuffix)},
		{filepath.Join(dir, "java.db"), filepath.Join(dir, "java.db")},
	} {
		r := heapx(t, "sql", "--csv", "--cache", c.flag, file, q)
		if r.code != 0 || r.stdout != "n\n155448\n" || !cacheNote.MatchString(r.stderr) || !strings.Contains(r.stderr, " at "+c.db+" (") {
			t.Errorf("--cache %s: exit %d, stdout %q, stderr %q", c.flag, r.code, r.stdout, r.stderr)
		}
		if r := heapx(t, "sql", "--csv", "--cache", c.flag, file, q); r.code != 0 || r.stdout != "n\n155448\n" || r.stderr != "" {
			t.Errorf("--cache %s again: exit %d, stdout %q, stderr %q", c.flag, r.code, r.stdout, r.stderr)
		}
	}
	if ents, _ := os.ReadDir(filepath.Dir(file)); len(ents) != 1 {
		t.Errorf("files beside the dump: %v", ents)
	}
	// Not a cache: another dump's .db, and a text file.
	mine := filepath.Join(dir, "mine.db")
	ok(t, "convert", "../../testdata/node-basic.heapsnapshot.gz", mine)
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{mine, notes} {
		before, _ := os.ReadFile(p)
		r := heapx(t, "sql", "--cache", p, file, q)
		after, _ := os.ReadFile(p)
		if r.code != 1 || r.stderr != "heapx: --cache "+p+": the file exists and is not a cache heapx sql made; name a new file or a directory\n" || !bytes.Equal(before, after) {
			t.Errorf("--cache %s: exit %d, stderr %q, file changed %v", p, r.code, r.stderr, !bytes.Equal(before, after))
		}
	}
}

// TestSQLCacheCorrupt: a cache whose pages are overwritten (its metadata
// intact, so it still looks fresh) made every query fail with "database
// disk image is malformed", run after run. It is rebuilt once, with a
// note, and the query answers. A .db the user gave is never rebuilt: its
// damage is reported.
func TestSQLCacheCorrupt(t *testing.T) {
	t.Parallel()
	file := copyFixture(t, "node-basic.heapsnapshot.gz")
	db := file + sqlquery.CacheSuffix
	q := "SELECT count(*) AS n, sum(label) AS labels FROM edge"
	want := sqlOK(t, "--csv", file, q)
	if want != "n,labels\n206566,1831611980\n" {
		t.Fatalf("before the damage: %q", want)
	}
	// Overwrite three leaf pages of the edge table, found with dbstat.
	pages := sqlJSON(t, db, "SELECT pageno FROM dbstat WHERE name = 'edge' AND pagetype = 'leaf' ORDER BY pageno LIMIT 3 OFFSET 20")
	damage := func(path string) {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pages {
			if _, err := f.WriteAt(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 4096), (num(t, p["pageno"])-1)*16384); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
	}
	mine := filepath.Join(t.TempDir(), "mine.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mine, b, 0o644); err != nil {
		t.Fatal(err)
	}
	damage(db)
	damage(mine)

	r := heapx(t, "sql", "--csv", file, q)
	if r.code != 0 || r.stdout != want || !strings.HasPrefix(r.stderr, "heapx: "+db+": database disk image is malformed: the SQL cache is damaged; rebuilding it\n") || !cacheNote.MatchString(r.stderr[strings.Index(r.stderr, "\n")+1:]) {
		t.Errorf("damaged cache: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := heapx(t, "sql", "--csv", file, q); r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("after the rebuild: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = heapx(t, "sql", "--csv", mine, q)
	if r.code != 1 || r.stderr != "heapx: "+mine+": database disk image is malformed\n" {
		t.Errorf("damaged .db of the user's: exit %d, stderr %q", r.code, r.stderr)
	}
}
