package session

import (
	"github.com/heapx/heapx"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/report"
)

// TraceJSON says what a memory trace holds (the facts heapx report
// TRACE's overview gives).
type TraceJSON struct {
	Events  uint64 `json:"events"`
	Objects int    `json:"objects"`
	Sites   int    `json:"sites"`
	Idles   int    `json:"idle_points"`
	End     uint64 `json:"end_time"`
}

// OpenTrace opens a session on the memory trace at path, written by
// heapx trace, instead of on snapshots: its Info lists the lifetime
// queries (query.Query.Traces) and only those run, Report is heapx report
// TRACE's (report.BuildTrace). A trace records events, not a heap, so the
// views of a snapshot's objects (Classes, Object, Diff, SQL...) answer
// with an error saying so. The trace is analysed here, once, so a bad
// file fails now, not at the first click. Of opt.Dump a trace uses
// NoSourceMaps and Warn (heapx.OpenTraceOptions).
func OpenTrace(path string, opt Options) (*Session, error) {
	t, err := heapx.OpenTraceOptions(path, opt.Dump)
	if err != nil {
		return nil, err
	}
	res := t.Lifetimes
	return &Session{file: report.Input{Path: path, Format: "memtrace"}, opt: opt, warnings: []query.Warning{},
		queries: map[string]*queryEntry{}, traceIn: t,
		trace: &TraceJSON{Events: res.Events, Objects: len(res.Objects), Sites: len(res.Sites), Idles: len(res.Idles), End: res.End}}, nil
}

// notForTrace is the error of a snapshot's view asked of a trace session,
// nil for a session on snapshots.
func (s *Session) notForTrace(what string) error {
	if s.trace == nil {
		return nil
	}
	return notFound("%s is a memory trace (heapx trace): it has no %s; its lifetime analyses are the queries (heapx list, group %q)", s.file.Path, what, query.GroupLifetimes)
}

// traceInfo is Info for a trace session.
func (s *Session) traceInfo() *InfoJSON {
	info := &InfoJSON{SchemaVersion: SchemaVersion, File: s.file.Path, Baselines: []string{}, Runtime: "memtrace", IDs: "counted",
		Words: Words{Class: "Class", Classes: "Classes"}, Inputs: []InputJSON{{Path: s.file.Path, Role: "file", Format: s.file.Format}},
		Categories: []CategoryJSON{}, Warnings: s.warnings, DefaultPage: DefaultPage, MaxPage: MaxPage, Trace: s.trace}
	for _, q := range query.All() {
		if q.Traces {
			info.Queries = append(info.Queries, DescribeQuery(q, 1))
		}
	}
	return info
}
