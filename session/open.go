package session

import (
	"slices"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/report"
)

// Open reads and analyses the dump at file and the earlier snapshots at
// baselines (oldest first), then opens a session on them. Analysis
// results a file carries (heapx convert --analyze) are used instead of
// computed, and the scripts' source maps are applied (heapx.Open); what
// goes wrong with a map is among the session's warnings. The command line
// reads with progress bars instead, and opens its session with New.
func Open(file string, baselines []string, opt Options) (*Session, error) {
	var warnings []query.Warning
	warn := func(msg string) {
		w := query.Warning{Code: query.WarnSourceMap, Message: msg}
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	in, err := load(file, warn)
	if err != nil {
		return nil, err
	}
	var bs []report.Input
	for _, b := range baselines {
		bin, err := load(b, warn)
		if err != nil {
			return nil, err
		}
		bs = append(bs, bin)
	}
	s, err := New(in, bs, opt)
	if err == nil {
		s.warnings = append(s.warnings, warnings...)
	}
	return s, err
}

// Load reads and analyses the dump at path, with classes and distances,
// as a session takes it.
func Load(path string) (report.Input, error) { return load(path, nil) }

// load is Load telling warn what goes wrong with source maps.
func load(path string, warn func(string)) (report.Input, error) {
	d, err := heapx.Open(path, heapx.Options{Warn: warn})
	if err != nil {
		return report.Input{}, err
	}
	a, err := d.Analysis()
	if err != nil {
		return report.Input{}, err
	}
	return report.Input{Path: path, Format: d.Format().Name, A: a}, nil
}
