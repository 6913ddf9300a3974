package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/sqlquery"
)

func newSQLCmd(stderr *os.File) *cobra.Command {
	var asJSON, asCSV, noCache bool
	var cachePath string
	c := &cobra.Command{
		Use:   "sql FILE|DIR QUERY",
		Short: "Run a read-only SQL query over a dump (SQLite form, cached for other formats) or a Parquet directory",
		Long: `Run one read-only SQL statement over a heap dump, or over every dump of a
directory in heapx's Parquet form, and print the rows.

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
described in docs/format.md ("SQLite form"); docs/sql.md has example queries.

DIR is a directory that heapx export --parquet wrote (or one dump=<id>
partition of it): the query runs on embedded DuckDB, over one view per
table of the Parquet form (dumps, objects, references, classes,
suspects, labels, ...) that reads that table of every dump in DIR, with
its dump_id column to join on (docs/format.md, "The Parquet form"). It
reads no other file. DuckDB needs cgo: a heapx built without the build
tag duckdb says so (docs/sql.md, "Fleets of dumps").`,
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
			rows := func(out io.Writer) sqlquery.RowWriter {
				switch {
				case asJSON:
					return &sqlquery.JSONRows{W: out}
				case asCSV:
					return &csvRows{w: csv.NewWriter(out)}
				}
				return &tableRows{w: out}
			}
			if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
				if noCache || cachePath != "" {
					return fmt.Errorf("%s is a directory, queried as it is: --cache and --no-cache are for dump files", args[0])
				}
				return sqlParquetDir(cmd.Context(), args[0], args[1], cmd.OutOrStdout(), rows)
			}
			db, err := sqlDatabase(args[0], stderr, sqlquery.Choice{Path: cachePath, None: noCache})
			if err != nil {
				return err
			}
			if db.Temp {
				// Deleted after the query, or when it is interrupted.
				defer cleanUpOnInterrupt(stderr, "", db.Path)()
				defer os.Remove(db.Path)
			}
			return queryCopy(db, args[1], cmd.OutOrStdout(), stderr, rows)
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
func queryCopy(db *sqlquery.DB, stmt string, stdout io.Writer, stderr *os.File, rows func(io.Writer) sqlquery.RowWriter) error {
	sent := &countingWriter{w: stdout}
	out := bufio.NewWriterSize(sent, 64<<10)
	err := runQuery(db.Path, stmt, rows(out))
	if db.Source != "" && sqlquery.IsCorrupt(err) {
		fmt.Fprintf(stderr, "heapx: %v: the SQL cache is damaged; rebuilding it\n", err)
		if rerr := db.Rebuild(copyBuilder(stderr, nil)); rerr != nil {
			return rerr
		}
		if sent.n > 0 {
			out.Flush()
			return fmt.Errorf("%w (the SQL cache was rebuilt after part of the result was printed: run the query again)", err)
		}
		out.Reset(sent)
		err = runQuery(db.Path, stmt, rows(out))
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

// runQuery runs one statement over the database at path and hands the
// rows to w; the table reads only the part of a long value it shows.
func runQuery(path, stmt string, w sqlquery.RowWriter) error {
	prefix := -1 // whole values, for --json and --csv
	if _, ok := w.(*tableRows); ok {
		prefix = tableCellBytes
	}
	return sqlquery.Run(context.Background(), path, stmt, w, prefix)
}

// sqlDatabase returns the SQLite file to query for path: path itself when
// it is in the SQLite form, else the copy the choice asks for, made first
// when missing or stale.
func sqlDatabase(path string, stderr *os.File, choice sqlquery.Choice) (*sqlquery.DB, error) {
	return sqlquery.Open(path, choice, copyBuilder(stderr, nil))
}

// cachedDatabase is sqlquery.Cached with heapx sql's messages; writable
// (nil: sqlquery.DirWritable) says where a copy can go.
func cachedDatabase(path string, stderr *os.File, writable func(dir string) bool, choice sqlquery.Choice) (*sqlquery.DB, error) {
	return sqlquery.Cached(path, choice, copyBuilder(stderr, writable))
}

// copyBuilder builds SQL copies as heapx sql does: the dump read with a
// progress bar and analysed when it carries no results, and the copy
// written with a note on stderr of what it makes, where and how large,
// since it can take a minute and a gigabyte.
func copyBuilder(stderr *os.File, writable func(dir string) bool) sqlquery.Builder {
	return sqlquery.Builder{
		Load: func(path string) (*model.Graph, *model.Results, error) {
			d, res, err := loadForCopy(path, stderr)
			if err != nil {
				return nil, nil, err
			}
			return d.Graph(), res, nil
		},
		Save: func(source, target string, g *model.Graph, opt hsql.WriteOptions, temp bool) error {
			return writeCopy(source, target, g, opt, temp, stderr)
		},
		Writable: writable,
	}
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

// writeCopy writes the SQLite copy of g, read from source, at target (a
// temporary one, to be deleted after the query, when temp), saying on
// stderr what it makes, where and how large.
func writeCopy(source, target string, g *model.Graph, opt hsql.WriteOptions, temp bool, stderr *os.File) error {
	what, when := "the SQL cache", "reused while the dump is unchanged"
	if temp {
		what, when = "a temporary SQL cache", "deleted after the query"
	}
	fmt.Fprintf(stderr, "heapx: building %s of %s at %s (about %s; %s)\n", what, source, target,
		humanize.Size(uint64(hsql.EstimateSize(g, opt))), when)
	// An interrupt must not leave a temporary file behind (the copy is
	// renamed into place only once complete).
	defer cleanUpOnInterrupt(stderr, target)()
	start := time.Now()
	bar := startProgress(stderr, "writing "+filepath.Base(target), -1)
	opt.Progress = func(done, total int64) { bar.setTotal(total); bar.set(done) }
	opt.Generator = generator()
	err := hsql.Save(target, g, opt)
	bar.done()
	if err != nil {
		return err
	}
	if st, err := os.Stat(target); err == nil {
		fmt.Fprintf(stderr, "heapx: SQL cache ready: %s (%s, %.1f s)\n", target, humanize.Size(uint64(st.Size())), time.Since(start).Seconds())
	}
	return nil
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

// Begin implements sqlquery.RowWriter.
func (t *tableRows) Begin(columns []string) error {
	t.t = &render.TextTable{Header: columns, Right: make([]bool, len(columns))}
	t.numeric = make([]bool, len(columns))
	for i := range t.numeric {
		t.numeric[i] = true
	}
	return nil
}

// Row implements sqlquery.RowWriter.
func (t *tableRows) Row(cells []sqlquery.Cell) error {
	r := make([]string, len(cells))
	for i, c := range cells {
		switch {
		case c.IsNull():
			r[i] = "NULL"
		case c.IsNumber():
			r[i] = c.Text()
		default:
			t.numeric[i] = false
			r[i] = query.Shorten(c.Text(), tableCellWidth)
		}
	}
	t.t.Add(r...)
	return nil
}

// End implements sqlquery.RowWriter.
func (t *tableRows) End() error {
	copy(t.t.Right, t.numeric)
	if len(t.t.Header) == 0 {
		return nil
	}
	return t.t.Write(t.w)
}

// csvRows prints RFC 4180 CSV with a header line; NULL is an empty field.
type csvRows struct {
	w   *csv.Writer
	rec []string
}

// Begin implements sqlquery.RowWriter.
func (c *csvRows) Begin(columns []string) error {
	c.rec = make([]string, len(columns))
	return c.w.Write(columns)
}

// Row implements sqlquery.RowWriter.
func (c *csvRows) Row(cells []sqlquery.Cell) error {
	for i, x := range cells {
		c.rec[i] = x.Text()
	}
	return c.w.Write(c.rec)
}

// End implements sqlquery.RowWriter.
func (c *csvRows) End() error {
	c.w.Flush()
	return c.w.Error()
}
