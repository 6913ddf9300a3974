package query

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

func init() {
	Register(&Query{
		Name: "paths", Group: GroupBasic, Usage: "FILE --id ID", MinInputs: 1, MaxInputs: 1,
		Title: "Show what keeps an object alive: its retainer paths from the roots, through the program's code",
		Help: `Show the retainer paths from the roots to the object with the given id
(the @id in 'heapx top' and in DevTools) that go through the program's
code: among the paths at most 3 hops longer than the shortest, those not
from V8's GC roots first, then those with the fewest hops through the
runtime's own machinery (timer lists, async hooks, the module loader, a
runtime module's scope), then the shortest; each path differs from the
ones before it in the program's part. Weak edges are never followed.
Distances are DevTools'. Rule: docs/paths.md.

With --no-weak, as MAT's "Path to GC roots excluding weak/soft
references": no path takes an ephemeron edge either (a WeakMap's or
WeakSet's table to a value, which lives only as long as its key: the
key's own retainers are shown), and where the object has paths through
none of the runtime's own objects (Node's and the engine's: timer lists,
emitters, the module loader, GC roots), only those are shown; where it
has none, as most objects of a Node heap, the output says so. On a Java
heap, Reference.referent is never followed, with or without it.`,
		Args: []Arg{{Name: "limit", Short: "n", Kind: IntArg, Default: 3, Help: "number of paths to print"},
			{Name: "id", Kind: StringArg, Default: "", Required: true, Help: "id of the object whose retainers to show (required)"},
			{Name: "no-weak", Kind: BoolArg, Default: false,
				Help: "no WeakMap or weak references, and none through the runtime's own objects where the object has such paths (MAT's excluding weak/soft references)"}},
		Run: runPaths,
	})
}

// PathsJSON is the `heapx paths --json` output.
type PathsJSON struct {
	SchemaVersion int      `json:"schema_version"`
	File          string   `json:"file"`
	Target        NodeJSON `json:"target"`
	// NoWeak says the paths take no weak or ephemeron edge (paths
	// --no-weak), and ThroughRuntime that each goes through the runtime's
	// own objects (analysis.Analysis.IsRuntimeInternalEdge), as every such
	// path to the target does.
	NoWeak         bool       `json:"no_weak,omitempty"`
	ThroughRuntime bool       `json:"through_runtime,omitempty"`
	Paths          []PathJSON `json:"paths"`
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
	noWeak, throughRuntime := c.Bool("no-weak"), false
	var paths []analysis.Path
	if noWeak {
		paths, throughRuntime = a.NoWeakFinder().With(analysis.PathOptions{K: k}).Find(target)
	} else {
		paths = a.Paths(target, analysis.PathOptions{K: k})
	}
	t := NewNodeJSON(a.Graph, a.Row(nm, target))
	r := &Result{JSON: pathsDoc{file: sn.Path, a: a, nm: nm, target: target, paths: paths, noWeak: noWeak, throughRuntime: throughRuntime},
		Header: []string{fmt.Sprintf("Retainers of %s (%s; shallow size %s, retained size %s, distance %s)",
			ObjectName(t), t.Constructor, humanize.Size(t.ShallowSize), humanize.Size(t.RetainedSize), DistanceText(t.Distance))}}
	switch {
	case len(paths) == 0 && noWeak && len(a.Paths(target, analysis.PathOptions{})) > 0:
		r.Notes = []string{"No retainer path without weak references: the object is held only through a WeakMap's or WeakSet's table and weak references (heapx paths without --no-weak shows how)."}
	case len(paths) == 0:
		r.Notes = []string{"No retainer path: nothing reachable from the roots keeps this object alive (it is garbage or only weakly held)."}
	case len(paths) < k && noWeak && !throughRuntime:
		r.Notes = []string{fmt.Sprintf("%d of the %d paths asked for: no other path within %d hops of the shortest is without weak references and the runtime's own objects.",
			len(paths), k, analysis.PathSlack)}
	case len(paths) < k:
		r.Notes = []string{fmt.Sprintf("%d of the %d paths asked for: any other within %d hops of the shortest differs from these only in the runtime's own objects it goes through (heapx shows the path through the program's code; docs/paths.md).",
			len(paths), k, analysis.PathSlack)}
	}
	switch {
	case len(paths) > 0 && throughRuntime:
		r.Header = append(r.Header, "--no-weak: without weak references (a WeakMap's values, Java's Reference.referent). Every such path goes through the runtime's own objects (Node's or the engine's): these take the fewest of them.")
	case len(paths) > 0 && noWeak:
		r.Header = append(r.Header, "--no-weak: without weak references (a WeakMap's values, Java's Reference.referent) or the runtime's own objects.")
	}
	for i, p := range paths {
		r.Sections = append(r.Sections, &Section{Heading: pathHeading(i, p), Table: pathTable(a, nm, p)})
	}
	if stack := alloc.AllocationStack(a, target); stack != nil {
		r.Sections = append(r.Sections, &Section{Heading: "Allocation stack (the allocating function first)", Table: stackTable(stack)})
	}
	return r, nil
}

// ShownPath is the retainer path heapx shows for target wherever it shows
// one (heapx paths' first, the report's leaks and suspects, the web UI,
// the MCP tools): analysis.PathFinder.Find's first. Its Cost is -1 when
// no path reaches target.
func ShownPath(a *analysis.Analysis, target model.NodeIndex) analysis.Path {
	if ps := a.Paths(target, analysis.PathOptions{K: 1}); len(ps) > 0 {
		return ps[0]
	}
	return analysis.Path{Cost: -1}
}

// pathNodes lists the objects of path p, the root first: what a report
// compares to show a path once (Section.Path).
func pathNodes(g *model.Graph, p analysis.Path) []model.NodeIndex {
	nodes := make([]model.NodeIndex, 0, len(p.Steps)+1)
	nodes = append(nodes, g.Root)
	for _, s := range p.Steps {
		nodes = append(nodes, s.To)
	}
	return nodes
}

func pathHeading(i int, p analysis.Path) string {
	kind := "from a user root"
	if p.System {
		kind = "from internal roots"
	}
	edges := "edges"
	if len(p.Steps) == 1 {
		edges = "edge"
	}
	return fmt.Sprintf("Path %d: %d %s, %s", i+1, len(p.Steps), edges, kind)
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

// PathText writes retainer path p on one line, root first, as heapx
// paths and leaks show it in a table (long runs elided alike), hops
// joined by " → ": "(root) @1 → .2 global @6049 → .bus EventEmitter
// @51427".
func PathText(a *analysis.Analysis, nm *analysis.Namer, p analysis.Path) string {
	var b strings.Builder
	for i, row := range pathTable(a, nm, p).Rows {
		if i > 0 {
			b.WriteString(" → ")
			if edge := fmt.Sprint(row[0]); edge != "" {
				b.WriteString(edge + " ")
			}
		}
		b.WriteString(fmt.Sprint(row[1]))
	}
	return b.String()
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
		text := fmt.Sprintf("%s more %s", humanize.Thousands(uint64(hidden)), hop(p.Steps[s.start]))
		if s.k > 1 {
			block := make([]string, s.k)
			for x := range block {
				block[x] = hop(p.Steps[s.start+ends+x])
			}
			text = fmt.Sprintf("%s more hops of %s", humanize.Thousands(uint64(hidden)), strings.Join(block, ", "))
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
	t.Rows = append(t.Rows, []any{"…", fmt.Sprintf("%s more hops", humanize.Thousands(uint64(resume-cut))), nil, nil, nil})
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
	// noWeak and throughRuntime are PathsJSON's NoWeak and
	// ThroughRuntime.
	noWeak, throughRuntime bool
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
	if d.noWeak {
		put(",\n  \"no_weak\": true")
	}
	if d.throughRuntime {
		put(",\n  \"through_runtime\": true")
	}
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
	if stack := StackJSON(alloc.AllocationStack(d.a, d.target)); stack != nil {
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
