package session

import (
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	// Formats register themselves; a session opens any dump heapx reads.
	_ "github.com/heapx/heapx/formats/hprof"
	_ "github.com/heapx/heapx/formats/jsonl"
	_ "github.com/heapx/heapx/formats/spidermonkey"
	_ "github.com/heapx/heapx/formats/sqlite"
	_ "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/report"
)

// Open reads and analyses the dump at file and the earlier snapshots at
// baselines (oldest first), then opens a session on them. Analysis
// results a file carries (heapx convert --analyze) are used instead of
// computed. The command line reads with progress bars instead, and opens
// its session with New.
func Open(file string, baselines []string, opt Options) (*Session, error) {
	in, err := Load(file)
	if err != nil {
		return nil, err
	}
	var bs []report.Input
	for _, b := range baselines {
		bin, err := Load(b)
		if err != nil {
			return nil, err
		}
		bs = append(bs, bin)
	}
	return New(in, bs, opt)
}

// Load reads and analyses the dump at path, with classes and distances,
// as a session takes it.
func Load(path string) (report.Input, error) {
	res := &model.Results{}
	g, f, err := formats.Open(path, formats.ReadOptions{Results: res})
	if err != nil {
		return report.Input{}, err
	}
	var a *analysis.Analysis
	if res.Shallow != nil {
		a, err = analysis.FromResults(g, res, analysis.Options{})
	} else {
		a, err = analysis.Analyze(g, analysis.Options{})
	}
	if err != nil {
		return report.Input{}, err
	}
	return report.Input{Path: path, Format: f.Name, A: a}, nil
}
