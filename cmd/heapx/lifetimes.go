package main

import (
	"io"
	"os"

	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// isMemoryTrace says whether the file at path is a memory trace written
// by heapx trace; heapx report then reports on its object lifetimes
// (report.BuildTrace) instead of reading a heap snapshot. The lifetime
// queries themselves (heapx lifetimes, stale-sites...) are registered
// queries that read their trace (query.Query.Traces).
var isMemoryTrace = memtrace.IsTrace

// printLifetimes writes what heapx lifetimes says of the trace at path
// (heapx trace --report).
func printLifetimes(w io.Writer, stderr *os.File, path string) error {
	t, err := openTrace(path, stderr)
	if err != nil {
		return err
	}
	q := query.Lookup("lifetimes")
	r, err := q.Exec(&query.Context{Snapshots: []query.Snapshot{{Path: path, Trace: t}}, Values: map[string]any{}})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return render.Write(w, r, render.Text, render.Options{Inputs: []string{path}})
}
