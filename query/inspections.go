package query

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

// The inspections: one query per analysis in analysis/inspect_*.go, the
// questions a leak hunt asks after the Summary.

func init() {
	Register(&Query{
		Name: "duplicates", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Find strings held many times with the same contents, and the bytes the copies waste",
		Help: `Find the texts held by two or more string objects of the same size
(memlab's duplicated strings), most wasted bytes first: the copies beyond
the first, which interning or reusing one string would save. V8 (Node.js,
Chrome): flat strings; concatenated and sliced strings are left out, as
their text lives in the flat strings they point to. HPROF: java.lang.String
objects by contents. Texts longer than V8's 1024-character name limit are
compared by their first 1024 characters and their size. Firefox
(SpiderMonkey) dumps do not record string contents: there the command
says so instead of listing anything.`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(DuplicatesResult),
	})
	Register(&Query{
		Name: "detached", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Find detached DOM trees: elements removed from the page but still held by JavaScript",
		Help: `Find the detached DOM trees of a browser snapshot, largest retained size
first: each tree is a detached node whose immediate dominator is not
detached, with the detached nodes below it, so the trees' sizes add up.
Each tree comes with the shortest retainer path to its root: what to clear
to free it; trees held the same way (the elements of one array) share one
path table. Elements are counted as DevTools counts them: the detached
nodes named after a tag ("Detached <p>"), those made by innerHTML inside a
detached tree included. Chrome marks detached elements in its snapshots
(and DevTools' propagation the nodes they reach); in Firefox's,
the DOM nodes no document reaches through child-node edges are detached;
in older V8 snapshots only native nodes already named "Detached ..." are
found. Node.js and Java heaps have no DOM. V8 marks a few of Node.js's own
binding objects detached ("Detached Node / BindingData"): they are not DOM
and are left out unless --internals.`,
		Args: []Arg{limitArg(10), {Name: "internals", Kind: BoolArg, Default: false,
			Help: "also list the embedder's own objects V8 marks detached (Node.js's \"Node / ...\" binding objects)"}},
		Run: func(c *Context) (*Result, error) {
			n, err := limit(c, math.MaxInt)
			if err != nil {
				return nil, err
			}
			return DetachedResult(c.Snapshots[0], n, c.Bool("internals"))
		},
	})
	Register(&Query{
		Name: "closures", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show what closures keep alive through the variables they capture",
		Help: `Group the closures (JavaScript functions) by name and show what their
contexts capture: the number of distinct contexts holding variables, their
retained size, the captured variable names and the captured value that
retains the most. A listener that captures a growing array shows up here.
V8 (Node.js, Chrome): the function's innermost context; SpiderMonkey: its
environment object. Variables of enclosing scopes are not listed.`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(closuresResult),
	})
	Register(&Query{
		Name: "collections", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the largest collections (arrays, maps, sets) by element count",
		Help: `List the collections by element count, largest first, with their
retained sizes: caches and registries that only grow show up here. V8:
arrays, Map and Set, counted through their backing stores (a Map keyed by
objects counts keys and values). HPROF: arrays and java.util collections
(ArrayList, ArrayDeque, HashMap...; a HashMap counts occupied buckets, not
entries).`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(collectionsResult),
	})
	Register(&Query{
		Name: "shapes", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Group objects by constructor and property names, largest retained size first",
		Help: `Group the objects by constructor name and the set of their property
names (memlab's object shapes), largest retained size first. Plain objects
built by the same code share a shape even when DevTools' Summary lumps
them into "Object". A shape's retained size counts each object once: an
object held by another of the same shape is in that one's size. JavaScript
objects of V8 and SpiderMonkey; for HPROF a shape is a class's fields.`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(shapesResult),
	})
	Register(&Query{
		Name: "globals", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the global variables a program defined and what they retain",
		Help: `List the global variables the program defined, largest retained size
first (memlab's global-variable analysis). V8: properties of the global
objects (Node.js's global, each Chrome window), without the runtime's own
(built-in objects, Web APIs, native functions). HPROF: the static fields
of every class, named Class.field.`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(globalsResult),
	})
	Register(&Query{
		Name: "class-loaders", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the class loaders keeping the most alive, and the classes defined by more than one loader",
		Help: `Java heap dumps (HPROF): list the class loaders, keeping the most alive
first (Eclipse MAT's Class Loader Explorer): each loader object with the
number of classes it defined and of their instances, its retained size,
what it keeps alive together with its classes (their statics, and the
loader when a class holds it), and the shortest way a GC root holds it.
A loader that should be gone (an undeployed web application, a plugin
reloaded) and is still here shows what it keeps and who holds it: a
static cache, a thread, a ThreadLocal. Then the classes defined by more
than one loader (MAT's Duplicate Classes): the same name, different class
objects, each with its loader and instances; one application's classes
loaded twice, or a library in two places on the class path. Other
runtimes have no class loaders.`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(classLoadersResult),
	})
	Register(&Query{
		Name: "merged-paths", Group: GroupInspections, Usage: "FILE --class NAME", MinInputs: 1, MaxInputs: 1,
		Title: "Merge the shortest retainer paths of all instances of a class into one tree",
		Help: `Take the shortest retainer path of every instance of a class and merge
the paths into one tree from the root down (Eclipse MAT's "merge shortest
paths to GC roots"): steps through objects of the same class over the same
edge share a tree node, and the slots of one collection merge whatever
their index ("entries of requestLog (Map)", "elements of list (Array)"); a
hop that repeats the one to three hops before it (a linked list's .next)
goes back to their nodes, which say how many hops they stand for. Each
node counts the instances whose path passes there, so the branch holding
most of them is the one to look at. Rows come depth first, largest branch
first; -n cuts the tree after that many rows, but never above the
collection where the largest branch's objects accumulate, and nodes more
than 100 edges from the root are not shown. Any runtime.`,
		Args: []Arg{limitArg(100), {Name: "class", Kind: StringArg, Default: "", Required: true,
			Help: "constructor (class) name of the objects, as the summary shows it (required)"}},
		Run: runMergedPaths,
	})
	Register(&Query{
		Name: "dominators", Group: GroupInspections, Usage: "FILE [--id ID] [--by-class]", MinInputs: 1, MaxInputs: 1,
		Title: "Walk the dominator tree: what an object (or the root) alone keeps alive",
		Help: `Show the children of a node in the dominator tree (Eclipse MAT's
dominator tree), largest retained size first: the objects that stay alive
only through it, whose retained sizes add up to its own. Without --id the
node is the root, so the rows are the top-level holders of the heap;
follow a row's @id with --id to go down a level. --by-class groups the
children by class. Any runtime.`,
		Args: []Arg{limitArg(20),
			{Name: "id", Kind: StringArg, Default: "", Help: "id of the node whose children to show (default: the root)"},
			{Name: "by-class", Kind: BoolArg, Default: false, Help: "group the children by class"}},
		Run: runDominators,
	})
}

// withLimit adapts an inspection of one snapshot and a row limit (0 or
// less: all rows, as in the analysis package) to a query's Run. -n 0 is
// passed on as math.MaxInt, which every inspection also reads as all.
func withLimit(run func(sn Snapshot, limit int) (*Result, error)) func(c *Context) (*Result, error) {
	return func(c *Context) (*Result, error) {
		n, err := limit(c, math.MaxInt)
		if err != nil {
			return nil, err
		}
		return run(c.Snapshots[0], n)
	}
}

// objectName is node n as the Object column shows it ("name @id").
func objectName(a *analysis.Analysis, nm *analysis.Namer, n model.NodeIndex) string {
	return ObjectName(NewNodeJSON(a.Graph, a.Row(nm, n)))
}

// shownNote says how many of total rows a table shows, when it is cut.
func shownNote(shown, total int, what string) []string {
	if shown >= total {
		return nil
	}
	return []string{fmt.Sprintf("%s of %s %s shown (-n 0 shows all).", humanize.Thousands(uint64(shown)), humanize.Thousands(uint64(total)), what)}
}

// DuplicatesResult lays out the duplicated strings of sn, at most limit
// texts (0 or less: all), most wasted bytes first, with the totals over
// all of them. A dump without string contents gets a note saying so and
// no table.
func DuplicatesResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	if !inspect.HasStringContents(a) {
		return &Result{Notes: []string{noStringContents}}, nil
	}
	all := inspect.DuplicateStrings(a, 0)
	rows := all
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	t := &Table{Columns: []Column{{Key: "text", Title: "Text", Kind: Text}, colCount,
		{Key: "size", Title: "Size each", Kind: Bytes}, {Key: "wasted", Title: "Wasted", Kind: Bytes},
		{Key: "total", Title: "Total", Kind: Bytes}, {Key: "example", Title: "Example", Kind: ID}}}
	for _, r := range rows {
		t.Rows = append(t.Rows, []any{Shorten(visibleText(r.Text), MaxNameWidth), r.Count, r.Size, r.Wasted, r.Total, IDValue(a.Graph, a.Graph.NodeID(r.Example))})
	}
	var copies int
	var wasted, total uint64
	for _, r := range all {
		copies += r.Count
		wasted += r.Wasted
		total += r.Total
	}
	sec := &Section{Heading: "Duplicated strings (texts held by several string objects)", Table: t,
		Chart: &Chart{Label: "text", Value: "wasted"}, Notes: shownNote(len(rows), len(all), "texts")}
	r := &Result{Sections: []*Section{sec}}
	if len(all) == 0 {
		r.Notes = []string{"No string is held twice with the same contents."}
		return r, nil
	}
	r.Notes = []string{fmt.Sprintf("%s texts held by %s string objects (%s); keeping one copy of each would save %s (%s of the heap).",
		humanize.Thousands(uint64(len(all))), humanize.Thousands(uint64(copies)), humanize.Size(total), humanize.Size(wasted), humanize.Percent(wasted, a.TotalSize()))}
	return r, nil
}

// visibleText is a string's text as a table cell shows it: quoted when
// it is empty or starts or ends with white space, which would not show
// (a JVM's "" and " " are among its most duplicated strings).
func visibleText(s string) string {
	if s == "" || strings.TrimSpace(s) != s {
		return strconv.Quote(s)
	}
	return s
}

// noStringContents is what the duplicates view says about a dump whose
// strings carry no text.
const noStringContents = "This dump does not record string contents (Firefox's heap snapshots keep only each string's size), so duplicate strings cannot be found."

// maxPathSections bounds the path sections of the detached query: past
// the first few kinds of path they mostly repeat.
const maxPathSections = 10

// DetachedResult lays out the detached DOM trees of sn, at most limit
// (0 or less: all), largest first: a table of the trees, then a retainer
// path per group of trees held the same way (inspect.GroupPaths), for
// the first maxPathSections groups. internals keeps the embedder's own
// objects V8 marks detached. A heap without DOM, or without a way to tell
// detached nodes, gets a note saying so and no table.
func DetachedResult(sn Snapshot, limit int, internals bool) (*Result, error) {
	a := sn.Analysis
	g := a.Graph
	dr := inspect.DetachedDOM(a, inspect.DetachedOptions{Limit: limit, Internals: internals})
	trees := dr.Trees
	r := &Result{}
	leftOut := ""
	if dr.Internal > 0 {
		leftOut = fmt.Sprintf("V8 marks %s of Node.js's own objects detached (\"Detached Node / BindingData\" and the like in the summary); they are not DOM and are left out (--internals lists them).",
			humanize.Thousands(uint64(dr.Internal)))
	}
	if dr.BlinkInternal > 0 {
		leftOut = strings.TrimSpace(leftOut + " " + fmt.Sprintf("Chromium keeps %s of Blink's own objects detached in trees of no element (\"Detached blink::SpaceSplitString::Data\" and the like); they hold nothing a page can let go of and are left out (--internals lists them).",
			humanize.Thousands(uint64(dr.BlinkInternal))))
	}
	if len(trees) == 0 {
		switch dr.Source {
		case inspect.NoDOM:
			r.Notes = append(r.Notes, "This heap has no DOM (no node of the dump is a DOM node), so nothing can be detached.")
		case inspect.DOMNamesOnly:
			r.Notes = append(r.Notes, "No detached DOM node found. This dump does not say which DOM nodes are detached (Chrome's snapshots mark them, Firefox's have their child edges), so only nodes already named \"Detached ...\" could be found.")
		default:
			r.Notes = append(r.Notes, "No detached DOM node: every DOM node in the snapshot is attached to a document.")
		}
		if leftOut != "" {
			r.Notes = append(r.Notes, leftOut)
		}
		return r, nil
	}
	nm := analysis.NewNamer(g, a.DOM)
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "rank", Title: "#", Kind: Count}, {Key: "root", Title: "Tree root", Kind: Text},
		{Key: "elements", Title: "Elements", Kind: Count}, {Key: "nodes", Title: "Nodes", Kind: Count},
		colRetained, colPercent, {Key: "held_by", Title: "Held by", Kind: Text}}}
	r.Sections = []*Section{{Heading: "Detached DOM trees", Table: t}}
	var elements, nodes int
	var retained uint64
	paths := make([]analysis.Path, len(trees))
	for i, tr := range trees {
		elements += tr.Elements
		nodes += tr.Nodes
		retained += tr.Retained
		paths[i] = tr.Path
		heldBy := ""
		if s := tr.Path.Steps; len(s) > 0 {
			last := s[len(s)-1]
			heldBy = objectName(a, nm, last.From) + " " + Shorten(analysis.EdgeString(g, last.Edge), MaxNameWidth)
		}
		t.Rows = append(t.Rows, []any{i + 1, objectName(a, nm, tr.Root), tr.Elements, tr.Nodes, tr.Retained, humanize.Share(tr.Retained, total), heldBy})
	}
	groups := inspect.GroupPaths(a, paths)
	for gi, gr := range groups {
		if gi == maxPathSections {
			break
		}
		r.Sections = append(r.Sections, detachedPathSection(a, nm, trees, gr))
	}
	which := "The"
	more := len(trees) < dr.Total
	if more {
		which = "The largest" // -n cut the list
	}
	r.Notes = append(r.Notes, fmt.Sprintf("%s %s trees hold %s detached elements (%s nodes with their text and data) and retain %s.",
		which, humanize.Thousands(uint64(len(trees))), humanize.Thousands(uint64(elements)), humanize.Thousands(uint64(nodes)), humanize.Size(retained)))
	if more {
		r.Notes = append(r.Notes, fmt.Sprintf("There are %s trees in all: -n 0 shows all.", humanize.Thousands(uint64(dr.Total))))
	}
	switch dr.Source {
	case inspect.DOMDetachedness:
		r.Notes = append(r.Notes, "Elements are counted as DevTools counts them (\"Detached <p>\"): the detached nodes named after a tag, those made by innerHTML inside a detached tree included; the nodes add their text and data.")
	case inspect.DOMChildEdges:
		r.Notes = append(r.Notes, "Firefox does not mark detached nodes: these are the DOM nodes no document reaches through child-node edges.")
	case inspect.DOMNamesOnly:
		r.Notes = append(r.Notes, "This dump does not say which DOM nodes are detached: only nodes already named \"Detached ...\" were found.")
	case inspect.NoDOM:
		r.Notes = append(r.Notes, "This heap has no DOM: these are the embedder's own objects V8 marks detached (--internals).")
	}
	if leftOut != "" {
		r.Notes = append(r.Notes, leftOut)
	}
	if len(groups) > maxPathSections {
		r.Notes = append(r.Notes, fmt.Sprintf("Retainer paths are shown for the first %d ways the trees are held; 'heapx paths --id ID' shows any other tree's.", maxPathSections))
	}
	return r, nil
}

// detachedPathSection lays out the retainer path of one group of trees:
// the first member's path, with the edges where the members differ
// written as the range of their indexes ("[0…9]").
func detachedPathSection(a *analysis.Analysis, nm *analysis.Namer, trees []inspect.DetachedTree, gr inspect.PathGroup) *Section {
	first := trees[gr.Members[0]]
	ranks := make([]int, len(gr.Members))
	var retained uint64
	for i, m := range gr.Members {
		ranks[i] = m + 1
		retained += trees[m].Retained
	}
	sec := &Section{Heading: fmt.Sprintf("Tree %d: %s, retaining %s", ranks[0], Shorten(first.Name, MaxNameWidth), humanize.Size(retained))}
	if len(ranks) > 1 {
		sec.Heading = fmt.Sprintf("Trees %s: %s trees like %s, retaining %s", rankList(ranks), humanize.Thousands(uint64(len(ranks))),
			Shorten(first.Name, MaxNameWidth), humanize.Size(retained))
	}
	if len(first.Path.Steps) == 0 {
		sec.Notes = []string{"No retainer path reaches the tree's root from the roots."}
		if len(ranks) > 1 {
			sec.Notes = []string{"No retainer path reaches these trees' roots from the roots."}
		}
		return sec
	}
	labels := map[int]string{}
	var ranges []string
	for i := range first.Path.Steps {
		if gr.Low[i] != gr.High[i] {
			labels[i] = edgeRange(a.Graph, gr.Low[i], gr.High[i])
			ranges = append(ranges, labels[i])
		}
	}
	sec.Table = labelledPathTable(a, nm, first.Path, labels)
	sec.Notes = []string{"The shortest retainer path to the tree's root, from the root."}
	if len(ranks) > 1 {
		sec.Notes = []string{fmt.Sprintf("The shortest retainer paths to the trees' roots, from the root: they differ only in the index at %s; the objects shown are tree %d's.",
			strings.Join(ranges, ", "), ranks[0])}
		if len(ranges) == 0 {
			sec.Notes = []string{fmt.Sprintf("The shortest retainer paths to the trees' roots, from the root: they go through objects of the same classes; the objects shown are tree %d's.", ranks[0])}
		}
	}
	return sec
}

// edgeRange writes the edges low and high, which differ only in an index,
// as one edge with the index range: "[0]" and "[9]" give "[0…9]",
// ".objectElements[0]" and ".objectElements[19]" give
// ".objectElements[0…19]".
func edgeRange(g *model.Graph, low, high uint32) string {
	lo, hi := analysis.EdgeString(g, low), analysis.EdgeString(g, high)
	cut := func(s string) (string, string, string, bool) {
		if len(s) < 3 {
			return "", "", "", false
		}
		end := len(s) - 1 // the closing bracket
		i := end
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		return s[:i], s[i:end], s[end:], i < end
	}
	lp, ln, le, ok1 := cut(lo)
	hp, hn, he, ok2 := cut(hi)
	if !ok1 || !ok2 || lp != hp || le != he {
		return lo + " … " + hi
	}
	return lp + ln + "…" + hn + le
}

// rankList writes ascending ranks compactly: "1-10", "1, 3, 5-7".
func rankList(ranks []int) string {
	var b strings.Builder
	for i := 0; i < len(ranks); {
		j := i
		for j+1 < len(ranks) && ranks[j+1] == ranks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(ranks[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ranks[j]))
		}
		i = j + 1
	}
	return b.String()
}

func closuresResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "function", Title: "Function", Kind: Text}, colCount,
		{Key: "contexts", Title: "Contexts", Kind: Count}, {Key: "context_retained", Title: "Context retained", Kind: Bytes},
		{Key: "context_percent", Title: "%", Kind: Percent}, {Key: "variables", Title: "Captured variables", Kind: Text},
		{Key: "largest", Title: "Largest captured value", Kind: Text}, {Key: "largest_retained", Title: "Its retained size", Kind: Bytes}}}
	// V8 writes where each function is defined; other runtimes do not,
	// and get no location columns.
	located := len(a.Graph.Locations) > 0
	if located {
		t.Columns = append(t.Columns, Column{Key: "location", Title: "Defined at", Kind: Text},
			Column{Key: "places", Title: "Places", Kind: Count})
	}
	for _, r := range inspect.Closures(a, limit) {
		largest := ""
		if r.Largest != model.NoNode {
			largest = Shorten(r.LargestVar, 24) + " = " + objectName(a, nm, r.Largest)
		}
		row := []any{Shorten(r.Name, MaxNameWidth), r.Count, r.Contexts, r.ContextRetained,
			humanize.Share(r.ContextRetained, total), Shorten(strings.Join(r.Variables, ", "), MaxNameWidth), largest, r.LargestRetained}
		if located {
			row = append(row, frameLocation(r.Location), r.Places)
		}
		t.Rows = append(t.Rows, row)
	}
	return &Result{Sections: []*Section{{Heading: "Closures by function name, largest captured size first", Table: t,
		Chart: &Chart{Label: "function", Value: "context_retained"}}}}, nil
}

func collectionsResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	total := a.TotalSize()
	t := &Table{Columns: []Column{colObject, colClass, {Key: "elements", Title: "Elements", Kind: Count}, colRetained, colPercent}}
	for _, r := range inspect.Collections(a, limit) {
		t.Rows = append(t.Rows, []any{objectName(a, nm, r.Node), Shorten(r.Class, MaxNameWidth), r.Elements, r.Retained, humanize.Share(r.Retained, total)})
	}
	return &Result{Sections: []*Section{{Heading: "Collections by element count", Table: t,
		Chart: &Chart{Label: "object", Value: "retained_size"}}}}, nil
}

func shapesResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "shape", Title: "Shape", Kind: Text}, {Key: "properties", Title: "Properties", Kind: Count},
		colCount, colShallow, colRetained, colPercent, {Key: "example", Title: "Example", Kind: ID}}}
	for _, r := range inspect.ObjectShapes(a, limit) {
		shape := r.Name + " {" + strings.Join(r.Properties, ", ") + "}"
		t.Rows = append(t.Rows, []any{Shorten(shape, MaxNameWidth), len(r.Properties), r.Count, r.Shallow, r.Retained,
			humanize.Share(r.Retained, total), IDValue(a.Graph, a.Graph.NodeID(r.Example))})
	}
	return &Result{Sections: []*Section{{Heading: "Object shapes (constructor and property names), largest retained size first", Table: t,
		Chart: &Chart{Label: "shape", Value: "retained_size"}}}}, nil
}

func globalsResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "name", Title: "Variable", Kind: Text}, colObject, colClass, colRetained, colPercent}}
	for _, r := range inspect.GlobalVariables(a, limit) {
		t.Rows = append(t.Rows, []any{Shorten(r.Name, MaxNameWidth), objectName(a, nm, r.Node), Shorten(r.Class, MaxNameWidth),
			r.Retained, humanize.Share(r.Retained, total)})
	}
	r := &Result{Sections: []*Section{{Heading: "Global variables, largest retained size first", Table: t,
		Chart: &Chart{Label: "name", Value: "retained_size"}}}}
	if len(t.Rows) == 0 {
		r.Notes = []string{"No user-defined global variable found."}
	}
	return r, nil
}

// classInstances returns the nodes whose class is named name, in node
// order, and the class names that matched. Several classes can share a
// name (one per allocation site); all of them count. When no class has
// exactly that name, the classes whose name differs only in case match
// ("leakeditem" finds LeakedItem); when none does either, the error names
// the classes whose names are closest (see classSuggestions).
func classInstances(a *analysis.Analysis, name string) ([]model.NodeIndex, []string, error) {
	if a.Classes == nil {
		return nil, nil, fmt.Errorf("this analysis needs class names, which were not computed")
	}
	match := make([]bool, len(a.Classes.Names))
	var matched []string
	for _, fold := range []bool{false, true} {
		for c, n := range a.Classes.Names {
			match[c] = n == name || fold && strings.EqualFold(n, name)
			if match[c] && !slices.Contains(matched, n) {
				matched = append(matched, n)
			}
		}
		if matched != nil {
			break
		}
	}
	if matched == nil {
		msg := fmt.Sprintf("no class named %q (the names are the summary's Constructor column)", name)
		if s := classSuggestions(a, name, 5); len(s) > 0 {
			msg = fmt.Sprintf("no class named %q; did you mean %s?", name, quotedList(s))
		}
		return nil, nil, errors.New(msg)
	}
	var out []model.NodeIndex
	for v, c := range a.Classes.Of {
		if match[c] {
			out = append(out, model.NodeIndex(v))
		}
	}
	return out, matched, nil
}

// maxMergedDepth bounds the depth of the merged-paths tree shown. Repeats
// fold (see inspect.MergedPaths), so real trees are shallow, but a chain
// of classes in no repeating order is a tree as deep as itself, and a
// million nested levels are no use to read and overflow the stack of
// every renderer.
const maxMergedDepth = 100

func runMergedPaths(c *Context) (*Result, error) {
	n, err := limit(c, math.MaxInt)
	if err != nil {
		return nil, err
	}
	sn := c.Snapshots[0]
	a := sn.Analysis
	name := c.String("class")
	targets, matched, err := classInstances(a, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sn.Path, err)
	}
	if len(matched) > 1 || matched[0] != name {
		name = strings.Join(matched, ", ")
	}
	merged := inspect.MergedPaths(a, targets)
	nm := analysis.NewNamer(a.Graph, a.DOM)
	tree := &Tree{Columns: []Column{{Key: "edge", Title: "Edge", Kind: Text}, colClass,
		{Key: "objects", Title: "Objects", Kind: Count}, colRetained,
		{Key: "ends", Title: "Ending here", Kind: Count}, {Key: "example", Title: "Example", Kind: Text}}}
	// Preorder lists parents before children, so a prefix of it is a
	// tree, and so is what is left when the nodes below a depth go. The
	// rows down to where the largest branch's objects accumulate come
	// whatever -n says.
	must := holderChain(merged)
	nodes := make([]*TreeNode, len(merged))
	shown, deep := 0, 0
	for i, m := range merged {
		if m.Depth > maxMergedDepth {
			deep++
			continue
		}
		if shown >= n && !must[i] || m.Parent >= 0 && nodes[m.Parent] == nil {
			continue
		}
		shown++
		edge := Shorten(m.Edge, MaxNameWidth)
		if m.Slots && m.Parent >= 0 {
			edge = slotsLabel(merged, i)
		}
		if m.Hops > 1 {
			edge += fmt.Sprintf(" (up to %s hops)", humanize.Thousands(uint64(m.Hops)))
		}
		nodes[i] = &TreeNode{Values: []any{edge, Shorten(m.Class, MaxNameWidth), m.Objects, m.Retained, m.Ends,
			objectName(a, nm, m.Example)}}
		if m.Parent < 0 {
			tree.Roots = append(tree.Roots, nodes[i])
		} else {
			p := nodes[m.Parent]
			p.Children = append(p.Children, nodes[i])
		}
	}
	reached := merged[0].Objects
	r := &Result{
		Header: []string{fmt.Sprintf("Shortest retainer paths of the %s instances of %s, merged by class and edge",
			humanize.Thousands(uint64(len(targets))), Shorten(name, MaxNameWidth))},
		Sections: []*Section{{Tree: tree, Notes: shownNote(shown, len(merged)-deep, "tree nodes")}},
	}
	if deep > 0 {
		r.Sections[0].Notes = append(r.Sections[0].Notes, fmt.Sprintf("%s tree nodes more than %d edges from the root are not shown.",
			humanize.Thousands(uint64(deep)), maxMergedDepth))
	}
	if un := len(targets) - reached; un > 0 {
		r.Notes = []string{fmt.Sprintf("%s instances have no retainer path from the roots and are left out.", humanize.Thousands(uint64(un)))}
	}
	return r, nil
}

// holderChain marks the merged nodes from the root down the largest
// branch to where its objects accumulate: while a node's first (largest)
// child holds more than half of the node's objects. -n never cuts the
// tree above the collection that holds them.
func holderChain(merged []inspect.MergedPathNode) []bool {
	must := make([]bool, len(merged))
	if len(merged) == 0 {
		return must
	}
	first := make([]int32, len(merged)) // the first child in preorder, 0 for none
	for i := len(merged) - 1; i > 0; i-- {
		first[merged[i].Parent] = int32(i)
	}
	for i := int32(0); ; {
		must[i] = true
		c := first[i]
		if c == 0 || merged[c].Depth > maxMergedDepth || 2*merged[c].Objects <= merged[i].Objects {
			return must
		}
		i = c
	}
}

// slotsLabel names the merged slots of a collection (node i of merged,
// MergedPathNode.Slots) after the collection and what holds it: "entries
// of requestLog (Map)" for a Map's or a Set's table, "elements of change
// (Array)" for an array; "[]" when nothing names the holder.
func slotsLabel(merged []inspect.MergedPathNode, i int) string {
	m := merged[i]
	what, coll := "elements", merged[m.Parent]
	if m.Edge == "[]" && coll.Edge == "{table}" && coll.Parent >= 0 {
		what, coll = "entries", merged[coll.Parent]
	}
	name := strings.TrimLeft(coll.Edge, ".->")
	if name == "" || strings.ContainsAny(name, "[]{}") || coll.Parent < 0 {
		return "[]"
	}
	return fmt.Sprintf("%s of %s (%s)", what, Shorten(name, MaxNameWidth), Shorten(coll.Class, MaxNameWidth))
}

func runDominators(c *Context) (*Result, error) {
	n, err := limit(c, math.MaxInt)
	if err != nil {
		return nil, err
	}
	sn := c.Snapshots[0]
	a := sn.Analysis
	parent := a.Graph.Root
	if id := c.String("id"); id != "" {
		if parent, err = nodeByID(sn, id); err != nil {
			return nil, err
		}
	}
	nm := analysis.NewNamer(a.Graph, a.DOM)
	total := a.TotalSize()
	pr := ShownNode(a, nm, parent)
	r := &Result{Header: []string{fmt.Sprintf("Children of %s in the dominator tree (its retained size %s, shallow size %s)",
		ObjectName(pr), humanize.Size(pr.RetainedSize), humanize.Size(pr.ShallowSize))}}
	var sum uint64
	if c.Bool("by-class") {
		if a.Classes == nil {
			return nil, fmt.Errorf("--by-class needs class names, which were not computed")
		}
		t := &Table{Columns: []Column{colClass, colCount, colShallow, colRetained, colPercent,
			{Key: "example", Title: "Largest", Kind: Text}}}
		for _, cg := range inspect.DominatedByClass(a, parent, n) {
			sum += cg.Retained
			t.Rows = append(t.Rows, []any{Shorten(cg.Class, MaxNameWidth), cg.Count, cg.Shallow, cg.Retained, humanize.Share(cg.Retained, total),
				objectName(a, nm, cg.Example)})
		}
		r.Sections = []*Section{{Heading: "Dominator-tree children by class", Table: t, Chart: &Chart{Label: "constructor", Value: "retained_size"}}}
	} else {
		t := &Table{Columns: []Column{colObject, colClass, colDistance, colShallow, colRetained, colPercent}}
		for _, row := range inspect.DominatedBy(a, parent, n) {
			sum += row.Retained
			o := NewNodeJSON(a.Graph, row)
			t.Rows = append(t.Rows, []any{ObjectName(o), Shorten(o.Constructor, MaxNameWidth), o.Distance, o.ShallowSize, o.RetainedSize,
				humanize.Share(o.RetainedSize, total)})
		}
		r.Sections = []*Section{{Heading: "Dominator-tree children", Table: t, Chart: &Chart{Label: "object", Value: "retained_size"}}}
	}
	if len(r.Sections[0].Table.Rows) == 0 {
		r.Notes = []string{"Nothing is dominated by this node: it keeps only itself alive."}
		return r, nil
	}
	rest := "its own shallow size"
	if sum+pr.ShallowSize < pr.RetainedSize {
		rest += " and the children -n left out"
	}
	r.Notes = []string{fmt.Sprintf("The rows retain %s of the node's %s; the rest is %s.", humanize.Size(sum), humanize.Size(pr.RetainedSize), rest)}
	return r, nil
}

// notJava is what the class-loader view says about a heap that is not
// Java's.
const notJava = "Class loaders are Java's: this is not a Java heap dump (HPROF), so there are none to show."

// classLoadersResult lays out inspect.ClassLoaders: the loaders, at most
// limit (0 or less: all), with the way each is held, then the classes
// defined by more than one loader, at most limit names.
func classLoadersResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	rep := inspect.ClassLoaders(a)
	if rep == nil {
		return &Result{Notes: []string{notJava}}, nil
	}
	g := a.Graph
	nm := analysis.NewNamer(g, a.DOM)
	loaders := rep.Loaders
	if limit > 0 && len(loaders) > limit {
		loaders = loaders[:limit]
	}
	var targets []model.NodeIndex
	for _, l := range loaders {
		if l.Node != model.NoNode {
			targets = append(targets, l.Node)
		}
	}
	paths := a.ShortestPaths(targets)
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "loader", Title: "Class loader", Kind: Text}, {Key: "classes", Title: "Classes", Kind: Count},
		{Key: "instances", Title: "Instances", Kind: Count}, colRetained,
		{Key: "with_classes", Title: "With its classes", Kind: Bytes}, colPercent, {Key: "held_by", Title: "Held by", Kind: Text}}}
	for _, l := range loaders {
		if l.Node == model.NoNode {
			t.Rows = append(t.Rows, []any{loaderLabel(a, nm, l.Node, ""), l.Classes, l.Instances, nil, l.WithClasses, humanize.Share(l.WithClasses, total), "the JVM"})
			continue
		}
		t.Rows = append(t.Rows, []any{loaderLabel(a, nm, l.Node, l.Name), l.Classes, l.Instances, l.Retained, l.WithClasses,
			humanize.Share(l.WithClasses, total), rootedBy(a, nm, paths[0])})
		paths = paths[1:]
	}
	r := &Result{Sections: []*Section{{Heading: "Class loaders, keeping the most alive first", Table: t,
		Chart: &Chart{Label: "loader", Value: "with_classes"}, Notes: shownNote(len(loaders), len(rep.Loaders), "class loaders")}}}
	names := map[model.NodeIndex]string{}
	for _, l := range rep.Loaders {
		names[l.Node] = l.Name
	}
	r.Sections = append(r.Sections, duplicateClassesSection(a, nm, rep.Duplicates, names, limit))
	return r, nil
}

// loaderLabel is a class loader as the class-loader view names it: its
// object with the name it was given, "java.net.URLClassLoader "plugins"
// @0x1f08".
func loaderLabel(a *analysis.Analysis, nm *analysis.Namer, v model.NodeIndex, name string) string {
	if v == model.NoNode {
		return "(bootstrap loader)"
	}
	label := objectName(a, nm, v)
	if name == "" {
		return label
	}
	class, id, _ := strings.Cut(label, " @")
	return class + " " + strconv.Quote(name) + " @" + id
}

// rootedBy writes how a retainer path leaves the GC roots, the last
// static field it goes through (what a leak of a class loader most often
// is) and how it reaches its target: "sticky class: class Main @0x10
// .app → … → class Cache @0x18 .MAP → … → class Widget @0x20
// {<classloader>}".
func rootedBy(a *analysis.Analysis, nm *analysis.Namer, p analysis.Path) string {
	g := a.Graph
	s := p.Steps
	switch {
	case p.Cost < 0:
		return "unreachable"
	case len(s) == 0:
		return ""
	case len(s) == 1:
		return "GC root: " + g.EdgeName(s[0].Edge)
	}
	hop := func(i int) string {
		return objectName(a, nm, s[i].From) + " " + Shorten(analysis.EdgeString(g, s[i].Edge), MaxNameWidth)
	}
	text := g.EdgeName(s[0].Edge) + ": " + hop(1)
	last := len(s) - 1
	shown := 1
	for i := last - 1; i > 1; i-- {
		if g.EdgeType(s[i].Edge).Name == "static" {
			if i > shown+1 {
				text += " → …"
			}
			text += " → " + hop(i)
			shown = i
			break
		}
	}
	if last > shown {
		if last > shown+1 {
			text += " → …"
		}
		text += " → " + hop(last)
	}
	return text
}

// duplicateClassesSection lays out the classes defined by more than one
// loader, a row per definition, at most limit names (0 or less: all).
func duplicateClassesSection(a *analysis.Analysis, nm *analysis.Namer, dups []inspect.DuplicateClass, names map[model.NodeIndex]string, limit int) *Section {
	shown := dups
	if limit > 0 && len(shown) > limit {
		shown = shown[:limit]
	}
	t := &Table{Columns: []Column{{Key: "class", Title: "Class", Kind: Text}, {Key: "class_id", Title: "Class object", Kind: ID},
		{Key: "loader", Title: "Defined by", Kind: Text}, {Key: "instances", Title: "Instances", Kind: Count}, colRetained}}
	for _, d := range shown {
		for _, def := range d.Definitions {
			t.Rows = append(t.Rows, []any{Shorten(d.Name, MaxNameWidth), IDValue(a.Graph, a.Graph.NodeID(def.Class)),
				loaderLabel(a, nm, def.Loader, names[def.Loader]), def.Instances, def.Retained})
		}
	}
	sec := &Section{Heading: "Classes defined by more than one loader", Table: t, Notes: shownNote(len(shown), len(dups), "class names")}
	if len(dups) == 0 {
		sec.Table = nil
		sec.Notes = []string{"No class is defined by more than one loader."}
	}
	return sec
}
