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
	"unicode/utf8"
	"unsafe"

	"github.com/spf13/cobra"
	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

func newSQLCmd(stderr *os.File) *cobra.Command {
	var asJSON, asCSV bool
	c := &cobra.Command{
		Use:   "sql FILE QUERY",
		Short: "Run a read-only SQL query over a dump (SQLite form, cached for other formats)",
		Long: `Run one read-only SQL statement over a heap dump and print the rows.

FILE may be a .db in heapx's SQLite form, queried as it is, or any other dump
heapx reads: it is converted once, with retained sizes, dominators and
distances, to FILE.heapx.db beside it (or under the user cache directory when
that directory is not writable) and the copy is reused while FILE keeps its
size, modification time and first megabyte.

The connection is read-only: statements that would change the database fail.
The tables and views are described in docs/format.md ("SQLite form"); README
has example queries.`,
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
			db, err := sqlDatabase(args[0], stderr)
			if err != nil {
				return err
			}
			out := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
			var w rowWriter
			switch {
			case asJSON:
				w = &jsonRows{w: out}
			case asCSV:
				w = &csvRows{w: csv.NewWriter(out)}
			default:
				w = &tableRows{w: out}
			}
			if err := runQuery(db, args[1], w); err != nil {
				// Most errors come before the first row (SQL that does
				// not compile, a write refused); one in mid-result
				// leaves the rows already flushed and the error last.
				out.Flush()
				return err
			}
			return out.Flush()
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of objects, one per row")
	c.Flags().BoolVar(&asCSV, "csv", false, "print CSV with a header line")
	return c
}

// sqlDatabase returns the SQLite file to query for path: path itself when
// it is in the SQLite form, else the cached conversion, made first when
// missing or stale.
func sqlDatabase(path string, stderr *os.File) (string, error) {
	f, err := formats.Detect(path)
	if err != nil {
		return "", err
	}
	if f.Name == hsql.Name {
		return path, nil
	}
	return cachedDatabase(path, stderr, dirWritable)
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

// cachedDatabase returns a fresh SQLite conversion of path, converting it
// when no fresh one exists. The cache lives beside path when its directory
// is writable, else in the user cache directory (heapx/ under
// os.UserCacheDir), keyed by the input's absolute path.
func cachedDatabase(path string, stderr *os.File, writable func(dir string) bool) (string, error) {
	key, err := sourceKey(path)
	if err != nil {
		return "", err
	}
	beside := path + cacheSuffix
	var user string
	if dir, err := os.UserCacheDir(); err == nil {
		abs, _ := filepath.Abs(path)
		h := sha256.Sum256([]byte(abs))
		user = filepath.Join(dir, "heapx", hex.EncodeToString(h[:8])+"-"+filepath.Base(path)+cacheSuffix)
	}
	for _, c := range []string{beside, user} {
		if c != "" && cacheFresh(c, key) {
			return c, nil
		}
	}
	target := beside
	if !writable(filepath.Dir(path)) {
		if user == "" {
			return "", fmt.Errorf("%s: cannot cache a SQLite copy: %s is not writable and there is no user cache directory", path, filepath.Dir(path))
		}
		if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
			return "", fmt.Errorf("%s: cannot cache a SQLite copy: %w", path, err)
		}
		os.Chmod(filepath.Dir(user), 0o700) // one an older heapx made 0755 holds copies of dumps
		target = user
	}
	// An interrupt must not leave a temporary file behind (the cache is
	// renamed into place only once complete).
	defer cleanUpOnInterrupt(stderr, target)()
	// Results the input carries (an analysed .jsonl) are kept; otherwise
	// they are computed, since the first questions asked in SQL are about
	// retained sizes.
	res := &model.Results{}
	d, err := loadResults(path, stderr, res)
	if err != nil {
		return "", err
	}
	if res.Shallow == nil {
		a, err := analyze1(d, stderr)
		if err != nil {
			return "", err
		}
		res = resultsOf(a)
	}
	bar := startProgress(stderr, "writing "+filepath.Base(target), -1)
	err = hsql.Save(target, d.graph, hsql.Options{
		Results:  res,
		Meta:     key,
		Sources:  []string{path},
		Progress: func(done, _ int64) { bar.set(done) },
	})
	bar.done()
	if err != nil {
		return "", fmt.Errorf("%s: writing the SQLite copy %s: %w", path, target, err)
	}
	return target, nil
}

// resultsOf is an analysis as the results a dump file persists
// (docs/format.md, section 4).
func resultsOf(a *analysis.Analysis) *model.Results {
	return &model.Results{Policy: a.Policy.Name, Shallow: a.Self, Retained: a.Dominators.Retained,
		Dominator: a.Dominators.IDom, Distance: a.Distances}
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
	return fmt.Errorf("%s: %s", path, msg)
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
	t       *table
	numeric []bool // every non-NULL value of column i is a number
}

func (t *tableRows) begin(columns []string) error {
	t.t = newTable()
	t.t.header = columns
	t.t.right = make([]bool, len(columns))
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
	t.t.add(r...)
	return nil
}

func (t *tableRows) end() error {
	copy(t.t.right, t.numeric)
	if len(t.t.header) == 0 {
		return nil
	}
	return t.t.write(t.w)
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
