package heapx

import (
	"os"
	"sync"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/sourcemaps"
)

// OpenTrace reads the memory trace at path, written by heapx trace, and
// runs its lifetime analysis, for the lifetime queries
// (query.Snapshot.Trace) and a trace's report.
func OpenTrace(path string) (*query.Trace, error) { return OpenTraceOptions(path, Options{}) }

// OpenTraceOptions is OpenTrace with options: of them a trace uses
// NoSourceMaps and Warn. The trace's positions are in the files the
// program ran; a file built by a bundler or minifier with a source map
// (a //# sourceMappingURL comment, or NAME.map beside it) has its
// positions mapped to the sources, unless NoSourceMaps is set.
func OpenTraceOptions(path string, opts Options) (*query.Trace, error) {
	res, err := lifetimes(path, opts)
	if err != nil {
		return nil, err
	}
	return &query.Trace{Lifetimes: res, Replay: func(opt lifetime.Options) (*lifetime.Result, error) {
		return analyzeTrace(path, opt, opts)
	}}, nil
}

// traceCache keeps the last trace analysed, so a trace opened again (a
// session opened twice on it) is not replayed again.
var traceCache struct {
	sync.Mutex
	path string
	maps bool // source maps applied
	mod  int64
	size int64
	res  *lifetime.Result
}

// lifetimes returns the lifetime analysis of the trace at path.
func lifetimes(path string, opts Options) (*lifetime.Result, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	traceCache.Lock()
	defer traceCache.Unlock()
	if traceCache.res != nil && traceCache.path == path && traceCache.maps == !opts.NoSourceMaps && traceCache.mod == st.ModTime().UnixNano() && traceCache.size == st.Size() {
		return traceCache.res, nil
	}
	res, err := analyzeTrace(path, lifetime.Options{}, opts)
	if err != nil {
		return nil, err
	}
	traceCache.path, traceCache.maps, traceCache.mod, traceCache.size, traceCache.res = path, !opts.NoSourceMaps, st.ModTime().UnixNano(), st.Size(), res
	return res, nil
}

// analyzeTrace reads the trace at path and analyses it with opt, its
// positions mapped through their files' source maps unless
// opts.NoSourceMaps.
func analyzeTrace(path string, opt lifetime.Options, opts Options) (*lifetime.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := memtrace.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	res, err := lifetime.Analyze(r, path, opt)
	if err == nil && !opts.NoSourceMaps {
		mapTrace(res, sourcemaps.New(opts.Warn))
	}
	return res, err
}

// mapTrace maps the positions of a trace's analysis through maps: its
// sites' and those it names iids by.
func mapTrace(res *lifetime.Result, maps *sourcemaps.Set) {
	mapPos := func(p memtrace.Pos) memtrace.Pos {
		m, ok := maps.MapPosition(analysis.Position{Script: p.File, Line: int32(p.Line), Column: int32(p.Column)})
		if !ok {
			return p
		}
		return memtrace.Pos{File: m.Script, Line: int(m.Line), Column: int(m.Column)}
	}
	for i := range res.Sites {
		res.Sites[i].Pos = mapPos(res.Sites[i].Pos)
	}
	if pos := res.Positions; pos != nil {
		res.Positions = func(iid uint64) (memtrace.Pos, bool) {
			p, ok := pos(iid)
			if ok {
				p = mapPos(p)
			}
			return p, ok
		}
		if res.Heap != nil {
			res.Heap.Positions = res.Positions
		}
	}
}
