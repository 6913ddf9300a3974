//go:build duckdb

package main

import (
	"bufio"
	"context"
	"io"

	"github.com/heapx/heapx/sqlquery"
	"github.com/heapx/heapx/sqlquery/duckdb"
)

// sqlParquetDir runs stmt over the Parquet directory dir on DuckDB and
// prints the rows as rows makes them.
func sqlParquetDir(ctx context.Context, dir, stmt string, stdout io.Writer, rows func(io.Writer) sqlquery.RowWriter) error {
	out := bufio.NewWriterSize(stdout, 64<<10)
	err := duckdb.Run(ctx, dir, stmt, rows(out))
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}
