package render_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// leakDump is the dump the goldens in testdata/ were printed from, named
// as testdata/make.sh names it (the generic JSON form lists it as given).
const leakDump = "../testdata/node-leak-3.heapsnapshot.gz"

var leakSnapshot = sync.OnceValues(func() (query.Snapshot, error) {
	g, _, err := formats.Open(leakDump, formats.ReadOptions{})
	if err != nil {
		return query.Snapshot{}, err
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	return query.Snapshot{Path: leakDump, Analysis: a}, err
})

// runQuery runs the registered query name on the leak dump.
func runQuery(t *testing.T, name string, values map[string]any) *query.Result {
	t.Helper()
	sn, err := leakSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	r, err := query.Lookup(name).Exec(&query.Context{Snapshots: []query.Snapshot{sn}, Values: values})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkGolden compares r in form f with testdata/golden, what heapx
// printed before rendering moved here (testdata/make.sh).
func checkGolden(t *testing.T, r *query.Result, f render.Format, golden string) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("testdata", golden))
	if err != nil {
		t.Fatal(err) // a missing golden is a failure, not a skip
	}
	var got bytes.Buffer
	if err := render.Write(&got, r, f, render.Options{Inputs: []string{leakDump}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%s: %v output differs from the golden:\n%s\nwant:\n%s", golden, f, got.Bytes(), want)
	}
}

// On a real dump every form is what the command line printed before:
// suspects (several sections, columns left out in text, the generic JSON
// document), merged paths (a tree), summary (a JSON form of its own), the
// paths of the leaking array (JSON streamed a step at a time), and the
// report page's parts (HTML fragments with a chart).
func TestGoldens(t *testing.T) {
	suspects := runQuery(t, "suspects", nil)
	merged := runQuery(t, "merged-paths", map[string]any{"class": "LeakedItem"})
	for _, c := range []struct {
		r      *query.Result
		golden string
	}{{suspects, "node-leak-3.suspects"}, {merged, "node-leak-3.merged-paths"}} {
		checkGolden(t, c.r, render.Text, c.golden+".txt")
		checkGolden(t, c.r, render.CSV, c.golden+".csv")
		checkGolden(t, c.r, render.JSON, c.golden+".json")
	}
	checkGolden(t, suspects, render.HTML, "node-leak-3.suspects.html")
	checkGolden(t, runQuery(t, "summary", map[string]any{"limit": 5}), render.JSON, "node-leak-3.summary.json")
	checkGolden(t, runQuery(t, "summary", map[string]any{"limit": 15}), render.HTML, "node-leak-3.classes.html")
	checkGolden(t, runQuery(t, "paths", map[string]any{"id": "80593"}), render.JSON, "node-leak-3.paths.json")
}
