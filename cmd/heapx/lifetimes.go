package main

import (
	"io"
	"os"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// isMemoryTrace says whether the file at path begins as a memory trace
// written by heapx trace does; heapx report then reports on its object
// lifetimes (report.BuildTrace) instead of reading a heap snapshot. The
// lifetime queries themselves (heapx lifetimes, stale-sites...) are
// registered queries of traces (query.Query.Traces).
func isMemoryTrace(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(memtrace.Magic))
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == memtrace.Magic
}

// printLifetimes writes what heapx lifetimes says of the trace at path
// (heapx trace --report).
func printLifetimes(w io.Writer, path string) error {
	t, err := hx.OpenTrace(path)
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
