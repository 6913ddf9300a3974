package parquet

// The row structs below are the Parquet form's schema (docs/format.md,
// section 10): one struct per table, one field per column, in column
// order. Their struct tags are what parquet-go writes, so the schema in
// the files and these declarations cannot drift apart; readers in other
// languages follow the document.
//
// Conventions every table shares:
//   - dump_id, the first column, is the dump the row belongs to (also the
//     name of the partition directory, dump=<dump_id>), so rows of many
//     dumps can be read as one table and joined on it;
//   - node identifiers are INT64: an identifier of 2^63 or more is stored
//     as its two's-complement value (id - 2^64), as in the SQLite form, so
//     engines without unsigned 64-bit integers (Spark) read them;
//   - sizes are INT64 bytes;
//   - optional columns are pointers (NULL when nil); writers point them
//     into arrays reused per batch, so a row costs no allocation.

// DumpRow is the one row of table dumps: what the dump is, where it came
// from, and what a reader needs to rebuild it (type tables, metadata).
type DumpRow struct {
	DumpID string `parquet:"dump_id"`
	// FormatVersion is the Parquet form's version, FormatVersion in a
	// file this package writes; a reader refuses others.
	FormatVersion int32 `parquet:"format_version"`
	// ContentSHA256 is the SHA-256 of the input file's bytes, hex; the
	// dump id is its first 16 digits.
	ContentSHA256 string `parquet:"content_sha256"`
	// File is the input file's absolute path when exported, FileSize its
	// size in bytes.
	File     string `parquet:"file"`
	FileSize int64  `parquet:"file_size"`
	// SourceFormat is the format the dump was read from
	// ("v8.heapsnapshot"), Producer the program whose heap it is
	// ("Node.js (V8)"), RuntimeVersion that program's version when the
	// dump says it.
	SourceFormat   string  `parquet:"source_format"`
	Producer       string  `parquet:"producer"`
	RuntimeVersion *string `parquet:"runtime_version,optional"`
	// CaptureTimeMillis is when the dump was taken, milliseconds since
	// the Unix epoch (UTC); CaptureTimeFrom says where that came from:
	// "dump" (the dump records it) or "file" (the input's modification
	// time).
	CaptureTimeMillis int64  `parquet:"capture_time_ms"`
	CaptureTimeFrom   string `parquet:"capture_time_from"`
	// Host and PID are the process the heap belonged to, when known.
	Host *string `parquet:"host,optional"`
	PID  *int64  `parquet:"pid,optional"`
	// Labels are the user's key=value labels (heapx export --label).
	Labels []Label `parquet:"labels,list"`
	// Counts: nodes (rows of objects), edges (rows of references),
	// strings (rows of strings).
	NodeCount   int64 `parquet:"node_count"`
	EdgeCount   int64 `parquet:"edge_count"`
	StringCount int64 `parquet:"string_count"`
	// TotalSize is the heap's total as DevTools shows it (the root's
	// retained size plus V8's extra native bytes). SelfSizeSum is the sum
	// of every node's self size, unreachable ones included.
	TotalSize   int64 `parquet:"total_size"`
	SelfSizeSum int64 `parquet:"self_size_sum"`
	// RootID is the root node's identifier; AnalysisPolicy the
	// retained-size policy of the objects' analysis columns ("devtools").
	RootID         int64  `parquet:"root_id"`
	AnalysisPolicy string `parquet:"analysis_policy"`
	// NodeTypes and EdgeTypes are the dump's type tables, in index order
	// (objects.type_index and references.type_index refer to them).
	NodeTypes []NodeTypeRow `parquet:"node_types,list"`
	EdgeTypes []EdgeTypeRow `parquet:"edge_types,list"`
	// Metadata is the exchange format's metadata (section 2.1), in order.
	Metadata []Label `parquet:"metadata,list"`
	// RootKinds are the kinds of gc_roots.kind_index, in order.
	RootKinds []string `parquet:"root_kinds,list"`
	// Which optional per-node columns the dump has (a dump without them
	// has NULL there; these tell "none" from "none recorded").
	HasDetachedness   bool `parquet:"has_detachedness"`
	HasTraceNodeID    bool `parquet:"has_trace_node_id"`
	HasLocationScript bool `parquet:"has_location_script"`
}

// Label is a key/value pair (dumps.labels, dumps.metadata).
type Label struct {
	Key   string `parquet:"key"`
	Value string `parquet:"value"`
}

// NodeTypeRow is one entry of dumps.node_types.
type NodeTypeRow struct {
	Name     string `parquet:"name"`     // namespaced: "v8:object"
	Category string `parquet:"category"` // section 1.3
}

// EdgeTypeRow is one entry of dumps.edge_types.
type EdgeTypeRow struct {
	Name     string `parquet:"name"`      // namespaced: "v8:property"
	Category string `parquet:"category"`  // section 1.6
	Strength string `parquet:"strength"`  // strong, weak, shortcut, ephemeron
	NameKind string `parquet:"name_kind"` // string or index
}

// ObjectRow is one row of table objects: one node of the dump, in node
// order, with its analysis.
type ObjectRow struct {
	DumpID string `parquet:"dump_id,dict"`
	NodeID int64  `parquet:"node_id,delta"`
	// Type is the node type's name ("v8:object"), Category its neutral
	// kind, TypeIndex its position in dumps.node_types.
	Type      string `parquet:"type,dict"`
	Category  string `parquet:"category,dict"`
	TypeIndex int32  `parquet:"type_index"`
	// Name is the node's name (a class name, a string's contents), NameID
	// the row of strings holding it.
	Name   string `parquet:"name,dict"`
	NameID int64  `parquet:"name_id"`
	// Class is the node's class as heapx's views show it (DevTools'
	// "Constructor").
	Class    string `parquet:"class,dict"`
	SelfSize int64  `parquet:"self_size"`
	// The analysis (section 4): shallow size after the policy's
	// redistribution, retained size, the immediate dominator's node id
	// (NULL for the root) and DevTools' raw distance.
	ShallowSize  int64  `parquet:"shallow_size"`
	RetainedSize int64  `parquet:"retained_size"`
	Dominator    *int64 `parquet:"dominator,optional"`
	Distance     int32  `parquet:"distance"`
	// Site is the function that allocated the node ("fn url:line:column"),
	// when the dump records allocation stacks.
	Site *string `parquet:"site,optional,dict"`
	// V8's per-node fields, when the dump has them (dumps.has_*).
	Detachedness *int32 `parquet:"detachedness,optional"`
	TraceNodeID  *int64 `parquet:"trace_node_id,optional"`
}

// ReferenceRow is one row of table references: one edge, in edge order
// (grouped by source in node order, each node's edges in their order).
type ReferenceRow struct {
	DumpID string `parquet:"dump_id,dict"`
	Source int64  `parquet:"source,delta"`
	Target int64  `parquet:"target"`
	// Type is the edge type's name ("v8:property"), Strength how it holds
	// its target, TypeIndex its position in dumps.edge_types.
	Type      string `parquet:"type,dict"`
	Strength  string `parquet:"strength,dict"`
	TypeIndex int32  `parquet:"type_index"`
	// Name is the edge's name as text: the property or variable name, or
	// the decimal index for edges of name_kind index. NameID is the name
	// as the model keeps it: the row of strings, or the index.
	Name   string `parquet:"name,dict"`
	NameID int64  `parquet:"name_id"`
}

// StringRow is one row of table strings: the dump's string table in id
// order (names of nodes, edges, trace functions).
type StringRow struct {
	DumpID string `parquet:"dump_id,dict"`
	ID     int64  `parquet:"id,delta"`
	Text   string `parquet:"text"`
}

// ClassRow is one row of table classes: a class of the dump's Summary
// (DevTools' Summary view), largest retained size first.
type ClassRow struct {
	DumpID string `parquet:"dump_id,dict"`
	// Class is the class's name, ClassKey DevTools' key for it (the name,
	// or script id, line, column and name for classes split by site).
	Class    string `parquet:"class"`
	ClassKey string `parquet:"class_key"`
	// Count is the instances with a non-zero shallow size, ShallowSize
	// their shallow sizes' sum, RetainedSize what they retain together
	// (nested instances counted once), Distance the nearest one's.
	Count        int64 `parquet:"count"`
	ShallowSize  int64 `parquet:"shallow_size"`
	RetainedSize int64 `parquet:"retained_size"`
	Distance     int32 `parquet:"distance"`
}

// SuspectRow is one row of table suspects: a leak suspect of the dump,
// as heapx suspects reports it (default threshold), largest first.
type SuspectRow struct {
	DumpID string `parquet:"dump_id,dict"`
	Rank   int32  `parquet:"rank"`
	// Kind is accumulation, linked list, shared or detached DOM.
	Kind string `parquet:"kind"`
	// Holder is the object whose removal frees RetainedSize bytes,
	// HolderID its node id; Point the accumulation point below it.
	Holder       string `parquet:"holder"`
	HolderID     int64  `parquet:"holder_id"`
	RetainedSize int64  `parquet:"retained_size"`
	// Share is RetainedSize over dumps.total_size, 0 to 1.
	Share   float64 `parquet:"share"`
	Point   string  `parquet:"point"`
	PointID int64   `parquet:"point_id"`
	// HeldBy names the fields holding the accumulation; Class is the
	// accumulated class, Count its objects there, ClassRetainedSize what
	// they retain.
	HeldBy            string  `parquet:"held_by"`
	Class             string  `parquet:"class"`
	Count             int64   `parquet:"count"`
	ClassRetainedSize int64   `parquet:"class_retained_size"`
	Site              *string `parquet:"site,optional"`
}

// LeakRow is one row of table leaks: a leak cluster found by comparing a
// series of three dumps of one process (heapx leaks BASELINE TARGET
// FINAL); dump_id is the final dump's.
type LeakRow struct {
	DumpID         string `parquet:"dump_id,dict"`
	BaselineDumpID string `parquet:"baseline_dump_id"`
	TargetDumpID   string `parquet:"target_dump_id"`
	Rank           int32  `parquet:"rank"`
	// Class is the class of the cluster's representative; Count the
	// reported objects, Objects those and the objects they dominate,
	// RetainedSize what the reported objects retain.
	Class            string  `parquet:"class"`
	Count            int64   `parquet:"count"`
	Objects          int64   `parquet:"objects"`
	RetainedSize     int64   `parquet:"retained_size"`
	RepresentativeID int64   `parquet:"representative_id"`
	Path             string  `parquet:"path"`
	Site             *string `parquet:"site,optional"`
}

// LocationRow is one row of table v8_locations: where a node was
// allocated or defined (V8's locations), in the dump's order.
type LocationRow struct {
	DumpID   string `parquet:"dump_id,dict"`
	NodeID   int64  `parquet:"node_id"`
	ScriptID int64  `parquet:"script_id"`
	Line     int64  `parquet:"line"`
	Column   int64  `parquet:"column"`
	// Script is the Script node's id (newer V8), NULL when the dump has
	// none (dumps.has_location_script).
	Script *int64 `parquet:"script,optional"`
}

// TraceFunctionRow is one row of table v8_trace_functions, in index
// order (section 2.7).
type TraceFunctionRow struct {
	DumpID       string `parquet:"dump_id,dict"`
	Index        int64  `parquet:"index"`
	FunctionID   int64  `parquet:"function_id"`
	NameID       int64  `parquet:"name_id"`
	ScriptNameID int64  `parquet:"script_name_id"`
	ScriptID     int64  `parquet:"script_id"`
	Line         int32  `parquet:"line"`
	Column       int32  `parquet:"column"`
}

// TraceNodeRow is one row of table v8_trace_nodes: the allocation call
// tree in preorder (section 2.7).
type TraceNodeRow struct {
	DumpID        string `parquet:"dump_id,dict"`
	Index         int64  `parquet:"index"`
	Parent        int64  `parquet:"parent"`
	ID            int64  `parquet:"id"`
	FunctionIndex int64  `parquet:"function_index"`
	Count         int64  `parquet:"count"`
	Size          int64  `parquet:"size"`
}

// SampleRow is one row of table v8_samples: a heap-timeline sample.
type SampleRow struct {
	DumpID          string `parquet:"dump_id,dict"`
	TimestampMicros int64  `parquet:"timestamp_us"`
	LastAssignedID  int64  `parquet:"last_assigned_id"`
}

// SectionRow is one row of table v8_sections: a numeric section kept
// verbatim (section 2.7), in order.
type SectionRow struct {
	DumpID string   `parquet:"dump_id,dict"`
	Name   string   `parquet:"name"`
	Fields []string `parquet:"fields,list"`
	Values []int64  `parquet:"values,list"`
}

// GCRootRow is one row of table gc_roots (section 2.8), in order.
type GCRootRow struct {
	DumpID    string `parquet:"dump_id,dict"`
	NodeID    int64  `parquet:"node_id"`
	KindIndex int32  `parquet:"kind_index"`
	Kind      string `parquet:"kind,dict"`
}

// StackRow is one row of table stacks: a thread's stack (section 2.9),
// numbered 0, 1, 2, ... in order.
type StackRow struct {
	DumpID string `parquet:"dump_id,dict"`
	Stack  int32  `parquet:"stack"`
	// Thread is the thread's id (an operating system's, Java's), stored
	// as node identifiers are.
	Thread   int64  `parquet:"thread"`
	Name     string `parquet:"name"`
	Stop     string `parquet:"stop"`
	ObjectID *int64 `parquet:"object_id,optional"`
	State    string `parquet:"state,dict"`
}

// FrameRow is one row of table frames: a frame of a stack, innermost
// (frame 0) first.
type FrameRow struct {
	DumpID         string `parquet:"dump_id,dict"`
	Stack          int32  `parquet:"stack"`
	Frame          int32  `parquet:"frame"`
	Kind           string `parquet:"kind,dict"`
	Type           string `parquet:"type,dict"`
	Function       string `parquet:"function,dict"`
	Script         string `parquet:"script,dict"`
	Line           int64  `parquet:"line"`
	Column         int64  `parquet:"column"`
	PC             int64  `parquet:"pc"`
	FP             int64  `parquet:"fp"`
	FunctionNodeID *int64 `parquet:"function_node_id,optional"`
}

// FrameValueRow is one row of table frame_values: a value a frame holds,
// in order. Its node_id is not checked against objects (section 2.9).
type FrameValueRow struct {
	DumpID string `parquet:"dump_id,dict"`
	Stack  int32  `parquet:"stack"`
	Frame  int32  `parquet:"frame"`
	Role   string `parquet:"role,dict"`
	Name   string `parquet:"name"`
	NodeID *int64 `parquet:"node_id,optional"`
	Smi    *int64 `parquet:"smi,optional"`
	Text   string `parquet:"text"`
}

// LabelRow is one row of table labels: a user label of a dump (the same
// pairs as dumps.labels), so that SQL in every engine selects dumps by
// label with a join instead of engine-specific list functions.
type LabelRow struct {
	DumpID string `parquet:"dump_id,dict"`
	Key    string `parquet:"key"`
	Value  string `parquet:"value"`
}
