package jsonl

import (
	"fmt"
	"math"

	"github.com/heapx/heapx/model"
)

// Record decoders. Each record type the reader knows has one table of the
// fields it knows (pprof's profileDecoder is the model): a number field
// says where its value goes among the record's numbers and what it may
// be, any other field has the decoder of its value. A declaration picks
// the entries by field name, in the order the file lists them, and one
// function, decodeFields, reads every record of every type through its
// table, for the reader's line parser and the parallel parser's workers
// alike.

// Roles: what a declared field is to the reader. Role roleField+i is field
// i of the record type's table.
const (
	roleSkip  = iota // unknown: skipped, and counted (decl.skipped)
	roleQuiet        // known but not wanted (results nobody asked for): checked and skipped
	roleField
)

// A field is a field the reader knows in records of type R.
type field[R any] struct {
	name string
	num  number // a number field's, when decode is nil
	// decode reads the value of any other field (a string, a list).
	decode func(c *cursor, r *R) error
}

// A number says what a number field may hold and where its value goes:
// an unsigned integer up to max, or if signed one from min up to max (its
// two's complement bits stored), or if nullable null, noted in the
// record's nulls.
type number struct {
	slot     uint8  // index in the record's numbers (past them: only null or not is kept)
	what     string // names the field in errors
	max      uint64
	signed   bool
	min      int64
	nullable bool
}

// noSlot is the slot of a value read only to be checked.
const noSlot = 255 // past every record's numbers and nulls

func unsigned(slot uint8, what string) number {
	return number{slot: slot, what: what, max: math.MaxUint64}
}

func upTo(slot uint8, what string, max uint64) number {
	return number{slot: slot, what: what, max: max}
}

func signed(slot uint8, what string, min, max int64) number {
	return number{slot: slot, what: what, signed: true, min: min, max: uint64(max)}
}

func (n number) orNull() number {
	n.nullable = true
	return n
}

// quietNumber is a result nobody asked for, checked as an integer or null
// (cursor.intOrNull; readRow takes the usual unsigned one).
var quietNumber = number{slot: noSlot, what: "a heapx result", max: math.MaxUint64, nullable: true}

// A rowField is what readRow needs of a number field: its slot, its
// largest value, whether it may be null.
type rowField struct {
	max      uint64
	slot     uint8
	nullable bool
}

// A row is the number fields of a record declared with nothing else.
type row struct {
	fields []rowField
	slots  nulls // the slots of the fields
}

// nulls marks the numbers of a record that were null, by slot.
type nulls uint16

func (m nulls) has(slot uint8) bool { return m&(1<<slot) != 0 }

// A recordType is what the reader knows of one record type.
type recordType[R any] struct {
	fields   []field[R]
	required []string // the fields a declaration must list
	blank    R        // a record before its fields are read
	// numbers gives the record's numbers, by slot, and its nulls.
	numbers func(r *R) ([]uint64, *nulls)
	// add adds a record whose fields read to the graph.
	add func(rd *reader, r *R) error
	// failed, if set, picks the error to report for a record whose
	// fields did not all read, given how many did: err, the decoders',
	// unless the record has something to say first.
	failed func(rd *reader, d *decl, r *R, read int, err error) error
}

// recordKind is a recordType of any record.
type recordKind interface {
	role(field string) uint8
	requiredFields() []string
	// numberRow is the number fields of a record declared with roles,
	// for readRow; nil if one of its fields is not a number.
	numberRow(roles []uint8) *row
	// read reads a record at the cursor, after its tag, into the graph.
	read(rd *reader, d *decl) error
}

// recordTypes are the record types the reader knows, by name.
var recordTypes = map[string]recordKind{
	"string":            &stringRecord,
	"node_type":         &nodeTypeRecord,
	"edge_type":         &edgeTypeRecord,
	"node":              &nodeRecord,
	"edge":              &edgeRecord,
	"v8:location":       &locationRecord,
	"v8:trace_function": &traceFunctionRecord,
	"v8:trace_node":     &traceNodeRecord,
	"v8:sample":         &sampleRecord,
	"v8:section":        &sectionRecord,
	"heapx:gc_root":     &gcRootRecord,
	"heapx:stack":       &stackRecord,
	"heapx:frame":       &frameRecord,
	"heapx:frame_value": &frameValueRecord,
}

func (t *recordType[R]) role(name string) uint8 {
	for i, f := range t.fields {
		if f.name == name {
			return roleField + uint8(i)
		}
	}
	return roleSkip
}

func (t *recordType[R]) requiredFields() []string { return t.required }

func (t *recordType[R]) numberRow(roles []uint8) *row {
	if t.numbers == nil {
		return nil
	}
	r := &row{fields: make([]rowField, len(roles))}
	for k, role := range roles {
		n := quietNumber
		switch {
		case role == roleSkip || role >= roleField && t.fields[role-roleField].decode != nil:
			return nil
		case role >= roleField:
			n = t.fields[role-roleField].num
		}
		r.fields[k] = rowField{max: n.max, slot: n.slot, nullable: n.nullable}
		r.slots |= 1 << n.slot
	}
	return r
}

func (t *recordType[R]) read(rd *reader, d *decl) error {
	// Decoded into the declaration's record: one of its own would escape
	// to the heap, an allocation per line.
	r, _ := d.rec.(*R)
	if r == nil {
		r = new(R)
		d.rec = r
	}
	*r = t.blank
	var num []uint64
	var null *nulls
	if t.numbers != nil {
		num, null = t.numbers(r)
	}
	if read, err := decodeFields(&rd.c, d, t, r, num, null); err != nil {
		if t.failed != nil {
			return t.failed(rd, d, r, read, err)
		}
		return err
	}
	return t.add(rd, r)
}

// decodeFields reads the fields of a record at the cursor into r, its
// numbers into num and null, as d declares them, and returns how many
// read. It changes nothing but the cursor and the record: the parallel
// parser's workers decode with it too.
func decodeFields[R any](c *cursor, d *decl, t *recordType[R], r *R, num []uint64, null *nulls) (int, error) {
	if d.row != nil {
		if i, isNull, ok := readRow(c.b, c.i, d.row.fields, num, true); ok {
			c.i = i
			*null = *null&^d.row.slots | isNull
			return len(d.roles), nil
		}
	}
	for k, role := range d.roles {
		if c.i < len(c.b) && c.b[c.i] == ',' {
			c.i++
		} else if err := c.expect(',', fmt.Sprintf("',' before field %q of the %s record (declared with %d fields)", d.fields[k], d.name, len(d.fields))); err != nil {
			// The message is built only here: this runs for every
			// field of every line.
			return k, err
		}
		var err error
		switch role {
		case roleSkip:
			if err = c.skip(); err != nil {
				err = fmt.Errorf("field %q: %v", d.fields[k], err)
			}
		case roleQuiet:
			err = c.intOrNull(quietNumber.what)
		default:
			f := &t.fields[role-roleField]
			if f.decode != nil {
				err = f.decode(c, r)
				break
			}
			var v uint64
			var isNull bool
			v, isNull, err = c.number(&f.num)
			if int(f.num.slot) < len(num) {
				num[f.num.slot] = v
			}
			if isNull {
				*null |= 1 << f.num.slot
			} else {
				*null &^= 1 << f.num.slot
			}
		}
		if err != nil {
			return k, err
		}
	}
	return len(d.roles), nil
}

// The decoder tables of the record types but node and edge (nodes.go),
// each with the slots of its numbers.

// numbersRec holds the numbers of a record the line parser reads (node
// and edge records, which the workers keep by the thousand, have their
// own, of their size).
type numbersRec struct {
	num  [8]uint64
	null nulls
}

func (r *numbersRec) numbers() ([]uint64, *nulls) { return r.num[:], &r.null }

// The one number of string, node_type, edge_type and gc root records.
const (
	stringID      = 0
	nodeTypeIndex = 0
	edgeTypeIndex = 0
	gcRootNode    = 0
)

// numbersRec has room for the numbers of every record type that uses it.
const _ = uint(len(numbersRec{}.num) - max(locationSlots, functionSlots, treeSlots, sampleSlots))

type stringRec struct {
	numbersRec
	text []byte // aliases the cursor's line or scratch buffer
}

var stringRecord = recordType[stringRec]{
	fields: []field[stringRec]{
		{name: "id", num: unsigned(stringID, "string id")},
		{name: "text", decode: func(c *cursor, r *stringRec) (err error) { r.text, err = c.str("string text"); return }},
	},
	required: []string{"id", "text"},
	numbers:  (*stringRec).numbers,
	add:      (*reader).addString,
}

type nodeTypeRec struct {
	numbersRec
	name, category string
	sub            []string // subtype fields
}

var nodeTypeRecord = recordType[nodeTypeRec]{
	fields: []field[nodeTypeRec]{
		{name: "index", num: upTo(nodeTypeIndex, "node_type index", 1<<32-1)},
		{name: "name", decode: func(c *cursor, r *nodeTypeRec) (err error) { r.name, err = c.text("node_type name"); return }},
		{name: "category", decode: func(c *cursor, r *nodeTypeRec) (err error) { r.category, err = c.text("node_type category"); return }},
		{name: "fields", decode: func(c *cursor, r *nodeTypeRec) (err error) { r.sub, err = c.subtypeFields(); return }},
	},
	required: []string{"index", "name", "category"},
	numbers:  (*nodeTypeRec).numbers,
	add:      (*reader).addNodeType,
}

type edgeTypeRec struct {
	numbersRec
	name, category, strength, nameKind string
}

var edgeTypeRecord = recordType[edgeTypeRec]{
	fields: []field[edgeTypeRec]{
		{name: "index", num: upTo(edgeTypeIndex, "edge_type index", 1<<32-1)},
		{name: "name", decode: func(c *cursor, r *edgeTypeRec) (err error) { r.name, err = c.text("edge_type name"); return }},
		{name: "category", decode: func(c *cursor, r *edgeTypeRec) (err error) { r.category, err = c.text("edge_type category"); return }},
		{name: "strength", decode: func(c *cursor, r *edgeTypeRec) (err error) { r.strength, err = c.text("edge_type strength"); return }},
		{name: "name_kind", decode: func(c *cursor, r *edgeTypeRec) (err error) { r.nameKind, err = c.text("edge_type name_kind"); return }},
	},
	required: []string{"index", "name", "category", "strength", "name_kind"},
	numbers:  (*edgeTypeRec).numbers,
	add:      (*reader).addEdgeType,
}

const (
	locationNode = iota
	locationScriptID
	locationScript // the script's node id
	locationLine
	locationColumn
	locationSlots
)

var locationRecord = recordType[numbersRec]{
	fields: []field[numbersRec]{
		{name: "node", num: unsigned(locationNode, "location node")},
		{name: "script_id", num: upTo(locationScriptID, "script_id", 1<<32-1)},
		{name: "script", num: unsigned(locationScript, "location script (a node id or null)").orNull()},
		{name: "line", num: upTo(locationLine, "line", 1<<32-1)},
		{name: "column", num: upTo(locationColumn, "column", 1<<32-1)},
	},
	required: []string{"node"},
	numbers:  (*numbersRec).numbers,
	add:      (*reader).addLocation,
}

const (
	functionIndex = iota
	functionID
	functionName       // a string id
	functionScriptName // a string id
	functionScriptID
	functionLine
	functionColumn
	functionSlots
)

var traceFunctionRecord = recordType[numbersRec]{
	fields: []field[numbersRec]{
		{name: "index", num: unsigned(functionIndex, "trace function index")},
		{name: "function_id", num: unsigned(functionID, "function_id")},
		{name: "name", num: unsigned(functionName, "trace function name (a string id)")},
		{name: "script_name", num: unsigned(functionScriptName, "script_name (a string id)")},
		{name: "script_id", num: upTo(functionScriptID, "script_id", 1<<32-1)},
		{name: "line", num: signed(functionLine, "line", math.MinInt32, math.MaxInt32)},
		{name: "column", num: signed(functionColumn, "column", math.MinInt32, math.MaxInt32)},
	},
	required: []string{"index"},
	// Without a line or column, -1: not known.
	blank:   numbersRec{num: [8]uint64{functionLine: math.MaxUint64, functionColumn: math.MaxUint64}},
	numbers: (*numbersRec).numbers,
	add:     (*reader).addTraceFunction,
}

const (
	treeIndex = iota
	treeParent
	treeID
	treeFunction
	treeCount
	treeSize
	treeSlots
)

var traceNodeRecord = recordType[numbersRec]{
	fields: []field[numbersRec]{
		{name: "index", num: upTo(treeIndex, "trace node index", math.MaxInt32)},
		{name: "parent", num: signed(treeParent, "parent", -1, math.MaxInt32)},
		{name: "id", num: upTo(treeID, "trace node id", 1<<32-1)},
		{name: "function_index", num: upTo(treeFunction, "function_index", 1<<32-1)},
		{name: "count", num: unsigned(treeCount, "count")},
		{name: "size", num: unsigned(treeSize, "size")},
	},
	required: []string{"index", "parent"},
	numbers:  (*numbersRec).numbers,
	add:      (*reader).addTraceNode,
}

const (
	sampleTimestamp = iota
	sampleLastID
	sampleSlots
)

var sampleRecord = recordType[numbersRec]{
	fields: []field[numbersRec]{
		{name: "timestamp_us", num: unsigned(sampleTimestamp, "timestamp_us")},
		{name: "last_assigned_id", num: unsigned(sampleLastID, "last_assigned_id")},
	},
	numbers: (*numbersRec).numbers,
	add: func(rd *reader, r *numbersRec) error {
		t := rd.trace()
		t.Samples = append(t.Samples, model.TraceSample{TimestampMicros: r.num[sampleTimestamp], LastAssignedID: r.num[sampleLastID]})
		return nil
	},
}

var sectionRecord = recordType[model.Section]{
	fields: []field[model.Section]{
		{name: "name", decode: func(c *cursor, r *model.Section) (err error) { r.Name, err = c.text("section name"); return }},
		{name: "fields", decode: func(c *cursor, r *model.Section) (err error) { r.Fields, err = c.strs("section fields"); return }},
		{name: "values", decode: func(c *cursor, r *model.Section) (err error) { r.Values, err = c.int64s(); return }},
	},
	required: []string{"name", "values"},
	add: func(rd *reader, s *model.Section) error {
		rd.g.Sections = append(rd.g.Sections, *s)
		return nil
	},
}

type gcRootRec struct {
	numbersRec
	kind string
}

var gcRootRecord = recordType[gcRootRec]{
	fields: []field[gcRootRec]{
		{name: "node", num: unsigned(gcRootNode, "gc root node")},
		{name: "kind", decode: func(c *cursor, r *gcRootRec) (err error) { r.kind, err = c.text("gc root kind"); return }},
	},
	required: []string{"node", "kind"},
	numbers:  (*gcRootRec).numbers,
	add:      (*reader).addGCRoot,
}

func (rd *reader) addString(r *stringRec) error {
	s := &rd.g.Strings
	if s.Len() >= 1<<32-1 {
		return fmt.Errorf("more than %d strings", uint32(1<<32-1))
	}
	id := r.num[stringID]
	if rd.strSeq && id != uint64(s.Len()) {
		// Not numbered 0, 1, 2, ...: from here on string references
		// are resolved at the end through a sorted id table.
		rd.strSeq = false
		rd.strIDs = make([]uint64, s.Len())
		for i := range rd.strIDs {
			rd.strIDs[i] = uint64(i)
		}
		// References read so far were taken as direct indexes; defer
		// them too.
		rd.deferDirectStrings()
	}
	if !rd.strSeq {
		rd.strIDs = append(rd.strIDs, id)
	}
	s.Add(r.text)
	return nil
}

// addLocation adds a location, whose node (and script node) are resolved
// at the end, in one pass: there is one per object.
func (rd *reader) addLocation(r *numbersRec) error {
	g := rd.g
	if r.null.has(locationScript) {
		rd.scriptNull++
	}
	rd.locRaw = append(model.Grow(rd.locRaw, 1), r.num[locationNode])
	rd.locLine = append(model.Grow(rd.locLine, 1), rd.line)
	if g.LocationScripts != nil {
		rd.scriptRaw = append(model.Grow(rd.scriptRaw, 1), r.num[locationScript])
	}
	g.Locations = model.Grow(g.Locations, 1)
	g.Locations = append(g.Locations, model.Location{
		ScriptID: uint32(r.num[locationScriptID]), Line: uint32(r.num[locationLine]), Column: uint32(r.num[locationColumn]),
	})
	return nil
}

func (rd *reader) trace() *model.AllocationTrace {
	if rd.g.Trace == nil {
		rd.g.Trace = &model.AllocationTrace{}
	}
	return rd.g.Trace
}

func (rd *reader) addTraceFunction(r *numbersRec) error {
	t := rd.trace()
	at := len(t.Functions)
	t.Functions = append(t.Functions, model.TraceFunction{
		ID:         r.num[functionID],
		Name:       rd.strRef(r.num[functionName], refFuncName, at),
		ScriptName: rd.strRef(r.num[functionScriptName], refFuncScript, at),
		ScriptID:   uint32(r.num[functionScriptID]),
		Line:       int32(r.num[functionLine]),
		Column:     int32(r.num[functionColumn]),
	})
	rd.funcIdx = append(rd.funcIdx, r.num[functionIndex])
	return nil
}

func (rd *reader) addTraceNode(r *numbersRec) error {
	index, parent := r.num[treeIndex], int32(r.num[treeParent])
	if int64(parent) >= int64(index) {
		return fmt.Errorf("v8:trace_node %d: parent %d does not come before it (the tree is in preorder)", index, parent)
	}
	t := rd.trace()
	t.Tree = append(t.Tree, model.TraceNode{
		Parent: parent, ID: uint32(r.num[treeID]), Function: uint32(r.num[treeFunction]), Count: r.num[treeCount], Size: r.num[treeSize],
	})
	rd.treeIdx = append(rd.treeIdx, index)
	return nil
}

func (rd *reader) addGCRoot(r *gcRootRec) error {
	g := rd.g
	kid, ok := rd.rootKinds[r.kind]
	if !ok {
		if len(g.RootKinds) == 1<<16 {
			return fmt.Errorf("more than %d gc root kinds", 1<<16)
		}
		kid = uint16(len(g.RootKinds))
		g.RootKinds = append(g.RootKinds, r.kind)
		rd.rootKinds[r.kind] = kid
	}
	node, err := rd.nodeRef(r.num[gcRootNode], refGCRoot, len(g.GCRoots))
	if err != nil {
		return err
	}
	g.GCRoots = append(g.GCRoots, model.GCRoot{Node: node, Kind: kid})
	return nil
}
