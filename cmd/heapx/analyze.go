package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// analyze runs the DevTools pipeline (dominators, retained sizes,
// distances, classes) on a loaded dump, with a spinner on a terminal when
// it is slow. With res, results the file carried, it takes what they hold
// instead of computing it (analysis.FromResults, which recomputes when
// they are for another policy); res may be nil.
func analyze(d *dump, res *model.Results, stderr *os.File) (*analysis.Analysis, error) {
	spin := startProgress(stderr, "analyzing "+filepath.Base(d.path), -1)
	defer spin.done()
	var a *analysis.Analysis
	var err error
	if res != nil && res.Shallow != nil {
		a, err = analysis.FromResults(d.graph, res, analysis.Options{})
	} else {
		a, err = analysis.Analyze(d.graph, analysis.Options{})
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.path, err)
	}
	return a, nil
}

// loadAndAnalyze is load followed by analyze, what every view but info
// needs. Results the file carries (heapx convert --analyze) are read and
// used, so reopening an analysed dump computes only the cheap columns.
func loadAndAnalyze(path string, stderr *os.File) (*dump, *analysis.Analysis, error) {
	res := &model.Results{}
	d, err := loadResults(path, stderr, res)
	if err != nil {
		return nil, nil, err
	}
	a, err := analyze(d, res, stderr)
	if err != nil {
		return nil, nil, err
	}
	return d, a, nil
}

// loadDigest reads the dump at path and keeps only its digest (see
// analysis.NewDigest), made after prev's, for a query that needs no more
// of it (query.Query.EarlierAsDigests).
func loadDigest(path string, prev *analysis.Digest, stderr *os.File) (*analysis.Digest, error) {
	d, err := load(path, stderr)
	if err != nil {
		return nil, err
	}
	spin := startProgress(stderr, "analyzing "+filepath.Base(path), -1)
	defer spin.done()
	return analysis.NewDigest(d.graph, prev), nil
}
