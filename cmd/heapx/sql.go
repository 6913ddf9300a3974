package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/spf13/cobra"
	"zombiezen.com/go/sqlite"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

func newSQLCmd(stderr *os.File) *cobra.Command {
	var asJSON, asCSV, noCache bool
	var cachePath string
	c := &cobra.Command{
		Use:   "sql FILE QUERY",
		Short: "Run a read-only SQL query over a dump (SQLite form, cached for other formats)",
		Long: `Run one read-only SQL statement over a heap dump and print the rows.

FILE may be a .db in heapx's SQLite form, queried as it is, or any other dump
heapx reads: it is converted once, with retained sizes, dominators and
distances, to a SQLite cache that is reused while FILE keeps its size,
modification time and first megabyte. The cache is several times the size
of the dump (tens of times a gzip-compressed one); heapx says where it goes
and how large it is when it builds one. A cache of up to 100 MB goes beside
FILE, as FILE.heapx.db, a larger one under the user cache directory
($XDG_CACHE_HOME/heapx, usually ~/.cache/heapx), as does any cache when
FILE's directory is not writable. --cache PATH keeps it at PATH (or in PATH,
a directory) instead; --no-cache builds a temporary one, deleted after the
query.

The connection is read-only: statements that would change the database fail.
A cache SQLite finds damaged is rebuilt once. The tables and views are
described in docs/format.md ("SQLite form"); README has example queries.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("sql needs a FILE and a QUERY argument, got %d argument(s) (see heapx sql --help)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON && asCSV {
				return errors.New("--json and --csv cannot be used together")
			}
			if noCache && cachePath != "" {
				return errors.New("--cache and --no-cache cannot be used together")
			}
			db, err := sqlDatabase(args[0], stderr, cacheChoice{path: cachePath, none: noCache})
			if err != nil {
				return err
			}
			if db.temp {
				// Deleted after the query, or when it is interrupted.
				defer cleanUpOnInterrupt(stderr, "", db.path)()
				defer os.Remove(db.path)
			}
			return queryCopy(db, args[1], cmd.OutOrStdout(), stderr, func(out io.Writer) rowWriter {
				switch {
				case asJSON:
					return &jsonRows{w: out}
				case asCSV:
					return &csvRows{w: csv.NewWriter(out)}
				}
				return &tableRows{w: out}
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of objects, one per row")
	c.Flags().BoolVar(&asCSV, "csv", false, "print CSV with a header line")
	c.Flags().StringVar(&cachePath, "cache", "", "keep the SQL cache of a dump at `PATH` (a .db file, or a directory to keep it in)")
	c.Flags().BoolVar(&noCache, "no-cache", false, "build a temporary SQL cache of a dump and delete it after the query")
	return c
}

// queryCopy runs stmt over db and prints the rows to stdout. When SQLite
// finds a cached copy damaged (a page overwritten, a file cut short), the
// copy is rebuilt and the query run again, once; if rows had already
// reached stdout by then, the copy is still rebuilt, and the error says so.
func queryCopy(db *sqlCopy, stmt string, stdout io.Writer, stderr *os.File, rows func(io.Writer) rowWriter) error {
	sent := &countingWriter{w: stdout}
	out := bufio.NewWriterSize(sent, 64<<10)
	err := runQuery(db.path, stmt, rows(out))
	if db.source != "" && isCorrupt(err) {
		fmt.Fprintf(stderr, "heapx: %v: the SQL cache is damaged; rebuilding it\n", err)
		if rerr := db.rebuild(stderr); rerr != nil {
			return rerr
		}
		if sent.n > 0 {
			out.Flush()
			return fmt.Errorf("%w (the SQL cache was rebuilt after part of the result was printed: run the query again)", err)
		}
		out.Reset(sent)
		err = runQuery(db.path, stmt, rows(out))
	}
	if err != nil {
		// Most errors come before the first row (SQL that does not
		// compile, a write refused); one in mid-result leaves the rows
		// already flushed and the error last.
		out.Flush()
		return err
	}
	return out.Flush()
}

// countingWriter counts the bytes that reach w.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// isCorrupt reports whether err is SQLite saying the database file is
// damaged (SQLITE_CORRUPT, "database disk image is malformed") or not a
// database at all (SQLITE_NOTADB).
func isCorrupt(err error) bool {
	var qe *queryError
	if !errors.As(err, &qe) {
		return false
	}
	c := qe.code.ToPrimary()
	return c == sqlite.ResultCorrupt || c == sqlite.ResultNotADB
}

// cacheChoice is where the user asked heapx sql to keep the SQLite copy
// of a dump: path (--cache), or none at all (--no-cache).
type cacheChoice struct {
	path string
	none bool
}

// sqlCopy is the SQLite file a query runs on: a .db given as FILE, or the
// copy of another dump.
type sqlCopy struct {
	path string
	// source is the dump the copy was made from, "" for a .db given as
	// FILE; temp says the copy is deleted after the query.
	source string
	temp   bool
}

// rebuild replaces the copy with a new one, at the same place.
func (c *sqlCopy) rebuild(stderr *os.File) error {
	n, err := buildCopy(c.source, c.path, stderr, c.temp)
	if err == nil {
		*c = *n
	}
	return err
}

// sqlDatabase returns the SQLite file to query for path: path itself when
// it is in the SQLite form, else the copy the choice asks for, made first
// when missing or stale.
func sqlDatabase(path string, stderr *os.File, choice cacheChoice) (*sqlCopy, error) {
	f, err := formats.Detect(path)
	if err != nil {
		return nil, err
	}
	if f.Name == hsql.Name {
		return &sqlCopy{path: path}, nil
	}
	return cachedDatabase(path, stderr, dirWritable, choice)
}

// Metadata keys a cached conversion records about its input, so it is
// reused only while the input is unchanged. The hash of the first MiB
// catches a file rewritten within the mtime granularity with the same size.
const (
	metaSourceFile  = "heapx:source_file"
	metaSourceSize  = "heapx:source_size"
	metaSourceMtime = "heapx:source_mtime_ns"
	metaSourceHead  = "heapx:source_head_sha256"
	metaCacheSchema = "heapx:cache_schema"
)

// cacheSchema changes when a cache made by an older heapx must not be
// reused (different tables or analysis columns).
const cacheSchema = "2" // 2: v8_location.script_node_identifier

// cacheHeadBytes is how much of the input the cache key hashes.
const cacheHeadBytes = 1 << 20

// cacheSuffix is appended to the input's name for the cache beside it.
const cacheSuffix = ".heapx.db"

// besideLimit is the largest copy heapx sql leaves beside its input
// unasked. A copy is 2-4 times the size of the dump uncompressed, up to
// 40 times a gzip-compressed one, so beside a dump in a project, a download
// or a shared directory it is a surprise: it fills the disk or a quota,
// gets backed up, synced or committed with the dump. Up to 100 MiB (the
// cache of a dump of about half a million objects) no disk misses it, and
// beside the dump it is handy: seen in a listing, deleted with the dump.
// Larger, it goes where regenerable data belongs, the user cache
// directory, which backups skip and cleaners empty.
const besideLimit = 100 << 20

// cachedDatabase returns a fresh SQLite copy of path as choice says,
// making it when no fresh one exists. Without a --cache path, a fresh
// copy beside path or in the user cache directory (heapx/ under
// os.UserCacheDir, keyed by the input's absolute path) is reused; a new
// one goes beside path when it will be at most besideLimit and the
// directory is writable, else to the user cache directory.
func cachedDatabase(path string, stderr *os.File, writable func(dir string) bool, choice cacheChoice) (*sqlCopy, error) {
	key, err := sourceKey(path)
	if err != nil {
		return nil, err
	}
	beside := path + cacheSuffix
	var user string
	if dir, err := os.UserCacheDir(); err == nil {
		abs, _ := filepath.Abs(path)
		h := sha256.Sum256([]byte(abs))
		user = filepath.Join(dir, "heapx", hex.EncodeToString(h[:8])+"-"+filepath.Base(path)+cacheSuffix)
	}
	candidates := []string{beside, user}
	if choice.path != "" {
		p, err := explicitCache(choice.path, path)
		if err != nil {
			return nil, err
		}
		candidates = []string{p}
	}
	if !choice.none {
		for _, c := range candidates {
			if c != "" && cacheFresh(c, key) {
				return &sqlCopy{path: c, source: path}, nil
			}
		}
	}
	d, res, err := loadForCopy(path, stderr)
	if err != nil {
		return nil, err
	}
	target := candidates[0]
	if choice.path == "" {
		size := hsql.EstimateSize(d.Graph(), hsql.Options{Results: res, NoPacked: true})
		if size > besideLimit || !writable(filepath.Dir(path)) {
			if user == "" {
				if !writable(filepath.Dir(path)) {
					return nil, fmt.Errorf("%s: cannot keep a SQL cache: %s is not writable and there is no user cache directory (use --cache PATH)", path, filepath.Dir(path))
				}
			} else {
				if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
					return nil, fmt.Errorf("%s: cannot keep a SQL cache: %w (use --cache PATH)", path, err)
				}
				os.Chmod(filepath.Dir(user), 0o700) // one an older heapx made 0755 holds copies of dumps
				target = user
			}
		}
	}
	if choice.none {
		// Beside the copy it replaces, under a name no other run uses;
		// not in the temporary directory, often a RAM disk.
		f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(path)+".heapx-*.db")
		if err != nil {
			return nil, fmt.Errorf("%s: cannot build a temporary SQL cache: %w", path, err)
		}
		f.Close()
		os.Remove(f.Name())
		target = f.Name()
	}
	return writeCopy(d, res, key, target, stderr, choice.none)
}

// explicitCache is the copy's file for --cache PATH: PATH, or the copy's
// usual name inside PATH when PATH is a directory. An existing file is
// replaced only when its metadata says heapx sql made it: anything else,
// a damaged file included, may be the user's.
func explicitCache(p, source string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return p, nil
	}
	if st.IsDir() {
		return filepath.Join(p, filepath.Base(source)+cacheSuffix), nil
	}
	if f, err := formats.Detect(p); err == nil && f.Name == hsql.Name {
		meta, err := hsql.ReadMeta(p)
		for _, kv := range meta {
			if kv.Key == metaSourceFile {
				return p, nil
			}
		}
		if err != nil {
			return "", fmt.Errorf("--cache %s: the file exists and cannot be read (%v); delete it, or name a new file or a directory", p, err)
		}
	}
	return "", fmt.Errorf("--cache %s: the file exists and is not a cache heapx sql made; name a new file or a directory", p)
}

// buildCopy makes a new SQLite copy of path at target.
func buildCopy(path, target string, stderr *os.File, temp bool) (*sqlCopy, error) {
	key, err := sourceKey(path)
	if err != nil {
		return nil, err
	}
	d, res, err := loadForCopy(path, stderr)
	if err != nil {
		return nil, err
	}
	return writeCopy(d, res, key, target, stderr, temp)
}

// loadForCopy reads a dump for its SQL copy, with analysis results: those
// it carries (an analysed .jsonl), else computed, since the first
// questions asked in SQL are about retained sizes.
func loadForCopy(path string, stderr *os.File) (*dump, *model.Results, error) {
	d, err := load(path, stderr, hx.Options{Analysis: analysis.Options{NoClasses: true}})
	if err != nil {
		return nil, nil, err
	}
	res := d.StoredResults()
	if res == nil {
		a, err := d.analysis()
		if err != nil {
			return nil, nil, err
		}
		res = a.Results()
	}
	return d, res, nil
}

// writeCopy writes the SQLite copy of d at target (a temporary one, to be
// deleted after the query, when temp), saying on stderr what it makes,
// where and how large, since it can take a minute and a gigabyte.
func writeCopy(d *dump, res *model.Results, key []model.KV, target string, stderr *os.File, temp bool) (*sqlCopy, error) {
	opt := hsql.Options{Results: res, Meta: key, NoPacked: true, Sources: []string{d.Path()}}
	what, when := "the SQL cache", "reused while the dump is unchanged"
	if temp {
		what, when = "a temporary SQL cache", "deleted after the query"
	}
	fmt.Fprintf(stderr, "heapx: building %s of %s at %s (about %s; %s)\n", what, d.Path(), target,
		query.HumanSize(uint64(hsql.EstimateSize(d.Graph(), opt))), when)
	// An interrupt must not leave a temporary file behind (the copy is
	// renamed into place only once complete).
	defer cleanUpOnInterrupt(stderr, target)()
	start := time.Now()
	bar := startProgress(stderr, "writing "+filepath.Base(target), -1)
	opt.Progress = func(done, total int64) { bar.setTotal(total); bar.set(done) }
	err := hsql.Save(target, d.Graph(), opt)
	bar.done()
	if err != nil {
		return nil, fmt.Errorf("%s: writing the SQL cache %s: %w", d.Path(), target, err)
	}
	c := &sqlCopy{path: target, source: d.Path(), temp: temp}
	if st, err := os.Stat(target); err == nil {
		fmt.Fprintf(stderr, "heapx: SQL cache ready: %s (%s, %.1f s)\n", target, query.HumanSize(uint64(st.Size())), time.Since(start).Seconds())
	}
	return c, nil
}

// dirWritable reports whether a file can be created in dir, by creating
// one: permission bits do not tell (root, read-only mounts, ACLs).
func dirWritable(dir string) bool {
	f, err := os.CreateTemp(dir, ".heapx-probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}

// sourceKey is the metadata identifying the input's current content.
func sourceKey(path string) ([]model.KV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, cacheHeadBytes)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return []model.KV{
		{Key: metaCacheSchema, Value: cacheSchema},
		{Key: metaSourceFile, Value: abs},
		{Key: metaSourceSize, Value: strconv.FormatInt(st.Size(), 10)},
		{Key: metaSourceMtime, Value: strconv.FormatInt(st.ModTime().UnixNano(), 10)},
		{Key: metaSourceHead, Value: hex.EncodeToString(h.Sum(nil))},
	}, nil
}

// cacheFresh reports whether the SQLite file at db exists, is readable and
// records exactly key. Anything wrong with it (missing, corrupt, another
// input, an older heapx) means it is rebuilt.
func cacheFresh(db string, key []model.KV) bool {
	if _, err := os.Stat(db); err != nil {
		return false
	}
	meta, err := hsql.ReadMeta(db)
	if err != nil {
		return false
	}
	have := map[string]string{}
	for _, kv := range meta {
		have[kv.Key] = kv.Value
	}
	for _, kv := range key {
		if have[kv.Key] != kv.Value {
			return false
		}
	}
	return true
}

// runQuery runs one statement over the database at path through a
// read-only connection and hands the rows to w.
func runQuery(path, stmt string, w rowWriter) (err error) {
	conn, err := hsql.OpenReadOnly(path)
	if err != nil {
		return sqlError(path, err)
	}
	defer conn.Close()
	st, trailing, err := conn.PrepareTransient(stmt)
	if err != nil {
		return sqlError(path, err)
	}
	defer st.Finalize()
	if rest := strings.TrimSpace(stmt[len(stmt)-trailing:]); strings.Trim(rest, "; \t\r\n") != "" {
		return fmt.Errorf("%s: give one SQL statement; this text follows the first: %q", path, query.Shorten(rest, 40))
	}
	prefix := -1 // whole values, for --json and --csv
	if _, ok := w.(*tableRows); ok {
		prefix = tableCellBytes
	}
	names := columnNames(conn, st, stmt[:len(stmt)-trailing])
	ncol := len(names)
	row := make([]cell, ncol)
	for first := true; ; first = false {
		more, err := st.Step()
		if err != nil {
			if sqlite.ErrCode(err) == sqlite.ResultMisuse {
				// The driver's statement for text with no SQL in it
				// (blanks, semicolons, comments).
				return fmt.Errorf("%s: the query has no SQL statement", path)
			}
			return sqlError(path, err)
		}
		// The header waits for the first step, so a statement that
		// fails at once prints nothing but the error.
		if first {
			if err := w.begin(names); err != nil {
				return err
			}
		}
		if !more {
			break
		}
		for i := range row {
			row[i] = readCell(st, i, prefix)
		}
		if err := w.row(row); err != nil {
			return err
		}
	}
	return w.end()
}

// columnNames returns the result columns' names. The driver keeps them in
// a map, so of two columns with the same name (a join's two "name"s) the
// first comes back empty. SQLite itself names such columns uniquely in a
// subquery ("name", "name:1"), so then the names are taken from the
// statement wrapped in one, prepared but never run.
func columnNames(conn *sqlite.Conn, st *sqlite.Stmt, stmtText string) []string {
	n := st.ColumnCount()
	names := make([]string, n)
	lost := false
	for i := range names {
		names[i] = st.ColumnName(i)
		lost = lost || names[i] == ""
	}
	if !lost {
		return names
	}
	text := strings.TrimRight(strings.TrimSpace(stmtText), "; \t\r\n")
	w, _, err := conn.PrepareTransient("SELECT * FROM (" + text + "\n)")
	if err != nil {
		return names
	}
	defer w.Finalize()
	if w.ColumnCount() != n {
		return names
	}
	for i := range names {
		names[i] = w.ColumnName(i)
	}
	return names
}

// queryError is an error SQLite reported, as "<file>: <SQLite's message>",
// with SQLite's result code.
type queryError struct {
	msg  string
	code sqlite.ResultCode
}

func (e *queryError) Error() string { return e.msg }

// sqlError turns a driver error into "<file>: <SQLite's message>": the
// driver's own prefixes ("sqlite: step: SQL logic error: ") say nothing a
// user can act on.
func sqlError(path string, err error) error {
	msg := err.Error()
	for _, p := range []string{"sqlite: prepare: ", "sqlite: step: ", "sqlite: "} {
		msg = strings.TrimPrefix(msg, p)
	}
	// A prepare error starts with the line:column of the bad token.
	if i := strings.Index(msg, ": "); i > 0 && strings.Trim(msg[:i], "0123456789:") == "" {
		msg = msg[i+2:]
	}
	code := sqlite.ErrCode(err)
	if code != sqlite.ResultOK {
		msg = strings.TrimPrefix(msg, code.Message()+": ")
		msg = strings.TrimPrefix(msg, code.ToPrimary().Message()+": ")
	}
	if code.ToPrimary() == sqlite.ResultAuth || code.ToPrimary() == sqlite.ResultReadOnly {
		msg += " (heapx sql is read-only: SELECT and PRAGMAs that only report)"
	}
	return &queryError{msg: path + ": " + msg, code: code}
}

// cell is one value of a result row.
type cell struct {
	typ sqlite.ColumnType
	i   int64
	f   float64
	s   string // text, or blob bytes
}

// readCell reads column i of the current row. With prefix >= 0 a text or
// blob value is read only up to that many bytes: the table shows 80
// characters of it, and converting a gigabyte to show them cost 15 GB.
func readCell(st *sqlite.Stmt, i int, prefix int) cell {
	switch t := st.ColumnType(i); t {
	case sqlite.TypeInteger:
		return cell{typ: t, i: st.ColumnInt64(i)}
	case sqlite.TypeFloat:
		return cell{typ: t, f: st.ColumnFloat(i)}
	case sqlite.TypeText, sqlite.TypeBlob:
		n := st.ColumnLen(i)
		if t == sqlite.TypeText && (prefix < 0 || n <= prefix) {
			return cell{typ: t, s: st.ColumnText(i)}
		}
		if prefix >= 0 {
			n = min(n, prefix)
		}
		b := make([]byte, n)
		st.ColumnBytes(i, b)
		return cell{typ: t, s: unsafe.String(unsafe.SliceData(b), len(b))} // b is not written again
	default:
		return cell{typ: sqlite.TypeNull}
	}
}

// text renders c for the table and CSV outputs: numbers as SQLite prints
// them, NULL as an empty field, blobs as hex.
func (c cell) text() string {
	switch c.typ {
	case sqlite.TypeInteger:
		return strconv.FormatInt(c.i, 10)
	case sqlite.TypeFloat:
		return strconv.FormatFloat(c.f, 'g', -1, 64)
	case sqlite.TypeText:
		return c.s
	case sqlite.TypeBlob:
		h := hex.AppendEncode(nil, unsafe.Slice(unsafe.StringData(c.s), len(c.s)))
		return unsafe.String(unsafe.SliceData(h), len(h)) // one copy of a long blob, not three
	}
	return ""
}

// rowWriter prints a result set in one output format.
type rowWriter interface {
	begin(columns []string) error
	row(cells []cell) error
	end() error
}

// tableCellWidth caps a text cell in the table output: a concatenated
// string's value can be kilobytes long. --json and --csv print it whole.
const tableCellWidth = 80

// tableCellBytes is how much of a text or blob value the table reads:
// more than tableCellWidth characters of UTF-8 (4 bytes at most each) and
// more than tableCellWidth hex digits of a blob, so a longer value is
// still shown cut.
const tableCellBytes = 4*tableCellWidth + 4

// tableRows prints an aligned table: numbers right-aligned, NULL as
// "NULL" so it differs from an empty string. It holds the rows, since
// widths depend on all of them.
type tableRows struct {
	w       io.Writer
	t       *render.TextTable
	numeric []bool // every non-NULL value of column i is a number
}

func (t *tableRows) begin(columns []string) error {
	t.t = &render.TextTable{Header: columns, Right: make([]bool, len(columns))}
	t.numeric = make([]bool, len(columns))
	for i := range t.numeric {
		t.numeric[i] = true
	}
	return nil
}

func (t *tableRows) row(cells []cell) error {
	r := make([]string, len(cells))
	for i, c := range cells {
		switch c.typ {
		case sqlite.TypeNull:
			r[i] = "NULL"
		case sqlite.TypeInteger, sqlite.TypeFloat:
			r[i] = c.text()
		default:
			t.numeric[i] = false
			r[i] = query.Shorten(c.text(), tableCellWidth)
		}
	}
	t.t.Add(r...)
	return nil
}

func (t *tableRows) end() error {
	copy(t.t.Right, t.numeric)
	if len(t.t.Header) == 0 {
		return nil
	}
	return t.t.Write(t.w)
}

// jsonRows prints a JSON array with one object per row, keys in column
// order. Integers stay exact (64-bit), NULL is null, blobs are hex
// strings. A repeated column name gets a suffix (name_2), so no value is
// lost to a decoder that keeps only one of two equal keys.
type jsonRows struct {
	w    io.Writer
	keys [][]byte // each column's key, JSON-encoded, with its colon
	n    int
}

func (j *jsonRows) begin(columns []string) error {
	seen := map[string]int{}
	for _, c := range columns {
		seen[c]++
		k := c
		if seen[c] > 1 {
			k = c + "_" + strconv.Itoa(seen[c])
		}
		b, _ := json.Marshal(k)
		j.keys = append(j.keys, append(b, ':'))
	}
	_, err := io.WriteString(j.w, "[")
	return err
}

func (j *jsonRows) row(cells []cell) error {
	var b []byte
	if j.n > 0 {
		b = append(b, ',')
	}
	b = append(b, "\n{"...)
	for i, c := range cells {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, j.keys[i]...)
		switch c.typ {
		case sqlite.TypeInteger:
			b = strconv.AppendInt(b, c.i, 10)
		case sqlite.TypeFloat:
			v, err := json.Marshal(c.f)
			if err != nil { // NaN and ±Inf have no JSON form
				v, _ = json.Marshal(c.text())
			}
			b = append(b, v...)
		case sqlite.TypeText, sqlite.TypeBlob:
			var err error
			if b, err = j.appendString(b, c); err != nil {
				return err
			}
		default:
			b = append(b, "null"...)
		}
	}
	b = append(b, '}')
	j.n++
	_, err := j.w.Write(b)
	return err
}

// jsonPiece is how much of a long value jsonRows encodes at a time: a
// cell of a gigabyte is written in pieces, never encoded whole into a
// second (and third) gigabyte.
const jsonPiece = 64 << 10

// appendString appends a text cell as a JSON string (what json.Marshal
// writes, invalid UTF-8 as U+FFFD) or a blob as a string of hex digits, a
// piece at a time, writing b out whenever it holds a piece's worth.
func (j *jsonRows) appendString(b []byte, c cell) ([]byte, error) {
	b = append(b, '"')
	for s := c.s; len(s) > 0; {
		k := min(len(s), jsonPiece)
		for back := 0; k < len(s) && back < utf8.UTFMax && !utf8.RuneStart(s[k]); back++ {
			k-- // do not split a character between pieces
		}
		if c.typ == sqlite.TypeBlob {
			b = hex.AppendEncode(b, unsafe.Slice(unsafe.StringData(s), k))
		} else {
			v, _ := json.Marshal(validUTF8(s[:k]))
			b = append(b, v[1:len(v)-1]...)
		}
		s = s[k:]
		if len(b) >= jsonPiece {
			if _, err := j.w.Write(b); err != nil {
				return nil, err
			}
			b = b[:0]
		}
	}
	return append(b, '"'), nil
}

func (j *jsonRows) end() error {
	end := "]\n"
	if j.n > 0 {
		end = "\n]\n"
	}
	_, err := io.WriteString(j.w, end)
	return err
}

// validUTF8 replaces invalid bytes, which JSON cannot carry, with U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// csvRows prints RFC 4180 CSV with a header line; NULL is an empty field.
type csvRows struct {
	w   *csv.Writer
	rec []string
}

func (c *csvRows) begin(columns []string) error {
	c.rec = make([]string, len(columns))
	return c.w.Write(columns)
}

func (c *csvRows) row(cells []cell) error {
	for i, x := range cells {
		c.rec[i] = x.text()
	}
	return c.w.Write(c.rec)
}

func (c *csvRows) end() error {
	c.w.Flush()
	return c.w.Error()
}
