// Package report composes heapx's main job: one document that says what
// is in a heap and what looks like a leak, built from the registered
// queries' results (summary, leak suspects, top classes, duplicate
// strings, detached DOM and, given earlier snapshots, the diff, memlab's
// leak detection and growth), with the gates CI uses to fail a build on a
// leak. Write renders the document in each of package render's forms:
// text, CSV, the versioned JSON form (Doc) and a self-contained HTML page,
// each part as render writes its result.
package report

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// SchemaVersion is the version of the report's JSON form (Doc). It
// changes only when a released field changes meaning or disappears.
const SchemaVersion = 1

// Options tune Build.
type Options struct {
	// Threshold is the leak-suspect threshold in percent of the heap
	// (0: 10, MAT's default).
	Threshold float64
	// Rows bounds every table (0: 15).
	Rows int
	// FailOver, when not 0, fails the report when the leaked size exceeds
	// it (see Report.LeakedSize).
	FailOver uint64
	// FailGrowth, when not 0, fails the report when the heap grew by more
	// than this many percent from the first baseline to the file.
	FailGrowth float64
	// FailOverName and FailGrowthName are what Failures call the two
	// limits, as the caller's users know them (heapx report: its flags);
	// "leaked-size" and "growth" when empty.
	FailOverName, FailGrowthName string
}

// ErrNoBaseline is returned by Build for a growth limit
// (Options.FailGrowth) without a baseline to measure the growth from.
var ErrNoBaseline = errors.New("report: a growth limit needs a baseline snapshot to compare with")

// Input is one analysed snapshot with what the report says about its
// file.
type Input struct {
	Path   string
	Format string // the format's name ("v8", "hprof")
	A      *analysis.Analysis
}

// Report is the composed document.
type Report struct {
	// File is the snapshot reported on; Baselines the earlier ones,
	// oldest first.
	File      Input
	Baselines []Input
	// Overview lists facts about the file as label/value pairs.
	Overview [][2]string
	// Parts are the results in reading order, each with a title.
	Parts []Part
	// LeakedSize is what --fail-over compares: with two or more baselines
	// the retained size of memlab's leak clusters, with one the growth of
	// the heap's total size since it, without any the retained size of the
	// largest leak suspect.
	LeakedSize uint64
	// LeakedSizeBasis says which of those LeakedSize is.
	LeakedSizeBasis string
	// Growth is the heap's growth in percent from the first baseline (0
	// without baselines).
	Growth float64
	// Failures are the gates that failed, one sentence each.
	Failures []string
	// Warnings say what is wrong with the snapshots given (out of order,
	// not of one process; see query.CheckSeries): front ends show them
	// first.
	Warnings []query.Warning
}

// Part is one titled result of the report.
type Part struct {
	Key    string // stable identifier in JSON ("suspects")
	Title  string
	Result *query.Result
}

// Build runs the report's queries on file and its baselines.
func Build(file Input, baselines []Input, opt Options) (*Report, error) {
	if opt.Threshold == 0 {
		opt.Threshold = 10
	}
	if opt.Rows == 0 {
		opt.Rows = 15
	}
	if opt.FailGrowth > 0 && len(baselines) == 0 {
		return nil, ErrNoBaseline
	}
	r := &Report{File: file, Baselines: baselines}
	if err := r.checkSeries(); err != nil {
		return nil, err
	}
	r.Overview = overview(file)
	p := r.planParts(opt)
	if err := runAll(p.tasks); err != nil {
		return nil, err
	}
	r.addParts(p.slots)
	r.sharePaths()
	if u := p.unreachable; u != nil && u.Count > 0 {
		r.Overview = append(r.Overview, [2]string{"Unreachable", fmt.Sprintf("%s objects (%s)", humanize.Thousands(uint64(u.Count)), humanize.Size(u.Size))})
	}
	r.measureLeak(p.largest, p.leaks)
	r.checkGates(opt)
	return r, nil
}

// checkSeries warns when the baselines, oldest first, then the file do
// not look like snapshots of one process in order (query.CheckSeries).
func (r *Report) checkSeries() error {
	if len(r.Baselines) == 0 {
		return nil
	}
	series := make([]query.Snapshot, 0, len(r.Baselines)+1)
	for _, b := range append(r.Baselines[:len(r.Baselines):len(r.Baselines)], r.File) {
		series = append(series, query.Snapshot{Path: b.Path, Analysis: b.A})
	}
	ws, err := query.CheckSeries(series, query.SeriesRules{Expected: "FILE, the newest snapshot, then the BASELINEs oldest first", Command: reportCommand})
	if err != nil {
		return err
	}
	r.Warnings = ws
	return nil
}

// overview lists the facts about file the report starts with.
func overview(file Input) [][2]string {
	a, g := file.A, file.A.Graph
	total := a.TotalSize()
	return [][2]string{
		{"File", file.Path},
		{"Format", file.Format},
		{"Objects", humanize.Thousands(uint64(g.NumNodes()))},
		{"References", humanize.Thousands(uint64(g.NumEdges()))},
		{"Total size", fmt.Sprintf("%s (%s bytes)", humanize.Size(total), humanize.Thousands(total))},
		{"Retained-size policy", a.Policy.Name},
	}
}

// partPlan is the report's parts to compute: they only read the
// analyses, so they run side by side (runAll); each fills its own slot,
// and the slots keep the reading order. Some parts also keep what the
// leaked size is measured from.
type partPlan struct {
	slots []*partSlot
	tasks []func() error
	// Set by the tasks.
	unreachable *analysis.UnreachableReport
	largest     []leak.Suspect
	leaks       *leak.LeakResult
}

type partSlot struct {
	key, title string
	res        *query.Result
}

// part adds the part key, titled title, that run computes.
func (p *partPlan) part(key, title string, run func() (*query.Result, error)) {
	sl := &partSlot{key: key, title: title}
	p.slots = append(p.slots, sl)
	p.tasks = append(p.tasks, func() (err error) {
		sl.res, err = run()
		return err
	})
}

// planParts lists the parts of r's file and baselines: the leak suspects,
// with baselines the leaks, the diff and the growth, the top classes and
// duplicate strings, then what the dump has room for (a timeline, sites
// growing over a series with allocation stacks, detached DOM).
func (r *Report) planParts(opt Options) *partPlan {
	a := r.File.A
	sn := query.Snapshot{Path: r.File.Path, Analysis: a}
	p := &partPlan{}
	p.tasks = append(p.tasks, func() error { p.unreachable = a.Unreachable(); return nil })
	p.part("suspects", "Leak suspects", func() (*query.Result, error) {
		res, all, err := query.SuspectsResult(sn, opt.Threshold, 10)
		p.largest = all
		return res, err
	})
	if len(r.Baselines) > 0 {
		r.planSeriesParts(p, sn, opt)
	}
	p.part("classes", "Top classes by retained size", func() (*query.Result, error) {
		sum, err := query.Lookup("summary").Exec(&query.Context{Snapshots: []query.Snapshot{sn}, Values: map[string]any{"limit": opt.Rows}})
		if err != nil {
			return nil, err
		}
		sum.JSON = nil // the report embeds every result in the generic form
		return sum, nil
	})
	p.part("duplicates", "Duplicate strings", func() (*query.Result, error) { return query.DuplicatesResult(sn, opt.Rows) })
	r.planAllocationParts(p, sn, opt)
	// A heap without DOM (Node.js, Java) has nothing to say here.
	if inspect.DetachednessSource(a) != inspect.NoDOM {
		p.part("detached", "Detached DOM", func() (*query.Result, error) { return query.DetachedResult(sn, opt.Rows, false) })
	}
	return p
}

// planSeriesParts adds the parts that compare the file with its
// baselines: memlab's leaks (two or more baselines), the diff with the
// last baseline and what grows at every snapshot.
func (r *Report) planSeriesParts(p *partPlan, sn query.Snapshot, opt Options) {
	baselines := r.Baselines
	n := len(baselines)
	first, last := baselines[0], baselines[n-1]
	lastSn := query.Snapshot{Path: last.Path, Analysis: last.A}
	if n >= 2 {
		p.part("leaks", "Leaks: allocated between the first and last baseline, still alive", func() (*query.Result, error) {
			lr, res, err := query.LeaksResult(query.Snapshot{Path: first.Path, Analysis: first.A}, lastSn, sn, opt.Rows, leak.LeakOptions{})
			if err != nil {
				return nil, err
			}
			// The table lists every cluster; the paths of the first
			// three say enough in a report (heapx leaks shows all).
			if len(lr.Sections) > 4 {
				lr.Sections = lr.Sections[:4]
			}
			p.leaks = res
			return lr, nil
		})
	}
	p.part("diff", "Comparison with the last baseline", func() (*query.Result, error) {
		return query.DiffResult(lastSn, sn, opt.Rows, true)
	})
	p.part("growth", "Growing at every snapshot", func() (*query.Result, error) {
		series := make([]*analysis.Analysis, 0, n+1)
		for _, b := range baselines {
			series = append(series, b.A)
		}
		gr, _, err := query.GrowthResult(append(series, sn.Analysis), opt.Rows, false)
		return gr, err
	})
}

// planAllocationParts adds what allocation stacks tell: a timeline charts
// the live heap over time; a series with allocation stacks names the
// sites that grow at every snapshot.
func (r *Report) planAllocationParts(p *partPlan, sn query.Snapshot, opt Options) {
	g := r.File.A.Graph
	if g.Trace != nil && len(g.Trace.Samples) > 0 {
		p.part("timeline", "Allocation timeline: objects still alive, by when they were allocated", func() (*query.Result, error) {
			return query.TimelineResult(r.File.Path, sn.Analysis, alloc.TimelineOptions{})
		})
	}
	if len(r.Baselines) == 0 || !hasStacks(g) {
		return
	}
	series := []query.Snapshot{}
	for _, b := range r.Baselines {
		if !hasStacks(b.A.Graph) {
			return
		}
		series = append(series, query.Snapshot{Path: b.Path, Analysis: b.A})
	}
	p.part("site-growth", "Allocation sites growing at every snapshot", func() (*query.Result, error) {
		return query.SiteGrowthResult(append(series, sn), opt.Rows, false)
	})
}

// addParts adds the computed parts in reading order. With two or more
// baselines, memlab's leak detection leads: it names the objects that
// leaked, where the suspects say what is large.
func (r *Report) addParts(slots []*partSlot) {
	sort.SliceStable(slots, func(i, j int) bool { return slots[i].key == "leaks" && slots[j].key != "leaks" })
	for _, sl := range slots {
		r.add(sl.key, sl.title, sl.res)
	}
}

// sharePaths shows each retainer path once: a finding whose object is on
// the path of a finding before it (a leak's objects held by a suspect's
// accumulation point, which memlab's leak detection reaches first) says
// so instead of repeating the path's rows. Findings of the file only:
// every path is the file's (query.ShownPath).
func (r *Report) sharePaths() {
	type shown struct {
		ref   string
		nodes []model.NodeIndex
	}
	a := r.File.A
	if a == nil {
		return
	}
	nm := analysis.NewNamer(a.Graph, a.DOM)
	var seen []shown
	for _, p := range r.Parts {
		if p.Result == nil {
			continue
		}
		for _, sec := range p.Result.Sections {
			if len(sec.Path) == 0 || sec.Table == nil || len(sec.Notes) == 0 {
				continue
			}
			target := sec.Path[len(sec.Path)-1]
			shared := false
			for _, s := range seen {
				if hops := slices.Index(s.nodes, target); hops > 0 {
					sec.Table = nil
					sec.Notes[0] = fmt.Sprintf("Its retainer path is the first %d hops of %s's path, above, to %s.",
						hops, s.ref, query.ObjectName(query.ShownNode(a, nm, target)))
					shared = true
					break
				}
			}
			if !shared {
				seen = append(seen, shown{sec.Ref, sec.Path})
			}
		}
	}
}

// measureLeak sets LeakedSize (and its basis) and Growth from the largest
// suspects and, with two or more baselines, memlab's leaks.
func (r *Report) measureLeak(largest []leak.Suspect, leaks *leak.LeakResult) {
	a, baselines := r.File.A, r.Baselines
	total := a.TotalSize()
	r.LeakedSizeBasis = "retained size of the largest leak suspect"
	if len(largest) > 0 {
		r.LeakedSize = largest[0].Size()
	}
	n := len(baselines)
	if n == 0 {
		return
	}
	bt := baselines[0].A.TotalSize()
	switch {
	case leaks != nil && leaks.Matching == leak.MatchByClass:
		// Objects cannot be matched by id (a JVM, or not one process):
		// what the classes kept is all that can be told.
		r.LeakedSize, r.LeakedSizeBasis = 0, "shallow size of the instances the classes kept since the first baseline (objects not matched by id)"
		for _, c := range leak.ClassLeaks(leak.ClassCounts(baselines[0].A), leak.ClassCounts(baselines[n-1].A), a) {
			r.LeakedSize += c.KeptSize
		}
	case leaks != nil:
		r.LeakedSize, r.LeakedSizeBasis = 0, "retained size of the leaks found from the baselines"
		for _, c := range leaks.Clusters {
			r.LeakedSize += c.Retained
		}
	case n == 1:
		r.LeakedSize, r.LeakedSizeBasis = 0, "growth of the total size since the baseline"
		if total > bt {
			r.LeakedSize = total - bt
		}
	}
	if bt > 0 {
		r.Growth = 100 * (float64(total) - float64(bt)) / float64(bt)
	}
}

// checkGates adds a failure for each limit of opt the report is over.
func (r *Report) checkGates(opt Options) {
	if opt.FailOver > 0 && r.LeakedSize > opt.FailOver {
		r.Failures = append(r.Failures, fmt.Sprintf("leaked size %s (%s) is over the %s limit %s",
			humanize.Size(r.LeakedSize), r.LeakedSizeBasis, cmp.Or(opt.FailOverName, "leaked-size"), humanize.Size(opt.FailOver)))
	}
	if opt.FailGrowth > 0 && r.Growth > opt.FailGrowth {
		r.Failures = append(r.Failures, fmt.Sprintf("the heap grew %.1f%% since %s, over the %s limit %g%%",
			r.Growth, r.Baselines[0].Path, cmp.Or(opt.FailGrowthName, "growth"), opt.FailGrowth))
	}
}

// hasStacks reports whether g has allocation stacks (node
// --track-heap-objects, timelines).
func hasStacks(g *model.Graph) bool {
	return g.Trace != nil && len(g.Trace.Tree) > 0 && len(g.TraceNodeID) == g.NumNodes()
}

// reportCommand is the report's command line for snapshots given oldest
// first: the newest, then the others oldest first.
func reportCommand(oldestFirst []string) string {
	if len(oldestFirst) == 0 {
		return "heapx report"
	}
	n := len(oldestFirst) - 1
	return "heapx report " + strings.Join(append([]string{oldestFirst[n]}, oldestFirst[:n]...), " ")
}

func (r *Report) add(key, title string, res *query.Result) {
	r.Parts = append(r.Parts, Part{Key: key, Title: title, Result: res})
}

// Doc is the report's JSON form (`heapx report --json`).
type Doc struct {
	SchemaVersion int      `json:"schema_version"`
	File          string   `json:"file"`
	Baselines     []string `json:"baselines"`
	Format        string   `json:"format"`
	Nodes         int      `json:"nodes"`
	Edges         int      `json:"edges"`
	// TotalSize is the heap's total size (DevTools' total for V8).
	TotalSize       uint64   `json:"total_size"`
	Policy          string   `json:"policy"`
	LeakedSize      uint64   `json:"leaked_size"`
	LeakedSizeBasis string   `json:"leaked_size_basis"`
	GrowthPercent   float64  `json:"growth_percent"`
	Failures        []string `json:"failures"`
	// Warnings is always present, empty when the snapshots look right.
	Warnings []query.Warning `json:"warnings"`
	// Parts holds the generic form of each part's result
	// (render.Document), in reading order.
	Parts []DocPart `json:"parts"`
}

// DocPart is one part of the JSON form.
type DocPart struct {
	Key    string           `json:"key"`
	Title  string           `json:"title"`
	Result *render.Document `json:"result"`
}

// Doc returns the report's JSON form.
func (r *Report) Doc() *Doc {
	d := &Doc{SchemaVersion: SchemaVersion, File: r.File.Path, Baselines: []string{}, Format: r.File.Format,
		LeakedSize: r.LeakedSize, LeakedSizeBasis: r.LeakedSizeBasis, GrowthPercent: r.Growth,
		Failures: append([]string{}, r.Failures...), Warnings: append([]query.Warning{}, r.Warnings...), Parts: []DocPart{}}
	if a := r.File.A; a != nil { // nil for a memory trace's report (BuildTrace)
		d.Nodes, d.Edges, d.TotalSize, d.Policy = a.Graph.NumNodes(), a.Graph.NumEdges(), a.TotalSize(), a.Policy.Name
	}
	for _, b := range r.Baselines {
		d.Baselines = append(d.Baselines, b.Path)
	}
	for _, p := range r.Parts {
		d.Parts = append(d.Parts, DocPart{Key: p.Key, Title: p.Title, Result: render.NewDocument(p.Result, r.inputs(p.Key))})
	}
	return d
}

// inputs lists the snapshots a part was computed from.
func (r *Report) inputs(key string) []string {
	switch key {
	case "leaks":
		return []string{r.Baselines[0].Path, r.Baselines[len(r.Baselines)-1].Path, r.File.Path}
	case "diff":
		return []string{r.Baselines[len(r.Baselines)-1].Path, r.File.Path}
	case "growth":
		var in []string
		for _, b := range r.Baselines {
			in = append(in, b.Path)
		}
		return append(in, r.File.Path)
	}
	return []string{r.File.Path}
}

// runAll runs tasks on as many goroutines as there are cores and returns
// their errors joined (nil when all succeed).
func runAll(tasks []func() error) error {
	errs := make([]error, len(tasks))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(tasks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = tasks[i]()
			}
		}()
	}
	for i := range tasks {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}
