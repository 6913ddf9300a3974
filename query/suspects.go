package query

import (
	"fmt"
	"slices"
	"strconv"
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
		{Key: "class_retained", Title: "Class retained", Kind: Bytes},
		{Key: "holder_name", Title: "Held as", Kind: Text}, {Key: "machinery", Title: "Through", Kind: Text},
		{Key: "classes", Title: "Classes", Kind: Text}, {Key: "held_through", Title: "Held by functions", Kind: Text}}}
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
	points := make([]model.NodeIndex, len(sus))
	for i, s := range sus {
		points[i] = s.Point
	}
	paths := a.ShownPaths(points)
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
			Shorten(heldBy(a, s, " "), 2*MaxNameWidth), class, Shorten(shape, MaxNameWidth), Shorten(via, MaxNameWidth),
			Shorten(linkedBy(a, s), MaxNameWidth), s.Count, s.ClassRetained,
			holderName(a, s, true), machineryText(s), Shorten(classesText(a, s.Classes, 0, true), 2*MaxNameWidth),
			Shorten(classesText(a, s.Through, 0, true), 2*MaxNameWidth)})
		if sites {
			t.Rows[i] = append(t.Rows[i], siteJSONText(NewSiteJSON(s.Site)))
		}
		sec := &Section{Heading: fmt.Sprintf("Suspect %d: %s", i+1, suspectSentence(a, s, holder, point, class, shape, via, total)),
			Ref: fmt.Sprintf("Suspect %d", i+1)}
		if p := paths[i]; p.Cost >= 0 {
			sec.Table, sec.Path = pathTable(a, nm, p), pathNodes(g, p)
			sec.Notes = []string{"The retainer path to the accumulation point, from the root."}
		} else {
			sec.Notes = []string{"No retainer path reaches the accumulation point from the roots."}
		}
		sec.Notes = append(sec.Notes, suspectNotes(a, s)...)
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
		// The closures and scopes between the items of the
		// shared-context leak are how they link, not what they are.
		to := g.Edges.To[e]
		if cat := g.NodeType(to).Category; cat == model.CatClosure || strings.HasPrefix(g.NodeName(to), "system / ") {
			continue
		}
		if name := a.Classes.Name(to); !slices.Contains(names, name) {
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
	if name := g.EdgeName(f.Edge); strings.Contains(name, "part of key") && strings.Contains(name, "pair in WeakMap") {
		// V8's edge from a WeakMap key to its value.
		return "the value of a WeakMap keyed by " + objectName(a, analysis.NewNamer(g, a.DOM), f.Owner)
	}
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
	if s.Machinery == leak.Listeners && s.HolderField != nil {
		name, _ := variableParts(a, *s.HolderField, true)
		return fmt.Sprintf("%s listeners of %s", eventsText(s.Event), name)
	}
	var parts []string
	for _, f := range s.Fields {
		name := variableText(a, f, true)
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

// suspectSentence says what a suspect is in one sentence: who holds it
// (the variable or field, where it is, the object), how much it retains,
// where in it the memory accumulates, and what accumulates (classes and
// counts, the functions holding them). Scripts are named by their file
// name: the table's columns have their whole URLs.
func suspectSentence(a *analysis.Analysis, s leak.Suspect, holder string, point NodeJSON, class, shape, via string, total uint64) string {
	share := fmt.Sprintf("%s (%s of the heap)", humanize.Size(s.Retained), humanize.Percent(s.Retained, total))
	who := holder
	if s.HolderField != nil {
		name, where := variableParts(a, *s.HolderField, true)
		who = fmt.Sprintf("%s (%s)", name, strings.Join(nonEmpty(holder, where), ", "))
	}
	what := classesText(a, s.Classes, 3, true)
	if s.Links != nil {
		what = fmt.Sprintf("a linked list of %s %s (via %s)", humanize.Thousands(uint64(s.Count)), class, linkedBy(a, s))
		if more := classesText(a, s.Classes[1:], 2, true); more != "" {
			what += " holding " + more
		}
	}
	if shape != "" {
		if s.ShapeCount == s.Count {
			what += " " + shape
		} else {
			what += fmt.Sprintf(" (%s of them %s)", humanize.Thousands(uint64(s.ShapeCount)), shape)
		}
	}
	if via != "" && s.Machinery == leak.NoMachinery {
		what += fmt.Sprintf(" (in %s entries)", via)
	}
	if s.Detached {
		what = fmt.Sprintf("%s detached DOM trees (%s, %s nodes) retaining %s", humanize.Thousands(uint64(s.Count)), class,
			humanize.Thousands(uint64(s.DetachedNodes)), humanize.Size(s.ClassRetained))
	}
	if len(s.Through) > 0 {
		what += ", held by " + classesText(a, s.Through, 3, true)
	}
	if s.Shared {
		return fmt.Sprintf("%s retaining %s (%s of the heap) are held by %s, so no one object retains them: %s, which holds the most, retains %s.",
			what, humanize.Size(s.ClassRetained), humanize.Percent(s.ClassRetained, total), heldBy(a, s, " and "), who, humanize.Size(s.Retained))
	}
	switch s.Machinery {
	case leak.Listeners:
		return fmt.Sprintf("%s retains %s in its %s listeners: %s.", who, share, eventsText(s.Event), what)
	case leak.PendingPromise:
		return fmt.Sprintf("%s, a pending promise, retains %s in what waits for it to settle: %s.", who, share, what)
	case leak.Timers:
		return fmt.Sprintf("Node's list of %s ms timers (%s) retains %s: %s.", s.Event, holder, share, what)
	}
	where := ""
	switch {
	case pointsOwn(s):
		word := "field"
		if len(s.Fields) > 1 {
			word = "fields"
		}
		where = fmt.Sprintf(" through its %s %s", word, heldBy(a, s, " and "))
	case s.Holder != s.Point && len(s.Fields) == 1:
		name, at := variableParts(a, s.Fields[0], true)
		where = fmt.Sprintf(" in %s (%s)", name, strings.Join(nonEmpty(ObjectName(point), at), ", "))
	case s.Holder != s.Point:
		where = " in " + ObjectName(point)
		if fields := heldBy(a, s, " and "); fields != "" {
			where += " held by " + fields
		}
	}
	return fmt.Sprintf("%s retains %s%s: %s.", who, share, where, what)
}

// suspectNotes list a suspect's classes and functions in full, with what
// each retains and the functions' whole script URLs, when there are
// more than the sentence names, and where the holder is.
func suspectNotes(a *analysis.Analysis, s leak.Suspect) []string {
	var notes []string
	list := func(cs []leak.SuspectClass) string {
		var parts []string
		for _, c := range cs {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", humanize.Thousands(uint64(c.Count)), suspectClassName(a, c, false), humanize.Size(c.Retained)))
		}
		return strings.Join(parts, ", ")
	}
	if len(s.Classes) > 1 {
		notes = append(notes, "Accumulated classes: "+list(s.Classes)+".")
	}
	if len(s.Through) > 0 {
		notes = append(notes, "Held by functions: "+list(s.Through)+".")
	}
	if name := holderName(a, s, false); name != holderName(a, s, true) {
		notes = append(notes, "Holder: "+name+".")
	}
	return notes
}

// eventsText quotes the events of a Listeners suspect ("error, event"
// becomes "error" and "event").
func eventsText(events string) string {
	var q []string
	for _, e := range strings.Split(events, ", ") {
		q = append(q, strconv.Quote(e))
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// nonEmpty returns its arguments that are not "".
func nonEmpty(ss ...string) []string {
	return slices.DeleteFunc(ss, func(s string) bool { return s == "" })
}

// pointsOwn reports whether the point's own fields hold a suspect's
// objects (a Java class's static fields).
func pointsOwn(s leak.Suspect) bool { return len(s.Fields) > 0 && s.Fields[0].Owner == s.Point }

// holderName says how the program names a suspect's holder: the
// variable or field holding it, and where that variable is
// ("requestLog (module scope of /srv/app.js)", "cache (captured by
// memoized at /srv/app.js:30:10)"); "" when nothing names it.
func holderName(a *analysis.Analysis, s leak.Suspect, short bool) string {
	if s.HolderField == nil {
		return ""
	}
	return variableText(a, *s.HolderField, short)
}

// variableText is a field as variableParts says it, on one line.
func variableText(a *analysis.Analysis, f leak.SuspectField, short bool) string {
	name, where := variableParts(a, f, short)
	if where == "" {
		return name
	}
	return name + " (" + where + ")"
}

// variableParts names a field as fieldName does, but a variable of a
// scope by its name alone, and says where the variable is: in a module's
// scope (its script), or captured by a function (where it is defined);
// short names scripts by their file name.
func variableParts(a *analysis.Analysis, f leak.SuspectField, short bool) (name, where string) {
	g := a.Graph
	if g.EdgeType(f.Edge).Category != model.EdgeContext || (!f.Module && f.Function < 0) {
		return fieldName(a, f), ""
	}
	name = g.EdgeName(f.Edge)
	loc := f.Location
	if short {
		loc.URL = scriptFile(loc.URL)
	}
	switch {
	case f.Module && loc.URL != "":
		return name, "module scope of " + loc.URL
	case f.Module:
		return name, "a module scope"
	case loc.URL != "":
		return name, fmt.Sprintf("captured by %s at %s", functionName(loc), frameLocation(loc))
	}
	return name, "captured by " + g.NodeName(f.Function)
}

// scriptFile is a script's file name, with the directory for an index
// file ("app.js", "router/index.js"); a URL without a path as it is.
func scriptFile(url string) string {
	i := strings.LastIndexByte(url, '/')
	if i < 0 || i == len(url)-1 {
		return url
	}
	if strings.HasPrefix(url[i+1:], "index.") {
		if j := strings.LastIndexByte(url[:i], '/'); j >= 0 {
			return url[j+1:]
		}
	}
	return url[i+1:]
}

// machineryText names the runtime's structure a suspect's holder holds
// its accumulation through: "listeners of \"change\"", "pending promise",
// "timers of 50 ms"; "" for none.
func machineryText(s leak.Suspect) string {
	switch s.Machinery {
	case leak.Listeners:
		return "listeners of " + eventsText(s.Event)
	case leak.PendingPromise:
		return "pending promise"
	case leak.Timers:
		return "timers of " + s.Event + " ms"
	}
	return ""
}

// classesText lists classes with their counts, largest share first
// ("2,020 Quote and 2,020 QuoteRequest"), functions by name and where
// they are defined ("1,020 onSettingsChange (/srv/app.js:33:28)"); at
// most limit of them and how many more (0: all); short names scripts
// by their file name.
func classesText(a *analysis.Analysis, cs []leak.SuspectClass, limit int, short bool) string {
	var parts []string
	for i, c := range cs {
		if limit > 0 && i == limit {
			more := "classes"
			if len(cs)-i == 1 {
				more = "class"
			}
			if cs[i].Function >= 0 {
				more = "functions"
			}
			parts = append(parts, fmt.Sprintf("%d more %s", len(cs)-i, more))
			break
		}
		parts = append(parts, humanize.Thousands(uint64(c.Count))+" "+suspectClassName(a, c, short))
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// suspectClassName names a class of a suspect: its name, or for
// functions the function's name and where it is defined, "suspended"
// for the objects of suspended async functions (or generators).
func suspectClassName(a *analysis.Analysis, c leak.SuspectClass, short bool) string {
	if c.Function < 0 {
		return Shorten(a.Classes.Names[c.Class], MaxNameWidth)
	}
	name := functionName(c.Location)
	if c.Location.URL == "" {
		name = a.Graph.NodeName(c.Function)
		if name == "" {
			name = "(anonymous)"
		}
	} else {
		loc := c.Location
		if short {
			loc.URL = scriptFile(loc.URL)
		}
		name += " (" + frameLocation(loc) + ")"
	}
	if c.Example != c.Function {
		name = "suspended " + name
	}
	return name
}

func runSuspects(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	r, _, err := SuspectsResult(c.Snapshots[0], c.Float("threshold"), n)
	return r, err
}
