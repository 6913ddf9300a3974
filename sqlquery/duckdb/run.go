//go:build duckdb

package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	duckdbdriver "github.com/duckdb/duckdb-go/v2"

	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/sqlquery"
)

// Run runs one statement over the Parquet directory dir and hands the
// rows to w. Only statements that read are run (SELECT, EXPLAIN,
// DESCRIBE, SUMMARIZE): the views are over the dumps' own files, and the
// connection can reach no other file, no network and no extension.
// Cancelling ctx interrupts the statement.
func Run(ctx context.Context, dir, stmt string, w sqlquery.RowWriter) error {
	db, err := Open(ctx, dir)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Run(ctx, stmt, w)
}

// DB is an in-memory DuckDB database whose views read one Parquet
// directory, on one connection.
type DB struct {
	dir  string
	db   *sql.DB
	conn *sql.Conn
	// Tables are the views made, one per table of the form found in
	// the directory.
	Tables []string
}

// Open checks the directory (see Layout) and makes its views.
func Open(ctx context.Context, dir string) (*DB, error) {
	lay, err := ReadLayout(dir)
	if err != nil {
		return nil, err
	}
	connector, err := duckdbdriver.NewConnector("", nil)
	if err != nil {
		return nil, fmt.Errorf("%s: starting DuckDB: %w", dir, err)
	}
	db := sql.OpenDB(connector)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: starting DuckDB: %w", dir, err)
	}
	d := &DB{dir: dir, db: db, conn: conn, Tables: lay.tableNames()}
	for _, s := range lay.settings() {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			d.Close()
			return nil, fmt.Errorf("%s: setting DuckDB up (%s): %w", dir, s, err)
		}
	}
	// The dumps view first (every directory has it), to check the
	// versions before any other table is read.
	for i, t := range d.Tables {
		if _, err := conn.ExecContext(ctx, lay.view(t)); err != nil {
			d.Close()
			return nil, fmt.Errorf("%s: table %s: %s", dir, t, withoutContext(err))
		}
		if i == 0 {
			if err := d.checkVersions(ctx); err != nil {
				d.Close()
				return nil, err
			}
		}
	}
	return d, nil
}

// withoutContext is DuckDB's message without the lines it adds to show
// where in the statement the error is: in a view heapx made, that says
// nothing to the user.
func withoutContext(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n\nLINE ")
	return msg
}

// checkVersions refuses a directory with a partition of another version
// of the form than heapx's, or of several: a query across them could
// silently mix schemas (docs/format.md, 10.3).
func (d *DB) checkVersions(ctx context.Context) error {
	rows, err := d.conn.QueryContext(ctx, `SELECT format_version, min(dump_id), count(*) FROM dumps GROUP BY format_version ORDER BY format_version`)
	if err != nil {
		return d.sqlError(err)
	}
	defer rows.Close()
	var found []string
	mixed := false
	for rows.Next() {
		var version, n int64
		var first string
		if err := rows.Scan(&version, &first, &n); err != nil {
			return d.sqlError(err)
		}
		mixed = mixed || version != parquet.FormatVersion
		found = append(found, fmt.Sprintf("%d partition(s) of version %d (%s%s)", n, version, parquet.PartitionPrefix, first))
	}
	if err := rows.Err(); err != nil {
		return d.sqlError(err)
	}
	if mixed || len(found) > 1 {
		return fmt.Errorf("%s: heapx reads version %d of the Parquet form, and this directory has %s: export the other dumps again with this heapx, into a directory of their own",
			d.dir, parquet.FormatVersion, strings.Join(found, " and "))
	}
	return nil
}

// Close releases the database.
func (d *DB) Close() error {
	d.conn.Close()
	return d.db.Close()
}

// reading are the statement types Run accepts. DESCRIBE, SHOW and
// SUMMARIZE are SELECTs to DuckDB.
var reading = map[duckdbdriver.StmtType]bool{duckdbdriver.STATEMENT_TYPE_SELECT: true, duckdbdriver.STATEMENT_TYPE_EXPLAIN: true}

// Run runs one reading statement and hands its rows to w.
func (d *DB) Run(ctx context.Context, stmt string, w sqlquery.RowWriter) error {
	if strings.Trim(stmt, "; \t\r\n") == "" {
		return fmt.Errorf("%s: the query has no SQL statement", d.dir)
	}
	if err := d.checkReading(stmt); err != nil {
		return err
	}
	rows, err := d.conn.QueryContext(ctx, stmt)
	if err != nil {
		return d.sqlError(err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		return d.sqlError(err)
	}
	if err := w.Begin(names); err != nil {
		return err
	}
	vals := make([]any, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	cells := make([]sqlquery.Cell, len(names))
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return d.sqlError(err)
		}
		for i, v := range vals {
			cells[i] = Cell(v)
		}
		if err := w.Row(cells); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return d.sqlError(err)
	}
	return w.End()
}

// checkReading prepares stmt, without running it, to refuse what is not
// one reading statement before anything runs. The driver's Prepare, not
// PrepareContext: PrepareContext runs every statement but the last of a
// text with several, to prepare the last.
func (d *DB) checkReading(stmt string) error {
	var typ duckdbdriver.StmtType
	err := d.conn.Raw(func(c any) error {
		conn, ok := c.(driver.Conn)
		if !ok {
			return errors.New("the DuckDB driver cannot prepare statements")
		}
		st, err := conn.Prepare(stmt)
		if err != nil {
			return err
		}
		defer st.Close()
		ds, ok := st.(*duckdbdriver.Stmt)
		if !ok {
			return fmt.Errorf("the DuckDB driver prepared a %T", st)
		}
		typ, err = ds.StatementType()
		return err
	})
	if err != nil {
		return d.sqlError(err)
	}
	if !reading[typ] {
		return fmt.Errorf("%s: heapx sql is read-only: SELECT, EXPLAIN, DESCRIBE and SUMMARIZE only", d.dir)
	}
	return nil
}

// sqlError is DuckDB's error as "<dir>: <DuckDB's message>"; for a text
// of several statements, or of none, it says what heapx wants.
func (d *DB) sqlError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "multi-statement query"):
		return fmt.Errorf("%s: give one SQL statement", d.dir)
	case strings.Contains(msg, "empty query"):
		return fmt.Errorf("%s: the query has no SQL statement", d.dir)
	}
	return fmt.Errorf("%s: %s", d.dir, msg)
}

// Cell converts a value DuckDB returned to a cell: integers (HUGEINT and
// UBIGINT too, while they fit 64 bits) stay integers, DECIMAL becomes a
// float, booleans 1 and 0 (as SQLite stores them), times RFC 3339 text,
// and lists, maps and structs their JSON text.
func Cell(v any) sqlquery.Cell {
	switch x := v.(type) {
	case nil:
		return sqlquery.NullCell()
	case int64:
		return sqlquery.IntCell(x)
	case int32:
		return sqlquery.IntCell(int64(x))
	case int16:
		return sqlquery.IntCell(int64(x))
	case int8:
		return sqlquery.IntCell(int64(x))
	case uint64:
		if x > math.MaxInt64 {
			return sqlquery.TextCell(strconv.FormatUint(x, 10))
		}
		return sqlquery.IntCell(int64(x))
	case uint32:
		return sqlquery.IntCell(int64(x))
	case uint16:
		return sqlquery.IntCell(int64(x))
	case uint8:
		return sqlquery.IntCell(int64(x))
	case *big.Int:
		if x.IsInt64() {
			return sqlquery.IntCell(x.Int64())
		}
		return sqlquery.TextCell(x.String())
	case float64:
		return sqlquery.FloatCell(x)
	case float32:
		return sqlquery.FloatCell(float64(x))
	case duckdbdriver.Decimal:
		return sqlquery.FloatCell(x.Float64())
	case bool:
		if x {
			return sqlquery.IntCell(1)
		}
		return sqlquery.IntCell(0)
	case string:
		return sqlquery.TextCell(x)
	case []byte:
		return sqlquery.BlobCell(x)
	case time.Time:
		return sqlquery.TextCell(x.Format(time.RFC3339Nano))
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		return sqlquery.TextCell(fmt.Sprint(v))
	}
	return sqlquery.TextCell(string(b))
}

// jsonable makes DuckDB's maps (map[any]any, which encoding/json
// refuses) into maps with string keys, all the way down.
func jsonable(v any) any {
	switch x := v.(type) {
	case duckdbdriver.Map:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = jsonable(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = jsonable(e)
		}
		return s
	}
	return v
}
