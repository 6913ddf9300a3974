package sqlquery

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"zombiezen.com/go/sqlite"

	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/internal/termtext"
)

// RowWriter receives a result set: the column names once, before the
// first row, then each row's cells, then the end. An error from any of
// them stops the query and is returned by Run.
type RowWriter interface {
	Begin(columns []string) error
	Row(cells []Cell) error
	End() error
}

// Run runs one statement over the SQLite file at path through a
// read-only connection and hands the rows to w. With cellBytes >= 0 a
// text or blob value is read only up to that many bytes (a table shows a
// few characters of it; converting a gigabyte to show them cost 15 GB);
// -1 reads whole values. Cancelling ctx interrupts the statement.
func Run(ctx context.Context, path, stmt string, w RowWriter, cellBytes int) (err error) {
	conn, err := hsql.OpenReadOnly(path)
	if err != nil {
		return sqlError(path, err)
	}
	defer conn.Close()
	conn.SetInterrupt(ctx.Done())
	st, trailing, err := conn.PrepareTransient(stmt)
	if err != nil {
		return sqlError(path, err)
	}
	defer st.Finalize()
	if rest := strings.TrimSpace(stmt[len(stmt)-trailing:]); strings.Trim(rest, "; \t\r\n") != "" {
		return fmt.Errorf("%s: give one SQL statement; this text follows the first: %q", path, termtext.Cut(rest, 40))
	}
	names := columnNames(conn, st, stmt[:len(stmt)-trailing])
	row := make([]Cell, len(names))
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
		// fails at once gives nothing but the error.
		if first {
			if err := w.Begin(names); err != nil {
				return err
			}
		}
		if !more {
			break
		}
		for i := range row {
			row[i] = readCell(st, i, cellBytes)
		}
		if err := w.Row(row); err != nil {
			return err
		}
	}
	return w.End()
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

// Error is an error SQLite reported, as "<file>: <SQLite's message>",
// with SQLite's result code.
type Error struct {
	msg  string
	code sqlite.ResultCode
}

func (e *Error) Error() string { return e.msg }

// IsCorrupt reports whether err is SQLite saying the database file is
// damaged (SQLITE_CORRUPT, "database disk image is malformed") or not a
// database at all (SQLITE_NOTADB).
func IsCorrupt(err error) bool {
	var qe *Error
	if !errors.As(err, &qe) {
		return false
	}
	c := qe.code.ToPrimary()
	return c == sqlite.ResultCorrupt || c == sqlite.ResultNotADB
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
	return &Error{msg: path + ": " + msg, code: code}
}

// Cell is one value of a result row.
type Cell struct {
	typ sqlite.ColumnType
	i   int64
	f   float64
	s   string // text, or blob bytes
}

// readCell reads column i of the current row, a text or blob value only
// up to prefix bytes when prefix >= 0.
func readCell(st *sqlite.Stmt, i int, prefix int) Cell {
	switch t := st.ColumnType(i); t {
	case sqlite.TypeInteger:
		return Cell{typ: t, i: st.ColumnInt64(i)}
	case sqlite.TypeFloat:
		return Cell{typ: t, f: st.ColumnFloat(i)}
	case sqlite.TypeText, sqlite.TypeBlob:
		n := st.ColumnLen(i)
		if t == sqlite.TypeText && (prefix < 0 || n <= prefix) {
			return Cell{typ: t, s: st.ColumnText(i)}
		}
		if prefix >= 0 {
			n = min(n, prefix)
		}
		b := make([]byte, n)
		st.ColumnBytes(i, b)
		return Cell{typ: t, s: unsafe.String(unsafe.SliceData(b), len(b))} // b is not written again
	default:
		return Cell{typ: sqlite.TypeNull}
	}
}

// NullCell, IntCell, FloatCell, TextCell and BlobCell make the cells of
// rows that another SQL engine returned (DuckDB over a Parquet
// directory), so one RowWriter prints both engines' results alike.
func NullCell() Cell { return Cell{typ: sqlite.TypeNull} }

// IntCell is an integer cell; see NullCell.
func IntCell(i int64) Cell { return Cell{typ: sqlite.TypeInteger, i: i} }

// FloatCell is a floating-point cell; see NullCell.
func FloatCell(f float64) Cell { return Cell{typ: sqlite.TypeFloat, f: f} }

// TextCell is a text cell; see NullCell.
func TextCell(s string) Cell { return Cell{typ: sqlite.TypeText, s: s} }

// BlobCell is a blob cell, printed in hex; see NullCell.
func BlobCell(b []byte) Cell { return Cell{typ: sqlite.TypeBlob, s: string(b)} }

// IsNull reports whether the value is SQL NULL.
func (c Cell) IsNull() bool { return c.typ == sqlite.TypeNull }

// IsNumber reports whether the value is an integer or a float.
func (c Cell) IsNumber() bool { return c.typ == sqlite.TypeInteger || c.typ == sqlite.TypeFloat }

// IsText reports whether the value is text (not a blob, a number or NULL).
func (c Cell) IsText() bool { return c.typ == sqlite.TypeText }

// Text renders the value for tables and CSV: numbers as SQLite prints
// them, NULL as an empty string, blobs as hex.
func (c Cell) Text() string {
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

// JSONRows writes a result set as a JSON array with one object per row,
// keys in column order (heapx sql --json). Integers stay exact (64-bit),
// NULL is null, blobs are hex strings. A repeated column name gets a
// suffix (name_2), so no value is lost to a decoder that keeps only one
// of two equal keys.
type JSONRows struct {
	W    io.Writer
	keys [][]byte // each column's key, JSON-encoded, with its colon
	n    int
}

// Keys returns the object keys of the columns named names, as JSONRows
// writes them.
func Keys(names []string) []string {
	seen := map[string]int{}
	keys := make([]string, len(names))
	for i, c := range names {
		seen[c]++
		keys[i] = c
		if seen[c] > 1 {
			keys[i] = c + "_" + strconv.Itoa(seen[c])
		}
	}
	return keys
}

// Begin implements RowWriter.
func (j *JSONRows) Begin(columns []string) error {
	for _, k := range Keys(columns) {
		b, _ := json.Marshal(k)
		j.keys = append(j.keys, append(b, ':'))
	}
	_, err := io.WriteString(j.W, "[")
	return err
}

// Row implements RowWriter.
func (j *JSONRows) Row(cells []Cell) error {
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
				v, _ = json.Marshal(c.Text())
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
	_, err := j.W.Write(b)
	return err
}

// jsonPiece is how much of a long value JSONRows encodes at a time: a
// cell of a gigabyte is written in pieces, never encoded whole into a
// second (and third) gigabyte.
const jsonPiece = 64 << 10

// appendString appends a text cell as a JSON string (what json.Marshal
// writes, invalid UTF-8 as U+FFFD) or a blob as a string of hex digits, a
// piece at a time, writing b out whenever it holds a piece's worth.
func (j *JSONRows) appendString(b []byte, c Cell) ([]byte, error) {
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
			if _, err := j.W.Write(b); err != nil {
				return nil, err
			}
			b = b[:0]
		}
	}
	return append(b, '"'), nil
}

// End implements RowWriter.
func (j *JSONRows) End() error {
	end := "]\n"
	if j.n > 0 {
		end = "\n]\n"
	}
	_, err := io.WriteString(j.W, end)
	return err
}

// validUTF8 replaces invalid bytes, which JSON cannot carry, with U+FFFD.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
