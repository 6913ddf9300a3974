package main

import (
	"io"
	"os"

	"github.com/heapx/heapx/formats/memtrace"
)

// isMemoryTrace says whether the file at path begins as a memory trace
// written by heapx trace does; heapx report then reports on its object
// lifetimes (report.BuildTrace) instead of reading a heap snapshot. The
// lifetime queries themselves (heapx lifetimes, stale-sites...) are
// registered queries that read their trace (query.Query.Traces).
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
