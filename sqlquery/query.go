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
	sent := &countingWriter{w: out}
	buf := bufio.NewWriterSize(sent, 64<<10)
	err := run(ctx, db.Path, stmt, rows(buf))
	if db.Source != "" && IsCorrupt(err) {
		damaged(err)
		if rerr := db.Rebuild(b); rerr != nil {
			return rerr
		}
		if sent.n > 0 {
			buf.Flush()
			return fmt.Errorf("%w (the SQL cache was rebuilt after part of the result was printed: run the query again)", err)
		}
		buf.Reset(sent)
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
