package heapx_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/parquet"
)

// The objects that retain the most in a snapshot of a Node.js process
// that leaks through an event listener's closure: what `heapx top -n 10`
// lists.
func ExampleDump_Top() {
	d, err := heapx.Open("testdata/node-leak-3.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	top, err := d.Top(10)
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range top {
		fmt.Printf("%-34s %-18s %9d\n", o.Label(), o.Class, o.Retained)
	}
	// Output:
	// global @6049                       global               3079371
	// (GC roots) @3                      (synthetic)           504562
	// EventEmitter @51427                EventEmitter          467896
	// {work} @80587                      Object                467288
	// onWork @74609                      Function              467104
	// context of installListener @80591  system / Context      454808
	// Array @80593                       Array                 447536
	// (Strong roots) @11                 (synthetic)           277392
	// (array) @1663                      (array)               262160
	// BuiltinModule @44117               Function              252008
}

// What keeps the array of leaked items alive: its shortest retainer path
// from the roots, as `heapx paths --id 80593 -n 1` shows it.
func ExampleDump_Paths() {
	d, err := heapx.Open("testdata/node-leak-3.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	paths, err := d.Paths(80593, 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range paths {
		fmt.Printf("%d edges, system root: %v\n", len(p.Steps), p.System)
		fmt.Println(p.Root.Label())
		for _, s := range p.Steps {
			fmt.Printf("  %-11s %s\n", s.Edge, s.To.Label())
		}
	}
	// Output:
	// 6 edges, system root: false
	// (root) @1
	//   .2          global @6049
	//   .bus        EventEmitter @51427
	//   ._events    {work} @80587
	//   .work       onWork @74609
	//   {context}   context of installListener @80591
	//   ->retained  Array @80593
}

// What grew between the first and the last of three snapshots of the
// leaking process, per class, as DevTools' Comparison view (and `heapx
// diff`) shows it: the classes with at least 100 objects more than before.
func ExampleDump_Diff() {
	before, err := heapx.Open("testdata/node-leak-1.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	after, err := heapx.Open("testdata/node-leak-3.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	diff, err := after.Diff(before)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("matched by %s: %d new objects, %d deleted\n", diff.Matching, diff.New, diff.Deleted)
	for _, c := range diff.Classes {
		if c.Delta >= 100 {
			fmt.Printf("%-22s %+5d %+7d bytes\n", c.Name, c.Delta, c.SizeDelta)
		}
	}
	// Output:
	// matched by id: 6083 new objects, 80 deleted
	// Array                  +1000 +112000 bytes
	// (concatenated string)  +3002  +96064 bytes
	// LeakedItem             +1000  +56000 bytes
	// (string)                +984  +23712 bytes
}

// A query of the registry by name, with its arguments: the leak suspects
// (`heapx suspects -n 1`), rendered as the command prints them.
func ExampleDump_Query() {
	d, err := heapx.Open("testdata/node-leak-3.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	r, err := d.Query("suspects", map[string]any{"limit": 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := r.Render(os.Stdout, heapx.Text); err != nil {
		log.Fatal(err)
	}
	// Output:
	// Leak suspects (accumulations retaining at least 10% of 3.6 MB)
	// #  Kind          Holder               Retained size      %  Accumulation point  Held by                                                   Accumulated class  Count  Class retained  Held as         Classes
	// 1  accumulation  EventEmitter @51427         468 kB  13.0%  Array @80593        retained (captured by onWork at make-fixtures.js:135:35)  LeakedItem         1,500          431 kB  globalThis.bus  1,500 LeakedItem
	//
	// Suspect 1: globalThis.bus (EventEmitter @51427) retains 468 kB (13.0% of the heap) in retained (Array @80593, captured by onWork at make-fixtures.js:135:35): 1,500 LeakedItem.
	// Retainer edge  Object                             Distance  Shallow size  Retained size
	//                (root) @1                                 -           0 B         3.6 MB
	// .2             global @6049                              1        8.4 kB         3.1 MB
	// .bus           EventEmitter @51427                       2         104 B         468 kB
	// ._events       {work} @80587                             3         184 B         467 kB
	// .work          onWork @74609                             4          64 B         467 kB
	// {context}      context of installListener @80591         5          40 B         455 kB
	// ->retained     Array @80593                              6       15.7 kB         448 kB
	//
	// The retainer path to the accumulation point, from the root.
}

// A Parquet partition, one dump of the directory `heapx export --parquet`
// writes for DuckDB or Spark, opens as any dump: its objects carry their
// analysis, so the retained sizes are read, not computed. Here the
// partition is written first, as the exporter does, from a snapshot.
func ExampleOpen_parquetPartition() {
	snap, err := heapx.Open("testdata/node-leak-3.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	a, err := snap.Analysis()
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "heapx-fleet")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	part, err := parquet.WritePartition(dir, &parquet.Dump{Graph: snap.Graph(), Results: a.Results(),
		ClassOf: a.Classes.Of, ClassNames: a.Classes.Names, Info: parquet.DumpRow{DumpID: "27ece32833d61148"}})
	if err != nil {
		log.Fatal(err)
	}

	d, err := heapx.Open(part, heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(part), d.Format().Name, d.Graph().NumNodes(), "nodes, stored results:", d.StoredResults() != nil)
	top, err := d.Top(3)
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range top {
		fmt.Printf("%-34s %9d\n", o.Label(), o.Retained)
	}
	// Output:
	// dump=27ece32833d61148 parquet 53155 nodes, stored results: true
	// global @6049                         3079371
	// (GC roots) @3                         504562
	// EventEmitter @51427                   467896
}

// A core dump of a Node.js process (gcore PID) is read with the node
// executable the process ran, whose postmortem metadata says where V8
// keeps what; without Binary, the path the core names is used when it
// exists. (No output is checked: a core is made by gcore at test time,
// see TestOpenNodeCore.)
func ExampleOptions_binary() {
	d, err := heapx.Open("app.core.12345", heapx.Options{Binary: "/usr/bin/node"})
	if err != nil {
		log.Fatal(err)
	}
	info := d.Info()
	fmt.Println(info.Format, info.Producer, info.NodeCount, "objects,", info.ThreadCount, "thread stacks")
}

// The threads of a Java heap dump, and the innermost frames of the one
// that keeps the most alive with them, with the objects their locals hold:
// what `heapx stack` prints (render.WriteStacks is its text).
func ExampleStacks() {
	s, err := heapx.Stacks("testdata/hprof/java-threads.hprof.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	top := &s.Threads[0]
	for i := range s.Threads {
		if *s.Threads[i].HeldSize > *top.HeldSize {
			top = &s.Threads[i]
		}
	}
	fmt.Printf("%s: %d threads; %q %s holds %d bytes with its frames\n", s.Runtime, len(s.Threads), top.Name, top.State, *top.HeldSize)
	for _, f := range top.Frames[:3] {
		fmt.Printf("  %s:%d", f.Function, f.Line)
		for _, v := range f.Values {
			fmt.Printf(", %s %s retains %d", v.Role, v.Class, *v.RetainedSize)
		}
		fmt.Println()
	}
	// Output:
	// Java VM: 9 threads; "nested" TIMED_WAITING holds 104816 bytes with its frames
	//   java.lang.Thread.sleep:0
	//   ThreadsDemo.inner:55, local byte[] retains 100016
	//   ThreadsDemo.outer:48, local java.util.HashMap retains 4576
}
