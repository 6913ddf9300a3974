// Package parquet reads and writes the Parquet form of the heapx exchange
// format (docs/format.md, section 10): a directory of analysed dumps that
// DuckDB, Spark, Trino and pandas query as tables. Each dump is one
// Hive-style partition directory, DIR/dump=<id>/, holding one Parquet file
// per table (dumps, objects, references, strings, classes, suspects,
// labels, and the v8_* and gc_roots tables of what a dump carries besides
// its graph), so adding a dump never rewrites another and a dump is
// written as a whole: into a hidden temporary directory renamed into
// place when complete.
//
// The schema is the row structs (DumpRow, ObjectRow, ...): their struct
// tags are what github.com/parquet-go/parquet-go writes. A partition holds
// everything the model keeps, so reading one back (ReadDump, and the
// formats registry's "parquet" format, which opens DIR/dump=<id> like a
// file) gives the graph that was written, with its analysis results.
package parquet

import "path/filepath"

// FormatVersion is the version of the Parquet form this package writes
// and reads (dumps.format_version, and every file's key-value metadata
// heapx:parquet_version). It changes when a version-1 reader would
// misread a partition; added columns and tables do not change it.
const FormatVersion = 1

// Name is the format's name in the formats registry (heapx convert --to
// parquet).
const Name = "parquet"

// Table file names inside a partition directory.
const (
	TableDumps          = "dumps"
	TableObjects        = "objects"
	TableReferences     = "references"
	TableStrings        = "strings"
	TableClasses        = "classes"
	TableSuspects       = "suspects"
	TableLeaks          = "leaks"
	TableLabels         = "labels"
	TableLocations      = "v8_locations"
	TableTraceFunctions = "v8_trace_functions"
	TableTraceNodes     = "v8_trace_nodes"
	TableSamples        = "v8_samples"
	TableSections       = "v8_sections"
	TableGCRoots        = "gc_roots"
	TableStacks         = "stacks"
	TableFrames         = "frames"
	TableFrameValues    = "frame_values"
)

// PartitionPrefix starts every partition directory's name.
const PartitionPrefix = "dump="

// PartitionDir is the directory of dump id's partition in dir.
func PartitionDir(dir, id string) string { return filepath.Join(dir, PartitionPrefix+id) }

// TableFile is the file of table in partition directory part.
func TableFile(part, table string) string { return filepath.Join(part, table+".parquet") }
