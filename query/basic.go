package query

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
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

// SummaryJSON is the `heapx summary --json` output.
type SummaryJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	Policy        string `json:"policy"`
	// TotalSize is DevTools' total: the root's retained size plus
	// extra_native_bytes; percentages are of it.
	TotalSize  uint64      `json:"total_size"`
	ClassCount int         `json:"class_count"`
	Classes    []ClassJSON `json:"classes"`
	// Unreachable describes the objects no root reaches over non-weak
	// edges. DevTools hangs them under the root, so they are also counted
	// in Classes (keeping the numbers equal to DevTools'); they are listed
	// here so they are never silently mixed in.
	Unreachable UnreachableJSON `json:"unreachable"`
}

// UnreachableJSON totals the unreachable objects, by class (largest
// first; all of them with --unreachable, else the first 10).
type UnreachableJSON struct {
	Count   int                    `json:"count"`
	Size    uint64                 `json:"shallow_size"`
	Classes []UnreachableClassJSON `json:"classes"`
}

// UnreachableClassJSON is one class of unreachable objects.
type UnreachableClassJSON struct {
	Constructor string `json:"constructor"`
	Count       int    `json:"count"`
	Size        uint64 `json:"shallow_size"`
}

// ClassJSON is one Summary row.
type ClassJSON struct {
	Constructor string `json:"constructor"`
	// Key is DevTools' class key: "," + name, or "script,line,column,name"
	// for object classes split by allocation site.
	Key          string        `json:"key"`
	Location     *LocationJSON `json:"location,omitempty"`
	Count        int           `json:"count"`
	Distance     int32         `json:"distance"`
	ShallowSize  uint64        `json:"shallow_size"`
	RetainedSize uint64        `json:"retained_size"`
	// AllocationSite is where most of the class's objects were
	// allocated, when the dump has allocation stacks (a value, so that
	// rows stay comparable).
	AllocationSite SiteJSON `json:"allocation_site,omitzero"`
}

// LocationJSON is an allocation site, zero-based as V8 writes it.
type LocationJSON struct {
	ScriptID uint32 `json:"script_id"`
	Line     uint32 `json:"line"`
	Column   uint32 `json:"column"`
}

// TopJSON is the `heapx top --json` output.
type TopJSON struct {
	SchemaVersion int        `json:"schema_version"`
	File          string     `json:"file"`
	Policy        string     `json:"policy"`
	TotalSize     uint64     `json:"total_size"`
	Nodes         []NodeJSON `json:"nodes"`
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
	// idText is ID as people see it (see IDText); JSON keeps the number.
	idText string
}

// PathsJSON is the `heapx paths --json` output.
type PathsJSON struct {
	SchemaVersion int        `json:"schema_version"`
	File          string     `json:"file"`
	Target        NodeJSON   `json:"target"`
	Paths         []PathJSON `json:"paths"`
	// AllocationStack is the call stack that allocated the target,
	// allocating function first (DevTools' Allocation stack pane), when
	// the dump has one for it.
	AllocationStack []FrameJSON `json:"allocation_stack,omitempty"`
}

// PathJSON is one retainer path, from the root to the target.
type PathJSON struct {
	// Distance is the path's DevTools-style cost: its length from a user
	// root, or 100000000 plus its length when it starts at an internal
	// (system) root.
	Distance int64      `json:"distance"`
	System   bool       `json:"system"`
	Root     NodeJSON   `json:"root"`
	Steps    []StepJSON `json:"steps"`
}

// StepJSON is one edge of a path and the object it leads to.
type StepJSON struct {
	EdgeType string `json:"edge_type"`
	// EdgeName is the property name, variable name or element index.
	EdgeName string `json:"edge_name"`
	// Edge is the edge as DevTools writes it: ".x", "[3]", "->x", "{x}".
	Edge string   `json:"edge"`
	To   NodeJSON `json:"to"`
}

// NewNodeJSON converts an analysis row.
func NewNodeJSON(g *model.Graph, r analysis.NodeRow) NodeJSON {
	n := NodeJSON{
		ID: r.ID, Type: r.Type, Name: r.Name, Constructor: r.Class, Distance: r.Distance,
		ShallowSize: r.Shallow, RetainedSize: r.Retained, idText: IDText(g, r.ID),
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
// internal arrays unnamed), and the id in hex where it is an address
// (see IDText). Long names are cut to MaxNameWidth.
func ObjectName(n NodeJSON) string {
	name := n.Name
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

// limitArg is the -n argument of the queries with a row limit.
func limitArg(def int) Arg {
	return Arg{Name: "limit", Short: "n", Kind: IntArg, Default: def, Help: "number of rows to print (0: all)"}
}

// limit checks the -n value and returns it with 0 meaning all of total.
func limit(c *Context, total int) (int, error) {
	n := c.Int("limit")
	if n < 0 {
		return 0, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	if n == 0 || n > total {
		n = total
	}
	return n, nil
}

// Column sets the basic views share.
var (
	colCount    = Column{Key: "count", Title: "Count", Kind: Count}
	colDistance = Column{Key: "distance", Title: "Distance", Kind: Distance}
	colShallow  = Column{Key: "shallow_size", Title: "Shallow size", Kind: Bytes}
	colRetained = Column{Key: "retained_size", Title: "Retained size", Kind: Bytes}
	colPercent  = Column{Key: "retained_percent", Title: "%", Kind: Percent}
	colClass    = Column{Key: "constructor", Title: "Constructor", Kind: Text}
	colObject   = Column{Key: "object", Title: "Object", Kind: Text}
)

func init() {
	Register(&Query{
		Name: "summary", Group: GroupBasic, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the classes that hold the memory, like DevTools' Summary view",
		Help: `Show DevTools' Summary view: one row per constructor (class) with its
object count, smallest distance from a root, total shallow size and
retained size, largest retained size first. Numbers match the Chrome
DevTools Memory panel. Objects unreachable from the roots are counted as
DevTools counts them and totalled below the table; --unreachable lists
them by class instead of the classes.`,
		Args: []Arg{limitArg(20), {Name: "unreachable", Kind: BoolArg, Default: false,
			Help: "list the unreachable objects by class (all classes in --json)"}},
		Run: runSummary,
	})
	Register(&Query{
		Name: "top", Group: GroupBasic, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the objects with the largest retained sizes",
		Help: `Show the single objects that retain the most memory (the root
excluded), largest first: what would be freed if that object alone became
unreachable. Use an object's @id with 'heapx paths' to see what keeps it
alive.`,
		Args: []Arg{limitArg(20)},
		Run:  runTop,
	})
	Register(&Query{
		Name: "paths", Group: GroupBasic, Usage: "FILE --id ID", MinInputs: 1, MaxInputs: 1,
		Title: "Show what keeps an object alive: its shortest retainer paths from the roots",
		Help: `Show the shortest retainer paths from the roots to the object with the
given id (the @id in 'heapx top' and in DevTools), shortest first, paths
from user roots (globals) before paths through internal roots. Weak edges
are never followed.`,
		Args: []Arg{{Name: "limit", Short: "n", Kind: IntArg, Default: 3, Help: "number of paths to print"},
			{Name: "id", Kind: StringArg, Default: "", Required: true, Help: "id of the object whose retainers to show (required)"}},
		Run: runPaths,
	})
}

// BuildSummary returns the summary view of a with at most limit classes
// (0: all) and the first 10 unreachable classes (all with
// allUnreachable).
func BuildSummary(path string, a *analysis.Analysis, limit int, allUnreachable bool) *SummaryJSON {
	// The two passes only read the analysis: side by side, not one after
	// the other on one core.
	var u *analysis.UnreachableReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		u = a.Unreachable()
	}()
	rows := a.Summary()
	<-done
	s := &SummaryJSON{SchemaVersion: 1, File: path, Policy: a.Policy.Name, TotalSize: a.TotalSize(),
		ClassCount: len(rows), Classes: []ClassJSON{}}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	sites := a.ClassSites()
	for _, r := range rows {
		c := ClassJSON{Constructor: r.Name, Key: r.Key, Count: r.Count, Distance: r.Distance,
			ShallowSize: r.Shallow, RetainedSize: r.Retained}
		if sites != nil {
			c.AllocationSite = NewSiteJSON(&sites[r.Class])
		}
		if a.Classes.HasLoc[r.Class] {
			l := a.Classes.Loc[r.Class]
			c.Location = &LocationJSON{l.ScriptID, l.Line, l.Column}
		}
		s.Classes = append(s.Classes, c)
	}
	s.Unreachable = UnreachableJSON{Count: u.Count, Size: u.Size, Classes: []UnreachableClassJSON{}}
	for i, c := range u.ByClass {
		if !allUnreachable && i == 10 {
			break
		}
		s.Unreachable.Classes = append(s.Unreachable.Classes, UnreachableClassJSON{Constructor: c.Name, Count: c.Count, Size: c.Size})
	}
	return s
}

func runSummary(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	sn := c.Snapshots[0]
	s := BuildSummary(sn.Path, sn.Analysis, n, c.Bool("unreachable"))
	r := &Result{JSON: s}
	if c.Bool("unreachable") {
		t := &Table{Columns: []Column{colClass, colCount, {Key: "shallow_size", Title: "Shallow size", Kind: Bytes}}}
		for _, u := range s.Unreachable.Classes {
			t.Rows = append(t.Rows, []any{u.Constructor, u.Count, u.Size})
		}
		r.Sections = []*Section{{Table: t}}
		r.Notes = []string{fmt.Sprintf("%s objects (%s) unreachable from the roots", Thousands(uint64(s.Unreachable.Count)), HumanSize(s.Unreachable.Size))}
		return r, nil
	}
	r.Sections = []*Section{{Table: summaryTable(s), Chart: &Chart{Label: "constructor", Value: "retained_size"}}}
	r.Notes = []string{fmt.Sprintf("%d of %s classes; total size %s (%s bytes)",
		len(s.Classes), Thousands(uint64(s.ClassCount)), HumanSize(s.TotalSize), Thousands(s.TotalSize))}
	if u := s.Unreachable; u.Count > 0 {
		as := ", as DevTools counts them"
		if s.Policy != analysis.DevToolsPolicy.Name {
			as = ""
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%s objects (%s) are unreachable from the roots; they are counted above%s (see --unreachable)",
			Thousands(uint64(u.Count)), HumanSize(u.Size), as))
	}
	return r, nil
}

// summaryTable is the Summary view as a table. A name shared by several
// rows (one class per allocation site) gets its site, one-based as editors
// count, so the rows can be told apart.
func summaryTable(s *SummaryJSON) *Table {
	seen := map[string]int{}
	sites := false
	for _, c := range s.Classes {
		seen[c.Constructor]++
		sites = sites || c.AllocationSite.Count > 0
	}
	t := &Table{Columns: []Column{colClass, colCount, colDistance, colShallow,
		{Key: "shallow_percent", Title: "%", Kind: Percent}, colRetained, colPercent}}
	if sites {
		t.Columns = append(t.Columns, colAllocatedIn)
	}
	for _, c := range s.Classes {
		name := Shorten(c.Constructor, MaxNameWidth)
		if l := c.Location; l != nil && seen[c.Constructor] > 1 {
			name += fmt.Sprintf(" (script %d:%d:%d)", l.ScriptID, l.Line+1, l.Column+1)
		}
		row := []any{name, c.Count, c.Distance, c.ShallowSize, Share(c.ShallowSize, s.TotalSize),
			c.RetainedSize, Share(c.RetainedSize, s.TotalSize)}
		if sites {
			row = append(row, siteJSONText(c.AllocationSite))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func runTop(c *Context) (*Result, error) {
	sn := c.Snapshots[0]
	a := sn.Analysis
	n, err := limit(c, a.Graph.NumNodes())
	if err != nil {
		return nil, err
	}
	t := &TopJSON{SchemaVersion: 1, File: sn.Path, Policy: a.Policy.Name, TotalSize: a.TotalSize(), Nodes: []NodeJSON{}}
	for _, r := range a.Top(n) {
		t.Nodes = append(t.Nodes, NewNodeJSON(a.Graph, r))
	}
	tb := &Table{Columns: []Column{colObject, colClass, colDistance, colShallow, colRetained, colPercent}}
	for _, n := range t.Nodes {
		tb.Rows = append(tb.Rows, []any{ObjectName(n), Shorten(n.Constructor, MaxNameWidth), n.Distance, n.ShallowSize, n.RetainedSize,
			Share(n.RetainedSize, t.TotalSize)})
	}
	return &Result{JSON: t, Sections: []*Section{{Table: tb}},
		Notes: []string{fmt.Sprintf("total size %s (%s bytes)", HumanSize(t.TotalSize), Thousands(t.TotalSize))}}, nil
}

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

func runPaths(c *Context) (*Result, error) {
	k := c.Int("limit")
	if k < 1 {
		return nil, fmt.Errorf("-n must be 1 or more, not %d", k)
	}
	sn := c.Snapshots[0]
	target, err := nodeByID(sn, c.String("id"))
	if err != nil {
		return nil, err
	}
	a := sn.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	paths := a.Paths(target, analysis.PathOptions{K: k})
	t := NewNodeJSON(a.Graph, a.Row(nm, target))
	r := &Result{JSON: pathsDoc{file: sn.Path, a: a, nm: nm, target: target, paths: paths},
		Header: []string{fmt.Sprintf("Retainers of %s (%s; shallow size %s, retained size %s, distance %s)",
			ObjectName(t), t.Constructor, HumanSize(t.ShallowSize), HumanSize(t.RetainedSize), DistanceText(t.Distance))}}
	if len(paths) == 0 {
		r.Notes = []string{"No retainer path: nothing reachable from the roots keeps this object alive (it is garbage or only weakly held)."}
	}
	for i, p := range paths {
		r.Sections = append(r.Sections, &Section{Heading: pathHeading(i, p), Table: pathTable(a, nm, p)})
	}
	if stack := a.AllocationStack(target); stack != nil {
		r.Sections = append(r.Sections, &Section{Heading: "Allocation stack (the allocating function first)", Table: stackTable(stack)})
	}
	return r, nil
}

func pathHeading(i int, p analysis.Path) string {
	kind := "from a user root"
	if p.System {
		kind = "from internal roots"
	}
	return fmt.Sprintf("Path %d: %d edges, %s", i+1, len(p.Steps), kind)
}

// pathTable is one retainer path as a table, root first. A run of hops
// through one edge into one class (a linked list, a timer list), or of a
// block of up to analysis.MaxRepeatPeriod such hops again and again (a
// list of two classes in turn), shows its first and last hops and how
// many between, and so does a path of more rows than maxPathRows (hops in
// no repeating order). Rows are made only for the hops shown:
// the path to the last item of a list of millions is a table of a few
// rows, at the cost of a walk along it.
func pathTable(a *analysis.Analysis, nm *analysis.Namer, p analysis.Path) *Table {
	return labelledPathTable(a, nm, p, nil)
}

// labelledPathTable is pathTable with the edges of some steps (by index
// in p.Steps) written as labels gives them: the index range of a group
// of like paths.
func labelledPathTable(a *analysis.Analysis, nm *analysis.Namer, p analysis.Path, labels map[int]string) *Table {
	g := a.Graph
	t := &Table{Columns: []Column{{Key: "edge", Title: "Retainer edge", Kind: Text}, colObject, colDistance, colShallow, colRetained}}
	r := ShownNode(a, nm, g.Root)
	t.Rows = append(t.Rows, []any{"", ObjectName(r), r.Distance, r.ShallowSize, r.RetainedSize})
	row := func(x int) []any {
		s := p.Steps[x]
		to := NewNodeJSON(g, a.Row(nm, s.To))
		edge, ok := labels[x]
		if !ok {
			edge = analysis.EdgeString(g, s.Edge)
		}
		return []any{Shorten(edge, MaxNameWidth), ObjectName(to), to.Distance, to.ShallowSize, to.RetainedSize}
	}
	// alike reports whether two hops go over the same edge (type and
	// name) into the same class.
	alike := func(x, y analysis.PathStep) bool {
		if g.Edges.Type[x.Edge] != g.Edges.Type[y.Edge] || g.EdgeName(x.Edge) != g.EdgeName(y.Edge) {
			return false
		}
		return a.Classes == nil || a.Classes.Name(x.To) == a.Classes.Name(y.To)
	}
	hop := func(s analysis.PathStep) string {
		class := ""
		if a.Classes != nil {
			class = a.Classes.Name(s.To)
		}
		return Shorten(analysis.EdgeString(g, s.Edge), MaxNameWidth) + " " + Shorten(class, MaxNameWidth)
	}
	// The path in segments: hops shown one by one (k 0), or a run
	// repeating a block of k hops, whose ends are shown.
	type segment struct{ start, end, k int }
	rowsOf := func(s segment) int {
		if s.k == 0 {
			return s.end - s.start
		}
		return 2*max(pathRunEnds, s.k) + 1
	}
	var segs []segment
	rows := 0
	for i := 0; i < len(p.Steps); {
		// k and j: the run from i that repeats a block of k hops until j,
		// long enough to elide (k 0: none).
		k, j := 0, i+1
		for kk := 1; kk <= analysis.MaxRepeatPeriod && k == 0; kk++ {
			jj := i + kk
			for jj < len(p.Steps) && alike(p.Steps[jj], p.Steps[jj-kk]) {
				jj++
			}
			if jj-i-2*max(pathRunEnds, kk) >= 2 {
				k, j = kk, jj
			}
		}
		if n := len(segs); k == 0 && n > 0 && segs[n-1].k == 0 {
			segs[n-1].end = j
		} else {
			segs = append(segs, segment{i, j, k})
		}
		rows += rowsOf(segment{i, j, k})
		i = j
	}
	emit := func(s segment) {
		if s.k == 0 {
			for x := s.start; x < s.end; x++ {
				t.Rows = append(t.Rows, row(x))
			}
			return
		}
		ends := max(pathRunEnds, s.k)
		for x := s.start; x < s.start+ends; x++ {
			t.Rows = append(t.Rows, row(x))
		}
		hidden := s.end - s.start - 2*ends
		text := fmt.Sprintf("%s more %s", Thousands(uint64(hidden)), hop(p.Steps[s.start]))
		if s.k > 1 {
			block := make([]string, s.k)
			for x := range block {
				block[x] = hop(p.Steps[s.start+ends+x])
			}
			text = fmt.Sprintf("%s more hops of %s", Thousands(uint64(hidden)), strings.Join(block, ", "))
		}
		t.Rows = append(t.Rows, []any{"…", text, nil, nil, nil})
		for x := s.end - ends; x < s.end; x++ {
			t.Rows = append(t.Rows, row(x))
		}
	}
	// A path of more rows than maxPathRows (hops in no repeating order)
	// shows its first and last maxPathRows/2 and how many hops between.
	var front, back []segment
	cut, resume := len(p.Steps), len(p.Steps) // the hops [cut, resume) are not shown
	if rows > maxPathRows {
		budget := maxPathRows / 2
		for i := 0; i < len(segs) && budget > 0; i++ {
			sg := segs[i]
			if sg.k == 0 {
				sg.end = min(sg.end, sg.start+budget)
			}
			front = append(front, sg)
			budget -= rowsOf(sg)
			cut = sg.end
		}
		budget = maxPathRows / 2
		for i := len(segs) - 1; i >= 0 && budget > 0; i-- {
			sg := segs[i]
			if sg.k == 0 {
				sg.start = max(sg.start, sg.end-budget)
			}
			back = append(back, sg)
			budget -= rowsOf(sg)
			resume = sg.start
		}
		slices.Reverse(back)
	}
	if cut >= resume {
		for _, sg := range segs {
			emit(sg)
		}
		return t
	}
	for _, sg := range front {
		emit(sg)
	}
	t.Rows = append(t.Rows, []any{"…", fmt.Sprintf("%s more hops", Thousands(uint64(resume-cut))), nil, nil, nil})
	for _, sg := range back {
		emit(sg)
	}
	return t
}

// pathRunEnds is how many hops of a long run of like hops a path table
// shows at each end.
const pathRunEnds = 2

// maxPathRows bounds the rows of a path table, elided runs aside.
const maxPathRows = 100

// pathsDoc is the `paths --json` output (PathsJSON), written only when it
// is encoded and a step at a time (StreamJSON): the text tables show a few
// hops of a path through a list of millions, and its JSON, every hop, is
// gigabytes, which must not be built in memory first.
type pathsDoc struct {
	file   string
	a      *analysis.Analysis
	nm     *analysis.Namer
	target model.NodeIndex
	paths  []analysis.Path
}

// JSONStreamer is a JSON document too large to build in memory: it writes
// itself to w, indented as json.Encoder with SetIndent("", "  ") would
// write it (a final newline included), one small piece at a time.
type JSONStreamer interface {
	StreamJSON(w io.Writer) error
}

// MarshalJSON implements json.Marshaler.
func (d pathsDoc) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := d.StreamJSON(&b)
	return b.Bytes(), err
}

// StreamJSON implements JSONStreamer: PathsJSON, a step at a time.
func (d pathsDoc) StreamJSON(w io.Writer) error {
	g := d.a.Graph
	node := func(n model.NodeIndex) NodeJSON { return NewNodeJSON(g, d.a.Row(d.nm, n)) }
	bw := bufio.NewWriter(w)
	var err error
	put := func(s string) {
		if err == nil {
			_, err = bw.WriteString(s)
		}
	}
	val := func(v any, depth int) {
		b, e := json.MarshalIndent(v, strings.Repeat("  ", depth), "  ")
		if e != nil && err == nil {
			err = e
		}
		put(string(b))
	}
	put("{\n  \"schema_version\": 1,\n  \"file\": ")
	val(d.file, 1)
	put(",\n  \"target\": ")
	val(node(d.target), 1)
	put(",\n  \"paths\": [")
	for i, p := range d.paths {
		if i > 0 {
			put(",")
		}
		put("\n    {\n      \"distance\": ")
		val(p.Cost, 3)
		put(",\n      \"system\": ")
		val(p.System, 3)
		put(",\n      \"root\": ")
		val(node(g.Root), 3)
		put(",\n      \"steps\": [")
		for j, s := range p.Steps {
			if j > 0 {
				put(",")
			}
			put("\n        ")
			val(newStepJSON(g, node, s), 4)
		}
		if len(p.Steps) > 0 {
			put("\n      ")
		}
		put("]\n    }")
	}
	if len(d.paths) > 0 {
		put("\n  ")
	}
	put("]")
	if stack := StackJSON(d.a.AllocationStack(d.target)); stack != nil {
		put(",\n  \"allocation_stack\": ")
		val(stack, 1)
	}
	put("\n}\n")
	if err != nil {
		return err
	}
	return bw.Flush()
}

func newStepJSON(g *model.Graph, node func(model.NodeIndex) NodeJSON, s analysis.PathStep) StepJSON {
	return StepJSON{EdgeType: g.EdgeType(s.Edge).Name, EdgeName: g.EdgeName(s.Edge), Edge: analysis.EdgeString(g, s.Edge), To: node(s.To)}
}

// classSuggestions returns up to n class names of a that look like what
// someone typing name meant: names that contain it or that it contains,
// ignoring case (a Java class's simple name, "Session" for
// "LeakDemo$Session"), then names a few typing mistakes away (at most a
// third of its length, as edit distance). Closest first, then the
// classes with more instances.
func classSuggestions(a *analysis.Analysis, name string, n int) []string {
	lname := strings.ToLower(name)
	counts := map[string]int{}
	for _, c := range a.Classes.Of {
		counts[a.Classes.Names[c]]++
	}
	type cand struct {
		name  string
		score int // 0 for containment, else the edit distance
	}
	var cands []cand
	maxDist := max(1, len([]rune(name))/3)
	for cn := range counts {
		lc := strings.ToLower(cn)
		switch {
		case strings.Contains(lc, lname) || strings.Contains(lname, lc) && len(lc) >= 3:
			cands = append(cands, cand{cn, 0})
		default:
			if d := editDistance(lname, lc, maxDist); d <= maxDist {
				cands = append(cands, cand{cn, d})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		x, y := cands[i], cands[j]
		if x.score != y.score {
			return x.score < y.score
		}
		if counts[x.name] != counts[y.name] {
			return counts[x.name] > counts[y.name]
		}
		return x.name < y.name
	})
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, or limit+1
// as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	x, y := []rune(a), []rune(b)
	if d := len(x) - len(y); d > limit || -d > limit {
		return limit + 1
	}
	prev, cur := make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// quotedList writes names as `"A", "B" or "C"`.
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
