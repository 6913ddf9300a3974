package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

func init() {
	Register(&Query{
		Name: "suspects", Group: GroupLeaks, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Find leak suspects: where a large share of the heap accumulates, in which class, held by which fields",
		Help: `Find leak suspects as Eclipse MAT's Leak Suspects report does: objects
whose retained size is at least --threshold percent of the heap, walked
down the dominator tree to the accumulation point where the memory spreads
over many children, and the class whose instances accumulate there. Each
suspect names the fields that hold the accumulation, looks through
collection internals (HashMap$Node, an ArrayList's Object[], V8's element
stores and Map tables) to the class of the elements, gives the shape of
generic "Object"s, and comes with the shortest retainer path to its
accumulation point. A linked list held by its head (each item dominating
the rest, so the walk finds no point) is found by the hops that repeat
along it and followed to its tail; objects of one class that several
structures share, so that no object dominates them, are a suspect when
one structure holds half of them, with every such structure named.
Detached DOM trees held by one object are suspects from a tenth of the
threshold. Global objects, synthetic roots and the
runtime's own structures (compiled code, internal arrays, Blink's and
Node's C++ objects) are never suspects; "no leak suspect" is an answer.`,
		Args: []Arg{limitArg(10), {Name: "threshold", Kind: FloatArg, Default: 10.0,
			Help: "minimum share of the heap a suspect retains, in percent"}},
		Run: runSuspects,
	})
}

// SuspectsResult computes the leak suspects of sn as a Result: a table of
// the suspects, then one section per suspect with its sentence and the
// path to its accumulation point. It also returns every suspect found,
// largest first, before limit cut the list.
func SuspectsResult(sn Snapshot, threshold float64, limit int) (*Result, []leak.Suspect, error) {
	if threshold <= 0 || threshold > 100 {
		return nil, nil, fmt.Errorf("--threshold must be above 0 and at most 100, not %g", threshold)
	}
	a := sn.Analysis
	g := a.Graph
	all := leak.LeakSuspects(a, leak.SuspectOptions{Threshold: threshold / 100})
	total := a.Dominators.Retained[g.Root]
	sus := all
	if limit > 0 && len(sus) > limit {
		sus = sus[:limit]
	}
	nm := analysis.NewNamer(g, a.DOM)
	node := func(n model.NodeIndex) NodeJSON { return NewNodeJSON(g, a.Row(nm, n)) }
	t := &Table{Columns: []Column{{Key: "rank", Title: "#", Kind: Count}, {Key: "kind", Title: "Kind", Kind: Text},
		{Key: "holder", Title: "Holder", Kind: Text},
		colRetained, colPercent, {Key: "point", Title: "Accumulation point", Kind: Text},
		{Key: "held_by", Title: "Held by", Kind: Text},
		{Key: "class", Title: "Accumulated class", Kind: Text}, {Key: "shape", Title: "Shape", Kind: Text},
		{Key: "via", Title: "Looked through", Kind: Text}, {Key: "linked_by", Title: "Linked by", Kind: Text}, colCount,
		{Key: "class_retained", Title: "Class retained", Kind: Bytes}}}
	// Dumps with allocation stacks say where each accumulation was
	// allocated; others keep the table they always had.
	sites := alloc.HasAllocationStacks(a)
	if sites {
		t.Columns = append(t.Columns, colAllocatedIn)
	}
	hasDOM := inspect.DetachednessSource(a) != inspect.NoDOM
	heading := fmt.Sprintf("Leak suspects (accumulations retaining at least %g%% of %s", threshold, humanize.Size(total))
	if hasDOM {
		heading += fmt.Sprintf(", detached DOM trees %g%%", threshold/10)
	}
	r := &Result{Sections: []*Section{{Heading: heading + ")", Table: t}}}
	for i, s := range sus {
		holder := objectName(a, nm, s.Holder)
		class := Shorten(a.Classes.Names[s.Class], MaxNameWidth)
		shape, via := "", ""
		if s.Shape != nil {
			shape = "{" + strings.Join(s.Shape, ", ") + "}"
		}
		if s.Via != leak.NoClass {
			via = a.Classes.Names[s.Via]
		}
		if s.Links != nil {
			class = Shorten(listClasses(a, s), MaxNameWidth)
		}
		point := node(s.Point)
		t.Rows = append(t.Rows, []any{i + 1, suspectKind(s), holder, s.Retained, humanize.Share(s.Retained, total), ObjectName(point),
			Shorten(heldBy(a, s, " "), MaxNameWidth), class, Shorten(shape, MaxNameWidth), Shorten(via, MaxNameWidth),
			Shorten(linkedBy(a, s), MaxNameWidth), s.Count, s.ClassRetained})
		if sites {
			t.Rows[i] = append(t.Rows[i], siteJSONText(NewSiteJSON(s.Site)))
		}
		sec := &Section{Heading: fmt.Sprintf("Suspect %d: %s", i+1, suspectSentence(a, s, holder, point, class, shape, via, total)),
			Ref: fmt.Sprintf("Suspect %d", i+1)}
		if p := ShownPath(a, s.Point); p.Cost >= 0 {
			sec.Table, sec.Path = pathTable(a, nm, p), pathNodes(g, p)
			sec.Notes = []string{"The retainer path to the accumulation point, from the root."}
		} else {
			sec.Notes = []string{"No retainer path reaches the accumulation point from the roots."}
		}
		if s.Site != nil {
			sec.Notes = append(sec.Notes, fmt.Sprintf("%s of the %s accumulated objects were allocated in %s.",
				humanize.Thousands(uint64(s.Site.Count)), humanize.Thousands(uint64(s.Site.Of)), siteJSONText(NewSiteJSON(s.Site))))
		}
		r.Sections = append(r.Sections, sec)
	}
	if len(sus) == 0 {
		dom := ""
		if hasDOM {
			dom = fmt.Sprintf(", nor detached DOM %g%%", threshold/10)
		}
		r.Notes = []string{fmt.Sprintf("No leak suspect: no accumulation of the program's objects retains %g%% of the heap%s; "+
			"try a lower --threshold.", threshold, dom)}
	}
	return r, all, nil
}

// suspectKind names what a suspect's accumulation is: "accumulation"
// (objects of a class below its point), "linked list", "shared" (objects
// no one object retains) or "detached DOM".
func suspectKind(s leak.Suspect) string {
	switch {
	case s.Detached:
		return "detached DOM"
	case s.Links != nil:
		return "linked list"
	case s.Shared:
		return "shared"
	}
	return "accumulation"
}

// listClasses names the classes of a linked list's items in the order
// they come from its head: "Item", or "Item and Link" for two in turn.
func listClasses(a *analysis.Analysis, s leak.Suspect) string {
	g := a.Graph
	names := []string{a.Classes.Names[s.Class]}
	for _, e := range s.Links {
		if name := a.Classes.Name(g.Edges.To[e]); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// linkedBy spells the edges that chain a linked list's items, each once
// (".next"), element indexes as "[]"; "" for other suspects.
func linkedBy(a *analysis.Analysis, s leak.Suspect) string {
	var parts []string
	for _, e := range s.Links {
		edge := "[]"
		if !a.Graph.EdgeType(e).Indexed {
			edge = analysis.EdgeString(a.Graph, e)
		}
		if !slices.Contains(parts, edge) {
			parts = append(parts, edge)
		}
	}
	return strings.Join(parts, " ")
}

// fieldName writes a field as its program would: "TicketStore.TICKETS"
// for a Java static field, "globalThis.fixture.customers" for what a
// global variable leads to, "onWork's variable retained" for a variable
// a closure's context holds, the root group and its edge for an object
// the runtime holds ("(GC roots){JNI global}"), else the owner's class or
// function and the field ("Session.history").
func fieldName(a *analysis.Analysis, f leak.SuspectField) string {
	g := a.Graph
	edge := analysis.EdgeString(g, f.Edge)
	if f.Base != model.NoNode {
		base := "globalThis"
		if g.NodeType(f.Base).Category == model.CatShape {
			base = strings.TrimPrefix(g.NodeName(f.Base), "class ") // a Java class object
		}
		for _, e := range f.Access {
			base += analysis.EdgeString(g, e)
		}
		return base + edge
	}
	switch {
	case g.NodeType(f.Owner).Category == model.CatSynthetic:
		return g.NodeName(f.Owner) + edge // held by the runtime's roots: "(GC roots){Java frame}"
	case g.EdgeType(f.Edge).Category == model.EdgeContext:
		// The function whose closure holds the context, when one alone
		// does (it dominates the context): "onWork's variable retained".
		if fn := a.Dominators.IDom[f.Owner]; fn >= 0 && g.NodeType(fn).Category == model.CatClosure && g.NodeName(fn) != "" {
			return g.NodeName(fn) + "'s variable " + g.EdgeName(f.Edge)
		}
		return "the closure variable " + g.EdgeName(f.Edge)
	case g.NodeType(f.Owner).Category == model.CatClosure:
		return g.NodeName(f.Owner) + edge // a function's property: the class's static
	}
	return a.Classes.Name(f.Owner) + edge
}

// heldBy lists a suspect's fields, with how many objects each holds where
// there are several, joined by sep.
func heldBy(a *analysis.Analysis, s leak.Suspect, sep string) string {
	var parts []string
	for _, f := range s.Fields {
		name := fieldName(a, f)
		if len(s.Fields) > 1 {
			name += fmt.Sprintf(" (%s)", humanize.Thousands(uint64(f.Count)))
		}
		parts = append(parts, name)
	}
	if len(parts) > 1 && sep == " and " {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, ","+sep)
}

// suspectSentence says what a suspect is in one sentence, in the words of
// MAT's report: who holds the memory, where it accumulates, what
// accumulates there and through which fields.
func suspectSentence(a *analysis.Analysis, s leak.Suspect, holder string, point NodeJSON, class, shape, via string, total uint64) string {
	what := fmt.Sprintf("%s instances of %s", humanize.Thousands(uint64(s.Count)), class)
	if s.Links != nil {
		what = fmt.Sprintf("a linked list of %s %s", humanize.Thousands(uint64(s.Count)), class)
	}
	if shape != "" {
		if s.ShapeCount == s.Count {
			what += " " + shape
		} else {
			what += fmt.Sprintf(" (%s of them %s)", humanize.Thousands(uint64(s.ShapeCount)), shape)
		}
	}
	if via != "" {
		what += fmt.Sprintf(" (in %s entries)", via)
	}
	if s.Links != nil {
		what += fmt.Sprintf(" (via %s)", linkedBy(a, s))
	}
	if s.Detached {
		what = fmt.Sprintf("%s detached DOM trees (%s, %s nodes)", humanize.Thousands(uint64(s.Count)), class, humanize.Thousands(uint64(s.DetachedNodes)))
	}
	what += " retaining " + humanize.Size(s.ClassRetained)
	fields := heldBy(a, s, " and ")
	share := func(n uint64) string {
		return fmt.Sprintf("%s (%s of the heap)", humanize.Size(n), humanize.Percent(n, total))
	}
	if s.Shared {
		return fmt.Sprintf("%s (%s of the heap) are held by %s, so no one object retains them: %s, which holds the most, retains %s.",
			what, humanize.Percent(s.ClassRetained, total), fields, holder, humanize.Size(s.Retained))
	}
	if s.Links != nil {
		if s.Holder == s.Point {
			return fmt.Sprintf("%s, held by %s, retains %s: it is the head of %s.", holder, fields, share(s.Retained), what)
		}
		return fmt.Sprintf("%s retains %s. The memory is accumulated in %s, from its head %s, held by %s.",
			holder, share(s.Retained), what, ObjectName(point), fields)
	}
	own := len(s.Fields) > 0 && s.Fields[0].Owner == s.Point // the point's own fields hold the objects
	text := fmt.Sprintf("%s retains %s", holder, share(s.Retained))
	if s.Holder != s.Point {
		text += fmt.Sprintf(". The memory is accumulated in %s (%s)", ObjectName(point), humanize.Size(point.RetainedSize))
		if fields != "" && !own {
			text += ", held by " + fields
		}
		text += ", which holds " + what
	} else {
		if fields != "" && !own {
			text = fmt.Sprintf("%s, held by %s, retains %s", holder, fields, share(s.Retained))
		}
		text += " and holds " + what
	}
	if own {
		word := "field"
		if len(s.Fields) > 1 {
			word = "fields"
		}
		text += fmt.Sprintf(", through its %s %s", word, fields)
	}
	return text + "."
}

func runSuspects(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	r, _, err := SuspectsResult(c.Snapshots[0], c.Float("threshold"), n)
	return r, err
}
