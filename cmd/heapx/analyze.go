package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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

// nodeJSON is one heap object in JSON output. The keys follow the DevTools
// goldens in testdata/golden (id, type, name, distance, self/retained size),
// so the two can be compared field by field.
type nodeJSON struct {
	ID          uint64 `json:"id"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Constructor string `json:"constructor"`
	// Distance is DevTools' raw distance: 1 for a user root (Node's
	// global), 100000000 and up for objects reached only through
	// internal roots, -5 for unreachable ones.
	Distance     int32  `json:"distance"`
	ShallowSize  uint64 `json:"shallow_size"`
	RetainedSize uint64 `json:"retained_size"`
	// DominatorID is the id of the immediate dominator, 0 for the root.
	DominatorID uint64 `json:"dominator_id"`
}

// newNodeJSON converts an analysis row.
func newNodeJSON(g *model.Graph, r analysis.NodeRow) nodeJSON {
	n := nodeJSON{
		ID: r.ID, Type: r.Type, Name: r.Name, Constructor: r.Class, Distance: r.Distance,
		ShallowSize: r.Shallow, RetainedSize: r.Retained,
	}
	if r.Dominator != model.NoNode {
		n.DominatorID = g.Nodes.ID[r.Dominator]
	}
	return n
}

// distance formats a distance as DevTools' grids do (toUIDistance): the
// number for objects reachable from a user root, a dash for system-only
// and unreachable ones.
func distance(d int32) string {
	if d < 0 || d >= analysis.BaseSystemDistance {
		return "-"
	}
	return strconv.Itoa(int(d))
}

// maxNameWidth bounds object names in tables: a cons string's name can be a
// kilobyte of text.
const maxNameWidth = 48

// shorten cuts s to at most n characters, marking the cut with "…", and
// makes control characters visible so one name stays on one line.
func shorten(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '·'
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// objectName is a node as DevTools' Object column labels it: "name @id",
// with the constructor standing in for an empty name (V8 leaves most
// internal arrays unnamed).
func objectName(n nodeJSON) string {
	name := n.Name
	if name == "" {
		name = n.Constructor
	}
	return shorten(name, maxNameWidth) + " @" + strconv.FormatUint(n.ID, 10)
}

// limitFlag is the -n flag's help text, shared by the commands with a row
// limit.
const limitFlag = "number of rows to print (0: all)"
