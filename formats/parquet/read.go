package parquet

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	pq "github.com/parquet-go/parquet-go"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// ReadOptions tune a read.
type ReadOptions struct {
	// Progress, if set, is called now and then with the rows read and
	// the partition's total rows.
	Progress func(done, total int64)
	// Results, if set, receives the partition's analysis results, checked
	// against the graph (model.Results.Check).
	Results *model.Results
}

// ReadDump reads the partition directory part (DIR/dump=<id>) back into
// the graph it was written from, and returns its dumps row. Bad input (a
// corrupt or truncated file, a missing table or column, a column of the
// wrong type, counts that differ from the dumps row, references to nodes
// that do not exist) is an error naming the file and the row; it never
// panics.
func ReadDump(part string, opt ReadOptions) (g *model.Graph, row *DumpRow, err error) {
	defer func() {
		// parquet-go trusts what a file says about itself (lengths,
		// offsets) and can panic on a damaged one.
		if r := recover(); r != nil {
			g, row, err = nil, nil, &formats.FormatError{File: part, Offset: -1,
				Msg: fmt.Sprintf("corrupt Parquet file (the Parquet library failed on it: %v)", r)}
		}
	}()
	row, err = readDumpRow(part)
	if err != nil {
		return nil, nil, err
	}
	r := &reader{part: part, row: row, opt: opt, total: row.NodeCount*2 + row.EdgeCount + row.StringCount}
	if err := r.read(); err != nil {
		return nil, nil, err
	}
	return r.g, row, nil
}

// table is one open table file of a partition.
type table struct {
	path string
	f    *os.File
	pf   *pq.File
}

// openTable opens table name of partition part; a missing file is
// (nil, nil) unless required.
func openTable(part, name string, required bool) (*table, error) {
	path := TableFile(part, name)
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if required {
				return nil, &formats.FormatError{File: part, Offset: -1, Msg: "no " + name + ".parquet: not a complete partition of the Parquet form"}
			}
			return nil, nil
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	pagesEnd, err := checkTail(f, path, st.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	pf, err := pq.OpenFile(f, st.Size(), pq.SkipPageIndex(true), pq.SkipBloomFilters(true))
	if err != nil {
		f.Close()
		return nil, &formats.FormatError{File: path, Offset: -1, Msg: "not a readable Parquet file: " + err.Error()}
	}
	t := &table{path: path, f: f, pf: pf}
	if err := t.checkLayout(pagesEnd); err != nil {
		t.close()
		return nil, err
	}
	if v, ok := pf.Lookup(keyVersion); ok && v != strconv.Itoa(FormatVersion) && name != TableDumps {
		// dumps.format_version says it for the partition (readDumpRow).
		t.close()
		return nil, t.fail(-1, "Parquet form version %s; this heapx reads version %d", v, FormatVersion)
	}
	return t, nil
}

func (t *table) close() { t.f.Close() }

// fail is a FormatError at row (-1: the file as a whole).
func (t *table) fail(row int64, format string, args ...any) error {
	sec := ""
	if row >= 0 {
		sec = "row " + strconv.FormatInt(row, 10)
	}
	return &formats.FormatError{File: t.path, Section: sec, Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// column finds a leaf column by name and checks its physical type; a
// missing column or one of another type is an error.
func (t *table) column(name string, kind pq.Kind) (int, error) {
	c, ok := t.pf.Schema().Lookup(name)
	if !ok {
		return 0, t.fail(-1, "no column %s", name)
	}
	if k := c.Node.Type().Kind(); k != kind {
		return 0, t.fail(-1, "column %s is %v, want %v", name, k, kind)
	}
	return c.ColumnIndex, nil
}

// rows is the file's row count, checked against want.
func (t *table) rows(want int64) error {
	if n := t.pf.NumRows(); n != want {
		return t.fail(-1, "%d rows, but dumps.parquet says %d", n, want)
	}
	return nil
}

// each calls fn with every value of a flat column, in row order.
func (t *table) each(name string, kind pq.Kind, fn func(row int64, v pq.Value) error) error {
	col, err := t.column(name, kind)
	if err != nil {
		return err
	}
	buf := make([]pq.Value, 4096)
	var row int64
	for _, rg := range t.pf.RowGroups() {
		pages := rg.ColumnChunks()[col].Pages()
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			}
			if err != nil {
				pages.Close()
				return t.fail(row, "column %s: %v", name, err)
			}
			vr := p.Values()
			for {
				n, err := vr.ReadValues(buf)
				for _, v := range buf[:n] {
					if err := fn(row, v); err != nil {
						pq.Release(p)
						pages.Close()
						return err
					}
					row++
				}
				if err == io.EOF {
					break
				}
				if err == nil && n == 0 {
					err = errors.New("a page yields no values")
				}
				if err != nil {
					pq.Release(p)
					pages.Close()
					return t.fail(row, "column %s: %v", name, err)
				}
			}
			pq.Release(p)
		}
		pages.Close()
	}
	if row != t.pf.NumRows() {
		return t.fail(row, "column %s has %d values for %d rows", name, row, t.pf.NumRows())
	}
	return nil
}

// readDumpRow reads a partition's dumps row, checking the version first.
func readDumpRow(part string) (*DumpRow, error) {
	t, err := openTable(part, TableDumps, true)
	if err != nil {
		return nil, err
	}
	defer t.close()
	_, version, err := t.identity()
	if err != nil {
		return nil, err
	}
	if version != FormatVersion {
		return nil, t.fail(0, "format_version is %d; this heapx reads version %d (a newer heapx may read it)", version, FormatVersion)
	}
	rows, err := readAll[DumpRow](t)
	if err != nil {
		return nil, err
	}
	return &rows[0], nil
}

// identity reads the dump id and format version of a dumps table, the
// columns every version of the form keeps.
func (t *table) identity() (id string, version int32, err error) {
	if n := t.pf.NumRows(); n != 1 {
		return "", 0, t.fail(-1, "%d rows, want one (the dump)", n)
	}
	if err := t.each("format_version", pq.Int32, func(row int64, v pq.Value) error {
		if v.IsNull() {
			return t.fail(row, "format_version is NULL")
		}
		version = v.Int32()
		return nil
	}); err != nil {
		return "", 0, err
	}
	err = t.each("dump_id", pq.ByteArray, func(row int64, v pq.Value) error {
		id = string(v.ByteArray())
		return nil
	})
	return id, version, err
}

// reader rebuilds one partition's graph.
type reader struct {
	part  string
	row   *DumpRow
	opt   ReadOptions
	g     *model.Graph
	ids   *model.IDMap
	done  int64
	total int64
	res   model.Results
}

func (r *reader) progress(n int64) {
	r.done += n
	if r.opt.Progress != nil && r.done%(1<<16) == 0 {
		r.opt.Progress(r.done, r.total)
	}
}

func (r *reader) read() error {
	row := r.row
	g := &model.Graph{}
	r.g = g
	if row.NodeCount < 0 || row.EdgeCount < 0 || row.StringCount < 0 || row.NodeCount > 1<<31-2 || row.EdgeCount > 1<<32-1 || row.StringCount > 1<<32-1 {
		return r.failDumps("counts %d/%d/%d nodes/edges/strings out of range", row.NodeCount, row.EdgeCount, row.StringCount)
	}
	if len(row.NodeTypes) > 256 || len(row.EdgeTypes) > 256 {
		return r.failDumps("%d node types and %d edge types; heapx holds at most 256 of each", len(row.NodeTypes), len(row.EdgeTypes))
	}
	for _, t := range row.NodeTypes {
		g.NodeTypes = append(g.NodeTypes, exchange.NodeType(t.Name, t.Category))
	}
	for _, t := range row.EdgeTypes {
		g.EdgeTypes = append(g.EdgeTypes, exchange.EdgeType(t.Name, t.Category, t.Strength, t.NameKind))
	}
	if err := r.metadata(); err != nil {
		return err
	}
	g.RootKinds = append([]string(nil), row.RootKinds...)
	if len(g.RootKinds) > 1<<16 {
		return r.failDumps("%d root kinds; heapx holds at most 65536", len(g.RootKinds))
	}
	if err := r.strings(); err != nil {
		return err
	}
	if err := r.objects(); err != nil {
		return err
	}
	if err := r.references(); err != nil {
		return err
	}
	if err := r.extensions(); err != nil {
		return err
	}
	if err := g.Validate(); err != nil {
		return &formats.FormatError{File: r.part, Offset: -1, Msg: err.Error()}
	}
	if r.opt.Results != nil {
		r.res.Policy = row.AnalysisPolicy
		if err := r.res.Check(g); err != nil {
			return &formats.FormatError{File: TableFile(r.part, TableObjects), Offset: -1, Msg: err.Error()}
		}
		*r.opt.Results = r.res
	}
	if r.opt.Progress != nil {
		r.opt.Progress(r.total, r.total)
	}
	return nil
}

func (r *reader) failDumps(format string, args ...any) error {
	return &formats.FormatError{File: TableFile(r.part, TableDumps), Section: "row 0", Offset: -1, Msg: fmt.Sprintf(format, args...)}
}

// metadata takes the graph's metadata from dumps.metadata, as the other
// forms' readers do: the format's own keys are consumed, the rest kept in
// order after the format read ("parquet").
func (r *reader) metadata() error {
	ms := r.row.Metadata
	if len(ms) == 0 || ms[0].Key != exchange.KeyVersion {
		return r.failDumps("metadata does not start with %s", exchange.KeyVersion)
	}
	if v := ms[0].Value; v != strconv.Itoa(exchange.VersionMajor) {
		return r.failDumps("version_major is %q; this heapx reads version %d", v, exchange.VersionMajor)
	}
	g := r.g
	g.Meta = append(g.Meta, model.KV{Key: exchange.KeyFormat, Value: Name})
	for _, kv := range ms {
		switch kv.Key {
		case exchange.KeyVersion, exchange.KeyRoot, exchange.KeyNodeCount, exchange.KeyEdgeCount, exchange.KeyStringCount, exchange.KeyAnalysis:
			continue
		case exchange.KeyStackVersion:
			if err := exchange.CheckStackVersion(kv.Value); err != nil {
				return r.failDumps("%v", err)
			}
			continue
		}
		g.Meta = append(g.Meta, model.KV{Key: kv.Key, Value: kv.Value})
	}
	return nil
}

func (r *reader) strings() error {
	t, err := openTable(r.part, TableStrings, true)
	if err != nil {
		return err
	}
	defer t.close()
	if err := t.rows(r.row.StringCount); err != nil {
		return err
	}
	if err := t.each("id", pq.Int64, func(row int64, v pq.Value) error {
		if v.IsNull() || v.Int64() != row {
			return t.fail(row, "id is %v, want %d: strings are in id order from 0", v, row)
		}
		return nil
	}); err != nil {
		return err
	}
	return t.each("text", pq.ByteArray, func(row int64, v pq.Value) error {
		if v.IsNull() {
			return t.fail(row, "text is NULL")
		}
		r.g.Strings.Add(v.ByteArray())
		r.progress(1)
		return nil
	})
}

func (r *reader) objects() error {
	t, err := openTable(r.part, TableObjects, true)
	if err != nil {
		return err
	}
	defer t.close()
	n := int(r.row.NodeCount)
	if err := t.rows(int64(n)); err != nil {
		return err
	}
	g := r.g
	g.Nodes = model.Nodes{Type: model.Alloc[uint8](n), Name: model.Alloc[model.StringID](n), ID: model.MakeUint64s(n),
		Size: model.MakeUint64s(n), FirstEdge: model.Alloc[uint32](n + 1)}
	r.ids = model.NewIDMap(n)
	required := func(name string, v pq.Value, row int64) error {
		if v.IsNull() {
			return t.fail(row, "%s is NULL", name)
		}
		return nil
	}
	if err := t.each("node_id", pq.Int64, func(row int64, v pq.Value) error {
		if err := required("node_id", v, row); err != nil {
			return err
		}
		id := uint64(v.Int64())
		if !r.ids.Insert(id, int32(row)) {
			return t.fail(row, "node id %d appears twice", id)
		}
		g.Nodes.ID.Set(int(row), id)
		r.progress(1)
		return nil
	}); err != nil {
		return err
	}
	if n > 0 {
		root := r.ids.Get(uint64(r.row.RootID))
		if root < 0 {
			return r.failDumps("root_id %d is not a node of objects", uint64(r.row.RootID))
		}
		g.Root = root
	}
	nt := int32(len(g.NodeTypes))
	if err := t.each("type_index", pq.Int32, func(row int64, v pq.Value) error {
		if err := required("type_index", v, row); err != nil {
			return err
		}
		if x := v.Int32(); x < 0 || x >= nt {
			return t.fail(row, "type_index %d is not one of the %d node types", x, nt)
		}
		g.Nodes.Type[row] = uint8(v.Int32())
		return nil
	}); err != nil {
		return err
	}
	ns := int64(g.Strings.Len())
	if err := t.each("name_id", pq.Int64, func(row int64, v pq.Value) error {
		if err := required("name_id", v, row); err != nil {
			return err
		}
		if x := v.Int64(); x < 0 || x >= ns {
			return t.fail(row, "name_id %d is not one of the %d strings", x, ns)
		}
		g.Nodes.Name[row] = model.StringID(v.Int64())
		return nil
	}); err != nil {
		return err
	}
	if err := t.each("self_size", pq.Int64, func(row int64, v pq.Value) error {
		if err := required("self_size", v, row); err != nil {
			return err
		}
		g.Nodes.Size.Set(int(row), uint64(v.Int64()))
		return nil
	}); err != nil {
		return err
	}
	if r.row.HasDetachedness {
		g.Detachedness = model.Alloc[uint8](n)
		if err := t.each("detachedness", pq.Int32, func(row int64, v pq.Value) error {
			if x := v.Int32(); v.IsNull() || x < 0 || x > 255 {
				return t.fail(row, "detachedness is %v, want 0 to 255 (dumps.has_detachedness is set)", v)
			}
			g.Detachedness[row] = uint8(v.Int32())
			return nil
		}); err != nil {
			return err
		}
	}
	if r.row.HasTraceNodeID {
		g.TraceNodeID = model.Alloc[uint32](n)
		if err := t.each("trace_node_id", pq.Int64, func(row int64, v pq.Value) error {
			if x := v.Int64(); v.IsNull() || x < 0 || x > 1<<32-1 {
				return t.fail(row, "trace_node_id is %v, want 0 to 2^32-1 (dumps.has_trace_node_id is set)", v)
			}
			g.TraceNodeID[row] = uint32(v.Int64())
			return nil
		}); err != nil {
			return err
		}
	}
	if r.opt.Results == nil {
		return nil
	}
	return r.results(t, n)
}

// results reads the analysis columns of objects.
func (r *reader) results(t *table, n int) error {
	res := &r.res
	res.Shallow, res.Retained = model.Alloc[uint64](n), model.Alloc[uint64](n)
	res.Dominator, res.Distance = model.Alloc[model.NodeIndex](n), model.Alloc[int32](n)
	for _, c := range []struct {
		name string
		col  []uint64
	}{{"shallow_size", res.Shallow}, {"retained_size", res.Retained}} {
		if err := t.each(c.name, pq.Int64, func(row int64, v pq.Value) error {
			if v.IsNull() {
				return t.fail(row, "%s is NULL", c.name)
			}
			c.col[row] = uint64(v.Int64())
			return nil
		}); err != nil {
			return err
		}
	}
	if err := t.each("distance", pq.Int32, func(row int64, v pq.Value) error {
		if v.IsNull() {
			return t.fail(row, "distance is NULL")
		}
		res.Distance[row] = v.Int32()
		r.progress(1)
		return nil
	}); err != nil {
		return err
	}
	return t.each("dominator", pq.Int64, func(row int64, v pq.Value) error {
		if v.IsNull() {
			res.Dominator[row] = model.NoNode
			return nil
		}
		d := r.ids.Get(uint64(v.Int64()))
		if d < 0 {
			return t.fail(row, "dominator %d is not a node of objects", uint64(v.Int64()))
		}
		res.Dominator[row] = d
		return nil
	})
}

func (r *reader) references() error {
	t, err := openTable(r.part, TableReferences, true)
	if err != nil {
		return err
	}
	defer t.close()
	m := int(r.row.EdgeCount)
	if err := t.rows(int64(m)); err != nil {
		return err
	}
	g := r.g
	n := g.NumNodes()
	g.Edges = model.Edges{Type: model.Alloc[uint8](m), Name: model.Alloc[uint32](m), To: model.Alloc[model.NodeIndex](m)}
	// Sources come grouped in node order: src is the node whose edges
	// are being read, and each node's first edge is set as it is passed.
	src := 0
	if err := t.each("source", pq.Int64, func(row int64, v pq.Value) error {
		if v.IsNull() {
			return t.fail(row, "source is NULL")
		}
		s := r.ids.Get(uint64(v.Int64()))
		if s < 0 {
			return t.fail(row, "source %d is not a node of objects", uint64(v.Int64()))
		}
		if int(s) < src {
			return t.fail(row, "source %d comes after the edges of a later node: references must be grouped by source in node order", uint64(v.Int64()))
		}
		for ; src < int(s); src++ {
			g.Nodes.FirstEdge[src+1] = uint32(row)
		}
		return nil
	}); err != nil {
		return err
	}
	for ; src < n; src++ {
		g.Nodes.FirstEdge[src+1] = uint32(m)
	}
	if err := t.each("target", pq.Int64, func(row int64, v pq.Value) error {
		if v.IsNull() {
			return t.fail(row, "target is NULL")
		}
		d := r.ids.Get(uint64(v.Int64()))
		if d < 0 {
			return t.fail(row, "target %d is not a node of objects", uint64(v.Int64()))
		}
		g.Edges.To[row] = d
		r.progress(1)
		return nil
	}); err != nil {
		return err
	}
	et := int32(len(g.EdgeTypes))
	if err := t.each("type_index", pq.Int32, func(row int64, v pq.Value) error {
		if x := v.Int32(); v.IsNull() || x < 0 || x >= et {
			return t.fail(row, "type_index %v is not one of the %d edge types", v, et)
		}
		g.Edges.Type[row] = uint8(v.Int32())
		return nil
	}); err != nil {
		return err
	}
	ns := int64(g.Strings.Len())
	return t.each("name_id", pq.Int64, func(row int64, v pq.Value) error {
		x := v.Int64()
		if v.IsNull() || x < 0 || x > 1<<32-1 {
			return t.fail(row, "name_id %v out of range", v)
		}
		if !g.EdgeTypes[g.Edges.Type[row]].Indexed && x >= ns {
			return t.fail(row, "name_id %d is not one of the %d strings", x, ns)
		}
		g.Edges.Name[row] = uint32(x)
		return nil
	})
}
