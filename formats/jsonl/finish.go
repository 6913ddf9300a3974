package jsonl

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/model"
)

// Finishing: what can only be resolved once every line is read. A file
// may refer to nodes and strings before their records (docs/format.md,
// 5.2), so such references wait here, and the edges read in file order
// become the model's CSR layout.

// deferred holds the references resolved at the end.
type deferred struct {
	pend    []pending
	strSeq  bool     // string ids so far were 0, 1, 2, ...
	strIDs  []uint64 // string ids in table order, once strSeq is false
	domRaw  []uint64 // heapx:dominator ids
	locRaw  []uint64 // location node ids
	locLine []int64  // and their lines
	// Script node ids of the locations, while g.LocationScripts is not
	// nil; scriptNull counts the records whose script was null.
	scriptRaw  []uint64
	scriptNull int64
	funcIdx    []uint64 // index field of each v8:trace_function, in file order
	treeIdx    []uint64 // index field of each v8:trace_node, in file order
}

// ref kinds: what a deferred node reference or string reference fills.
const (
	refEdgeFrom = iota
	refEdgeTo
	refLocation
	refGCRoot
	refDominator
	refRoot
	refNodeName // string references
	refEdgeName
	refFuncName
	refFuncScript
)

// pending is a reference that could not be resolved when it was read: a
// node identifier not seen yet, or a string identifier read before the
// file showed its strings are not numbered 0, 1, 2, ...
type pending struct {
	line int64
	id   uint64
	at   uint32 // index in the column the kind names
	kind uint8
}

// finish resolves deferred references, checks the promised counts, builds
// the CSR edge offsets and the metadata, and validates the graph.
func (rd *reader) finish() error {
	g := rd.g
	n := g.Nodes.ID.Len()
	check := func(what string, i int, have int) error {
		switch {
		case rd.counts[i] < 0 || rd.counts[i] == int64(have):
			return nil
		case rd.counts[i] > int64(have):
			// The file ends where a line would start.
			rd.line++
			return rd.inputError()
		}
		return rd.errAt(0, "the file promises %d %s records (metadata heapx:%s_count) but holds %d", rd.counts[i], what, what, have)
	}
	// A node read twice is the error to report, not the count it makes
	// wrong.
	if err := rd.sync(); err != nil {
		return err
	}
	if err := check("node", 0, n); err != nil {
		return err
	}
	if err := check("edge", 1, len(g.Edges.To)+int(rd.smi)); err != nil {
		return err
	}
	if err := check("string", 2, g.Strings.Len()); err != nil {
		return err
	}
	rd.flushEdges()
	if err := rd.sync(); err != nil {
		return err
	}
	rd.collect()
	ids := rd.rs.ids
	for k, id := range rd.locRaw {
		i := ids.Get(id)
		if i < 0 {
			return rd.errAt(rd.locLine[k], "%s refers to node id %d, which no node record has", refWhat(refLocation), id)
		}
		g.Locations[k].Node = i
	}
	if err := rd.resolveScripts(); err != nil {
		return err
	}
	rd.locRaw, rd.locLine = nil, nil
	if err := rd.resolveStrings(); err != nil {
		return err
	}
	for _, p := range rd.pend {
		if p.kind >= refNodeName {
			continue
		}
		i := ids.Get(p.id)
		if i < 0 {
			return rd.errAt(p.line, "%s refers to node id %d, which no node record has", refWhat(p.kind), p.id)
		}
		switch p.kind {
		case refEdgeFrom:
			rd.from[p.at] = i
		case refEdgeTo:
			g.Edges.To[p.at] = i
		case refLocation:
			g.Locations[p.at].Node = i
		case refGCRoot:
			g.GCRoots[p.at].Node = i
		}
	}
	rd.pend = nil
	if r := rd.res; r != nil {
		if i := resolveDominators(ids, r.Dominator, rd.domRaw); i >= 0 {
			return rd.errAt(0, "node %d (id %d): heapx:dominator names node id %d, which no node record has", i, g.Nodes.ID.At(i), rd.domRaw[i])
		}
		rd.domRaw = nil
	}
	if rd.haveRoot {
		i := ids.Get(rd.rootID)
		if i < 0 {
			return rd.errAt(0, "metadata heapx:root names node id %d, which no node record has", rd.rootID)
		}
		g.Root = i
	}
	if t := g.Trace; t != nil {
		// After resolveStrings: pending string references name
		// functions by file position.
		var err error
		if t.Functions, err = byIndex(t.Functions, rd.funcIdx); err != nil {
			return rd.errAt(0, "v8:trace_function records: %v", err)
		}
		if t.Tree, err = byIndex(t.Tree, rd.treeIdx); err != nil {
			return rd.errAt(0, "v8:trace_node records: %v", err)
		}
		for i, nd := range t.Tree {
			if int(nd.Function) >= len(t.Functions) {
				return rd.errAt(0, "v8:trace_node %d: function_index %d is not one of the %d v8:trace_function records", i, nd.Function, len(t.Functions))
			}
		}
	}
	rd.buildCSR()
	if g.TraceNodeID != nil && len(g.TraceNodeID) == 0 && n > 0 {
		g.TraceNodeID = nil
	}
	if r := rd.res; r != nil {
		if err := r.Check(g); err != nil {
			return rd.errAt(0, "%v", err)
		}
	}

	meta := []model.KV{{Key: "format", Value: FormatName}}
	meta = append(meta, rd.meta...)
	meta = append(meta, rd.skippedMeta()...)
	g.Meta = meta
	if err := g.Validate(); err != nil {
		return rd.errAt(0, "%v", err)
	}
	return nil
}

// resolveScripts turns the locations' script node ids into
// g.LocationScripts. The column is all or nothing, like results
// (docs/format.md, 2.7): when some records have a null script, it is
// dropped and its values reported as skipped.
func (rd *reader) resolveScripts() error {
	g := rd.g
	if g.LocationScripts == nil {
		return nil
	}
	if rd.scriptNull > 0 {
		g.LocationScripts = nil
		d := rd.decls["v8:location"]
		d.dropped[slices.Index(d.fields, "script")] += int64(len(rd.scriptRaw)) - rd.scriptNull
		rd.scriptRaw = nil
		return nil
	}
	ids := rd.rs.ids
	ss := model.Alloc[model.NodeIndex](len(rd.scriptRaw))
	for k, id := range rd.scriptRaw {
		i := ids.Get(id)
		if i < 0 {
			return rd.errAt(rd.locLine[k], "a v8:location's script refers to node id %d, which no node record has", id)
		}
		ss[k] = i
	}
	g.LocationScripts, rd.scriptRaw = ss, nil
	return nil
}

// byIndex puts the entries of a table that the file may list in any
// order (v8:trace_function, v8:trace_node) in the order of their index
// fields, which must be 0, 1, ..., n-1. Entries are kept in file order
// while reading, so memory follows the records actually there, whatever
// index a hostile line claims.
func byIndex[T any](s []T, idx []uint64) ([]T, error) {
	sorted := true
	for i, x := range idx {
		if x != uint64(i) {
			sorted = false
			break
		}
	}
	if sorted {
		return s, nil
	}
	out := make([]T, len(s))
	seen := make([]bool, len(s))
	for i, x := range idx {
		if x >= uint64(len(s)) {
			return nil, fmt.Errorf("index %d, but there are only %d records (indexes run from 0)", x, len(s))
		}
		if seen[x] {
			return nil, fmt.Errorf("index %d appears twice", x)
		}
		seen[x] = true
		out[x] = s[i]
	}
	return out, nil
}

// resolveDominators turns the nodes' dominator ids into indexes, a cache
// miss each, on every core: the id map is complete and only read. It
// returns the first node whose dominator is no node, or -1.
func resolveDominators(ids *model.IDMap, dom []model.NodeIndex, raw []uint64) int {
	parts := runtime.GOMAXPROCS(0)
	bad := make([]int, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(dom)*p/parts, len(dom)*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			bad[p] = -1
			for i := lo; i < hi; i++ {
				if dom[i] == model.NoNode {
					continue
				}
				if dom[i] = ids.Get(raw[i]); dom[i] < 0 {
					bad[p] = i
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return i
		}
	}
	return -1
}

func refWhat(kind uint8) string {
	switch kind {
	case refEdgeFrom:
		return "an edge's from"
	case refEdgeTo:
		return "an edge's to"
	case refLocation:
		return "a v8:location"
	case refGCRoot:
		return "a heapx:gc_root"
	case refDominator:
		return "a node's heapx:dominator"
	}
	return "a reference"
}

// resolveStrings maps deferred string references through the sorted
// string ids, when the file's strings were not numbered 0, 1, 2, ...; and
// checks that every direct reference is in range.
func (rd *reader) resolveStrings() error {
	g := rd.g
	ns := uint64(g.Strings.Len())
	if rd.strSeq {
		// Direct references: the model's Validate checks node and edge
		// names; trace function names are checked here.
		for _, p := range rd.pend {
			if p.kind >= refNodeName {
				return rd.errAt(p.line, "string id %d is not one of the %d string records", p.id, ns)
			}
		}
		if t := g.Trace; t != nil {
			for i, f := range t.Functions {
				if uint64(f.Name) >= ns || uint64(f.ScriptName) >= ns {
					return rd.errAt(0, "v8:trace_function %d: name %d or script_name %d is not one of the %d string records", i, f.Name, f.ScriptName, ns)
				}
			}
		}
		return nil
	}
	order := make([]uint32, len(rd.strIDs))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(a, b uint32) int {
		x, y := rd.strIDs[a], rd.strIDs[b]
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for i := 1; i < len(order); i++ {
		if rd.strIDs[order[i]] == rd.strIDs[order[i-1]] {
			return rd.errAt(0, "string id %d appears twice", rd.strIDs[order[i]])
		}
	}
	lookup := func(id uint64) (uint32, bool) {
		k, ok := slices.BinarySearchFunc(order, id, func(a uint32, id uint64) int {
			switch x := rd.strIDs[a]; {
			case x < id:
				return -1
			case x > id:
				return 1
			}
			return 0
		})
		if !ok {
			return 0, false
		}
		return order[k], true
	}
	for _, p := range rd.pend {
		if p.kind < refNodeName {
			continue
		}
		s, ok := lookup(p.id)
		if !ok {
			return rd.errAt(p.line, "string id %d is not one of the string records", p.id)
		}
		switch p.kind {
		case refNodeName:
			g.Nodes.Name[p.at] = s
		case refEdgeName:
			g.Edges.Name[p.at] = s
		case refFuncName:
			g.Trace.Functions[p.at].Name = s
		case refFuncScript:
			g.Trace.Functions[p.at].ScriptName = s
		}
	}
	return nil
}

// deferDirectStrings turns the string references read while ids looked
// sequential into pending ones, once the file shows they are not.
func (rd *reader) deferDirectStrings() {
	g := rd.g
	deferred := map[uint64]bool{} // references already pending, by kind<<32|at
	for _, p := range rd.pend {
		if p.kind >= refNodeName {
			deferred[uint64(p.kind)<<32|uint64(p.at)] = true
		}
	}
	add := func(kind uint8, at int, v uint32) {
		if !deferred[uint64(kind)<<32|uint64(at)] {
			rd.pend = append(rd.pend, pending{line: 0, id: uint64(v), at: uint32(at), kind: kind})
		}
	}
	for i, v := range g.Nodes.Name {
		add(refNodeName, i, v)
	}
	for i, v := range g.Edges.Name {
		if !g.EdgeTypes[g.Edges.Type[i]].Indexed {
			add(refEdgeName, i, v)
		}
	}
	if t := g.Trace; t != nil {
		for i, f := range t.Functions {
			add(refFuncName, i, f.Name)
			add(refFuncScript, i, f.ScriptName)
		}
	}
}

// buildCSR turns the edges, read in file order with their sources, into
// the model's CSR layout. heapx writes edges grouped by source in node
// order, which needs only the offsets; other orders get a stable counting
// sort, which keeps each node's edges in file order (docs/format.md, 1.8).
func (rd *reader) buildCSR() {
	g := rd.g
	n := g.Nodes.ID.Len()
	fe := model.Alloc[uint32](n + 1)
	sorted := true
	for i, f := range rd.from {
		fe[f+1]++
		if i > 0 && f < rd.from[i-1] {
			sorted = false
		}
	}
	for i := 1; i <= n; i++ {
		fe[i] += fe[i-1]
	}
	g.Nodes.FirstEdge = fe
	if !sorted {
		m := len(rd.from)
		next := make([]uint32, n)
		copy(next, fe[:n])
		typ, name, to := model.Alloc[uint8](m), model.Alloc[uint32](m), model.Alloc[model.NodeIndex](m)
		for e, f := range rd.from {
			p := next[f]
			next[f]++
			typ[p], name[p], to[p] = g.Edges.Type[e], g.Edges.Name[e], g.Edges.To[e]
		}
		g.Edges.Type, g.Edges.Name, g.Edges.To = typ, name, to
	}
	rd.from = nil
}

// skippedMeta reports what was skipped (docs/format.md, 7.2).
func (rd *reader) skippedMeta() []model.KV {
	var out []model.KV
	var recs []string
	for t, n := range rd.undecl {
		recs = append(recs, fmt.Sprintf("%s=%d", t, n))
	}
	for _, d := range rd.decls {
		if d.kind == nil && d.count > 0 {
			recs = append(recs, fmt.Sprintf("%s=%d", d.name, d.count))
		}
	}
	if rd.smi > 0 {
		recs = append(recs, fmt.Sprintf("edge(smi)=%d", rd.smi))
	}
	slices.Sort(recs)
	for _, r := range recs {
		out = append(out, model.KV{Key: exchange.KeySkippedRecords, Value: r})
	}
	var fields []string
	for _, d := range rd.decls {
		for k, f := range d.fields {
			if n := d.skipped(k); n > 0 {
				fields = append(fields, fmt.Sprintf("%s.%s=%d", d.name, f, n))
			}
		}
	}
	for f, n := range rd.subSkip {
		fields = append(fields, fmt.Sprintf("%s=%d", f, n))
	}
	slices.Sort(fields)
	for _, f := range fields {
		out = append(out, model.KV{Key: exchange.KeySkippedFields, Value: f})
	}
	return out
}
