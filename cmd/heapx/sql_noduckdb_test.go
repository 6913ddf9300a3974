//go:build !duckdb

package main

import (
	"strings"
	"testing"
)

// TestSQLDirWithoutDuckDB checks that a heapx built without DuckDB says
// how to build one that has it when asked for SQL over a directory.
func TestSQLDirWithoutDuckDB(t *testing.T) {
	t.Parallel()
	dir, _ := exportedFleet(t)
	r := heapx(t, "sql", dir, "SELECT count(*) FROM dumps")
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "-tags duckdb") || !strings.Contains(r.stderr, "heapx fleet") {
		t.Errorf("heapx sql DIR without DuckDB: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
