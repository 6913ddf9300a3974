// Allocation stacks: StackFrame messages, each written once and then
// referred to by id, into the graph's allocation trace.

package spidermonkey

import (
	"math"

	"github.com/heapx/heapx/model"
	"google.golang.org/protobuf/encoding/protowire"
)

// frame decodes an allocation stack (a StackFrame message) and returns the
// index of its innermost frame in g.Trace.Tree. A frame holds its parent
// (caller) nested inside it; the chain is walked iteratively, so a deep
// stack cannot overflow anything, and tree nodes are added oldest first, so
// a parent's index is below its children's.
func (r *reader) frame(b []byte, off int64) (int32, error) {
	const section = "stack frame"
	if r.g.Trace == nil {
		r.g.Trace = &model.AllocationTrace{}
		r.frames = map[uint64]int32{}
	}
	r.pending = r.pending[:0]
	parent := int32(-1)
	for b != nil {
		data, dataOff, ref, isRef, err := r.frameFields(b, off)
		if err != nil {
			return 0, err
		}
		if isRef {
			idx, ok := r.frames[ref]
			if !ok {
				return 0, r.errAt(section, off, "reference to stack frame %d, which is not defined before", ref)
			}
			parent = idx
			break
		}
		if data == nil {
			return 0, r.errAt(section, off, "stack frame with neither data nor a reference")
		}
		fn, parentMsg, parentOff, err := r.frameData(data, dataOff)
		if err != nil {
			return 0, err
		}
		r.pending = append(r.pending, pendingFrame{fn: fn, off: dataOff})
		b, off = parentMsg, parentOff
	}
	t := r.g.Trace
	for i := len(r.pending) - 1; i >= 0; i-- {
		f := r.pending[i]
		if _, dup := r.frames[f.fn.ID]; dup {
			return 0, r.errAt(section, f.off, "stack frame %d defined twice", f.fn.ID)
		}
		idx := int32(len(t.Tree))
		r.frames[f.fn.ID] = idx
		t.Functions = append(t.Functions, f.fn)
		t.Tree = append(t.Tree, model.TraceNode{ID: uint32(idx + 1), Function: uint32(idx), Parent: parent})
		parent = idx
	}
	return parent, nil
}

// frameFields splits a StackFrame message into its data or its ref.
func (r *reader) frameFields(b []byte, off int64) (data []byte, dataOff int64, ref uint64, isRef bool, err error) {
	for p, k := 0, 0; p < len(b); p += k {
		num, typ, k0 := protowire.ConsumeTag(b[p:])
		if k0 < 0 {
			return nil, 0, 0, false, r.wireErr("stack frame", off+int64(p), k0)
		}
		p += k0
		switch {
		case num == frameData && typ == protowire.BytesType:
			data, k = protowire.ConsumeBytes(b[p:])
			dataOff = off + int64(p+k-len(data))
			isRef = false
		case num == frameRef && typ == protowire.VarintType:
			ref, k = protowire.ConsumeVarint(b[p:])
			isRef = true
		default:
			k = protowire.ConsumeFieldValue(num, typ, b[p:])
		}
		if k < 0 {
			return nil, 0, 0, false, r.wireErr("stack frame", off+int64(p), k)
		}
	}
	return data, dataOff, ref, isRef, nil
}

// frameData decodes a StackFrame.Data message, interning its strings (its
// own before its parent's, as Gecko does), and returns its parent's
// StackFrame message, nil if it has none.
func (r *reader) frameData(b []byte, off int64) (fn model.TraceFunction, parent []byte, parentOff int64, err error) {
	const section = "stack frame"
	var haveID bool
	fn.Name, fn.ScriptName = r.empty, r.empty
	for p, k := 0, 0; p < len(b); p += k {
		num, typ, k0 := protowire.ConsumeTag(b[p:])
		if k0 < 0 {
			return fn, nil, 0, r.wireErr(section, off+int64(p), k0)
		}
		p += k0
		at := off + int64(p)
		var v uint64
		var s []byte
		switch typ {
		case protowire.VarintType:
			v, k = protowire.ConsumeVarint(b[p:])
			switch {
			case k < 0:
			case num == dataID:
				fn.ID, haveID = v, true
			case num == dataLine:
				fn.Line = int32(min(v, math.MaxInt32))
			case num == dataColumn:
				fn.Column = int32(min(v, math.MaxInt32))
			case num == dataSourceRef:
				fn.ScriptName, err = r.ref(r.two, v, "two-byte", section, at)
			case num == dataFuncNameRef:
				fn.Name, err = r.ref(r.two, v, "two-byte", section, at)
			}
		case protowire.BytesType:
			s, k = protowire.ConsumeBytes(b[p:])
			sOff := at + int64(k-len(s))
			switch {
			case k < 0:
			case num == dataParent:
				parent, parentOff = s, sOff
			case num == dataSource:
				fn.ScriptName, err = r.addTwo(s, section, sOff)
			case num == dataFuncName:
				fn.Name, err = r.addTwo(s, section, sOff)
			}
		default:
			k = protowire.ConsumeFieldValue(num, typ, b[p:])
		}
		if k < 0 {
			return fn, nil, 0, r.wireErr(section, at, k)
		}
		if err != nil {
			return fn, nil, 0, err
		}
	}
	if !haveID {
		return fn, nil, 0, r.errAt(section, off, "stack frame data without an id")
	}
	return fn, parent, parentOff, nil
}

// preorder returns the allocation tree in preorder, as the model keeps
// it (V8's nested trace_tree is written from that order). Frames are added
// as nodes' stacks reach them, so a frame can come after an unrelated
// subtree that follows its parent. Tree node ids, which the TraceNodeID
// column refers to, move with their nodes.
func preorder(t []model.TraceNode) []model.TraceNode {
	n := len(t)
	// Children of each node (key parent+1; the roots under key 0), in
	// index order, as offsets into kids.
	start := make([]int32, n+2)
	for _, x := range t {
		start[x.Parent+2]++
	}
	for k := 1; k < len(start); k++ {
		start[k] += start[k-1]
	}
	kids := make([]int32, n)
	fill := append([]int32(nil), start[:n+1]...)
	for i, x := range t {
		kids[fill[x.Parent+1]] = int32(i)
		fill[x.Parent+1]++
	}
	out := make([]model.TraceNode, 0, n)
	pos := make([]int32, n) // old index -> new index
	stack := make([]int32, 0, 64)
	pushKids := func(key int32) {
		for j := start[key+1] - 1; j >= start[key]; j-- {
			stack = append(stack, kids[j])
		}
	}
	pushKids(0)
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x := t[i]
		if x.Parent >= 0 {
			x.Parent = pos[x.Parent]
		}
		pos[i] = int32(len(out))
		out = append(out, x)
		pushKids(i + 1)
	}
	return out
}
