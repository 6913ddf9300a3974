// Package spidermonkey reads Firefox heap snapshots (.fxsnapshot, "core
// dumps" written by ChromeUtils.saveHeapSnapshot and the DevTools memory
// panel) into a model.Graph.
//
// # The file
//
// A core dump is a gzip stream of protobuf messages (Gecko's
// devtools/shared/heapsnapshot/CoreDump.proto), each preceded by its length
// as a varint: one Metadata message, then Node messages, the first of which
// is the root (a JS::ubi::RootList). The reader decodes them by hand with
// protowire, one message at a time, straight into the model's columns; no
// Go object is made per node or edge. Plain (not gzip-compressed) streams
// are read too.
//
// Strings are de-duplicated in two tables that Gecko fills in order of first
// appearance: two-byte UTF-16LE strings (typeName, edge names, a frame's
// source and functionDisplayName, descriptiveTypeName) and one-byte strings
// (jsObjectClassName, scriptFilename). A *Ref field is an index into its
// table; a reference to an index not yet defined is a FormatError. Within a
// stack frame Gecko interns the frame's own source and name before its
// parent's, although the parent comes first in the message; the reader
// follows Gecko's order. One-byte strings are kept as they are when they are
// UTF-8 and read as Latin-1 otherwise.
//
// Like Gecko's own reader, this one requires a node's id, typeName and size
// and an edge's referent, rejects coarse types it does not know and
// duplicate node ids. Unlike Gecko, which refuses the whole snapshot, it
// drops an edge whose referent is not a node of the file, and counts such
// edges in the metadata key spidermonkey:dangling_edges.
//
// # Mapping to the model
//
// Node types are "spidermonkey:<typeName>" ("JSObject", "JSString",
// "js::Shape", "nsIContent", ...). The category comes from the coarse type,
// refined by the type name:
//
//	coarse Object   JSObject of class Function -> closure, other objects -> object
//	coarse Script   type names containing "Script" (js::BaseScript) -> function metadata, others (JitCode, Scope) -> code
//	coarse String   -> flat string
//	coarse DOMNode  -> native
//	coarse Other    JS::ubi::RootList -> synthetic, js::Shape and js::BaseShape -> shape,
//	                JS::Symbol -> symbol, JS::BigInt -> bigint, others -> internal
//
// so the coarse type is not stored: it is the category's. A type name can
// thus appear twice in the type table (JSObject as object and as closure).
// The model holds at most 256 node types; when a dump has more distinct
// type names (Gecko has far fewer), the ones past the first 245 are folded
// into a type "spidermonkey:(other)" of their category, their nodes are
// named by their type name, and each folded type name is listed under the
// metadata key spidermonkey:folded_type.
//
// A node's Name is the first of jsObjectClassName, descriptiveTypeName,
// scriptFilename and typeName that it has: objects are named by their class
// ("Object", "Array", "Function", "Window"), so a class histogram by name
// is the census by objectClass DevTools shows; DOM nodes by their
// descriptive type ("DIV", "#text"), as DevTools' domNode breakdown; scripts
// by their file; everything else by its type name. In Gecko's dumps a node
// has at most one of the first three.
//
// Every edge has the one type "spidermonkey:edge" (strong, named):
// SpiderMonkey's edge names mix properties ("cb", "customers"), elements
// ("objectElements[3]") and VM references ("shape", "JSFunction script",
// "**UNKNOWN SLOT 1**"), and nothing in the file tells them apart. Its
// category is object property: a quarter of the edges of a page's heap are
// "shape" edges, but the names users look for are property names, and as
// properties they read as DevTools writes them (".cb", ["vector element"])
// and feed the analyses that look at properties. Edges without a name get
// the empty string. The root is node 0.
//
// Allocation stacks (recorded only when allocation tracking was on) become
// the model's allocation trace: each distinct stack frame is one
// Trace.Tree node whose parent is its caller's frame (the tree in
// preorder, as the model keeps it), with one Trace.Functions entry holding
// the frame's id, functionDisplayName, source, line and column (one-based,
// as SpiderMonkey writes them). A tree node's ID is the frame's rank in
// order of first appearance, from 1, and Graph.TraceNodeID gives each node
// the ID of its allocation frame (0 for none). Tree nodes count the nodes
// allocated there and their sizes. The frames' isSystem and isSelfHosted
// flags are not kept.
//
// Metadata: format "spidermonkey.fxsnapshot", producer "Gecko
// (SpiderMonkey)", spidermonkey:timestamp_us (the Metadata message's
// timeStamp, microseconds since the Unix epoch), spidermonkey:dangling_edges
// and spidermonkey:folded_type.
//
// # Retained sizes
//
// Firefox's dominator tree (JS::ubi::DominatorTree, what DevTools' memory
// panel shows) treats every edge as retaining. So does
// analysis.DefaultPolicy here, as no edge of this namespace is weak, a
// shortcut or an ephemeron, and no edge rule needs explaining: for both
// test dumps the root's retained size and those of the twelve nodes the
// root dominates most (Window, HTMLDocument, the UL of the page, ...) equal
// Firefox's to the byte (TestOracle). The root's is the total self size,
// as every node of a core dump is reachable: Gecko writes the nodes of a
// breadth-first walk from the root.
package spidermonkey

import (
	"bytes"
	"io"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
)

func init() {
	formats.Register(formats.Format{
		Name:        "spidermonkey",
		Description: "Firefox/SpiderMonkey heap snapshot (.fxsnapshot core dump)",
		Extensions:  []string{".fxsnapshot"},
		Detect:      Detect,
		Read: func(path string, opt formats.ReadOptions) (*model.Graph, error) {
			return ReadFile(path, ReadOptions{Progress: opt.Progress})
		},
		ReadStream: func(r io.Reader, size int64, name string, opt formats.ReadOptions) (*model.Graph, error) {
			o := ReadOptions{Progress: opt.Progress}
			return input.Read(r, size, name, o.Progress, o.read)
		},
	})
}

// Namespace is the namespace of SpiderMonkey's node and edge types and
// metadata keys in the model.
const Namespace = "spidermonkey"

// Metadata keys the reader sets.
const (
	MetaTimestamp     = Namespace + ":timestamp_us"
	MetaDanglingEdges = Namespace + ":dangling_edges"
	MetaFoldedType    = Namespace + ":folded_type"
)

// EdgeTypeName is the name of the one edge type.
const EdgeTypeName = "edge"

// FoldedTypeName names the catch-all node types of folded type names.
const FoldedTypeName = "(other)"

// JS::ubi::CoarseType values, as Gecko serializes them.
const (
	coarseOther = iota
	coarseObject
	coarseScript
	coarseString
	coarseDOMNode
	numCoarse
)

// Field numbers of CoreDump.proto.
const (
	metaTimeStamp = 1

	nodeID                = 1
	nodeTypeName          = 2
	nodeTypeNameRef       = 3
	nodeSize              = 4
	nodeEdges             = 5
	nodeAllocationStack   = 6
	nodeClassName         = 7
	nodeClassNameRef      = 8
	nodeCoarseType        = 9
	nodeScriptFilename    = 10
	nodeScriptFilenameRef = 11
	nodeDescriptive       = 12
	nodeDescriptiveRef    = 13

	edgeReferent = 1
	edgeName     = 2
	edgeNameRef  = 3

	frameData = 1
	frameRef  = 2

	dataID          = 1
	dataParent      = 2
	dataLine        = 3
	dataColumn      = 4
	dataSource      = 5
	dataSourceRef   = 6
	dataFuncName    = 7
	dataFuncNameRef = 8
)

// Detect reports whether head, the first bytes of a file (decompressed
// if it was gzip), starts like a core dump: a varint length, a non-empty
// Metadata message of that length made of well-formed fields, then the
// length of the root Node message and that message's first tag, the node
// id (Gecko writes fields in field-number order).
func Detect(head []byte) bool {
	n, k := protowire.ConsumeVarint(head)
	if k < 0 || n == 0 || n > uint64(len(head)-k) {
		return false
	}
	meta := head[k : k+int(n)]
	rest := head[k+int(n):]
	for len(meta) > 0 {
		num, typ, k := protowire.ConsumeTag(meta)
		if k < 0 {
			return false
		}
		meta = meta[k:]
		if num == metaTimeStamp && typ != protowire.VarintType {
			return false
		}
		if k = protowire.ConsumeFieldValue(num, typ, meta); k < 0 {
			return false
		}
		meta = meta[k:]
	}
	n, k = protowire.ConsumeVarint(rest)
	if k < 0 || n == 0 {
		return false
	}
	return bytes.HasPrefix(rest[k:], protowire.AppendTag(nil, nodeID, protowire.VarintType))
}

// category maps a node to the neutral vocabulary (see the package doc).
func category(typeName string, coarse uint64, function bool) model.Category {
	switch coarse {
	case coarseObject:
		if function {
			return model.CatClosure
		}
		return model.CatObject
	case coarseScript:
		if strings.Contains(typeName, "Script") {
			return model.CatFunctionInfo
		}
		return model.CatCode
	case coarseString:
		return model.CatString
	case coarseDOMNode:
		return model.CatNative
	}
	switch typeName {
	case "JS::ubi::RootList":
		return model.CatSynthetic
	case "js::Shape", "js::BaseShape":
		return model.CatShape
	case "JS::Symbol":
		return model.CatSymbol
	case "JS::BigInt":
		return model.CatBigInt
	}
	return model.CatInternal
}
