// Package jsonl reads and writes the flat form of the heapx exchange format
// (docs/format.md): JSON Lines, one record per line, each line an array
// whose first element names its record type and whose fields follow in the
// order the file declares. Plain or gzip-compressed (.jsonl, .jsonl.gz).
//
// Both directions stream. The writer formats nodes and edges on every core
// and writes them in order; the reader cuts its input into line-aligned
// blocks, parses the node and edge lines of each on every core, applies
// them to the model's columns in file order and resolves node identifiers
// through a flat hash table, never a Go object per node.
package jsonl

import (
	"bytes"
	"io"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/internal/input"
	"github.com/heapx/heapx/model"
)

func init() {
	formats.Register(formats.Format{
		Name:        "jsonl",
		Description: "heapx exchange format, flat form: JSON Lines (.jsonl, .jsonl.gz; docs/format.md)",
		Extensions:  []string{".jsonl"},
		Detect:      Detect,
		Read: func(path string, opt formats.ReadOptions) (*model.Graph, error) {
			return ReadFile(path, ReadOptions{Progress: opt.Progress, Results: opt.Results})
		},
		ReadStream: func(r io.Reader, size int64, name string, opt formats.ReadOptions) (*model.Graph, error) {
			o := ReadOptions{Progress: opt.Progress, Results: opt.Results}
			return input.Read(r, size, name, o.Progress, o.read)
		},
		Write: func(w io.Writer, g *model.Graph, opt formats.WriteOptions) error {
			return Write(w, g, WriteOptions{Progress: opt.Progress, Results: opt.Results, Generator: opt.Generator, NodeFields: opt.NodeFields})
		},
		Results: true,
	})
}

// FormatName is the value the reader records under the metadata key
// "format".
const FormatName = "heapx.jsonl"

// firstLine is what every file starts with (docs/format.md, 5.2).
var firstLinePrefix = []byte(`["metadata","version_major",`)

// Detect reports whether head, the first bytes of a file (decompressed if
// it was gzip), starts like a heapx flat file: an array whose first two
// strings are "metadata" and "version_major", whitespace allowed.
func Detect(head []byte) bool {
	b := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")) // a BOM from an editor
	b = bytes.TrimLeft(b, " \t\r\n")
	// Compare with whitespace removed, up to the prefix's length.
	j := 0
	inStr := false
	for _, c := range b {
		if j == len(firstLinePrefix) {
			return true
		}
		if !inStr && (c == ' ' || c == '\t' || c == '\r') {
			continue
		}
		if c != firstLinePrefix[j] {
			return false
		}
		if c == '"' {
			inStr = !inStr
		}
		j++
	}
	return j == len(firstLinePrefix)
}
