package analysis_test

import (
	"math/rand"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	v8 "github.com/heapx/heapx/formats/v8"
)

// The benchmarks read the snapshot named by HEAPX_BENCH_SNAPSHOT (for
// example /tmp/heapx-bench/synth-1gb.heapsnapshot, made by
// bench/gen-snapshots.sh) and skip without it. Targets for the 1.15 GB
// synthetic snapshot (14.3M nodes, 43M edges) on 2 cores:
// BenchmarkReadRetained <= 4 s and a peak RSS <= 1.2 GB. They report the
// process's peak RSS as peak-RSS-MB; run one benchmark per process
// (-run '^$' -bench NAME -benchtime 1x) for that number to mean anything.

// BenchmarkReadRetained is the end-to-end target: read the snapshot, then
// compute DevTools' shallow sizes, dominators and retained sizes.
func BenchmarkReadRetained(b *testing.B) {
	path := analysistest.BenchSnapshot(b)
	for b.Loop() {
		g, err := v8.ReadFile(path, v8.ReadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := analysis.Analyze(g, analysis.Options{NoDistances: true, NoClasses: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}

// BenchmarkDominators times roots, DOM state and ComputeDominators
// (including the shallow-size redistribution) on a graph read once.
func BenchmarkDominators(b *testing.B) {
	g := analysistest.LoadBench(b)
	b.ResetTimer()
	for b.Loop() {
		roots := analysis.FindRoots(g)
		analysis.ComputeDominators(g, roots, analysis.DefaultPolicy(g), analysis.PropagateDOMState(g))
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}

// BenchmarkAnalyze times the whole pipeline (Analyze with distances and
// classes, then the Summary) on a graph read once.
func BenchmarkAnalyze(b *testing.B) {
	g := analysistest.LoadBench(b)
	b.ResetTimer()
	for b.Loop() {
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			b.Fatal(err)
		}
		a.Summary()
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}

// BenchmarkDistances times DevTools' distances on a graph read once.
func BenchmarkDistances(b *testing.B) {
	g := analysistest.LoadBench(b)
	roots := analysis.FindRoots(g)
	b.ResetTimer()
	for b.Loop() {
		analysis.Distances(g, roots, nil)
	}
}

// BenchmarkClasses times class naming (with interface inference) on a
// graph read once.
func BenchmarkClasses(b *testing.B) {
	g := analysistest.LoadBench(b)
	ds := analysis.PropagateDOMState(g)
	b.ResetTimer()
	for b.Loop() {
		analysis.ClassifyNodes(g, ds)
	}
}

// BenchmarkDominatorsRandom needs no snapshot: a random V8-like graph of
// 10^6 nodes and about 3.3 10^6 edges.
func BenchmarkDominatorsRandom(b *testing.B) {
	g := randomGraph(rand.New(rand.NewSource(7)), 1000000, true)
	b.ResetTimer()
	for b.Loop() {
		roots := analysis.FindRoots(g)
		analysis.ComputeDominators(g, roots, analysis.DevToolsPolicy, nil)
	}
}

// BenchmarkNoWeakFinder times what paths --no-weak adds to the first
// paths of a heap whose plain paths were asked for already: the edge sets
// (weak-free, and free of the runtime's own edges too) and a walk over
// each.
func BenchmarkNoWeakFinder(b *testing.B) {
	g := analysistest.LoadBench(b)
	for b.Loop() {
		b.StopTimer()
		a, err := analysis.Analyze(g, analysis.Options{})
		if err != nil {
			b.Fatal(err)
		}
		a.Paths(g.Root, analysis.PathOptions{})
		b.StartTimer()
		a.NoWeakFinder()
	}
	b.ReportMetric(analysistest.PeakRSS(), "peak-RSS-MB")
}
