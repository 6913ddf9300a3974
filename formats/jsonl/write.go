package jsonl

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"sync"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/formats/internal/jsonstr"
	"github.com/heapx/heapx/model"
)

// WriteOptions tune a write.
type WriteOptions struct {
	// Progress, if set, is called now and then with the number of node and
	// edge records written and their total.
	Progress func(done, total int64)
	// Results, if set, are persisted as the heapx:* node fields
	// (docs/format.md, section 4). They must fit the graph.
	Results *model.Results
	// Generator names the program writing, as the file's generator
	// metadata ("" for exchange.DefaultGenerator).
	Generator string
	// NodeFields are declared after the node fields above and written
	// in every node record (null where Missing).
	NodeFields []formats.NodeField
}

// chunkNodes and chunkEdges size the units of parallel formatting: big
// enough that handing one to a goroutine costs nothing next to formatting
// it (about 1-2 MB of text), small enough to keep both cores busy.
const (
	chunkNodes = 32 << 10
	chunkEdges = 64 << 10
)

// Write writes g as a heapx flat file to w, in the order docs/format.md
// (5.2) recommends: metadata, declarations, types, strings, nodes, edges,
// then the extension records. Nodes and edges, nearly all of the output,
// are formatted on every core.
func Write(w io.Writer, g *model.Graph, opt WriteOptions) error {
	res, err := exchange.Writable(g, opt.Results)
	if err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	if err := formats.CheckNodeFields(opt.NodeFields, g.NumNodes()); err != nil {
		return fmt.Errorf("jsonl: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	wr := &writer{w: bw, g: g, res: res, extra: opt.NodeFields, generator: opt.Generator, progress: opt.Progress, total: int64(g.NumNodes() + g.NumEdges())}
	if err := wr.header(); err != nil {
		return err
	}
	if err := wr.nodes(); err != nil {
		return err
	}
	if err := wr.edges(); err != nil {
		return err
	}
	if err := wr.extensions(); err != nil {
		return err
	}
	if opt.Progress != nil {
		opt.Progress(wr.total, wr.total)
	}
	return bw.Flush()
}

type writer struct {
	w         *bufio.Writer
	g         *model.Graph
	res       *model.Results
	extra     []formats.NodeField
	generator string
	buf       []byte
	progress  func(done, total int64)
	done      int64
	total     int64
}

// line writes the record in wr.buf (without its newline) and resets it.
func (wr *writer) line() error {
	wr.buf = append(wr.buf, ']', '\n')
	_, err := wr.w.Write(wr.buf)
	wr.buf = wr.buf[:0]
	return err
}

func (wr *writer) start(record string) {
	wr.buf = append(wr.buf, '[')
	wr.buf = appendString(wr.buf, record)
}

func (wr *writer) str(s string) {
	wr.buf = append(wr.buf, ',')
	wr.buf = appendString(wr.buf, s)
}

func (wr *writer) uint(v uint64) {
	wr.buf = append(wr.buf, ',')
	wr.buf = strconv.AppendUint(wr.buf, v, 10)
}

func (wr *writer) int(v int64) {
	wr.buf = append(wr.buf, ',')
	wr.buf = strconv.AppendInt(wr.buf, v, 10)
}

func (wr *writer) strs(ss []string) {
	wr.buf = append(wr.buf, ',', '[')
	for i, s := range ss {
		if i > 0 {
			wr.buf = append(wr.buf, ',')
		}
		wr.buf = appendString(wr.buf, s)
	}
	wr.buf = append(wr.buf, ']')
}

func (wr *writer) meta(key, value string) error {
	wr.start("metadata")
	wr.str(key)
	wr.str(value)
	return wr.line()
}

func (wr *writer) declare(record string, fields ...string) error {
	wr.start("record")
	wr.str(record)
	wr.strs(fields)
	return wr.line()
}

// nodeFields is the node declaration for g: the optional columns are
// declared only when the graph has them.
func (wr *writer) nodeFields() []string {
	f := []string{"id", "type", "name", "self_size"}
	if wr.g.TraceNodeID != nil {
		f = append(f, "v8:trace_node_id")
	}
	if wr.g.Detachedness != nil {
		f = append(f, "v8:detachedness")
	}
	if wr.res != nil {
		f = append(f, "heapx:shallow_size", "heapx:retained_size", "heapx:dominator", "heapx:distance")
	}
	for _, x := range wr.extra {
		f = append(f, x.Name)
	}
	return f
}

func (wr *writer) header() error {
	g := wr.g
	ms := exchange.Metadata(g, wr.res, wr.generator)
	for _, kv := range ms {
		if err := wr.meta(kv.Key, kv.Value); err != nil {
			return err
		}
	}

	decls := [][]string{
		{"string", "id", "text"},
		{"node_type", "index", "name", "category", "fields"},
		{"edge_type", "index", "name", "category", "strength", "name_kind"},
		append([]string{"node"}, wr.nodeFields()...),
		{"edge", "from", "type", "name", "to"},
	}
	switch {
	case g.LocationScripts != nil:
		// Declared even without records: it says the dump has the
		// column (a V8 snapshot lists script_object_index anyway).
		decls = append(decls, []string{"v8:location", "node", "script_id", "script", "line", "column"})
	case len(g.Locations) > 0:
		decls = append(decls, []string{"v8:location", "node", "script_id", "line", "column"})
	}
	if t := g.Trace; t != nil {
		if len(t.Functions) > 0 {
			decls = append(decls, []string{"v8:trace_function", "index", "function_id", "name", "script_name", "script_id", "line", "column"})
		}
		if len(t.Tree) > 0 {
			decls = append(decls, []string{"v8:trace_node", "index", "parent", "id", "function_index", "count", "size"})
		}
		if len(t.Samples) > 0 {
			decls = append(decls, []string{"v8:sample", "timestamp_us", "last_assigned_id"})
		}
	}
	if len(g.Sections) > 0 {
		decls = append(decls, []string{"v8:section", "name", "fields", "values"})
	}
	if len(g.GCRoots) > 0 {
		decls = append(decls, []string{"heapx:gc_root", "node", "kind"})
	}
	if len(g.Stacks) > 0 {
		decls = append(decls, stackFields, frameFields, frameValueFields)
	}
	for _, d := range decls {
		if err := wr.declare(d[0], d[1:]...); err != nil {
			return err
		}
	}

	for i, t := range g.NodeTypes {
		wr.start("node_type")
		wr.uint(uint64(i))
		wr.str(exchange.TypeName(t.Namespace, t.Name))
		wr.str(t.Category.String())
		wr.buf = append(wr.buf, ",[]"...)
		if err := wr.line(); err != nil {
			return err
		}
	}
	for i, t := range g.EdgeTypes {
		wr.start("edge_type")
		wr.uint(uint64(i))
		wr.str(exchange.TypeName(t.Namespace, t.Name))
		wr.str(t.Category.String())
		wr.str(t.Strength.String())
		if t.Indexed {
			wr.str("index")
		} else {
			wr.str("string")
		}
		if err := wr.line(); err != nil {
			return err
		}
	}
	for i := 0; i < g.Strings.Len(); i++ {
		wr.start("string")
		wr.uint(uint64(i))
		wr.str(g.Strings.At(model.StringID(i)))
		if err := wr.line(); err != nil {
			return err
		}
	}
	return nil
}

// nodes formats the node records in parallel chunks.
func (wr *writer) nodes() error {
	g := wr.g
	n := g.NumNodes()
	cuts := make([]int, 0, n/chunkNodes+2)
	for i := 0; i < n; i += chunkNodes {
		cuts = append(cuts, i)
	}
	cuts = append(cuts, n)
	return wr.parallel(cuts, func(b []byte, lo, hi int) []byte {
		ns := &g.Nodes
		for i := lo; i < hi; i++ {
			b = append(b, `["node",`...)
			b = strconv.AppendUint(b, ns.ID.At(i), 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, uint64(ns.Type[i]), 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, uint64(ns.Name[i]), 10)
			b = append(b, ',')
			b = strconv.AppendUint(b, ns.Size.At(i), 10)
			if g.TraceNodeID != nil {
				b = append(b, ',')
				b = strconv.AppendUint(b, uint64(g.TraceNodeID[i]), 10)
			}
			if g.Detachedness != nil {
				b = append(b, ',')
				b = strconv.AppendUint(b, uint64(g.Detachedness[i]), 10)
			}
			if r := wr.res; r != nil {
				b = append(b, ',')
				b = strconv.AppendUint(b, r.Shallow[i], 10)
				b = append(b, ',')
				b = strconv.AppendUint(b, r.Retained[i], 10)
				b = append(b, ',')
				if d := r.Dominator[i]; d == model.NoNode {
					b = append(b, "null"...)
				} else {
					b = strconv.AppendUint(b, ns.ID.At(int(d)), 10)
				}
				b = append(b, ',')
				b = strconv.AppendInt(b, int64(r.Distance[i]), 10)
			}
			for _, x := range wr.extra {
				b = append(b, ',')
				if x.Missing != nil && x.Missing[i] {
					b = append(b, "null"...)
				} else {
					b = strconv.AppendUint(b, x.Values[i], 10)
				}
			}
			b = append(b, ']', '\n')
		}
		return b
	}, func(lo, hi int) int64 { return int64(hi - lo) })
}

// edges formats the edge records in parallel chunks of whole nodes, so
// each chunk knows its sources.
func (wr *writer) edges() error {
	g := wr.g
	n := g.NumNodes()
	fe := g.Nodes.FirstEdge
	cuts := []int{0}
	for i := 0; i < n; {
		// Binary search would do, but a linear walk over FirstEdge is
		// a negligible part of formatting the edges.
		j := i + 1
		for j < n && fe[j]-fe[i] < chunkEdges {
			j++
		}
		cuts = append(cuts, j)
		i = j
	}
	if n == 0 {
		return nil
	}
	return wr.parallel(cuts, func(b []byte, lo, hi int) []byte {
		var prefix []byte
		es := &g.Edges
		for i := lo; i < hi; i++ {
			if fe[i] == fe[i+1] {
				continue
			}
			prefix = append(prefix[:0], `["edge",`...)
			prefix = strconv.AppendUint(prefix, g.Nodes.ID.At(i), 10)
			prefix = append(prefix, ',')
			for e := fe[i]; e < fe[i+1]; e++ {
				b = append(b, prefix...)
				b = strconv.AppendUint(b, uint64(es.Type[e]), 10)
				b = append(b, ',')
				b = strconv.AppendUint(b, uint64(es.Name[e]), 10)
				b = append(b, ',')
				b = strconv.AppendUint(b, g.NodeID(es.To[e]), 10)
				b = append(b, ']', '\n')
			}
		}
		return b
	}, func(lo, hi int) int64 { return int64(fe[hi] - fe[lo]) })
}

var chunkBufs = sync.Pool{New: func() any { return make([]byte, 0, 2<<20) }}

// parallel formats the ranges [cuts[k], cuts[k+1]) with format on every
// core and writes the results in order. The queue's capacity bounds the
// chunks in flight, so memory stays at a few chunks whatever the graph's
// size.
func (wr *writer) parallel(cuts []int, format func(b []byte, lo, hi int) []byte, work func(lo, hi int) int64) error {
	if len(cuts) < 2 {
		return nil
	}
	queue := make(chan chan []byte, 2*runtime.GOMAXPROCS(0))
	stop := make(chan struct{})
	go func() {
		defer close(queue)
		for k := 0; k+1 < len(cuts); k++ {
			ch := make(chan []byte, 1)
			select {
			case queue <- ch:
			case <-stop:
				return
			}
			lo, hi := cuts[k], cuts[k+1]
			go func() { ch <- format(chunkBufs.Get().([]byte)[:0], lo, hi) }()
		}
	}()
	var err error
	k := 0
	for ch := range queue {
		b := <-ch
		if err == nil {
			_, err = wr.w.Write(b)
			if err != nil {
				close(stop)
			}
			wr.done += work(cuts[k], cuts[k+1])
			if wr.progress != nil {
				wr.progress(wr.done, wr.total)
			}
		}
		k++
		//lint:ignore SA6002 the slice header this allocates is nothing next to the 2 MB chunk it recycles
		chunkBufs.Put(b[:0])
	}
	return err
}

func (wr *writer) extensions() error {
	g := wr.g
	for i, l := range g.Locations {
		wr.start("v8:location")
		wr.uint(g.NodeID(l.Node))
		wr.uint(uint64(l.ScriptID))
		if g.LocationScripts != nil {
			wr.uint(g.NodeID(g.LocationScripts[i]))
		}
		wr.uint(uint64(l.Line))
		wr.uint(uint64(l.Column))
		if err := wr.line(); err != nil {
			return err
		}
	}
	if t := g.Trace; t != nil {
		for i, f := range t.Functions {
			wr.start("v8:trace_function")
			wr.uint(uint64(i))
			wr.uint(f.ID)
			wr.uint(uint64(f.Name))
			wr.uint(uint64(f.ScriptName))
			wr.uint(uint64(f.ScriptID))
			wr.int(int64(f.Line))
			wr.int(int64(f.Column))
			if err := wr.line(); err != nil {
				return err
			}
		}
		for i, n := range t.Tree {
			wr.start("v8:trace_node")
			wr.uint(uint64(i))
			wr.int(int64(n.Parent))
			wr.uint(uint64(n.ID))
			wr.uint(uint64(n.Function))
			wr.uint(n.Count)
			wr.uint(n.Size)
			if err := wr.line(); err != nil {
				return err
			}
		}
		for _, s := range t.Samples {
			wr.start("v8:sample")
			wr.uint(s.TimestampMicros)
			wr.uint(s.LastAssignedID)
			if err := wr.line(); err != nil {
				return err
			}
		}
	}
	for _, s := range g.Sections {
		wr.start("v8:section")
		wr.str(s.Name)
		wr.strs(s.Fields)
		wr.buf = append(wr.buf, ',', '[')
		for i, v := range s.Values {
			if i > 0 {
				wr.buf = append(wr.buf, ',')
			}
			wr.buf = strconv.AppendInt(wr.buf, v, 10)
			if len(wr.buf) > 1<<20 {
				// A big section is written as it is formatted.
				if _, err := wr.w.Write(wr.buf); err != nil {
					return err
				}
				wr.buf = wr.buf[:0]
			}
		}
		wr.buf = append(wr.buf, ']')
		if err := wr.line(); err != nil {
			return err
		}
	}
	for _, r := range g.GCRoots {
		wr.start("heapx:gc_root")
		wr.uint(g.NodeID(r.Node))
		wr.str(g.RootKinds[r.Kind])
		if err := wr.line(); err != nil {
			return err
		}
	}
	return wr.stacks()
}

// The declarations of the stack records (docs/format.md 2.9).
var (
	stackFields      = []string{"heapx:stack", "index", "thread", "name", "stop", "object", "state"}
	frameFields      = []string{"heapx:frame", "stack", "index", "kind", "type", "function", "script", "line", "column", "pc", "fp", "function_node"}
	frameValueFields = []string{"heapx:frame_value", "stack", "frame", "role", "name", "node", "smi", "text"}
)

// stacks writes each stack, then its frames, each followed by its values.
func (wr *writer) stacks() error {
	for si, s := range wr.g.Stacks {
		wr.start("heapx:stack")
		wr.uint(uint64(si))
		wr.uint(s.Thread)
		wr.str(s.Name)
		wr.str(s.Stop)
		wr.nodeOrNull(s.Object)
		wr.str(s.State)
		if err := wr.line(); err != nil {
			return err
		}
		for fi, f := range s.Frames {
			wr.start("heapx:frame")
			wr.uint(uint64(si))
			wr.uint(uint64(fi))
			wr.str(f.Kind.String())
			wr.str(f.Type)
			wr.str(f.Function)
			wr.str(f.Script)
			wr.uint(uint64(f.Line))
			wr.uint(uint64(f.Column))
			wr.uint(f.PC)
			wr.uint(f.FP)
			wr.nodeOrNull(f.FunctionNode)
			if err := wr.line(); err != nil {
				return err
			}
			for _, v := range f.Values {
				wr.start("heapx:frame_value")
				wr.uint(uint64(si))
				wr.uint(uint64(fi))
				wr.str(v.Role.String())
				wr.str(v.Name)
				wr.nodeOrNull(v.Node)
				if v.IsSmi {
					wr.int(v.Smi)
				} else {
					wr.buf = append(wr.buf, ",null"...)
				}
				wr.str(v.Text)
				if err := wr.line(); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// nodeOrNull writes a node identifier, null for 0 (none).
func (wr *writer) nodeOrNull(id uint64) {
	if id == 0 {
		wr.buf = append(wr.buf, ",null"...)
		return
	}
	wr.uint(id)
}

// appendString appends s as a JSON string, UTF-8 as is (see
// jsonstr.Append).
func appendString(b []byte, s string) []byte { return jsonstr.Append(b, s, false) }
