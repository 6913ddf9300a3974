// Package exchange is the logical level of heapx's exchange format
// (docs/format.md sections 1 to 4), which its two physical forms share:
// formats/jsonl, the flat record file, and formats/sqlite, the database.
// It holds the version, the metadata keys the format defines and the
// metadata a writer puts first, and how type names and categories are
// spelled, so that the two forms cannot drift apart.
package exchange

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heapx/heapx/model"
)

// VersionMajor is the version of the format heapx reads and writes
// (metadata version_major).
const VersionMajor = 1

// StackVersion is the version of the stack records (heapx:stack,
// heapx:frame, heapx:frame_value; docs/format.md 2.9) heapx writes. They
// are versioned on their own so that what a dump's stacks carry can
// change without a new version_major for every file. Version 2 added
// Java's stacks: the java frame kind, the local and jni local value
// roles, and a stack's object and state; heapx reads 1 and 2.
const StackVersion = 2

// CheckStackVersion is the error for a heapx:stack_version a reader does
// not know, nil for 1 to StackVersion.
func CheckStackVersion(v string) error {
	if n, err := strconv.Atoi(v); err != nil || n < 1 || n > StackVersion {
		return fmt.Errorf("metadata %s is %q; this heapx reads stack records of versions 1 to %d (a newer heapx may read them)", KeyStackVersion, v, StackVersion)
	}
	return nil
}

// DefaultGenerator is the generator metadata of a file whose writer was
// given none (a write option: the command names its version, "heapx
// v1.2.3").
const DefaultGenerator = "heapx"

// Metadata keys the format defines (docs/format.md 2.1). Readers consume
// these instead of copying them into Graph.Meta, and writers write their
// own instead of the graph's, so a round trip does not pile them up.
const (
	KeyVersion        = "version_major"
	KeyGenerator      = "generator"
	KeyRoot           = "heapx:root"
	KeyNodeCount      = "heapx:node_count"
	KeyEdgeCount      = "heapx:edge_count"
	KeyStringCount    = "heapx:string_count"
	KeyAnalysis       = "heapx:analysis"
	KeySourceFormat   = "heapx:source_format"
	KeySkippedRecords = "heapx:skipped_records"
	KeySkippedFields  = "heapx:skipped_fields"
	// KeyStackVersion is the version of the stack records
	// (StackVersion), written when a file has stacks.
	KeyStackVersion = "heapx:stack_version"
	// KeyFormat is the model's own key for the format a graph was read
	// from; files carry it as heapx:source_format.
	KeyFormat = "format"
)

// Reserved reports whether a graph metadata key is one a writer writes
// itself rather than copies.
func Reserved(key string) bool {
	switch key {
	case KeyVersion, KeyGenerator, KeyRoot, KeyNodeCount, KeyEdgeCount, KeyStringCount, KeyAnalysis, KeyFormat, KeyStackVersion:
		return true
	}
	return false
}

// Metadata is the metadata a writer writes for g, in order: the format's
// own keys (version first, as 7.1 requires), the source format, the
// analysis policy when res is not nil, the graph's other metadata, then
// the stack records' version when g has stacks.
// generator names the program writing ("" for DefaultGenerator).
func Metadata(g *model.Graph, res *model.Results, generator string) []model.KV {
	if generator == "" {
		generator = DefaultGenerator
	}
	ms := []model.KV{
		{Key: KeyVersion, Value: strconv.Itoa(VersionMajor)},
		{Key: KeyGenerator, Value: generator},
		{Key: KeyNodeCount, Value: strconv.Itoa(g.NumNodes())},
		{Key: KeyEdgeCount, Value: strconv.Itoa(g.NumEdges())},
		{Key: KeyStringCount, Value: strconv.Itoa(g.Strings.Len())},
	}
	if g.NumNodes() > 0 {
		ms = append(ms, model.KV{Key: KeyRoot, Value: strconv.FormatUint(g.NodeID(g.Root), 10)})
	}
	if f, ok := g.MetaValue(KeyFormat); ok {
		if _, has := g.MetaValue(KeySourceFormat); !has {
			ms = append(ms, model.KV{Key: KeySourceFormat, Value: f})
		}
	}
	if res != nil {
		ms = append(ms, model.KV{Key: KeyAnalysis, Value: res.Policy})
	}
	for _, kv := range g.Meta {
		if !Reserved(kv.Key) {
			ms = append(ms, kv)
		}
	}
	// Last, so that the graph's metadata keeps its place on a round trip.
	if len(g.Stacks) > 0 {
		ms = append(ms, model.KV{Key: KeyStackVersion, Value: strconv.Itoa(StackVersion)})
	}
	return ms
}

// TypeName is a type's name as files spell it: namespace:name, or the
// bare name for a type without namespace.
func TypeName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + ":" + name
}

// NodeType is the node type a declaration names: its name split at the
// first colon, its category by name (unknown ones are "other").
func NodeType(name, category string) model.NodeType {
	ns, n := splitName(name)
	return model.NodeType{Namespace: ns, Name: n, Category: byName(category, model.CatOther)}
}

// EdgeType is the edge type a declaration names, like NodeType; an
// unknown strength is strong, and nameKind "index" marks edges named by
// a number.
func EdgeType(name, category, strength, nameKind string) model.EdgeType {
	ns, n := splitName(name)
	return model.EdgeType{Namespace: ns, Name: n, Category: byName(category, model.EdgeOther),
		Strength: byName(strength, model.Strong), Indexed: nameKind == "index"}
}

// splitName splits "ns:name" at the first colon; a name without one has
// no namespace.
func splitName(s string) (string, string) {
	if i := strings.IndexByte(s, ':'); i > 0 {
		return s[:i], s[i+1:]
	}
	return "", s
}

// byName is the value of E whose name (String) is s, or def if none is.
// def must be what String returns past E's last value, which is where the
// search stops.
func byName[E interface {
	~uint8
	String() string
}](s string, def E) E {
	for c := E(0); c < 64; c++ {
		if c.String() == s {
			return c
		}
		if c > 0 && c.String() == def.String() {
			break
		}
	}
	return def
}

// Writable checks what a writer of either form is given: g must
// validate, and res, when it holds results (Shallow not nil), must fit g.
// It returns the results to write, nil for none.
func Writable(g *model.Graph, res *model.Results) (*model.Results, error) {
	if err := g.Validate(); err != nil {
		return nil, fmt.Errorf("not writing an invalid graph: %w", err)
	}
	if res == nil || res.Shallow == nil {
		return nil, nil
	}
	if err := res.Check(g); err != nil {
		return nil, err
	}
	return res, nil
}
