//go:build !duckdb

package main

import (
	"context"
	"fmt"
	"io"

	"github.com/heapx/heapx/sqlquery"
)

// sqlParquetDir is heapx sql over a Parquet directory in a heapx built
// without DuckDB: it says how to build one that has it.
func sqlParquetDir(_ context.Context, dir, _ string, _ io.Writer, _ func(io.Writer) sqlquery.RowWriter) error {
	return fmt.Errorf("%s is a directory: SQL over a Parquet directory runs on DuckDB, which this heapx was built without "+
		"(build it with cgo and the duckdb tag: CGO_ENABLED=1 go build -tags duckdb ./cmd/heapx; heapx fleet %s works in every build)", dir, dir)
}
