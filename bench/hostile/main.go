// Command hostile writes the crafted inputs of issues 12 and 29 into a directory,
// for bench/hostile.sh to run heapx on: dumps built to cost a reader
// memory or time (internal/hostile makes the bytes, which the readers'
// tests and fuzz seeds use too), names carrying terminal escapes, and
// analysed exchange files whose stored results lie.
//
// Usage: go run ./bench/hostile OUT_DIR (from the repository's root: the
// lying exchange files are made from testdata/node-basic.heapsnapshot.gz).
package main

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all"
	"github.com/heapx/heapx/internal/hostile"
)

func main() {
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "core-") {
		if err := coreCommand(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "hostile:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/hostile OUT_DIR")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := func(name string) string { return filepath.Join(dir, name) }
	stream := func(name string, w func(io.Writer) error) error {
		f, err := os.Create(path(name))
		if err != nil {
			return err
		}
		if err := w(f); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	files := map[string][]byte{
		"superclass-cycle.hprof":   hostile.SuperclassCycle(1000, 100),
		"superclass-chain.hprof":   hostile.SuperclassChain(5000, 2),
		"wrapping-offset.hprof":    hostile.WrappingFieldOffset(),
		"escapes.hprof":            hostile.HPROFEscapes(),
		"escapes.heapsnapshot":     hostile.V8Escapes(),
		"meta-fields.heapsnapshot": hostile.V8MetaFields(1_000_000),
	}
	for name, b := range files {
		if err := os.WriteFile(path(name), b, 0o644); err != nil {
			return err
		}
	}
	if err := stream("declared-2gb.fxsnapshot", func(w io.Writer) error { return hostile.FxsnapshotBomb(w, 1<<31-3) }); err != nil {
		return err
	}
	if err := stream("deep-1m.heapprofile.gz", func(w io.Writer) error {
		return gzipped(w, func(w io.Writer) error { return hostile.HeapProfileDeep(w, 1_000_000) })
	}); err != nil {
		return err
	}
	if err := stream("chain-1000.heapprofile", func(w io.Writer) error { return hostile.HeapProfileChain(w, 1000, 50_000) }); err != nil {
		return err
	}
	if err := stream("recursion-1000.heapprofile", func(w io.Writer) error { return hostile.HeapProfileRecursion(w, 1000, 50_000) }); err != nil {
		return err
	}
	traces := map[string]func(io.Writer) error{
		"idle-sites-100k.hxtrace": func(w io.Writer) error { return hostile.TraceIdleSites(w, 100_000) },
		"list-400k.hxtrace":       func(w io.Writer) error { return hostile.TraceList(w, 400_000) },
		"ring-400k.hxtrace":       func(w io.Writer) error { return hostile.TraceRing(w, 400_000) },
		"deep-calls-300k.hxtrace": func(w io.Writer) error { return hostile.TraceDeepCalls(w, 300_000) },
		"string-64m.hxtrace":      hostile.TraceLongString,
		"free-vars-2e60.hxtrace":  hostile.TraceFreeVars,
	}
	for name, w := range traces {
		if err := stream(name, w); err != nil {
			return err
		}
	}
	if err := stream("long-string.heapsnapshot.gz", func(w io.Writer) error { return hostile.V8LongString(w, 500_000_000) }); err != nil {
		return err
	}
	if err := parquetCases(dir); err != nil {
		return err
	}
	return lyingResults(dir)
}

// lyingResults writes node-basic analysed as .jsonl and .db, and copies
// of them whose stored results lie.
func lyingResults(dir string) error {
	g, _, err := formats.Open(filepath.Join("testdata", "node-basic.heapsnapshot.gz"), formats.ReadOptions{})
	if err != nil {
		return err
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		return err
	}
	res := a.Results()
	for _, ext := range []string{".jsonl", ".db"} {
		f, _ := formats.ByExtension(ext)
		if err := formats.Save(filepath.Join(dir, "analysed"+ext), f, g, formats.WriteOptions{Results: res}); err != nil {
			return err
		}
	}
	src, err := os.ReadFile(filepath.Join(dir, "analysed.jsonl"))
	if err != nil {
		return err
	}
	for name, lie := range map[string]func([]byte) ([]byte, error){
		"retained-max.jsonl":    hostile.JSONLRetainedMax,
		"dominator-cycle.jsonl": hostile.JSONLDominatorCycle,
		"node-twice.jsonl":      hostile.JSONLDuplicateNode,
	} {
		b, err := lie(src)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	db, err := os.ReadFile(filepath.Join(dir, "analysed.db"))
	if err != nil {
		return err
	}
	for name, lie := range map[string]func(string) error{
		"retained-max.db":        hostile.DBRetainedMax,
		"dominator-cycle.db":     hostile.DBDominatorCycle,
		"packed-retained-max.db": hostile.DBPackedRetainedMax,
		"packed-root.db":         hostile.DBPackedRoot,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, db, 0o644); err != nil {
			return err
		}
		if err := lie(p); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// gzipped writes what write writes, gzip-compressed.
func gzipped(w io.Writer, write func(io.Writer) error) error {
	zw := gzip.NewWriter(w)
	if err := write(zw); err != nil {
		return err
	}
	return zw.Close()
}
