package sqlquery

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

// CellLimit is a RowWriter that shows only the start of a long value
// (a table): Query reads CellBytes bytes of each text or blob value
// (Run's cellBytes) rather than all of it.
type CellLimit interface {
	CellBytes() int
}

// Query runs stmt over db and writes the rows to out, as the RowWriter
// rows makes for it formats them. When SQLite finds a copy damaged (a
// page overwritten, a file cut short), the copy is rebuilt with b, after
// damaged is told the error, and the query run again, once; if rows had
// already reached out by then, the copy is still rebuilt, and the error
// says so.
func (db *DB) Query(ctx context.Context, stmt string, out io.Writer, rows func(io.Writer) RowWriter, b Builder, damaged func(error)) error {
	var sent bool // rows have reached out
	to := writerFunc(func(b []byte) (int, error) {
		sent = true
		return out.Write(b)
	})
	buf := bufio.NewWriterSize(to, 64<<10)
	err := run(ctx, db.Path, stmt, rows(buf))
	if db.Source != "" && IsCorrupt(err) {
		damaged(err)
		if rerr := db.Rebuild(b); rerr != nil {
			return rerr
		}
		if sent {
			buf.Flush()
			return fmt.Errorf("%w (the SQL cache was rebuilt after part of the result was printed: run the query again)", err)
		}
		buf.Reset(to)
		err = run(ctx, db.Path, stmt, rows(buf))
	}
	if err != nil {
		// Most errors come before the first row (SQL that does not
		// compile, a write refused); one in mid-result leaves the rows
		// already flushed and the error last.
		buf.Flush()
		return err
	}
	return buf.Flush()
}

// run is Run reading of each value what w shows (CellLimit), all of it
// for other writers.
func run(ctx context.Context, path, stmt string, w RowWriter) error {
	cellBytes := -1
	if l, ok := w.(CellLimit); ok {
		cellBytes = l.CellBytes()
	}
	return Run(ctx, path, stmt, w, cellBytes)
}

// writerFunc is an io.Writer made of its Write.
type writerFunc func(b []byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
