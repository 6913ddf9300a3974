package parquet

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	pq "github.com/parquet-go/parquet-go"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// Dump is what one partition holds: a graph with its analysis, the
// views computed from it, and what the exporter knows of its source.
type Dump struct {
	// Graph is the dump, Results its analysis (required: every object
	// row carries its retained size, dominator and distance).
	Graph   *model.Graph
	Results *model.Results
	// Info holds the dumps row's fields about the source, which the graph
	// cannot tell: DumpID, ContentSHA256, File, FileSize,
	// CaptureTimeMillis, CaptureTimeFrom, Labels and TotalSize. The
	// writer fills in the rest (counts, types, metadata, host, pid ...).
	Info DumpRow
	// ClassOf is each node's class, an index into ClassNames.
	ClassOf    []uint32
	ClassNames []string
	// SiteOf is each node's allocating function, an index into
	// SiteNames, -1 for none; nil when the dump has no allocation stacks.
	SiteOf    []int32
	SiteNames []string
	// Classes, Suspects and Leaks are the rows of those tables; their
	// DumpID is filled in by the writer. Leaks is nil unless a leak
	// series ending with this dump was computed: then leaks.parquet is
	// written, with no rows when the series has no leaks, so a reader
	// tells "none found" from "not looked for".
	Classes  []ClassRow
	Suspects []SuspectRow
	Leaks    []LeakRow
	// Generator names the program writing (the metadata's generator).
	Generator string
}

// batchRows is how many rows are handed to parquet-go at a time: the
// row buffers are reused, so a partition of any size costs one batch of
// Go rows (plus parquet-go's column buffers for a row group).
const batchRows = 4096

// rowGroupRows caps a row group, which parquet-go holds in memory until
// it is flushed: a million object rows are some 60 MB of column
// buffers, and engines parallelise over row groups.
const rowGroupRows = 1 << 20

// tempPrefix starts a partition being written: hidden to heapx, Spark,
// Hive and the dump=* glob.
const tempPrefix = ".tmp-"

// WritePartition writes d into dir as the partition dir/dump=<d.Info.DumpID>,
// atomically: every table is written into a hidden temporary directory
// beside it, synced, and the directory renamed into place, so dir never
// holds part of a dump. It fails if the partition exists already.
func WritePartition(dir string, d *Dump) (string, error) {
	id := d.Info.DumpID
	if !validID(id) {
		return "", fmt.Errorf("parquet: dump id %q is not 16 lowercase hex digits", id)
	}
	final := PartitionDir(dir, id)
	if _, err := os.Stat(final); err == nil {
		return "", fmt.Errorf("%s: exists already; a partition is never rewritten", final)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, tempPrefix+id+"-"+hex.EncodeToString(rnd[:]))
	// An interrupted export removes it (formats.RemoveTemps); a killed
	// one leaves it to the next export (Prepare).
	defer formats.TrackTemp(tmp)()
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	if err := writeTables(tmp, d); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := syncDir(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		if errors.Is(err, fs.ErrExist) || isNotEmpty(err) {
			return "", fmt.Errorf("%s: exists already (written by another export meanwhile)", final)
		}
		return "", err
	}
	return final, syncDir(dir)
}

// isNotEmpty reports a rename refused because the target is a directory
// that is not empty (ENOTEMPTY, which errors.Is(fs.ErrExist) misses).
func isNotEmpty(err error) bool {
	var le *os.LinkError
	return errors.As(err, &le) && le.Err != nil && le.Err.Error() == "directory not empty"
}

// validID reports whether id is a dump id: 16 lowercase hex digits.
func validID(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeTables writes every table of d into the directory part.
func writeTables(part string, d *Dump) error {
	g := d.Graph
	res, err := exchange.Writable(g, d.Results)
	if err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if res == nil {
		return errors.New("parquet: a partition needs the dump's analysis results")
	}
	if len(d.ClassOf) != g.NumNodes() {
		return fmt.Errorf("parquet: %d node classes for %d nodes", len(d.ClassOf), g.NumNodes())
	}
	if d.SiteOf != nil && len(d.SiteOf) != g.NumNodes() {
		return fmt.Errorf("parquet: %d node sites for %d nodes", len(d.SiteOf), g.NumNodes())
	}
	id := d.Info.DumpID
	row := dumpRow(d, res)
	steps := []func() error{
		func() error { return writeObjects(part, id, d, res) },
		func() error { return writeReferences(part, id, g) },
		func() error { return writeStrings(part, id, g) },
		func() error {
			return writeRows(part, TableClasses, id, withID(d.Classes, id, func(r *ClassRow) *string { return &r.DumpID }))
		},
		func() error {
			return writeRows(part, TableSuspects, id, withID(d.Suspects, id, func(r *SuspectRow) *string { return &r.DumpID }))
		},
		func() error {
			labels := make([]LabelRow, len(row.Labels))
			for i, l := range row.Labels {
				labels[i] = LabelRow{DumpID: id, Key: l.Key, Value: l.Value}
			}
			return writeRows(part, TableLabels, id, labels)
		},
		func() error { return writeExtensions(part, id, g) },
		// dumps last: a reader that finds it knows the writer got that far.
		func() error { return writeRows(part, TableDumps, id, []DumpRow{row}) },
	}
	if d.Leaks != nil {
		steps = append(steps[:len(steps)-1], func() error {
			return writeRows(part, TableLeaks, id, withID(d.Leaks, id, func(r *LeakRow) *string { return &r.DumpID }))
		}, steps[len(steps)-1])
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// withID returns rows with their dump id set (a copy: the caller's rows
// are left alone).
func withID[T any](rows []T, id string, field func(*T) *string) []T {
	out := make([]T, len(rows))
	copy(out, rows)
	for i := range out {
		*field(&out[i]) = id
	}
	return out
}

// dumpRow is d's dumps row: d.Info with what the graph and results say.
func dumpRow(d *Dump, res *model.Results) DumpRow {
	g := d.Graph
	row := d.Info
	row.FormatVersion = FormatVersion
	row.NodeCount, row.EdgeCount, row.StringCount = int64(g.NumNodes()), int64(g.NumEdges()), int64(g.Strings.Len())
	row.SelfSizeSum = int64(g.TotalSize())
	if g.NumNodes() > 0 {
		row.RootID = int64(g.Nodes.ID.At(int(g.Root)))
	}
	row.AnalysisPolicy = res.Policy
	meta := exchange.Metadata(g, res, d.Generator)
	row.Metadata = make([]Label, len(meta))
	for i, kv := range meta {
		row.Metadata[i] = Label{Key: kv.Key, Value: kv.Value}
		switch kv.Key {
		case exchange.KeySourceFormat:
			row.SourceFormat = kv.Value
		case "producer":
			row.Producer = kv.Value
		case "target_hostname":
			row.Host = &meta[i].Value
		case "target_pid":
			if pid, err := strconv.ParseInt(kv.Value, 10, 64); err == nil {
				row.PID = &pid
			}
		}
	}
	row.NodeTypes = make([]NodeTypeRow, len(g.NodeTypes))
	for i, t := range g.NodeTypes {
		row.NodeTypes[i] = NodeTypeRow{Name: exchange.TypeName(t.Namespace, t.Name), Category: t.Category.String()}
	}
	row.EdgeTypes = make([]EdgeTypeRow, len(g.EdgeTypes))
	for i, t := range g.EdgeTypes {
		kind := "string"
		if t.Indexed {
			kind = "index"
		}
		row.EdgeTypes[i] = EdgeTypeRow{Name: exchange.TypeName(t.Namespace, t.Name), Category: t.Category.String(),
			Strength: t.Strength.String(), NameKind: kind}
	}
	row.RootKinds = append([]string{}, g.RootKinds...)
	row.HasDetachedness = g.Detachedness != nil
	row.HasTraceNodeID = g.TraceNodeID != nil
	row.HasLocationScript = g.LocationScripts != nil
	if row.Labels == nil {
		row.Labels = []Label{}
	}
	return row
}

// tableWriter writes one table's file.
type tableWriter[T any] struct {
	path string
	f    *os.File
	w    *pq.GenericWriter[T]
}

func newTableWriter[T any](part, table, id string) (*tableWriter[T], error) {
	path := TableFile(part, table)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	// Version-1 data pages, which every engine reads (version 2 needs
	// Spark 3.3), at no cost in size. The delta encoding of the id
	// columns does need Spark 3.3 (DuckDB, Trino and pyarrow read it
	// all), but saves a fifth of a partition (docs/benchmarks.md).
	w := pq.NewGenericWriter[T](f, pq.Compression(&pq.Zstd), pq.MaxRowsPerRowGroup(rowGroupRows), pq.DataPageVersion(1),
		pq.KeyValueMetadata(keyVersion, strconv.Itoa(FormatVersion)), pq.KeyValueMetadata(keyDumpID, id),
		pq.CreatedBy("heapx", "", ""))
	return &tableWriter[T]{path: path, f: f, w: w}, nil
}

// Key-value metadata every file carries.
const (
	keyVersion = "heapx:parquet_version"
	keyDumpID  = "heapx:dump_id"
)

func (t *tableWriter[T]) write(rows []T) error {
	if _, err := t.w.Write(rows); err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	return nil
}

// close finishes the file and syncs it.
func (t *tableWriter[T]) close() error {
	err := t.w.Close()
	if err == nil {
		err = t.f.Sync()
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", t.path, err)
	}
	return nil
}

// abort closes the file after a failure (the temporary directory goes).
func (t *tableWriter[T]) abort() { t.f.Close() }

// writeRows writes a small table in one go.
func writeRows[T any](part, table, id string, rows []T) error {
	t, err := newTableWriter[T](part, table, id)
	if err != nil {
		return err
	}
	if len(rows) > 0 {
		if err := t.write(rows); err != nil {
			t.abort()
			return err
		}
	}
	return t.close()
}

// batched writes n rows of a big table, batchRows at a time: fill sets
// row i of the batch (reused, so fill must set every field) from item
// start+i.
func batched[T any](part, table, id string, n int, fill func(batch []T, start int)) error {
	t, err := newTableWriter[T](part, table, id)
	if err != nil {
		return err
	}
	batch := make([]T, batchRows)
	for start := 0; start < n; start += batchRows {
		b := batch[:min(batchRows, n-start)]
		fill(b, start)
		if err := t.write(b); err != nil {
			t.abort()
			return err
		}
	}
	return t.close()
}

func writeObjects(part, id string, d *Dump, res *model.Results) error {
	g := d.Graph
	types := make([]NodeTypeRow, len(g.NodeTypes))
	for i, t := range g.NodeTypes {
		types[i] = NodeTypeRow{Name: exchange.TypeName(t.Namespace, t.Name), Category: t.Category.String()}
	}
	// Optional columns point into these, reused per batch.
	var dom [batchRows]int64
	var det [batchRows]int32
	var trace [batchRows]int64
	return batched(part, TableObjects, id, g.NumNodes(), func(b []ObjectRow, start int) {
		for i := range b {
			v := start + i
			t := g.Nodes.Type[v]
			r := ObjectRow{DumpID: id, NodeID: int64(g.Nodes.ID.At(int(v))), Type: types[t].Name, Category: types[t].Category,
				TypeIndex: int32(t), Name: g.Strings.At(g.Nodes.Name[v]), NameID: int64(g.Nodes.Name[v]),
				Class: d.ClassNames[d.ClassOf[v]], SelfSize: int64(g.Nodes.Size.At(int(v))),
				ShallowSize: int64(res.Shallow[v]), RetainedSize: int64(res.Retained[v]), Distance: res.Distance[v]}
			if p := res.Dominator[v]; p != model.NoNode {
				dom[i] = int64(g.Nodes.ID.At(int(p)))
				r.Dominator = &dom[i]
			}
			if d.SiteOf != nil && d.SiteOf[v] >= 0 {
				r.Site = &d.SiteNames[d.SiteOf[v]]
			}
			if g.Detachedness != nil {
				det[i] = int32(g.Detachedness[v])
				r.Detachedness = &det[i]
			}
			if g.TraceNodeID != nil {
				trace[i] = int64(g.TraceNodeID[v])
				r.TraceNodeID = &trace[i]
			}
			b[i] = r
		}
	})
}

func writeReferences(part, id string, g *model.Graph) error {
	types := make([]EdgeTypeRow, len(g.EdgeTypes))
	for i, t := range g.EdgeTypes {
		types[i] = EdgeTypeRow{Name: exchange.TypeName(t.Namespace, t.Name), Strength: t.Strength.String()}
	}
	// Edges are grouped by source: src walks the nodes as the edges go.
	src := 0
	return batched(part, TableReferences, id, g.NumEdges(), func(b []ReferenceRow, start int) {
		for i := range b {
			e := start + i
			for uint32(e) >= g.Nodes.FirstEdge[src+1] {
				src++
			}
			t := g.Edges.Type[e]
			b[i] = ReferenceRow{DumpID: id, Source: int64(g.Nodes.ID.At(int(src))), Target: int64(g.Nodes.ID.At(int(g.Edges.To[e]))),
				Type: types[t].Name, Strength: types[t].Strength, TypeIndex: int32(t),
				Name: g.EdgeName(uint32(e)), NameID: int64(g.Edges.Name[e])}
		}
	})
}

func writeStrings(part, id string, g *model.Graph) error {
	return batched(part, TableStrings, id, g.Strings.Len(), func(b []StringRow, start int) {
		for i := range b {
			b[i] = StringRow{DumpID: id, ID: int64(start + i), Text: g.Strings.At(model.StringID(start + i))}
		}
	})
}

// writeExtensions writes the tables of what a dump carries besides its
// graph, each only when the dump has such records.
func writeExtensions(part, id string, g *model.Graph) error {
	if len(g.Locations) > 0 {
		scripts := make([]int64, len(g.Locations))
		rows := make([]LocationRow, len(g.Locations))
		for i, l := range g.Locations {
			rows[i] = LocationRow{DumpID: id, NodeID: int64(g.Nodes.ID.At(int(l.Node))), ScriptID: int64(l.ScriptID),
				Line: int64(l.Line), Column: int64(l.Column)}
			if g.LocationScripts != nil {
				scripts[i] = int64(g.Nodes.ID.At(int(g.LocationScripts[i])))
				rows[i].Script = &scripts[i]
			}
		}
		if err := writeRows(part, TableLocations, id, rows); err != nil {
			return err
		}
	}
	if t := g.Trace; t != nil {
		if len(t.Functions) > 0 {
			rows := make([]TraceFunctionRow, len(t.Functions))
			for i, f := range t.Functions {
				rows[i] = TraceFunctionRow{DumpID: id, Index: int64(i), FunctionID: int64(f.ID), NameID: int64(f.Name),
					ScriptNameID: int64(f.ScriptName), ScriptID: int64(f.ScriptID), Line: f.Line, Column: f.Column}
			}
			if err := writeRows(part, TableTraceFunctions, id, rows); err != nil {
				return err
			}
		}
		if len(t.Tree) > 0 {
			rows := make([]TraceNodeRow, len(t.Tree))
			for i, n := range t.Tree {
				rows[i] = TraceNodeRow{DumpID: id, Index: int64(i), Parent: int64(n.Parent), ID: int64(n.ID),
					FunctionIndex: int64(n.Function), Count: int64(n.Count), Size: int64(n.Size)}
			}
			if err := writeRows(part, TableTraceNodes, id, rows); err != nil {
				return err
			}
		}
		if len(t.Samples) > 0 {
			rows := make([]SampleRow, len(t.Samples))
			for i, s := range t.Samples {
				rows[i] = SampleRow{DumpID: id, TimestampMicros: int64(s.TimestampMicros), LastAssignedID: int64(s.LastAssignedID)}
			}
			if err := writeRows(part, TableSamples, id, rows); err != nil {
				return err
			}
		}
	}
	if len(g.Sections) > 0 {
		rows := make([]SectionRow, len(g.Sections))
		for i, s := range g.Sections {
			rows[i] = SectionRow{DumpID: id, Name: s.Name, Fields: append([]string{}, s.Fields...), Values: append([]int64{}, s.Values...)}
		}
		if err := writeRows(part, TableSections, id, rows); err != nil {
			return err
		}
	}
	if len(g.GCRoots) > 0 {
		rows := make([]GCRootRow, len(g.GCRoots))
		for i, r := range g.GCRoots {
			rows[i] = GCRootRow{DumpID: id, NodeID: int64(g.Nodes.ID.At(int(r.Node))), KindIndex: int32(r.Kind), Kind: g.RootKinds[r.Kind]}
		}
		if err := writeRows(part, TableGCRoots, id, rows); err != nil {
			return err
		}
	}
	return writeStacks(part, id, g.Stacks)
}

// writeStacks writes the stacks, frames and frame_values tables, when
// the dump has stacks.
func writeStacks(part, id string, stacks []model.Stack) error {
	if len(stacks) == 0 {
		return nil
	}
	orNull := func(v uint64) *int64 {
		if v == 0 {
			return nil
		}
		x := int64(v)
		return &x
	}
	var rows []StackRow
	var frames []FrameRow
	var values []FrameValueRow
	for si, s := range stacks {
		rows = append(rows, StackRow{DumpID: id, Stack: int32(si), Thread: int64(s.Thread), Name: s.Name, Stop: s.Stop,
			ObjectID: orNull(s.Object), State: s.State})
		for fi, f := range s.Frames {
			frames = append(frames, FrameRow{DumpID: id, Stack: int32(si), Frame: int32(fi), Kind: f.Kind.String(), Type: f.Type,
				Function: f.Function, Script: f.Script, Line: int64(f.Line), Column: int64(f.Column), PC: int64(f.PC), FP: int64(f.FP),
				FunctionNodeID: orNull(f.FunctionNode)})
			for _, v := range f.Values {
				vr := FrameValueRow{DumpID: id, Stack: int32(si), Frame: int32(fi), Role: v.Role.String(), Name: v.Name,
					NodeID: orNull(v.Node), Text: v.Text}
				if v.IsSmi {
					smi := v.Smi
					vr.Smi = &smi
				}
				values = append(values, vr)
			}
		}
	}
	if err := writeRows(part, TableStacks, id, rows); err != nil {
		return err
	}
	if err := writeRows(part, TableFrames, id, frames); err != nil {
		return err
	}
	return writeRows(part, TableFrameValues, id, values)
}
