package session

import (
	"slices"
	"sync"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/query"
)

// Open reads the dump at file and the earlier snapshots at baselines
// (oldest first) with heapx.Open and opt.Dump, the facade's options (the
// node binary of a core, source maps, progress, stored results), so a
// session opens every input the facade does: a V8, Firefox or HPROF
// snapshot, a .jsonl or .db file, a Parquet partition, a Node.js core.
// It then opens a session on them (New), which analyses them. When
// opt.Dump.Warn is nil, what goes wrong with a source map is among the
// session's warnings (Info's); otherwise Warn is told. A front end that
// reads with progress bars of its own opens the dumps itself and calls
// New.
func Open(file string, baselines []string, opt Options) (*Session, error) {
	var warnings sourceMapWarnings
	do := opt.Dump
	if do.Warn == nil {
		do.Warn = warnings.add
	}
	d, err := heapx.Open(file, do)
	if err != nil {
		return nil, err
	}
	var bs []*heapx.Dump
	for _, b := range baselines {
		bd, err := heapx.Open(b, do)
		if err != nil {
			return nil, err
		}
		bs = append(bs, bd)
	}
	s, err := New(d, bs, opt)
	if err == nil {
		s.warnings = append(s.warnings, warnings.list()...)
	}
	return s, err
}

// sourceMapWarnings collects what goes wrong with source maps while
// dumps are read (heapx.Options.Warn), each message once; the readers
// may call from goroutines of theirs.
type sourceMapWarnings struct {
	mu sync.Mutex
	ws []query.Warning
}

func (w *sourceMapWarnings) add(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := query.Warning{Code: query.WarnSourceMap, Message: msg}
	if !slices.Contains(w.ws, q) {
		w.ws = append(w.ws, q)
	}
}

func (w *sourceMapWarnings) list() []query.Warning {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ws
}
