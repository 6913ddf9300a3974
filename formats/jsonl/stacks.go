package jsonl

import (
	"fmt"
	"math"

	"github.com/heapx/heapx/model"
)

// The stack records (docs/format.md 2.9): a heapx:stack, then its
// heapx:frame records innermost first, each followed by its
// heapx:frame_value records. Their node fields are kept as identifiers,
// not resolved: a core's frame can hold an object its reader did not make
// a node of, and the address is still worth showing.

const (
	stackIndex = iota
	stackThread
	stackObject
)

type stackRec struct {
	numbersRec
	name, stop, state string
}

var stackRecord = recordType[stackRec]{
	fields: []field[stackRec]{
		{name: "index", num: upTo(stackIndex, "stack index", math.MaxInt32)},
		{name: "thread", num: unsigned(stackThread, "thread")},
		{name: "name", decode: func(c *cursor, r *stackRec) (err error) { r.name, err = c.text("stack name"); return }},
		{name: "stop", decode: func(c *cursor, r *stackRec) (err error) { r.stop, err = c.text("stack stop"); return }},
		{name: "object", num: unsigned(stackObject, "stack object (a node id or null)").orNull()},
		{name: "state", decode: func(c *cursor, r *stackRec) (err error) { r.state, err = c.text("stack state"); return }},
	},
	required: []string{"index", "thread"},
	// Without an object field: none.
	blank:   stackRec{numbersRec: numbersRec{null: 1 << stackObject}},
	numbers: (*stackRec).numbers,
	add: func(rd *reader, r *stackRec) error {
		g := rd.g
		if r.num[stackIndex] != uint64(len(g.Stacks)) {
			return fmt.Errorf("heapx:stack index %d, want %d (stacks are numbered 0, 1, 2, ... in file order)", r.num[stackIndex], len(g.Stacks))
		}
		s := model.Stack{Thread: r.num[stackThread], Name: r.name, Stop: r.stop, State: r.state}
		if !r.null.has(stackObject) {
			s.Object = r.num[stackObject]
		}
		g.Stacks = append(g.Stacks, s)
		return nil
	},
}

const (
	frameStack = iota
	frameIndex
	frameLine
	frameColumn
	framePC
	frameFP
	frameFunctionNode
	frameSlots
)

type frameRec struct {
	numbersRec
	kind, typ, function, script string
}

var frameRecord = recordType[frameRec]{
	fields: []field[frameRec]{
		{name: "stack", num: upTo(frameStack, "frame stack (a heapx:stack index)", math.MaxInt32)},
		{name: "index", num: upTo(frameIndex, "frame index", math.MaxInt32)},
		{name: "kind", decode: func(c *cursor, r *frameRec) (err error) { r.kind, err = c.text("frame kind"); return }},
		{name: "type", decode: func(c *cursor, r *frameRec) (err error) { r.typ, err = c.text("frame type"); return }},
		{name: "function", decode: func(c *cursor, r *frameRec) (err error) { r.function, err = c.text("frame function"); return }},
		{name: "script", decode: func(c *cursor, r *frameRec) (err error) { r.script, err = c.text("frame script"); return }},
		{name: "line", num: upTo(frameLine, "line", 1<<32-1)},
		{name: "column", num: upTo(frameColumn, "column", 1<<32-1)},
		{name: "pc", num: unsigned(framePC, "pc")},
		{name: "fp", num: unsigned(frameFP, "fp")},
		{name: "function_node", num: unsigned(frameFunctionNode, "function_node (a node id or null)").orNull()},
	},
	required: []string{"stack", "index", "kind"},
	numbers:  (*frameRec).numbers,
	add: func(rd *reader, r *frameRec) error {
		s, err := rd.stackOf(r.num[frameStack], "heapx:frame")
		if err != nil {
			return err
		}
		if r.num[frameIndex] != uint64(len(s.Frames)) {
			return fmt.Errorf("heapx:frame index %d of stack %d, want %d (a stack's frames follow it, numbered 0, 1, 2, ...)", r.num[frameIndex], r.num[frameStack], len(s.Frames))
		}
		kind, err := model.ParseFrameKind(r.kind)
		if err != nil {
			return fmt.Errorf("heapx:frame: %v", err)
		}
		s.Frames = append(s.Frames, model.Frame{
			Kind: kind, Type: r.typ, Function: r.function, Script: r.script,
			Line: uint32(r.num[frameLine]), Column: uint32(r.num[frameColumn]),
			PC: r.num[framePC], FP: r.num[frameFP], FunctionNode: r.num[frameFunctionNode],
		})
		return nil
	},
}

const (
	valueStack = iota
	valueFrame
	valueNode
	valueSmi
	valueSlots
)

// numbersRec has room for the numbers of the stack records.
const _ = uint(len(numbersRec{}.num) - max(frameSlots, valueSlots))

type frameValueRec struct {
	numbersRec
	role, name, text string
}

var frameValueRecord = recordType[frameValueRec]{
	fields: []field[frameValueRec]{
		{name: "stack", num: upTo(valueStack, "frame_value stack (a heapx:stack index)", math.MaxInt32)},
		{name: "frame", num: upTo(valueFrame, "frame_value frame (a heapx:frame index)", math.MaxInt32)},
		{name: "role", decode: func(c *cursor, r *frameValueRec) (err error) { r.role, err = c.text("frame_value role"); return }},
		{name: "name", decode: func(c *cursor, r *frameValueRec) (err error) { r.name, err = c.text("frame_value name"); return }},
		{name: "node", num: unsigned(valueNode, "frame_value node (a node id or null)").orNull()},
		{name: "smi", num: signed(valueSmi, "frame_value smi", math.MinInt64, math.MaxInt64).orNull()},
		{name: "text", decode: func(c *cursor, r *frameValueRec) (err error) { r.text, err = c.text("frame_value text"); return }},
	},
	required: []string{"stack", "frame", "role"},
	// Without a node or smi field: none.
	blank:   frameValueRec{numbersRec: numbersRec{null: 1<<valueNode | 1<<valueSmi}},
	numbers: (*frameValueRec).numbers,
	add: func(rd *reader, r *frameValueRec) error {
		s, err := rd.stackOf(r.num[valueStack], "heapx:frame_value")
		if err != nil {
			return err
		}
		fi := r.num[valueFrame]
		if fi >= uint64(len(s.Frames)) {
			return fmt.Errorf("heapx:frame_value: stack %d has no frame %d (a value follows its heapx:frame)", r.num[valueStack], fi)
		}
		role, err := model.ParseValueRole(r.role)
		if err != nil {
			return fmt.Errorf("heapx:frame_value: %v", err)
		}
		v := model.FrameValue{Role: role, Name: r.name, Text: r.text}
		if !r.null.has(valueNode) {
			v.Node = r.num[valueNode]
		}
		if !r.null.has(valueSmi) {
			v.Smi, v.IsSmi = int64(r.num[valueSmi]), true
		}
		f := &s.Frames[fi]
		f.Values = append(f.Values, v)
		return nil
	},
}

// stackOf is the stack a frame record's stack field names.
func (rd *reader) stackOf(index uint64, record string) (*model.Stack, error) {
	if index >= uint64(len(rd.g.Stacks)) {
		return nil, fmt.Errorf("%s names stack %d, but %d heapx:stack records came before it", record, index, len(rd.g.Stacks))
	}
	return &rd.g.Stacks[index], nil
}
