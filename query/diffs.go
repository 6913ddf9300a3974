package query

import (
	"fmt"

	"github.com/heapx/heapx/analysis"
)

func init() {
	Register(&Query{
		Name: "diff", Group: GroupLeaks, Usage: "BASE TARGET", MinInputs: 2, MaxInputs: 2,
		Title: "Compare two snapshots class by class, like DevTools' Comparison view",
		Help: `Compare TARGET with BASE per class: objects new in TARGET, deleted since
BASE, the count change, the bytes allocated (shallow size of the new
objects) and freed, and the size change. Objects are matched by id when the
two snapshots come from one process (V8 ids are stable there); otherwise
only class counts and sizes are compared, and the output says so.`,
		Args: []Arg{limitArg(20)},
		Run:  runDiff,
	})
	Register(&Query{
		Name: "leaks", Group: GroupLeaks, Usage: "BASELINE TARGET FINAL", MinInputs: 3, MaxInputs: 3,
		Title: "Find objects allocated between two snapshots and still alive in a third (memlab's method)",
		Help: `Find leaks as memlab's find-leaks does: objects allocated after BASELINE
and by TARGET (their ids are in TARGET, not in BASELINE) that are still
alive in FINAL, without numbers, strings, code and VM internals and
without objects retaining no more than --min-retained bytes. A leaked
object dominated by another belongs to that one's leak; the others are
traced by their shortest retainer path in FINAL, and objects whose traces
are similar (memlab's similarity: the same path but for a property name, a
collection slot or the length of a linked list) are one leak, shown with a
count, its classes and one path. Leaks of the engine's own objects (object
shapes, feedback vectors: code being optimised) are left out unless
--internals.
Take BASELINE before the action you suspect, TARGET after it, and FINAL
after undoing it (or after repeating it).`,
		Args: []Arg{limitArg(10), {Name: "min-retained", Kind: SizeArg, Default: uint64(0),
			Help: "ignore leaked objects retaining no more than this"},
			{Name: "internals", Kind: BoolArg, Default: false,
				Help: "also report leaks of the engine's own objects (object shapes, feedback, allocation sites)"}},
		Run: runLeaks,
	})
	Register(&Query{
		Name: "growth", Group: GroupLeaks, Usage: "S1 S2 [S3...]", MinInputs: 2,
		Title: "Find classes and collections that grow in every snapshot of a series",
		Help: `Find the classes whose object count or total size grows from each
snapshot to the next, and the collections (arrays, Map, Set, Java
collections; matched by id across snapshots of one process) whose element
count grows at every step. Give the snapshots oldest first.`,
		Args: []Arg{limitArg(20)},
		Run:  runGrowth,
	})
}

func analyses(c *Context) []*analysis.Analysis {
	out := make([]*analysis.Analysis, len(c.Snapshots))
	for i, s := range c.Snapshots {
		out[i] = s.Analysis
	}
	return out
}

// matchingNote says how objects were matched across snapshots.
func matchingNote(m analysis.Matching, overlap float64) string {
	if m == analysis.MatchByID {
		return fmt.Sprintf("Objects matched by id (%.1f%% of the ids recur: the snapshots come from one process).", 100*overlap)
	}
	return fmt.Sprintf("Only %.1f%% of the ids recur, so the snapshots are not from one process: classes are compared by count and size, objects cannot be matched.", 100*overlap)
}

// DiffResult runs the diff query's analysis and lays it out.
func DiffResult(base, target Snapshot, limit int) (*Result, error) {
	d := analysis.Diff(base.Analysis, target.Analysis)
	if d == nil {
		return nil, fmt.Errorf("diff needs class names in both snapshots")
	}
	t := &Table{Columns: []Column{colClass, {Key: "new", Title: "# New", Kind: Count}, {Key: "deleted", Title: "# Deleted", Kind: Count},
		{Key: "delta", Title: "# Delta", Kind: Delta}, {Key: "alloc_size", Title: "Alloc. size", Kind: Bytes},
		{Key: "freed_size", Title: "Freed size", Kind: Bytes}, {Key: "size_delta", Title: "Size delta", Kind: BytesDelta},
		{Key: "base_count", Title: "Base count", Kind: Count}, {Key: "target_count", Title: "Target count", Kind: Count}}}
	rows := d.Classes
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	for _, c := range rows {
		t.Rows = append(t.Rows, []any{Shorten(c.Name, MaxNameWidth), c.New, c.Deleted, c.Delta, c.AllocSize, c.FreedSize,
			c.SizeDelta, c.BaseCount, c.TargetCount})
	}
	r := &Result{Sections: []*Section{{Table: t, Chart: &Chart{Label: "constructor", Value: "size_delta"}}}}
	r.Notes = []string{matchingNote(d.Matching, d.IDOverlap),
		fmt.Sprintf("%d of %s changed classes; %s new objects (%s), %s deleted (%s); total %s -> %s",
			len(rows), Thousands(uint64(len(d.Classes))), Thousands(uint64(d.New)), HumanSize(d.AllocSize),
			Thousands(uint64(d.Deleted)), HumanSize(d.FreedSize),
			HumanSize(base.Analysis.TotalSize()), HumanSize(target.Analysis.TotalSize()))}
	return r, nil
}

func runDiff(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	return DiffResult(c.Snapshots[0], c.Snapshots[1], n)
}

// LeaksResult runs memlab's leak detection over the three snapshots and
// lays out one section per leak cluster.
func LeaksResult(base, target, final Snapshot, limit int, opt analysis.LeakOptions) (*Result, *analysis.LeakResult, error) {
	opt.Examples = 5
	lr := analysis.Leaks(base.Analysis, target.Analysis, final.Analysis, opt)
	if lr == nil {
		return nil, nil, fmt.Errorf("leaks needs class names in the snapshots")
	}
	a := final.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "rank", Title: "#", Kind: Count}, {Key: "count", Title: "Leaked objects", Kind: Count},
		colRetained, colPercent, {Key: "classes", Title: "Classes", Kind: Text}, {Key: "example", Title: "Example", Kind: Text}}}
	r := &Result{Sections: []*Section{{Heading: "Leaks (objects allocated between BASELINE and TARGET, alive in FINAL)", Table: t}}}
	clusters := lr.Clusters
	if limit > 0 && len(clusters) > limit {
		clusters = clusters[:limit]
	}
	for i, cl := range clusters {
		ex := objectName(a, nm, cl.Representative)
		t.Rows = append(t.Rows, []any{i + 1, cl.Objects, cl.Retained, Share(cl.Retained, total), leakClassesText(cl.Classes), ex})
		sec := &Section{Heading: fmt.Sprintf("Leak %d: %s objects (%s) retained this way", i+1, Thousands(uint64(cl.Objects)), HumanSize(cl.Retained)),
			Table: pathTable(a, nm, cl.Path)}
		r.Sections = append(r.Sections, sec)
	}
	internals := ""
	if !opt.Internals {
		internals = fmt.Sprintf(", %s of the engine's own (--internals shows them)", Thousands(uint64(lr.Internal)))
	}
	r.Notes = []string{matchingNote(lr.Matching, lr.IDOverlap),
		fmt.Sprintf("%s objects allocated between BASELINE and TARGET, %s of them alive in FINAL; not reported: %s numbers, strings, code and VM internals, %s too small, %s without a retainer path%s.",
			Thousands(uint64(lr.Allocated)), Thousands(uint64(lr.Leaked)), Thousands(uint64(lr.Trivial)),
			Thousands(uint64(lr.Small)), Thousands(uint64(lr.NoPath)), internals)}
	return r, lr, nil
}

// leakClassesText lists a cluster's classes: "LeakedItem 500, Array 500".
func leakClassesText(cs []analysis.LeakClass) string {
	s := ""
	for i, c := range cs {
		if i == 3 {
			s += ", …"
			break
		}
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %s", Shorten(c.Name, 24), Thousands(uint64(c.Count)))
	}
	return s
}

func runLeaks(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	r, _, err := LeaksResult(c.Snapshots[0], c.Snapshots[1], c.Snapshots[2], n,
		analysis.LeakOptions{MinRetained: c.Size("min-retained"), Internals: c.Bool("internals")})
	return r, err
}

// GrowthResult lays out the classes and collections growing across snaps.
func GrowthResult(snaps []*analysis.Analysis, limit int) (*Result, *analysis.GrowthResult, error) {
	gr := analysis.Growth(snaps, analysis.GrowthOptions{Limit: limit})
	if gr == nil {
		return nil, nil, fmt.Errorf("growth needs at least two snapshots with class names")
	}
	last := len(snaps) - 1
	ct := &Table{Columns: []Column{colClass, {Key: "first_count", Title: "First count", Kind: Count},
		{Key: "last_count", Title: "Last count", Kind: Count}, {Key: "count_growth", Title: "# Growth", Kind: Delta},
		{Key: "first_size", Title: "First size", Kind: Bytes}, {Key: "last_size", Title: "Last size", Kind: Bytes},
		{Key: "size_growth", Title: "Size growth", Kind: BytesDelta}, {Key: "series", Title: "Counts", Kind: Text}}}
	for _, c := range gr.Classes {
		ct.Rows = append(ct.Rows, []any{Shorten(c.Name, MaxNameWidth), c.Counts[0], c.Counts[last], int64(c.Counts[last] - c.Counts[0]),
			c.Sizes[0], c.Sizes[last], int64(c.Sizes[last]) - int64(c.Sizes[0]), series(c.Counts)})
	}
	cc := &Table{Columns: []Column{{Key: "id", Title: "Collection", Kind: ID}, colClass,
		{Key: "first_elements", Title: "First elements", Kind: Count}, {Key: "last_elements", Title: "Last elements", Kind: Count},
		{Key: "last_retained", Title: "Last retained", Kind: Bytes}, {Key: "series", Title: "Elements", Kind: Text}}}
	for _, c := range gr.Collections {
		cc.Rows = append(cc.Rows, []any{c.ID, Shorten(c.Class, MaxNameWidth), c.Elements[0], c.Elements[last], c.Retained[last], series(c.Elements)})
	}
	r := &Result{Sections: []*Section{
		{Heading: fmt.Sprintf("Classes growing at every step of %d snapshots", len(snaps)), Table: ct},
		{Heading: "Collections growing at every step", Table: cc},
	}, Notes: []string{matchingNote(gr.Matching, gr.IDOverlap)}}
	return r, gr, nil
}

// series writes a count series as "500 → 1,000 → 1,500".
func series(v []int) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " → "
		}
		s += Thousands(uint64(x))
	}
	return s
}

func runGrowth(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	r, _, err := GrowthResult(analyses(c), n)
	return r, err
}
