package query

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
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
		Name: "leaks", Group: GroupLeaks, Usage: "BASELINE TARGET FINAL", MinInputs: 3, MaxInputs: 3, EarlierAsDigests: true,
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
count grows at every step. Give the snapshots oldest first. Classes of
the runtime's own objects (compiled code, maps, internal arrays), which
grow a little as code is compiled whatever the program keeps, are left out
unless --internals.`,
		Args: []Arg{limitArg(20), {Name: "internals", Kind: BoolArg, Default: false,
			Help: "also list classes of the runtime's own objects (compiled code, maps, internal arrays)"}},
		Run: runGrowth,
	})
}

func analyses(c *Context) []*analysis.Analysis {
	out := make([]*analysis.Analysis, len(c.Snapshots))
	for i, s := range c.Snapshots {
		out[i] = s.Analysis
	}
	return out
}

// matchingNote says how objects were matched across snapshots; share is
// the smallest share of a snapshot's objects found again as the same
// objects in the next (leak.PairCheck.SameShare).
func matchingNote(m leak.Matching, share float64, ids leak.IDKind) string {
	switch {
	case m == leak.MatchByID:
		return fmt.Sprintf("Objects matched by id (%.1f%% of the objects are found again: the snapshots come from one process).", 100*share)
	case ids == leak.AddressIDs && share >= leak.StableIDFraction:
		return "Classes compared by count and size, as MAT and Firefox compare dumps: this runtime's ids are addresses, which the garbage collector changes when it moves an object, so objects are not matched by id."
	}
	by := "id"
	if ids == leak.AddressIDs {
		by = "address"
	}
	return fmt.Sprintf("Classes compared by count and size: only %.1f%% of the objects are found again by %s, so the snapshots are not from one process and objects cannot be matched.", 100*share, by)
}

// SeriesRules say how a command takes its snapshots, for the messages of
// CheckSeries.
type SeriesRules struct {
	// Expected says which order the command expects ("BASELINE, TARGET,
	// FINAL, oldest first").
	Expected string
	// Command is the command line that gives the snapshots at paths,
	// oldest first, in the order the command expects; with nil, the
	// command alone ("heapx leaks").
	Command func(oldestFirst []string) string
}

// runtimeNames say what each runtime's dumps are (leak.Runtime).
var runtimeNames = map[string]string{
	"v8":           "a V8 heap snapshot (Node.js, Chrome)",
	"hprof":        "a Java heap dump (HPROF)",
	"spidermonkey": "a Firefox heap snapshot (SpiderMonkey)",
}

func runtimeName(rt string) string {
	if n, ok := runtimeNames[rt]; ok {
		return n
	}
	return fmt.Sprintf("a dump of runtime %q", rt)
}

// CheckSeries checks snapshots a command takes as one series, given
// oldest first. Snapshots of different runtimes are an error: nothing in
// them can be compared. Snapshots that do not look like snapshots of one
// process, or that V8's ids show were taken in another order, get a
// warning that says why heapx thinks so, what it did instead and, when the
// ids tell, the command line in the order they were taken.
func CheckSeries(snaps []Snapshot, rules SeriesRules) ([]Warning, error) {
	paths := make([]string, len(snaps))
	for i, sn := range snaps {
		paths[i] = sn.Path
	}
	names := fileNames(paths)
	chk := seriesCheck(snaps)
	if !chk.SameRuntime() {
		i := 1
		for chk.Runtimes[i] == chk.Runtimes[0] {
			i++
		}
		return nil, fmt.Errorf("%s is %s but %s is %s: snapshots of different runtimes cannot be compared (give %s, all of one program)",
			names[0], runtimeName(chk.Runtimes[0]), names[i], runtimeName(chk.Runtimes[i]), rules.Expected)
	}
	var ws []Warning
	for i, p := range chk.Pairs {
		if p.OneProcess() {
			continue
		}
		same := "id"
		if p.IDs == leak.AddressIDs {
			same = "address"
		}
		ws = append(ws, Warning{Code: WarnNotOneProcess, Message: fmt.Sprintf(
			"%s and %s do not look like snapshots of one process: only %.1f%% of the objects of %s are found in %s under the same %s as the same object (in one process nearly all are). Objects cannot be matched across them, so heapx compared class counts and sizes instead; take the snapshots from one running process to find the objects that leak.",
			names[i], names[i+1], 100*p.SameShare(), names[i], names[i+1], same)})
	}
	if rev := chk.Reversed(); len(rev) > 0 {
		i := rev[0]
		msg := fmt.Sprintf("The snapshots look out of order: %s holds %s objects V8 created after everything in %s (V8 numbers objects in the order it first sees them), so it was taken later, yet it is given as the earlier one. %s expects %s.",
			names[i], humanize.Thousands(uint64(chk.Pairs[i].Newer)), names[i+1], rules.Command(nil), rules.Expected)
		if order := chk.TakenOrder(); order != nil {
			taken := make([]string, len(order))
			for j, k := range order {
				taken[j] = paths[k]
			}
			msg += " In the order they were taken: " + rules.Command(taken) + "."
		}
		ws = append(ws, Warning{Code: WarnOrderReversed, Message: msg + " The results are for the order given."})
	}
	return ws, nil
}

// seriesCheck is leak.CheckSeries over snapshots some of which may be
// digests (Snapshot.Digest).
func seriesCheck(snaps []Snapshot) *leak.SeriesCheck {
	last := len(snaps) - 1
	if snaps[0].Digest == nil {
		as := make([]*analysis.Analysis, len(snaps))
		for i, sn := range snaps {
			as[i] = sn.Analysis
		}
		return leak.CheckSeries(as)
	}
	return leak.CheckDigests(earlierDigests(snaps), snaps[last].Analysis.Graph)
}

// earlierDigests returns the digests of all snapshots but the last, making
// those of analysed ones.
func earlierDigests(snaps []Snapshot) []*leak.Digest {
	ds := make([]*leak.Digest, len(snaps)-1)
	var prev *leak.Digest
	for i := range ds {
		if ds[i] = snaps[i].Digest; ds[i] == nil {
			ds[i] = leak.DigestOf(snaps[i].Analysis, prev)
		}
		prev = ds[i]
	}
	return ds
}

// fileNames names files in messages and headings: their base names, or
// the paths as given when two base names are the same.
func fileNames(paths []string) []string {
	out := make([]string, len(paths))
	seen := map[string]string{}
	for i, p := range paths {
		out[i] = filepath.Base(p)
		if q, ok := seen[out[i]]; ok && q != p {
			return append([]string(nil), paths...)
		}
		seen[out[i]] = p
	}
	return out
}

// commandLine is a heapx command line with the given file arguments.
func commandLine(name string, paths []string) string {
	if paths == nil {
		return "heapx " + name
	}
	return "heapx " + name + " " + strings.Join(paths, " ")
}

// checkedRun runs series query name after CheckSeries, with its warnings
// on the result; expected is SeriesRules.Expected.
func checkedRun(c *Context, name, expected string, run func(c *Context) (*Result, error)) (*Result, error) {
	ws, err := CheckSeries(c.Snapshots, SeriesRules{Expected: expected, Command: func(p []string) string { return commandLine(name, p) }})
	if err != nil {
		return nil, err
	}
	r, err := run(c)
	if err != nil {
		return nil, err
	}
	r.Warnings = append(ws, r.Warnings...)
	return r, nil
}

// DiffResult runs the diff query's analysis and lays it out. With
// changedOnly, classes whose count and size did not change (as many
// objects new as deleted, of the same size) are left out: in a report they
// are noise, chiefly Node's embedder objects, which get new ids in every
// snapshot; DevTools' Comparison view, and heapx diff, list them.
func DiffResult(base, target Snapshot, limit int, changedOnly bool) (*Result, error) {
	d := leak.Diff(base.Analysis, target.Analysis)
	if d == nil {
		return nil, fmt.Errorf("diff needs class names in both snapshots")
	}
	replaced := 0
	if changedOnly {
		kept := d.Classes[:0:0]
		for _, c := range d.Classes {
			if c.Delta == 0 && c.SizeDelta == 0 {
				replaced++
				continue
			}
			kept = append(kept, c)
		}
		d.Classes = kept
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
	objects := fmt.Sprintf("%s new objects (%s), %s deleted (%s)", humanize.Thousands(uint64(d.New)), humanize.Size(d.AllocSize),
		humanize.Thousands(uint64(d.Deleted)), humanize.Size(d.FreedSize))
	if d.Matching == leak.MatchByClass {
		objects = "# New, # Deleted and their sizes are 0: objects were not matched"
	}
	r.Notes = []string{matchingNote(d.Matching, d.Pair.SameShare(), d.Pair.IDs),
		fmt.Sprintf("%d of %s changed classes; %s; total %s -> %s", len(rows), humanize.Thousands(uint64(len(d.Classes))), objects,
			humanize.Size(base.Analysis.TotalSize()), humanize.Size(target.Analysis.TotalSize()))}
	if replaced > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("Not shown: %s classes whose objects were only replaced, as many new as deleted and of the same size (heapx diff shows them).",
			humanize.Thousands(uint64(replaced))))
	}
	return r, nil
}

func runDiff(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	return checkedRun(c, "diff", "BASE, then TARGET taken after it", func(c *Context) (*Result, error) {
		return DiffResult(c.Snapshots[0], c.Snapshots[1], n, false)
	})
}

// LeaksResult runs memlab's leak detection over the three snapshots and
// lays out one section per leak cluster. When objects cannot be matched
// by id (see leak.SeriesCheck.MatchesObjects) it compares class counts
// instead (classLeaksResult). Headings and notes name the files.
func LeaksResult(base, target, final Snapshot, limit int, opt leak.LeakOptions) (*Result, *leak.LeakResult, error) {
	opt.Examples = 5
	ds := earlierDigests([]Snapshot{base, target, final})
	lr := leak.Leaks(ds[0], ds[1], final.Analysis, opt)
	if lr == nil {
		return nil, nil, fmt.Errorf("leaks needs class names in the snapshots")
	}
	names := fileNames([]string{base.Path, target.Path, final.Path})
	if lr.Matching == leak.MatchByClass {
		return classLeaksResult(ds, final, names, limit), lr, nil
	}
	a := final.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	total := a.TotalSize()
	t := &Table{Columns: []Column{{Key: "rank", Title: "#", Kind: Count}, {Key: "count", Title: "Leaked objects", Kind: Count},
		colRetained, colPercent, {Key: "classes", Title: "Classes", Kind: Text}, {Key: "example", Title: "Example", Kind: Text}}}
	sites := alloc.HasAllocationStacks(a)
	if sites {
		t.Columns = append(t.Columns, colAllocatedIn)
	}
	r := &Result{Sections: []*Section{{Heading: fmt.Sprintf("Leaks (objects allocated between %s and %s, alive in %s)", names[0], names[1], names[2]), Table: t}}}
	clusters := lr.Clusters
	if limit > 0 && len(clusters) > limit {
		clusters = clusters[:limit]
	}
	for i, cl := range clusters {
		ex := objectName(a, nm, cl.Representative)
		t.Rows = append(t.Rows, []any{i + 1, cl.Objects, cl.Retained, humanize.Share(cl.Retained, total), leakClassList(cl.Classes), ex})
		sec := &Section{Heading: fmt.Sprintf("Leak %d: %s objects (%s) retained this way", i+1, humanize.Thousands(uint64(cl.Objects)), humanize.Size(cl.Retained)),
			Ref: fmt.Sprintf("Leak %d", i+1)}
		if p := ShownPath(a, cl.Representative); p.Cost >= 0 {
			sec.Table, sec.Path = pathTable(a, nm, p), pathNodes(a.Graph, p)
			sec.Notes = []string{fmt.Sprintf("The retainer path of %s, from the root.", ex)}
		}
		if sites {
			site := siteJSONText(NewSiteJSON(cl.Site))
			t.Rows[i] = append(t.Rows[i], site)
			if site != "" {
				sec.Notes = append(sec.Notes, fmt.Sprintf("%s of the %s reported objects were allocated in %s.",
					humanize.Thousands(uint64(cl.Site.Count)), humanize.Thousands(uint64(cl.Count)), site))
			}
		}
		r.Sections = append(r.Sections, sec)
	}
	internals := ""
	if !opt.Internals {
		internals = fmt.Sprintf(", %s of the engine's own (--internals shows them)", humanize.Thousands(uint64(lr.Internal)))
	}
	r.Notes = []string{matchingNote(lr.Matching, lr.IDOverlap, leak.CountedIDs),
		fmt.Sprintf("%s objects allocated between %s and %s, %s of them alive in %s; not reported: %s numbers, strings, code and VM internals, %s too small, %s without a retainer path%s.",
			humanize.Thousands(uint64(lr.Allocated)), names[0], names[1], humanize.Thousands(uint64(lr.Leaked)), names[2], humanize.Thousands(uint64(lr.Trivial)),
			humanize.Thousands(uint64(lr.Small)), humanize.Thousands(uint64(lr.NoPath)), internals)}
	return r, lr, nil
}

// maxClassLeakPaths is how many classes of classLeaksResult get the path
// of their largest instance.
const maxClassLeakPaths = 3

// classLeaksResult is memlab's rule on class counts (leak.ClassLeaks),
// for snapshots whose objects cannot be matched: the classes with more
// instances in the target and the final snapshot than in the baseline,
// and the retainer path of the largest instance of the first few.
func classLeaksResult(earlier []*leak.Digest, final Snapshot, names []string, limit int) *Result {
	a := final.Analysis
	nm := analysis.NewNamer(a.Graph, a.DOM)
	all := leak.ClassLeaks(earlier[0].Classes, earlier[1].Classes, a)
	rows := all
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	t := &Table{Columns: []Column{colClass, {Key: "kept", Title: "# Kept", Kind: Count}, {Key: "kept_size", Title: "Kept size", Kind: Bytes},
		{Key: "baseline_count", Title: "Baseline count", Kind: Count}, {Key: "target_count", Title: "Target count", Kind: Count},
		{Key: "final_count", Title: "Final count", Kind: Count}, {Key: "example", Title: "Largest instance", Kind: Text}}}
	r := &Result{Sections: []*Section{{Heading: fmt.Sprintf("Classes with more instances in %s and %s than in %s (class counts: objects cannot be matched)", names[1], names[2], names[0]),
		Table: t, Chart: &Chart{Label: "constructor", Value: "kept_size"}}}}
	var examples []model.NodeIndex
	for _, c := range rows {
		t.Rows = append(t.Rows, []any{Shorten(c.Name, MaxNameWidth), c.Kept, c.KeptSize, c.Counts[0], c.Counts[1], c.Counts[2], objectName(a, nm, c.Example)})
		if len(examples) < maxClassLeakPaths {
			examples = append(examples, c.Example)
		}
	}
	for i, ex := range examples {
		p := ShownPath(a, ex)
		if p.Cost < 0 {
			continue
		}
		c := rows[i]
		r.Sections = append(r.Sections, &Section{Heading: fmt.Sprintf("Class %d: %s, %s more instances; the path of its largest in %s",
			i+1, Shorten(c.Name, MaxNameWidth), humanize.Thousands(uint64(c.Kept)), names[2]), Table: pathTable(a, nm, p),
			Path: pathNodes(a.Graph, p), Ref: fmt.Sprintf("Class %d", i+1)})
	}
	chk := leak.CheckDigests(earlier, a.Graph)
	share := 0.0
	for i, p := range chk.Pairs {
		if i == 0 || p.SameShare() < share {
			share = p.SameShare()
		}
	}
	ids := leak.IDKindOf(a.Graph)
	r.Notes = []string{matchingNote(leak.MatchByClass, share, ids),
		fmt.Sprintf("%s classes have more instances in %s and %s than in %s: # Kept is the smaller of the two increases (memlab's rule, allocated by %s and still alive in %s, on counts), which cannot tell a leaked object from a replaced one.",
			humanize.Thousands(uint64(len(all))), names[1], names[2], names[0], names[1], names[2])}
	return r
}

// leakClassList is a cluster's classes as the Classes cell shows them:
// "LeakedItem 500, Array 500". Text shows every class of the program's
// code (they lead: leak.LeakClass.Origin) and others up to
// maxLeakClasses in all, then how many more; JSON, every class.
type leakClassList []leak.LeakClass

// maxLeakClasses is how many classes a Classes cell shows when the
// program's own are fewer.
const maxLeakClasses = 3

// String is the text form, cut after the program's classes or
// maxLeakClasses.
func (cs leakClassList) String() string {
	n := 0
	for n < len(cs) && (n < maxLeakClasses || cs[n].Origin == analysis.ProgramOrigin) {
		n++
	}
	s := cs[:n].text(24)
	if more := len(cs) - n; more > 0 {
		s += fmt.Sprintf(", and %d more", more)
	}
	return s
}

// MarshalJSON writes every class, as one string (the column's JSON value
// has always been a string).
func (cs leakClassList) MarshalJSON() ([]byte, error) { return json.Marshal(cs.text(0)) }

// text lists cs, each name cut to width (0: whole).
func (cs leakClassList) text(width int) string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteString(", ")
		}
		name := c.Name
		if width > 0 {
			name = Shorten(name, width)
		}
		fmt.Fprintf(&b, "%s %s", name, humanize.Thousands(uint64(c.Count)))
	}
	return b.String()
}

func runLeaks(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	return checkedRun(c, "leaks", "BASELINE, TARGET, FINAL, oldest first", func(c *Context) (*Result, error) {
		r, _, err := LeaksResult(c.Snapshots[0], c.Snapshots[1], c.Snapshots[2], n,
			leak.LeakOptions{MinRetained: c.Size("min-retained"), Internals: c.Bool("internals")})
		return r, err
	})
}

// GrowthResult lays out the classes and collections growing across snaps.
func GrowthResult(snaps []*analysis.Analysis, limit int, internals bool) (*Result, *leak.GrowthResult, error) {
	gr := leak.Growth(snaps, leak.GrowthOptions{Limit: limit, Internals: internals})
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
		cc.Rows = append(cc.Rows, []any{IDValue(snaps[last].Graph, c.ID), Shorten(c.Class, MaxNameWidth), c.Elements[0], c.Elements[last], c.Retained[last], series(c.Elements)})
	}
	classes := &Section{Heading: fmt.Sprintf("Classes growing at every step of %d snapshots", len(snaps)), Table: ct}
	if len(ct.Rows) == 0 {
		classes.Notes = []string{"No class of the program's objects grows at every step."}
	}
	if gr.Internal > 0 {
		what := humanize.Thousands(uint64(gr.Internal)) + " classes"
		if gr.Internal == 1 {
			what = "1 class"
		}
		classes.Notes = append(classes.Notes, fmt.Sprintf("Not shown: %s of the runtime's own objects (compiled code, maps, internal arrays) growing too (--internals lists them).", what))
	}
	colls := &Section{Heading: "Collections growing at every step", Table: cc}
	if len(cc.Rows) == 0 {
		colls.Notes = []string{"No collection grows at every step."}
	}
	r := &Result{Sections: []*Section{classes, colls}, Notes: []string{growthNote(gr)}}
	return r, gr, nil
}

// growthNote says how collections were followed across the snapshots.
func growthNote(gr *leak.GrowthResult) string {
	ids := leak.CountedIDs
	if len(gr.Series.Pairs) > 0 {
		ids = gr.Series.Pairs[0].IDs
	}
	switch {
	case gr.Matching == leak.MatchByClass:
		return matchingNote(gr.Matching, gr.IDOverlap, ids) + " Collections cannot be followed."
	case ids == leak.AddressIDs:
		return fmt.Sprintf("Collections followed by address (%.1f%% of the objects are found again at the same address: the snapshots come from one process); one the garbage collector moved between two dumps is not followed.", 100*gr.IDOverlap)
	}
	return fmt.Sprintf("Collections followed by id (%.1f%% of the objects are found again: the snapshots come from one process).", 100*gr.IDOverlap)
}

// series writes a count series as "500 → 1,000 → 1,500".
func series(v []int) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += " → "
		}
		s += humanize.Thousands(uint64(x))
	}
	return s
}

func runGrowth(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	return checkedRun(c, "growth", "the snapshots oldest first", func(c *Context) (*Result, error) {
		r, _, err := GrowthResult(analyses(c), n, c.Bool("internals"))
		return r, err
	})
}
