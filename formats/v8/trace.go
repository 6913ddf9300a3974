// Allocation traces: the sections --track-heap-objects and timelines add
// (locations, trace functions and tree, samples).

package v8

import (
	"fmt"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// readLocations reads the allocation sites straight into Graph.Locations
// (a locationSink), not through a table: Chrome writes one per object and
// closure, millions in a big snapshot.
func (r *reader) readLocations() error {
	s := r.s
	fields := r.metaFields("location_fields")
	ix := fieldIndex(fields, "object_index", "script_id", "line", "column", "script_object_index")
	if err := s.expect('[', "'[' starting locations"); err != nil {
		return err
	}
	start := s.offset()
	if !r.haveNodes {
		// Locations point into the nodes array; V8 always writes it first.
		if c, ok := s.skipSpace(); ok && c == ']' {
			s.pos++
			return nil
		}
		return &formats.FormatError{File: s.file, Section: "locations", Offset: start, Msg: "locations before the nodes section"}
	}
	if ix[0] < 0 {
		if c, ok := s.skipSpace(); ok && c == ']' {
			s.pos++
			return nil
		}
		return &formats.FormatError{File: s.file, Section: "locations", Offset: start, Msg: "meta.location_fields lacks object_index"}
	}
	// Chrome and Node write a location per object and closure: reserve that
	// many up front. Capacity that is never written is never faulted in,
	// while growing by doubling would leave the old copies as garbage.
	var objects int
	for _, t := range r.g.Nodes.Type {
		if c := r.g.NodeTypes[t].Category; c == model.CatObject || c == model.CatClosure {
			objects++
		}
	}
	ls := &locationSink{locs: model.Alloc[model.Location](objects), fields: uint64(len(fields)), ix: ix,
		nodeF: int64(r.nodeF), nodes: int64(r.g.NumNodes()), limit: r.bound / 2}
	if ix[4] >= 0 {
		// Newer V8 (Chrome) names each location's Script node; kept so
		// the snapshot can be written back as it was.
		ls.scripts = model.Alloc[model.NodeIndex](objects)
	}
	n, err := r.p.numberArray(s, ls, true)
	if err != nil {
		return err
	}
	if n%ls.fields != 0 {
		return &formats.FormatError{File: s.file, Section: "locations", Offset: start,
			Msg: fmt.Sprintf("%d numbers do not form records of meta.location_fields %v", n, fields)}
	}
	k := int(n / ls.fields)
	ls.locs = ls.locs[:k]
	if ls.scripts != nil {
		ls.scripts = ls.scripts[:k]
	}
	r.g.Locations, r.g.LocationScripts = ls.locs, ls.scripts
	return nil
}

func (r *reader) trace() *model.AllocationTrace {
	if r.g.Trace == nil {
		r.g.Trace = &model.AllocationTrace{}
	}
	return r.g.Trace
}

func (r *reader) readTraceFunctions() error {
	vals, fields, err := r.records("trace_function_infos", "trace_function_info_fields")
	if err != nil || len(vals) == 0 {
		return err
	}
	ix := fieldIndex(fields, "function_id", "name", "script_name", "script_id", "line", "column")
	nf := len(fields)
	t := r.trace()
	get := func(rec []int64, i int) int64 {
		if i < 0 {
			return -1
		}
		return rec[i]
	}
	for i := 0; i+nf <= len(vals); i += nf {
		rec := vals[i : i+nf]
		t.Functions = append(t.Functions, model.TraceFunction{
			ID: uint64(get(rec, ix[0])), Name: uint32(get(rec, ix[1])), ScriptName: uint32(get(rec, ix[2])),
			ScriptID: uint32(get(rec, ix[3])), Line: int32(get(rec, ix[4])), Column: int32(get(rec, ix[5])),
		})
	}
	return nil
}

func (r *reader) readSamples() error {
	vals, fields, err := r.records("samples", "sample_fields")
	if err != nil || len(vals) == 0 {
		return err
	}
	ix := fieldIndex(fields, "timestamp_us", "last_assigned_id")
	nf := len(fields)
	t := r.trace()
	for i := 0; i+nf <= len(vals); i += nf {
		var smp model.TraceSample
		if ix[0] >= 0 {
			smp.TimestampMicros = uint64(vals[i+ix[0]])
		}
		if ix[1] >= 0 {
			smp.LastAssignedID = uint64(vals[i+ix[1]])
		}
		t.Samples = append(t.Samples, smp)
	}
	r.samples = true
	return nil
}

// readTraceTree reads the nested allocation tree: each node is
// [id, function_info_index, count, size, [children...]] flattened in its
// parent's children array. An explicit stack keeps deep trees off the Go
// stack.
func (r *reader) readTraceTree() error {
	s := r.s
	fields := r.metaFields("trace_node_fields")
	ix := fieldIndex(fields, "id", "function_info_index", "count", "size", "children")
	if err := s.expect('[', "'[' starting trace_tree"); err != nil {
		return err
	}
	if len(fields) == 0 || ix[4] < 0 {
		// Without a layout the tree cannot be interpreted: skip it.
		s.pos--
		return s.skipValue(nil, 0)
	}
	nf := len(fields)
	type frame struct {
		parent int32
		field  int
	}
	stack := []frame{{parent: -1}}
	var tree []model.TraceNode
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		c, ok := s.skipSpace()
		if !ok {
			return s.unexpectedEnd()
		}
		switch {
		case c == ',':
			s.pos++
		case c == ']':
			s.pos++
			if top.field != 0 {
				return r.errorf("trace_tree record cut short")
			}
			stack = stack[:len(stack)-1]
			if len(stack) > 0 {
				stack[len(stack)-1].field++
				if stack[len(stack)-1].field == nf {
					stack[len(stack)-1].field = 0
				}
			}
		case c == '[':
			if top.field != ix[4] {
				return r.errorf("unexpected '[' in trace_tree field %d", top.field)
			}
			s.pos++
			stack = append(stack, frame{parent: int32(len(tree) - 1)})
		default:
			v, err := r.readInt()
			if err != nil {
				return err
			}
			if top.field == ix[4] {
				return r.errorf("trace_tree children must be an array")
			}
			if top.field == 0 {
				tree = append(tree, model.TraceNode{Parent: top.parent})
			}
			nd := &tree[len(tree)-1]
			switch top.field {
			case ix[0]:
				nd.ID = uint32(v)
			case ix[1]:
				nd.Function = uint32(v)
			case ix[2]:
				nd.Count = uint64(v)
			case ix[3]:
				nd.Size = uint64(v)
			}
			top.field++
		}
	}
	if len(tree) > 0 {
		r.trace().Tree = tree
	}
	return nil
}
