// Package all links in every heap-dump format heapx reads and writes:
// formats register themselves when their package is linked, so a program
// that opens dumps through the formats registry imports this package, for
// its side effect alone, and reads every format:
//
//	import _ "github.com/heapx/heapx/formats/all"
//
// The heapx package and the heapx command do. A program that wants only
// some formats imports their packages (formats/v8, ...) instead.
package all

import (
	// Each format registers itself in its package's init.
	_ "github.com/heapx/heapx/formats/hprof"
	_ "github.com/heapx/heapx/formats/jsonl"
	_ "github.com/heapx/heapx/formats/parquet"
	_ "github.com/heapx/heapx/formats/spidermonkey"
	_ "github.com/heapx/heapx/formats/sqlite"
	_ "github.com/heapx/heapx/formats/v8"
)
