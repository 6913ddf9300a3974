package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/sqlquery"
)

// MaxSQLRows bounds the rows an SQL answer carries; MaxSQLBytes the text
// it may take (a row can hold a string of megabytes), and SQLTimeout the
// time a statement may run.
const (
	MaxSQLRows  = 1000
	MaxSQLBytes = 16 << 20
	SQLTimeout  = 30 * time.Second
)

// SQLJSON is the answer to an SQL statement: the rows as heapx sql --json
// writes them (objects keyed by column, a repeated name suffixed), with
// the column names in order, which a JSON object does not keep.
type SQLJSON struct {
	SchemaVersion int `json:"schema_version"`
	// Database is the SQLite file the statement ran on.
	Database string   `json:"database"`
	Columns  []string `json:"columns"`
	// Keys are the rows' keys for Columns, in order.
	Keys []string        `json:"keys"`
	Rows json.RawMessage `json:"rows"`
	// Truncated says the statement had more rows than Rows holds.
	Truncated bool    `json:"truncated"`
	Seconds   float64 `json:"seconds"`
}

// SQL runs one read-only statement over the SQLite form of the file (the
// file itself when it is a .db, else heapx sql's cached copy, built on
// first use from the analysis in memory) and returns up to limit rows
// (0: MaxSQLRows; at most MaxSQLRows).
func (s *Session) SQL(ctx context.Context, stmt string, limit int) (*SQLJSON, error) {
	if limit < 0 {
		return nil, invalid("limit must be 0 or more, not %d", limit)
	}
	if limit == 0 || limit > MaxSQLRows {
		limit = MaxSQLRows
	}
	db, err := s.sqlDatabase()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, SQLTimeout)
	defer cancel()
	start := time.Now()
	var buf bytes.Buffer
	var w *limitedRows
	run := func() error {
		buf.Reset()
		w = &limitedRows{JSONRows: sqlquery.JSONRows{W: &buf}, limit: limit, buf: &buf}
		return sqlquery.Run(ctx, db.Path, stmt, w, -1)
	}
	err = run()
	if sqlquery.IsCorrupt(err) && db.Source != "" {
		// A cache damaged since it was made (a disk error, a crash
		// while it was written by another heapx) is made again, once.
		if err = s.rebuildSQL(db); err == nil {
			err = run()
		}
	}
	if errors.Is(err, errEnough) {
		err = w.JSONRows.End()
		w.truncated = true
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, invalid("the statement ran longer than %v and was stopped", SQLTimeout)
		}
		var se *sqlquery.Error
		if errors.As(err, &se) || w.columns == nil {
			// SQLite's refusal of the statement, or no statement.
			return nil, invalid("%s", err)
		}
		return nil, err
	}
	return &SQLJSON{SchemaVersion: SchemaVersion, Database: db.Path, Columns: w.columns, Keys: sqlquery.Keys(w.columns),
		Rows: json.RawMessage(bytes.TrimSpace(buf.Bytes())), Truncated: w.truncated, Seconds: time.Since(start).Seconds()}, nil
}

// errEnough stops a statement whose answer is full.
var errEnough = errors.New("enough rows")

// limitedRows is JSONRows that stops after limit rows or MaxSQLBytes.
type limitedRows struct {
	sqlquery.JSONRows
	limit, n  int
	buf       *bytes.Buffer
	columns   []string
	truncated bool
}

func (l *limitedRows) Begin(columns []string) error {
	l.columns = columns
	return l.JSONRows.Begin(columns)
}

func (l *limitedRows) Row(cells []sqlquery.Cell) error {
	if l.n == l.limit || l.buf.Len() > MaxSQLBytes {
		return errEnough
	}
	l.n++
	return l.JSONRows.Row(cells)
}

// sqlDatabase returns the SQLite file SQL runs on, made on first use.
func (s *Session) sqlDatabase() (*sqlquery.DB, error) {
	if err := s.notForTrace("objects to query with SQL"); err != nil {
		return nil, err
	}
	s.sqlMu.Lock()
	defer s.sqlMu.Unlock()
	if s.sqlDB != nil {
		return s.sqlDB, nil
	}
	db, err := sqlquery.Open(s.file.Path, s.opt.SQLCache, s.sqlBuilder())
	if err != nil {
		return nil, err
	}
	s.sqlDB = db
	return db, nil
}

// rebuildSQL makes the SQL cache db again.
func (s *Session) rebuildSQL(db *sqlquery.DB) error {
	s.sqlMu.Lock()
	defer s.sqlMu.Unlock()
	return db.Rebuild(s.sqlBuilder())
}

// sqlBuilder makes SQL caches from the analysis in memory.
func (s *Session) sqlBuilder() sqlquery.Builder {
	return sqlquery.Builder{
		Load: func(string) (*model.Graph, *model.Results, error) { return s.g, s.a.Results(), nil },
		Save: s.opt.SaveSQL,
	}
}
