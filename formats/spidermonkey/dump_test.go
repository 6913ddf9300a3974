package spidermonkey

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf16"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapx/heapx/internal/testfixtures"
)

// This file builds core dumps for the tests, message by message, the way
// Gecko's StreamWriter does, so the synthetic tests can say exactly which
// bytes they feed the reader.

// fixture is the path of a Firefox dump (or its sidecar) in
// testdata/spidermonkey.
func fixture(name string) string {
	return filepath.Join(testfixtures.Dir(), "spidermonkey", name)
}

// str is a de-duplicated string as a writer sends it: the text on first
// use, or a reference (ref >= 0) to an earlier one.
type str struct {
	s   string
	ref int
}

func s(v string) *str { return &str{s: v, ref: -1} }
func ref(i int) *str  { return &str{ref: i} }

// twoByte is s as UTF-16LE.
func twoByte(v string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(v)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

// appendStr appends x as field num (the string) or num+1 (the reference).
func appendStr(b []byte, num protowire.Number, x *str, two bool) []byte {
	switch {
	case x == nil:
		return b
	case x.ref >= 0:
		return protowire.AppendVarint(protowire.AppendTag(b, num+1, protowire.VarintType), uint64(x.ref))
	case two:
		return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), twoByte(x.s))
	}
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), []byte(x.s))
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), v)
}

func appendMsg(b []byte, num protowire.Number, m []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), m)
}

// edge is one Edge message.
type edge struct {
	to   uint64
	name *str
}

// node is one Node message; fields are written in field-number order, as
// protobuf serializes them.
type node struct {
	id, size, coarse  uint64
	typeName          *str
	edges             []edge
	stack             []byte // a StackFrame message
	class, file, desc *str
}

func (n node) encode() []byte {
	b := appendVarint(nil, nodeID, n.id)
	b = appendStr(b, nodeTypeName, n.typeName, true)
	b = appendVarint(b, nodeSize, n.size)
	for _, e := range n.edges {
		m := appendVarint(nil, edgeReferent, e.to)
		m = appendStr(m, edgeName, e.name, true)
		b = appendMsg(b, nodeEdges, m)
	}
	if n.stack != nil {
		b = appendMsg(b, nodeAllocationStack, n.stack)
	}
	b = appendStr(b, nodeClassName, n.class, false)
	b = appendVarint(b, nodeCoarseType, n.coarse)
	b = appendStr(b, nodeScriptFilename, n.file, false)
	return appendStr(b, nodeDescriptive, n.desc, true)
}

// frame is a StackFrame message with data; parent is a StackFrame message
// or nil.
func frame(id uint64, parent []byte, line, column uint64, source, name *str) []byte {
	d := appendVarint(nil, dataID, id)
	if parent != nil {
		d = appendMsg(d, dataParent, parent)
	}
	d = appendVarint(d, dataLine, line)
	d = appendVarint(d, dataColumn, column)
	d = appendStr(d, dataSource, source, true)
	d = appendStr(d, dataFuncName, name, true)
	d = appendVarint(d, 9, 0)  // isSystem
	d = appendVarint(d, 10, 0) // isSelfHosted
	return appendMsg(nil, frameData, d)
}

// stackRef is a StackFrame message referring to frame id.
func stackRef(id uint64) []byte { return appendVarint(nil, frameRef, id) }

// delimited appends m with its varint length.
func delimited(b, m []byte) []byte { return protowire.AppendBytes(b, m) }

// build returns the uncompressed core dump of a Metadata message with
// timestamp ts and the nodes.
func build(ts uint64, nodes ...node) []byte {
	b := delimited(nil, appendVarint(nil, metaTimeStamp, ts))
	for _, n := range nodes {
		b = delimited(b, n.encode())
	}
	return b
}

// oracle is what gen/firefox-oracle.js recorded from Firefox's own reader.
type oracle struct {
	CensusByCoarseType map[string]count `json:"censusByCoarseType"`
	TopObjectClasses   []struct {
		Class string `json:"class"`
		count
	} `json:"topObjectClasses"`
	TopInternalTypes []struct {
		Type string `json:"type"`
		count
	} `json:"topInternalTypes"`
	CensusTotal count `json:"censusTotal"`
	Root        struct {
		ID       uint64 `json:"id"`
		Retained uint64 `json:"retainedSize"`
	} `json:"root"`
	TopDominatedByRoot []struct {
		ID       uint64 `json:"id"`
		Retained uint64 `json:"retainedSize"`
		Shallow  string `json:"shallow"`
	} `json:"topDominatedByRoot"`
}

type count struct {
	Count int    `json:"count"`
	Bytes uint64 `json:"bytes"`
}

// verify is the leading JSON summary of a *.verify.txt (the corpus's own
// independent parser).
type verify struct {
	UncompressedBytes int64  `json:"uncompressedBytes"`
	RootID            uint64 `json:"rootId"`
	Nodes             int    `json:"nodes"`
	Edges             int    `json:"edges"`
	TotalShallowSize  uint64 `json:"totalShallowSize"`
	Metadata          struct {
		TimeStamp uint64 `json:"timeStamp"`
	} `json:"metadata"`
}

func loadJSON(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A verify.txt has more lines after its JSON; Decode reads one value.
	if err := json.NewDecoder(f).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
