package model

import (
	"fmt"
	"slices"
)

// CompareOptions relax Compare.
type CompareOptions struct {
	// IgnoreMeta skips these metadata keys (for example "format", which
	// each reader sets for the file it read).
	IgnoreMeta []string
}

// Compare reports the first difference between a and b, or nil when they
// hold the same dump: counts, type tables, strings, every node and edge
// column in order, root, GC roots, side columns, locations (with their
// script nodes), allocation trace, sections and metadata. It is meant for
// round-trip tests of writers and readers, so it says where the graphs
// first differ instead of only whether they do.
func Compare(a, b *Graph, opt CompareOptions) error {
	if a.NumNodes() != b.NumNodes() || a.NumEdges() != b.NumEdges() || a.Strings.Len() != b.Strings.Len() {
		return fmt.Errorf("counts differ: %d/%d/%d nodes/edges/strings vs %d/%d/%d",
			a.NumNodes(), a.NumEdges(), a.Strings.Len(), b.NumNodes(), b.NumEdges(), b.Strings.Len())
	}
	if !slices.Equal(a.NodeTypes, b.NodeTypes) {
		return fmt.Errorf("node types differ:\n%v\n%v", a.NodeTypes, b.NodeTypes)
	}
	if !slices.Equal(a.EdgeTypes, b.EdgeTypes) {
		return fmt.Errorf("edge types differ:\n%v\n%v", a.EdgeTypes, b.EdgeTypes)
	}
	for i := 0; i < a.Strings.Len(); i++ {
		if x, y := a.Strings.At(StringID(i)), b.Strings.At(StringID(i)); x != y {
			return fmt.Errorf("string %d differs: %q vs %q", i, x, y)
		}
	}
	if a.Root != b.Root {
		return fmt.Errorf("root %d vs %d", a.Root, b.Root)
	}
	if err := firstDiff("node type", a.Nodes.Type, b.Nodes.Type); err != nil {
		return err
	}
	if err := firstDiff("node name", a.Nodes.Name, b.Nodes.Name); err != nil {
		return err
	}
	if err := firstDiff("node id", a.Nodes.ID.Slice(), b.Nodes.ID.Slice()); err != nil {
		return err
	}
	if err := firstDiff("node self size", a.Nodes.Size.Slice(), b.Nodes.Size.Slice()); err != nil {
		return err
	}
	if err := firstDiff("first edge", a.Nodes.FirstEdge, b.Nodes.FirstEdge); err != nil {
		return err
	}
	if err := firstDiff("edge type", a.Edges.Type, b.Edges.Type); err != nil {
		return err
	}
	if err := firstDiff("edge name", a.Edges.Name, b.Edges.Name); err != nil {
		return err
	}
	if err := firstDiff("edge target", a.Edges.To, b.Edges.To); err != nil {
		return err
	}
	if err := firstDiff("gc root", a.GCRoots, b.GCRoots); err != nil {
		return err
	}
	if !slices.Equal(a.RootKinds, b.RootKinds) {
		return fmt.Errorf("root kinds %v vs %v", a.RootKinds, b.RootKinds)
	}
	if (a.Detachedness == nil) != (b.Detachedness == nil) {
		return fmt.Errorf("detachedness present %v vs %v", a.Detachedness != nil, b.Detachedness != nil)
	}
	if err := firstDiff("detachedness", a.Detachedness, b.Detachedness); err != nil {
		return err
	}
	if (a.TraceNodeID == nil) != (b.TraceNodeID == nil) {
		return fmt.Errorf("trace node ids present %v vs %v", a.TraceNodeID != nil, b.TraceNodeID != nil)
	}
	if err := firstDiff("trace node id", a.TraceNodeID, b.TraceNodeID); err != nil {
		return err
	}
	if err := firstDiff("location", a.Locations, b.Locations); err != nil {
		return err
	}
	if (a.LocationScripts == nil) != (b.LocationScripts == nil) {
		return fmt.Errorf("location scripts present %v vs %v", a.LocationScripts != nil, b.LocationScripts != nil)
	}
	if err := firstDiff("location script", a.LocationScripts, b.LocationScripts); err != nil {
		return err
	}
	if err := compareTrace(a.Trace, b.Trace); err != nil {
		return err
	}
	if len(a.Sections) != len(b.Sections) {
		return fmt.Errorf("%d sections vs %d", len(a.Sections), len(b.Sections))
	}
	for i := range a.Sections {
		x, y := &a.Sections[i], &b.Sections[i]
		if x.Name != y.Name || !slices.Equal(x.Fields, y.Fields) || !slices.Equal(x.Values, y.Values) {
			return fmt.Errorf("section %d differs: %s %v (%d values) vs %s %v (%d values)", i, x.Name, x.Fields, len(x.Values), y.Name, y.Fields, len(y.Values))
		}
	}
	if err := compareStacks(a.Stacks, b.Stacks); err != nil {
		return err
	}
	keep := func(m []KV) []KV {
		var out []KV
		for _, kv := range m {
			if !slices.Contains(opt.IgnoreMeta, kv.Key) {
				out = append(out, kv)
			}
		}
		return out
	}
	if x, y := keep(a.Meta), keep(b.Meta); !slices.Equal(x, y) {
		return fmt.Errorf("metadata differs:\n%v\n%v", x, y)
	}
	return nil
}

func compareTrace(a, b *AllocationTrace) error {
	empty := func(t *AllocationTrace) bool {
		return t == nil || len(t.Functions) == 0 && len(t.Tree) == 0 && len(t.Samples) == 0
	}
	if empty(a) && empty(b) {
		return nil
	}
	if empty(a) != empty(b) {
		return fmt.Errorf("allocation trace present %v vs %v", !empty(a), !empty(b))
	}
	if err := firstDiff("trace function", a.Functions, b.Functions); err != nil {
		return err
	}
	if err := firstDiff("trace tree node", a.Tree, b.Tree); err != nil {
		return err
	}
	return firstDiff("trace sample", a.Samples, b.Samples)
}

// firstDiff names the first index where a and b differ.
func firstDiff[T comparable](what string, a, b []T) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d %ss vs %d", len(a), what, len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Errorf("%s %d differs: %v vs %v", what, i, a[i], b[i])
		}
	}
	return nil
}
