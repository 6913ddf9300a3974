// Package sqlite reads and writes the SQLite form of the heapx exchange
// format (docs/format.md, section 6): one .db file with a table per record
// type (metadata, strings, node_types, edge_types, node, edge, the v8_* and
// heapx_* extension tables), indexes for the common joins, analysis results
// in heapx_result, and views that turn the usual questions into one line
// of SQL. The file opens in the sqlite3 shell and any SQLite browser.
//
// It registers the format "sqlite" (extension .db) with the formats
// registry, so every heapx command reads a .db like any other dump.
//
// The driver is zombiezen.com/go/sqlite over modernc.org/sqlite: pure Go,
// so heapx still builds with CGO_ENABLED=0, used through its native
// statement API, which binds and scans without database/sql's per-value
// interface conversions. A write is one transaction of multi-row INSERTs
// from prepared statements into a temporary file that is renamed into
// place when complete; a read scans each table once, straight into the
// model's columns, and resolves node identifiers through a flat hash
// table, never a Go object per node. A file written with analysis results
// also carries its big columns packed as zstd-compressed blobs
// (heapx_packed, a cache the rows' triggers empty on any change), which a
// read inflates instead of scanning the node, edge, location and result
// rows.
package sqlite

import (
	"bytes"
	"encoding/binary"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

func init() {
	formats.Register(formats.Format{
		Name:        "sqlite",
		Description: "heapx exchange format, SQLite form (.db; docs/format.md): query it with heapx sql or sqlite3",
		Extensions:  []string{".db"},
		Detect:      Detect,
		Read: func(path string, opt formats.ReadOptions) (*model.Graph, error) {
			return ReadFile(path, ReadOptions{Progress: opt.Progress, Results: opt.Results})
		},
		WriteFile: func(path string, g *model.Graph, opt formats.WriteOptions) error {
			if err := WriteFile(path, g, WriteOptions{Progress: opt.Progress, Results: opt.Results, Generator: opt.Generator, NodeFields: opt.NodeFields}); err != nil {
				return err
			}
			return syncFile(path)
		},
		Results: true,
	})
}

// Name is the format's name in the registry.
const Name = "sqlite"

// ApplicationID is what heapx writes into the SQLite header's application
// id field (PRAGMA application_id): the ASCII bytes "heap". It lets a
// reader that sees only the first bytes of a file (the registry's Detect)
// tell a heapx dump from any other SQLite database; see docs/format.md,
// "SQLite form".
const ApplicationID = 0x68656170

// sqliteMagic starts every SQLite 3 database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// Detect reports whether head, the first bytes of a file, is a heapx
// SQLite dump: SQLite's magic, then heapx's application id in the header,
// or, for a file another program wrote without one, a metadata table in
// the schema on the first page (where SQLite keeps a small schema).
func Detect(head []byte) bool {
	if len(head) < 100 || !bytes.HasPrefix(head, sqliteMagic) {
		return false
	}
	if binary.BigEndian.Uint32(head[68:72]) == ApplicationID {
		return true
	}
	return bytes.Contains(head, []byte("CREATE TABLE metadata")) || bytes.Contains(head, []byte(`CREATE TABLE "metadata"`))
}
