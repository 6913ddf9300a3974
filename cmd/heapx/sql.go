package main

import (
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
	"github.com/heapx/heapx/internal/progress"
	"github.com/heapx/heapx/model"
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
			rows := func(out io.Writer) sqlquery.RowWriter { return render.NewSQLRows(out, outputForm(asJSON, asCSV)) }
			if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
				if noCache || cachePath != "" {
					return fmt.Errorf("%s is a directory, queried as it is: --cache and --no-cache are for dump files", args[0])
				}
				return sqlParquetDir(cmd.Context(), args[0], args[1], cmd.OutOrStdout(), rows)
			}
			db, err := sqlquery.Open(args[0], sqlquery.Choice{Path: cachePath, None: noCache}, copyBuilder(stderr, nil))
			if err != nil {
				return err
			}
			if db.Temp {
				// Deleted after the query, or when it is interrupted.
				defer cleanUpOnInterrupt(stderr, "", db.Path)()
				defer os.Remove(db.Path)
			}
			return db.Query(cmd.Context(), args[1], cmd.OutOrStdout(), rows, copyBuilder(stderr, nil), func(err error) {
				fmt.Fprintf(stderr, "heapx: %v: the SQL cache is damaged; rebuilding it\n", err)
			})
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of objects, one per row")
	c.Flags().BoolVar(&asCSV, "csv", false, "print CSV with a header line")
	c.Flags().StringVar(&cachePath, "cache", "", "keep the SQL cache of a dump at `PATH` (a .db file, or a directory to keep it in)")
	c.Flags().BoolVar(&noCache, "no-cache", false, "build a temporary SQL cache of a dump and delete it after the query")
	return c
}

// copyBuilder builds SQL copies as heapx sql does: the dump read with a
// progress bar and analysed when it carries no results, and the copy
// written with a note on stderr of what it makes, where and how large,
// since it can take a minute and a gigabyte.
func copyBuilder(stderr *os.File, writable func(dir string) bool) sqlquery.Builder {
	return sqlquery.Builder{
		Load: func(path string) (*model.Graph, *model.Results, error) {
			d, err := load(path, stderr, hx.Options{Analysis: analysis.Options{NoClasses: true}})
			if err != nil {
				return nil, nil, err
			}
			res, err := d.ResultsToStore()
			d.bars.Done()
			return d.Graph(), res, err
		},
		Save: func(source, target string, g *model.Graph, opt hsql.WriteOptions, temp bool) error {
			return writeCopy(source, target, g, opt, temp, stderr)
		},
		Writable: writable,
	}
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
	bar := progress.Start(stderr, "writing "+filepath.Base(target), -1)
	opt.Progress = bar.Update
	opt.Generator = generator()
	err := hsql.Save(target, g, opt)
	bar.Done()
	if err != nil {
		return err
	}
	if st, err := os.Stat(target); err == nil {
		fmt.Fprintf(stderr, "heapx: SQL cache ready: %s (%s, %.1f s)\n", target, humanize.Size(uint64(st.Size())), time.Since(start).Seconds())
	}
	return nil
}
