package report

import (
	"fmt"

	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
)

// traceParts are the parts of a memory trace's report: the lifetime
// queries, in reading order, with their arguments beside the row limit.
var traceParts = []struct {
	key, query, title string
	args              map[string]any
}{
	{"lifetimes", "lifetimes", "Problem sites and the timeline of live and stale objects", nil},
	{"trace_leaks", "trace-leaks", "Leaks: stale objects that keep growing over the idle points", nil},
	{"stale_sites", "stale-sites", "Staleness (drag) by allocation site", nil},
	{"churn", "churn", "Churn: one object alive at a time", map[string]any{"one": true}},
	{"non_escaping", "non-escaping", "Objects that never outlive their call", nil},
	{"inlining", "inlining", "Objects that could be inlined into their owner", nil},
	{"unused", "unused", "Objects never used", nil},
}

// BuildTrace composes the report of the memory trace t at path, written
// by heapx trace: MemInsight's analyses (the lifetime queries) in place of
// a snapshot's, with the timeline drawn as a chart in HTML.
func BuildTrace(path string, t *query.Trace, opt Options) (*Report, error) {
	if opt.Rows == 0 {
		opt.Rows = 15
	}
	res := t.Lifetimes
	r := &Report{File: Input{Path: path, Format: "memtrace"}}
	r.Overview = [][2]string{
		{"File", path},
		{"Format", "memtrace (heapx trace)"},
		{"Events", humanize.Thousands(res.Events)},
		{"Objects", humanize.Thousands(uint64(len(res.Objects)))},
		{"Allocation sites", humanize.Thousands(uint64(len(res.Sites)))},
		{"Idle points", humanize.Thousands(uint64(len(res.Idles)))},
		{"End time", humanize.Thousands(res.End)},
	}
	for _, p := range traceParts {
		vals := map[string]any{"limit": opt.Rows}
		for k, v := range p.args {
			vals[k] = v
		}
		q := query.Lookup(p.query)
		pr, err := q.Exec(&query.Context{Snapshots: []query.Snapshot{{Path: path, Trace: t}}, Values: vals})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.query, err)
		}
		if p.key == "lifetimes" {
			r.Warnings = pr.Warnings
		}
		pr.Warnings = nil // said once, at the top
		r.Parts = append(r.Parts, Part{Key: p.key, Title: p.title, Result: pr})
	}
	return r, nil
}
