package jsonl

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// declared is what the file said about itself: its record types and their
// fields (record lines), its node and edge types (node_type and edge_type
// records) and its metadata.
type declared struct {
	decls  map[string]*decl
	nodeD  *decl
	edgeD  *decl
	strD   *decl
	lastD  *decl            // the last extension record type seen
	undecl map[string]int64 // records of undeclared types
	// subSkip counts the subtype fields skipped, by "node_type NAME.FIELD".
	subSkip map[string]int64

	nodeTypes typeIndex
	edgeTypes typeIndex
	subFields [][]string // per model node type: subtype fields to skip

	counts   [3]int64 // node, edge, string count promises; -1 when absent
	rootID   uint64
	haveRoot bool
	meta     []model.KV
	res      *model.Results // where the results go, when the file has them and they were asked for
}

func newDeclared() declared {
	return declared{
		decls: map[string]*decl{}, undecl: map[string]int64{}, subSkip: map[string]int64{},
		nodeTypes: typeIndex{large: map[uint64]uint8{}, undeclared: "node type %d is not declared by a node_type record before this line"},
		edgeTypes: typeIndex{large: map[uint64]uint8{}, undeclared: "edge type %d is not declared by an edge_type record before this line"},
		counts:    [3]int64{-1, -1, -1},
	}
}

// decl is a record type declared by the file.
type decl struct {
	name   string
	fields []string
	// roles say what each field is to the reader: one of the record
	// type's fields (recordType.role), or skipped.
	roles []uint8
	kind  recordKind // nil: a record type the reader does not know
	rec   any        // the record being read: a *R of kind's recordType[R]
	row   *row       // the fields, if all are numbers (recordKind.numberRow)
	count int64      // records read
	// dropped counts, per field, values read but dropped at the end (a
	// location's script column that is not complete); the fields the
	// reader does not know are skipped in every record, count times.
	dropped []int64
	plain   bool // an edge declared as heapx writes it: from, type, name, to
}

// skipped is how many values of field k the reader skipped.
func (d *decl) skipped(k int) int64 {
	n := d.dropped[k]
	if d.kind != nil && d.roles[k] == roleSkip {
		n += d.count
	}
	return n
}

func (rd *reader) metadata() error {
	c := &rd.c
	k, err := c.nextStr("metadata key")
	if err != nil {
		return err
	}
	key := string(k)
	v, err := c.nextStr("metadata value")
	if err != nil {
		return err
	}
	val := string(v)
	if err := c.end(); err != nil {
		return err
	}
	count := func(i int) error {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("metadata %s: %q is not a count", key, val)
		}
		if n > rd.bound/8 {
			return rd.src.ShortError("line "+strconv.FormatInt(rd.line, 10), fmt.Errorf("metadata %s: %d records cannot fit in an input of at most %d bytes", key, n, rd.bound))
		}
		rd.counts[i] = n
		return nil
	}
	switch key {
	case exchange.KeyVersion:
		if val != strconv.Itoa(exchange.VersionMajor) {
			return fmt.Errorf("a second version_major, %q, contradicts the first", val)
		}
	case exchange.KeyGenerator:
		rd.meta = append(rd.meta, model.KV{Key: key, Value: val})
	case exchange.KeyRoot:
		id, err := strconv.ParseUint(val, 10, 64)
		if err != nil {
			return fmt.Errorf("metadata %s: %q is not a node identifier", key, val)
		}
		rd.rootID, rd.haveRoot = id, true
	case exchange.KeyNodeCount:
		return count(0)
	case exchange.KeyEdgeCount:
		return count(1)
	case exchange.KeyStringCount:
		return count(2)
	case exchange.KeyStackVersion:
		return exchange.CheckStackVersion(val)
	case exchange.KeyAnalysis:
		if rd.opt.Results != nil {
			rd.opt.Results.Policy = val
		}
	default:
		rd.meta = append(rd.meta, model.KV{Key: key, Value: val})
	}
	return nil
}

// resultFields are the node fields of the stored analysis results.
var resultFields = []string{"heapx:shallow_size", "heapx:retained_size", "heapx:dominator", "heapx:distance"}

func (rd *reader) declare() error {
	c := &rd.c
	n, err := c.nextStr("declared record type")
	if err != nil {
		return err
	}
	name := string(n)
	if err := c.expect(',', "','"); err != nil {
		return err
	}
	fields, err := c.strs("field list")
	if err != nil {
		return err
	}
	if err := c.end(); err != nil {
		return err
	}
	if name == "metadata" || name == "record" {
		return fmt.Errorf("%q has a fixed layout and must not be declared", name)
	}
	if _, dup := rd.decls[name]; dup {
		return fmt.Errorf("record type %q declared twice", name)
	}
	d := &decl{name: name, fields: fields, roles: make([]uint8, len(fields)), dropped: make([]int64, len(fields))}
	if k, ok := recordTypes[name]; ok {
		d.kind = k
		seen := map[string]bool{}
		for i, f := range fields {
			if seen[f] {
				return fmt.Errorf("record type %q declares field %q twice", name, f)
			}
			seen[f] = true
			d.roles[i] = k.role(f)
		}
		for _, f := range k.requiredFields() {
			if !seen[f] {
				return fmt.Errorf("the declaration of %q lacks the required field %q (has %v)", name, f, fields)
			}
		}
	}
	has := func(f string) bool { return slices.Contains(fields, f) }
	switch name {
	case "node":
		// Results are all or nothing (docs/format.md, section 4).
		all := true
		for _, f := range resultFields {
			all = all && has(f)
		}
		if !all || rd.opt.Results == nil {
			for i, f := range fields {
				if slices.Contains(resultFields, f) {
					d.roles[i] = roleSkip
					if all {
						d.roles[i] = roleQuiet // complete, just not asked for
					}
				}
			}
		}
		if all && rd.opt.Results != nil {
			rd.res = rd.opt.Results
		}
		if has("v8:trace_node_id") {
			rd.g.TraceNodeID = []uint32{}
		}
		if has("v8:detachedness") {
			rd.g.Detachedness = []uint8{}
		}
		rd.nodeD = d
	case "edge":
		d.plain = slices.Equal(fields, []string{"from", "type", "name", "to"})
		rd.edgeD = d
	case "string":
		rd.strD = d
	case "v8:location":
		if has("script") {
			// Declared, so the dump has the column, even with no
			// location records (a V8 snapshot's header still lists it).
			rd.g.LocationScripts = []model.NodeIndex{}
		}
	}
	if d.kind != nil {
		d.row = d.kind.numberRow(d.roles)
	}
	rd.decls[name] = d
	return nil
}

// typeIndex maps the type indexes of a file to the model's.
type typeIndex struct {
	small [256]int16 // indexes < 256, the usual ones: model index + 1
	large map[uint64]uint8
	// undeclared is the message for an index with no type, a format
	// with the index as its one argument.
	undeclared string
}

func (t *typeIndex) get(v uint64) (uint8, bool) {
	if v < 256 {
		m := t.small[v]
		return uint8(m - 1), m != 0
	}
	m, ok := t.large[v]
	return m, ok
}

// of maps the type index of a node or edge record to the model's type.
func (t *typeIndex) of(v uint64) (uint8, error) {
	m, ok := t.get(v)
	if !ok {
		return 0, fmt.Errorf(t.undeclared, v)
	}
	return m, nil
}

func (t *typeIndex) add(v uint64, m uint8) {
	if v < 256 {
		t.small[v] = int16(m) + 1
	} else {
		t.large[v] = m
	}
}

// addNodeType adds a node_type record's type.
func (rd *reader) addNodeType(r *nodeTypeRec) error {
	index := r.num[nodeTypeIndex]
	if _, dup := rd.nodeTypes.get(index); dup {
		return fmt.Errorf("node_type %d declared twice", index)
	}
	g := rd.g
	if len(g.NodeTypes) == 256 {
		return fmt.Errorf("more than 256 node types (heapx's limit)")
	}
	g.NodeTypes = append(g.NodeTypes, exchange.NodeType(r.name, r.category))
	rd.nodeTypes.add(index, uint8(len(g.NodeTypes)-1))
	rd.subFields = append(rd.subFields, r.sub)
	return nil
}

// addEdgeType adds an edge_type record's type.
func (rd *reader) addEdgeType(r *edgeTypeRec) error {
	if r.nameKind != "string" && r.nameKind != "index" {
		return fmt.Errorf("edge_type name_kind %q is neither \"string\" nor \"index\"", r.nameKind)
	}
	index := r.num[edgeTypeIndex]
	if _, dup := rd.edgeTypes.get(index); dup {
		return fmt.Errorf("edge_type %d declared twice", index)
	}
	g := rd.g
	if len(g.EdgeTypes) == 256 {
		return fmt.Errorf("more than 256 edge types (heapx's limit)")
	}
	g.EdgeTypes = append(g.EdgeTypes, exchange.EdgeType(r.name, r.category, r.strength, r.nameKind))
	rd.edgeTypes.add(index, uint8(len(g.EdgeTypes)-1))
	return nil
}
