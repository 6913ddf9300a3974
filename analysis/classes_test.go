package analysis_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// A deliberate deviation from DevTools (see ClassifyNodes): in
// devtools-quirks/function-prototype, 8 plain objects have
// Function.prototype as prototype (esbuild's __toESM), so V8 names them
// "Function", the class every closure has. DevTools keys the objects'
// class by their name's string and the closures' by a string of its own,
// both ",Function" once made durable, and its Summary keeps the later of
// the two: the golden (made by DevTools' own worker, see the fixture's
// README) shows "Function ×8" and not one of the 9,346 closures. heapx
// shows one row with both.
func TestFunctionClassMergesObjectsNamedFunction(t *testing.T) {
	dir := filepath.Join(testfixtures.Dir(), "devtools-quirks")
	g, err := v8.ReadFile(filepath.Join(dir, "function-prototype.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "function-prototype.devtools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gold golden
	if err := json.Unmarshal(b, &gold); err != nil {
		t.Fatal(err)
	}
	var devtools *goldenClass
	for i, c := range gold.TopClasses {
		if c.Key == ",Function" {
			devtools = &gold.TopClasses[i]
		}
	}
	if devtools == nil || devtools.Count != 8 || devtools.Name != "Function" {
		t.Fatalf("DevTools' Function row %+v, want the 8 objects", devtools)
	}
	// Count the two kinds of "Function" the way the Summary counts:
	// nodes with a shallow size.
	var closures, objects int
	for v := range g.NumNodes() {
		if a.Self.At(int(v)) == 0 || a.Classes.Name(int32(v)) != "Function" {
			continue
		}
		switch g.NodeTypes[g.Nodes.Type[v]].Name {
		case "closure":
			closures++
		case "object":
			objects++
		}
	}
	if objects != devtools.Count || closures != 9346 {
		t.Errorf("%d objects and %d closures classed Function; want DevTools' %d objects and 9,346 closures (the fixture's 4,000 handlers and Node's own)", objects, closures, devtools.Count)
	}
	var rows int
	for _, r := range a.Summary() {
		if r.Name != "Function" {
			continue
		}
		rows++
		if r.Key != ",Function" || r.Count != closures+objects {
			t.Errorf("heapx's Function row: key %q, count %d, want ,Function with %d", r.Key, r.Count, closures+objects)
		}
	}
	// DevTools lost a row to the collision; heapx never made two.
	if rows != 1 || len(a.Summary()) != gold.ClassCount {
		t.Errorf("%d Function rows, %d classes; want 1 and DevTools' %d", rows, len(a.Summary()), gold.ClassCount)
	}
}

// LeakDemo's byte[] and java.lang.String have a few unreachable instances
// (distance -5) among tens of thousands a root reaches: the class's
// distance is its nearest reachable instance's, not "-".
func TestSummaryDistanceIgnoresUnreachable(t *testing.T) {
	a := analysistest.AnalyzeDump(t, "hprof/java-leakdemo-small.hprof.gz")
	want := map[string]int32{"byte[]": 2, "java.lang.String": 1, "java.lang.Object[]": 1, "int[]": 2, "LeakDemo$Session": 6}
	unreached := map[string]int{}
	for v, d := range a.Distances {
		if d == analysis.NoDistance && a.Self.At(int(v)) > 0 {
			unreached[a.Classes.Name(int32(v))]++
		}
	}
	for _, r := range a.Summary() {
		w, ok := want[r.Name]
		if !ok {
			continue
		}
		delete(want, r.Name)
		if r.Distance != w {
			t.Errorf("%s: distance %d, want %d", r.Name, r.Distance, w)
		}
		if r.Name != "LeakDemo$Session" && unreached[r.Name] == 0 {
			t.Errorf("%s has no unreachable instance: the case is not tested", r.Name)
		}
	}
	for n := range want {
		t.Errorf("class %s not in the summary", n)
	}
}
