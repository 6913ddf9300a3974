// Package duckdb runs read-only SQL over a directory of dumps in heapx's
// Parquet form (docs/format.md, "Parquet form") on embedded DuckDB: each
// table of the form is a view of the same name over its partitions, so
// one statement asks a question of every dump in the directory at once
// (heapx sql DIR). DuckDB is C++ linked through cgo, so the package's code
// is built only with the build tag duckdb (go build -tags duckdb); without
// it the package is this comment alone, and the rest of heapx builds
// without cgo.
package duckdb
