package query

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/internal/termtext"
	"github.com/heapx/heapx/model"
)

// The views that predate the registry (summary, top, paths) keep their
// released --json schemas: SummaryJSON, TopJSON and PathsJSON are those
// schemas (documented in docs/json.md), set as Result.JSON (PathsJSON through
// pathsDoc, which builds it only when it is encoded).

// LocationJSON is an allocation site, zero-based as V8 writes it, with
// its script's name.
type LocationJSON struct {
	ScriptID uint32 `json:"script_id"`
	Line     uint32 `json:"line"`
	Column   uint32 `json:"column"`
	// Script is the script's name (analysis.Resolver): its path or URL,
	// "script ID" when the dump names it nowhere.
	Script string `json:"script,omitempty"`
	// Original is where the script's source map places the location
	// (package sourcemaps), absent when it has none.
	Original *OriginalJSON `json:"original,omitempty"`
}

// OriginalJSON is a place in a program's original sources, one-based
// as editors count.
type OriginalJSON struct {
	Script string `json:"script"`
	Line   int32  `json:"line"`
	Column int32  `json:"column"`
}

// NewLocationJSON is location l of a's dump.
func NewLocationJSON(a *analysis.Analysis, l analysis.SourceLocation) *LocationJSON {
	res := a.Resolver()
	j := &LocationJSON{ScriptID: l.ScriptID, Line: l.Line, Column: l.Column, Script: res.ScriptName(l.ScriptID)}
	if p := res.Locate(l.ScriptID, l.Line, l.Column); p.ScriptID != l.ScriptID || p.Script != j.Script {
		j.Original = &OriginalJSON{Script: p.Script, Line: p.Line, Column: p.Column}
	}
	return j
}

// NodeJSON is one heap object in JSON output. The keys follow the DevTools
// goldens in testdata/golden (id, type, name, distance, self/retained size),
// so the two can be compared field by field.
type NodeJSON struct {
	ID          uint64 `json:"id"`
	Type        string `json:"type"`
	Name        string `json:"name"`
	Constructor string `json:"constructor"`
	// Distance is DevTools' raw distance: 1 for a user root (Node's
	// global), 100000000 and up for objects reached only through
	// internal roots, -5 for unreachable ones.
	Distance     int32  `json:"distance"`
	ShallowSize  uint64 `json:"shallow_size"`
	RetainedSize uint64 `json:"retained_size"`
	// DominatorID is the id of the immediate dominator, 0 for the root.
	DominatorID uint64 `json:"dominator_id"`
	// Description says in words what the object is where Name does not
	// (analysis.NodeRow.Description): a V8 context's scope, "module
	// scope of app.js", "context of handle (app.js:15)". Tables show it
	// in place of the name.
	Description string `json:"description,omitempty"`
	// idText is ID as people see it (see IDText); JSON keeps the number.
	idText string
}

// NewNodeJSON converts an analysis row.
func NewNodeJSON(g *model.Graph, r analysis.NodeRow) NodeJSON {
	n := NodeJSON{
		ID: r.ID, Type: r.Type, Name: r.Name, Constructor: r.Class, Distance: r.Distance,
		ShallowSize: r.Shallow, RetainedSize: r.Retained, Description: r.Description, idText: IDText(g, r.ID),
	}
	if r.Dominator != model.NoNode {
		n.DominatorID = g.NodeID(r.Dominator)
	}
	return n
}

// ShownNode is node n of a as the tables show it: NewNodeJSON, with the
// graph's root named "(root)" where the runtime leaves it unnamed (V8's
// root is an unnamed synthetic node). JSON output keeps the name as read.
func ShownNode(a *analysis.Analysis, nm *analysis.Namer, n model.NodeIndex) NodeJSON {
	r := NewNodeJSON(a.Graph, a.Row(nm, n))
	if n == a.Graph.Root && r.Name == "" {
		r.Name = "(root)"
	}
	return r
}

// ObjectName is a node as DevTools' Object column labels it: "name @id",
// with the constructor standing in for an empty name (V8 leaves most
// internal arrays unnamed), the description for a name that says nothing
// ("module scope of app.js" for "system / Context"), and the id in hex
// where it is an address (see IDText). Long names are cut to
// MaxNameWidth.
func ObjectName(n NodeJSON) string {
	name := n.Name
	if n.Description != "" {
		name = n.Description
	}
	if name == "" {
		name = n.Constructor
	}
	id := n.idText
	if id == "" {
		id = "@" + strconv.FormatUint(n.ID, 10)
	}
	return Shorten(name, MaxNameWidth) + " " + id
}

// MaxNameWidth bounds object names in tables: a cons string's name can be
// a kilobyte of text.
const MaxNameWidth = 48

// Shorten cuts s to at most n characters, marking the cut with "…", and
// shows escaped what a terminal would act on (termtext), so one name stays
// on one line and a dump's escape sequences stay text. It reads only the
// part it shows: a name can be a 500 MB string.
func Shorten(s string, n int) string { return termtext.Cut(s, n) }

// ParseID reads a node id as users write it: "12345" or "@12345" in
// decimal, as DevTools shows V8 ids, or "0x7f3a10" or "@0x7f3a10" in hex,
// as MAT, VisualVM and Firefox show addresses (and heapx shows Java and
// Firefox ids).
func ParseID(s string) (uint64, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "@")
	base := 10
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') {
		t, base = t[2:], 16
	}
	id, err := strconv.ParseUint(t, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a node id (a decimal number such as 12345 or @12345, or a hex one such as 0x7f3a10)", s)
	}
	return id, nil
}

// nodeByID finds the node with runtime id s (see ParseID) in sn.
func nodeByID(sn Snapshot, s string) (model.NodeIndex, error) {
	id, err := ParseID(s)
	if err != nil {
		return 0, fmt.Errorf("--id %w", err)
	}
	n, ok := sn.Analysis.NodeByID(id)
	if !ok {
		return 0, fmt.Errorf("%s: no node with id %s", sn.Path, IDText(sn.Analysis.Graph, id))
	}
	return n, nil
}
