package heapx_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/query"
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
		fmt.Printf("%-26s %-18s %9d\n", o.Label(), o.Class, o.Retained)
	}
	// Output:
	// global @6049               global               3079371
	// (GC roots) @3              (synthetic)           504562
	// EventEmitter @51427        EventEmitter          467896
	// {work} @80587              Object                467288
	// onWork @74609              Function              467104
	// system / Context @80591    system / Context      454808
	// Array @80593               Array                 447536
	// (Strong roots) @11         (synthetic)           277392
	// (array) @1663              (array)               262160
	// BuiltinModule @44117       Function              252008
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
	//   {context}   system / Context @80591
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
// (`heapx suspects`), printed cell by cell.
func ExampleDump_Query() {
	d, err := heapx.Open("testdata/node-leak-3.heapsnapshot.gz", heapx.Options{})
	if err != nil {
		log.Fatal(err)
	}
	r, err := d.Query("suspects", map[string]any{"threshold": 10.0, "limit": 5})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range r.Sections {
		fmt.Println(s.Heading)
		t := s.Table
		for _, row := range t.Rows {
			var cells []string
			for _, i := range t.Shown() {
				cells = append(cells, t.Columns[i].Key+"="+query.FormatValue(t.Columns[i].Kind, row[i]))
			}
			fmt.Println("  " + strings.Join(cells, " "))
		}
	}
	// Output:
	// Leak suspects (accumulations retaining at least 10% of 3.6 MB)
	//   rank=1 kind=accumulation holder=EventEmitter @51427 retained_size=468 kB retained_percent=13.0% point=Array @80593 held_by=onWork's variable retained class=LeakedItem count=1,500 class_retained=431 kB
	// Suspect 1: EventEmitter @51427 retains 468 kB (13.0% of the heap). The memory is accumulated in Array @80593 (448 kB), held by onWork's variable retained, which holds 1,500 instances of LeakedItem retaining 431 kB.
	//   edge= object=(root) @1 distance=- shallow_size=0 B retained_size=3.6 MB
	//   edge=.2 object=global @6049 distance=1 shallow_size=8.4 kB retained_size=3.1 MB
	//   edge=.bus object=EventEmitter @51427 distance=2 shallow_size=104 B retained_size=468 kB
	//   edge=._events object={work} @80587 distance=3 shallow_size=184 B retained_size=467 kB
	//   edge=.work object=onWork @74609 distance=4 shallow_size=64 B retained_size=467 kB
	//   edge={context} object=system / Context @80591 distance=5 shallow_size=40 B retained_size=455 kB
	//   edge=->retained object=Array @80593 distance=6 shallow_size=15.7 kB retained_size=448 kB
}
