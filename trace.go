package heapx

import (
	"os"
	"sync"

	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/query"
)

// OpenTrace reads the memory trace at path, written by heapx trace, and
// runs its lifetime analysis, for the lifetime queries
// (query.Snapshot.Trace) and a trace's report.
func OpenTrace(path string) (*query.Trace, error) {
	res, err := lifetimes(path)
	if err != nil {
		return nil, err
	}
	return &query.Trace{Lifetimes: res, Replay: func(opt lifetime.Options) (*lifetime.Result, error) {
		return analyzeTrace(path, opt)
	}}, nil
}

// traceCache keeps the last trace analysed, so a trace opened again (a
// session opened twice on it) is not replayed again.
var traceCache struct {
	sync.Mutex
	path string
	mod  int64
	size int64
	res  *lifetime.Result
}

// lifetimes returns the lifetime analysis of the trace at path.
func lifetimes(path string) (*lifetime.Result, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	traceCache.Lock()
	defer traceCache.Unlock()
	if traceCache.res != nil && traceCache.path == path && traceCache.mod == st.ModTime().UnixNano() && traceCache.size == st.Size() {
		return traceCache.res, nil
	}
	res, err := analyzeTrace(path, lifetime.Options{})
	if err != nil {
		return nil, err
	}
	traceCache.path, traceCache.mod, traceCache.size, traceCache.res = path, st.ModTime().UnixNano(), st.Size(), res
	return res, nil
}

// analyzeTrace reads the trace at path and analyses it with opt.
func analyzeTrace(path string, opt lifetime.Options) (*lifetime.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := memtrace.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	return lifetime.Analyze(r, path, opt)
}
