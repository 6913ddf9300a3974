package query

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis/lifetime"
	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/humanize"
)

// GroupLifetimes is the `heapx list` group of the queries of a memory
// trace (heapx trace): MemInsight's client analyses.
const GroupLifetimes = "lifetimes"

func init() {
	trace := func(q *Query) {
		q.Group, q.Usage, q.MinInputs, q.MaxInputs, q.Traces = GroupLifetimes, "TRACE", 1, 1, true
		Register(q)
	}
	trace(&Query{
		Name:  "lifetimes",
		Title: "What a memory trace says: problem sites, the live and stale objects over time",
		Help: `Run the lifetime analysis (MemInsight's) over a memory trace written by
heapx trace and show the allocation sites with a problem: objects that
stay reachable long after their last use (staleness, drag), stale counts
rising over the program's idle points (leaks, listed first), objects made once per call where one
would do (one alive at a time), objects that never outlive their call
(non-escaping) or live and die inside one owner (inlining), objects never
used; then the timeline of live and stale objects. Times are the trace's
logical clock (one tick per traced event).`,
		Args: []Arg{limitArg(20), {Name: "samples", Kind: IntArg, Default: 40, Help: "points of the timeline"}},
		Run:  runLifetimes,
	})
	trace(&Query{
		Name:  "stale-sites",
		Title: "Allocation sites by staleness: how long their objects stayed reachable after their last use (drag)",
		Help: `Allocation sites of a memory trace ordered by drag: the sum over their
objects of the time from last use (or allocation, for objects never used)
to unreachability, the end of the trace for objects never freed. Peak
stale is the most of the site's objects stale at one time.`,
		Args: []Arg{limitArg(20)},
		Run:  runStaleSites,
	})
	trace(&Query{
		Name:  "trace-leaks",
		Title: "Allocation sites whose stale objects keep growing over the idle points of a trace",
		Help: `A site leaks when the number of its stale objects (reachable, never used
again) rises over the program's idle points (each return to its event
loop with an empty stack): over at least 4 of them, with a rank
correlation (Kendall's tau-b) of 0.5 or more, a Theil-Sen line gaining at
least 3 objects, and still rising in the run's second half; plateaus and
dips do not hide a leak, a cache that filled up and stayed is not one
(docs/trace.md, "Leaks"). Ranked by growth, with what held one of the
site's objects at the end. A run without a leak says so.`,
		Args: []Arg{limitArg(20)},
		Run:  runTraceLeaks,
	})
	trace(&Query{
		Name:  "churn",
		Title: "Allocation sites by objects allocated, with how many were ever alive at once",
		Help: `Allocation sites of a memory trace by the objects they allocated, with
the most alive at one time and their mean lifetime. A site that made many
objects but never had more than one alive ("one at a time") could reuse a
single object.`,
		Args: []Arg{limitArg(20), {Name: "one", Kind: BoolArg, Default: false, Help: "only the sites with one object alive at a time"}},
		Run:  runChurn,
	})
	trace(&Query{
		Name:  "unused",
		Title: "Allocation sites whose objects were never used",
		Help:  `Allocation sites of a memory trace none of whose objects was ever read, written or called after its allocation.`,
		Args:  []Arg{limitArg(20)},
		Run:   runUnused,
	})
	trace(&Query{
		Name:  "non-escaping",
		Title: "Allocation sites whose objects all die before the call that made them returns (stack allocation)",
		Help: `Allocation sites of a memory trace every object of which became
unreachable before the call that allocated it returned (its execution
index is a prefix of the one at its death): candidates for stack
allocation, or for a V8 escape analysis that misses them.`,
		Args: []Arg{limitArg(20)},
		Run:  runNonEscaping,
	})
	trace(&Query{
		Name:  "inlining",
		Title: "Allocation sites whose objects are each owned by one object of another site, made and dying with it",
		Help: `MemInsight's object inlining: every object of the site was pointed to
by a field of exactly one object, always of the same other site, both
allocated in the same call and unreachable at the same time. Its fields
could live in the owner.`,
		Args: []Arg{limitArg(20)},
		Run:  runInlining,
	})
	trace(&Query{
		Name:  "lifetime-timeline",
		Title: "Live and stale objects over the time of a trace, with the stalest sites",
		Help: `The number of objects alive and stale at evenly spread times of a memory
trace (MemInsight's timeline), with the stale objects of the sites of most
drag as lines of their own.`,
		Args: []Arg{{Name: "samples", Kind: IntArg, Default: 40, Help: "points of the timeline"},
			{Name: "sites", Kind: IntArg, Default: 3, Help: "sites drawn as lines of their own"}},
		Run: runLifetimeTimeline,
	})
	trace(&Query{
		Name:  "call-tree",
		Title: "The calls under which an allocation site made its objects",
		Help: `The calling contexts of an allocation site of a memory trace, as a tree
of call sites from the top level, with the objects made under each.
--site is file:line (or file:line:column); the file may be a suffix.`,
		Args: []Arg{{Name: "site", Kind: StringArg, Default: "", Help: "the allocation site, `FILE:LINE[:COL]`", Required: true}},
		Run:  runCallTree,
	})
	trace(&Query{
		Name:  "access-paths",
		Title: "What held an allocation site's objects at a chosen time",
		Help: `Replay a memory trace up to --at (a time of its clock; the timeline
shows them) and list, for the objects of --site alive then, the shortest
path of variables and fields from a live context (a variable of a running
or closed-over function, a module's binding, a global) to each, merged
into a tree.`,
		Args: []Arg{{Name: "site", Kind: StringArg, Default: "", Help: "the allocation site, `FILE:LINE[:COL]`", Required: true},
			{Name: "at", Kind: IntArg, Default: 0, Help: "the `TIME` (0: the end)"}, limitArg(20)},
		Run: runAccessPaths,
	})
	trace(&Query{
		Name:  "object-lifetimes",
		Title: "Every object of a trace: allocation site and time, last use, unreachable time",
		Help: `The per-object output of the lifetime analysis, in the order objects
were decided: id, allocation site and time, last use (empty: never used),
the time it became unreachable (empty: alive at the end).`,
		Args: []Arg{limitArg(100), {Name: "site", Kind: StringArg, Default: "", Help: "only the objects of `FILE:LINE[:COL]`"}},
		Run:  runObjectLifetimes,
	})
}

// Trace is a memory trace as the lifetime queries read it, opened by the
// front end (heapx.OpenTrace): its lifetime analysis, and Replay, which
// analyses it again with other options (the heap of a moment, for
// access-paths).
type Trace struct {
	Lifetimes *lifetime.Result
	Replay    func(lifetime.Options) (*lifetime.Result, error)
}

// traceHeader says what was analysed and what the trace did not see.
func traceHeader(path string, res *lifetime.Result) ([]string, []Warning) {
	h := []string{fmt.Sprintf("Trace: %s: %s events, %s objects from %s allocation sites, %s idle points, end at time %s",
		path, humanize.Thousands(res.Events), humanize.Thousands(uint64(len(res.Objects))), humanize.Thousands(uint64(len(res.Sites))),
		humanize.Thousands(uint64(len(res.Idles))), humanize.Thousands(res.End))}
	var ws []Warning
	for _, u := range res.Unseen {
		ws = append(ws, Warning{Code: "trace_unseen", Message: fmt.Sprintf("the trace does not show %s (%s) at %s: objects it touched are counted as allocated where the traced code first saw them", unseenWhat(u.How), u.Text, u.Pos)})
	}
	switch {
	case res.EndRecord.Kind == 0:
		ws = append(ws, Warning{Code: "trace_no_end", Message: "the trace has no END record"})
	case res.EndRecord.Flags&memtrace.EndCutOff != 0:
		ws = append(ws, Warning{Code: "trace_cut_off", Message: "the program was killed while writing the trace: its last events are lost"})
	case res.EndRecord.Flags&memtrace.EndNoExit != 0:
		ws = append(ws, Warning{Code: "trace_no_exit", Message: fmt.Sprintf("the program did not end normally (exit code %d, signal %d): objects alive then are reported alive at the end", res.EndRecord.Code, res.EndRecord.Signal)})
	}
	if line := endingLine(res); line != "" {
		h = append(h, line)
	}
	if n := res.FirstSeenLate - res.Revived; n > 0 {
		h = append(h, fmt.Sprintf("Objects first seen after their allocation, made by untraced code: %s, counted as allocated where first seen", humanize.Thousands(n)))
	}
	if res.Revived > 0 {
		h = append(h, fmt.Sprintf("Objects used again after the analysis found them unreachable, held meanwhile by what the trace does not see (a promise, a callback given to native code): %s, counted anew where used again", humanize.Thousands(res.Revived)))
	}
	return h, ws
}

func unseenWhat(how uint64) string {
	switch how {
	case memtrace.UnseenEval:
		return "eval'd code"
	case memtrace.UnseenWorker:
		return "a worker thread"
	case memtrace.UnseenUninstrumented:
		return "an uninstrumented module"
	case memtrace.UnseenParseError:
		return "a file the instrumenter could not parse"
	case memtrace.UnseenChildProcess:
		return "a child process"
	}
	return "code of an unknown kind"
}

// endingLine says how the program ended when it was not by running out of
// work: a signal, process.exit, an uncaught exception, or killed outright.
func endingLine(res *lifetime.Result) string {
	got := ""
	if len(res.Signals) > 0 {
		got = "received " + strings.Join(res.Signals, ", ") + ", then "
	}
	switch e := res.Exit; {
	case e.Kind == 0 && res.EndRecord.Kind != 0 && res.EndRecord.Signal != 0:
		return fmt.Sprintf("The program %swas killed by signal %d: the trace holds what it wrote until a fraction of a second before", got, res.EndRecord.Signal)
	case e.Kind == 0:
		return ""
	case e.How == memtrace.ExitSignal:
		return fmt.Sprintf("The program was ended by %s (it had no listener for it); everything until then is in the trace", e.Text)
	case e.How == memtrace.ExitUncaught:
		return fmt.Sprintf("The program %sended with an uncaught exception: %s", got, e.Text)
	case e.How == memtrace.ExitProcessExit:
		return fmt.Sprintf("The program %scalled process.exit(%d)", got, e.Code)
	case got != "":
		return fmt.Sprintf("The program %sran out of work (exit status %d)", got, e.Code)
	}
	return ""
}

// leakVerdict is the one line that says whether the trace shows a leak.
func leakVerdict(res *lifetime.Result) string {
	var leaks []string
	for i := range res.Sites {
		if res.Sites[i].Leaking {
			leaks = append(leaks, traceSiteName(&res.Sites[i]))
		}
	}
	switch {
	case len(leaks) == 1:
		return "Leak found: " + leaks[0] + " (heapx trace-leaks says how it grew and what holds it)"
	case len(leaks) > 1:
		return fmt.Sprintf("Leaks found at %d allocation sites: %s (heapx trace-leaks says how they grew and what holds them)", len(leaks), strings.Join(leaks, ", "))
	case len(res.Judged) < lifetime.LeakMinPoints:
		return fmt.Sprintf("no leak found: the program was idle (back in its event loop, stack empty) %d times before its end; the rule needs %d (a server under requests, an async program through several rounds)", len(res.Judged), lifetime.LeakMinPoints)
	}
	return fmt.Sprintf("no leak found: no allocation site's stale objects kept growing over the %s idle points", humanize.Thousands(uint64(len(res.Idles))))
}

// siteWarnings say, for the leaking sites, what the trace cannot see of
// what holds their objects.
func siteWarnings(res *lifetime.Result) []Warning {
	var ws []Warning
	for i := range res.Sites {
		s := &res.Sites[i]
		if !s.Leaking {
			continue
		}
		if s.Suspended > 0 {
			at, _ := res.Positions(s.SuspendedAt)
			ws = append(ws, Warning{Code: "trace_held_by_suspended", Message: fmt.Sprintf(
				"%s of the %s objects of %s alive at the end were held only by calls suspended at %s that never resumed; the trace cannot see the promises they wait for: if nothing holds those promises or can settle them, V8 frees the calls and these objects with them (the program leaks pending work, not memory)",
				humanize.Thousands(uint64(s.Suspended)), humanize.Thousands(uint64(s.AtEnd)), traceSiteName(s), at)})
		}
		if s.Revived > 0 {
			ws = append(ws, Warning{Code: "trace_revived", Message: fmt.Sprintf(
				"%s of the %s objects of %s had been found unreachable and were then used there again: something the trace does not see held them meanwhile (a promise's value or reaction, a callback given to native code), so they were made elsewhere, earlier; the trace counts them anew from there",
				humanize.Thousands(uint64(s.Revived)), humanize.Thousands(uint64(s.Count)), traceSiteName(s))})
		}
		if s.Late > 0 {
			ws = append(ws, Warning{Code: "trace_made_untraced", Message: fmt.Sprintf(
				"%s of the %s objects of %s were made by code the trace does not show (Node's own objects, such as requests, responses and sockets, or an uninstrumented module) and first touched there; native code may hold them too, which the trace does not see",
				humanize.Thousands(uint64(s.Late)), humanize.Thousands(uint64(s.Count)), traceSiteName(s))})
		}
	}
	for _, e := range res.NativeEmitters {
		at, _ := res.Positions(e.Site)
		ws = append(ws, Warning{Code: "trace_native_emitter", Message: fmt.Sprintf(
			"up to %d of the program's functions were held at once as %s listeners by an emitter Node made (a socket, a request), first touched at %s, which the program does not hold itself: Node keeps them as long as the emitter lives (a socket: its connection), the trace only as long as the program holds the emitter, so this leak is not measured",
			e.Most, e.Event, at)})
	}
	return ws
}

// traceResult starts a result for the trace of c.
func traceResult(c *Context) (*Result, *lifetime.Result, error) {
	path, t := c.Snapshots[0].Path, c.Snapshots[0].Trace
	if t == nil {
		return nil, nil, fmt.Errorf("%s: the memory trace was not given (Snapshot.Trace)", path)
	}
	res := t.Lifetimes
	h, ws := traceHeader(path, res)
	return &Result{Header: h, Warnings: append(ws, siteWarnings(res)...)}, res, nil
}

func traceSiteName(s *lifetime.Site) string { return s.Pos.String() }

// siteColumns are the columns every site table starts with.
var siteColumns = []Column{{Key: "site", Title: "Allocation site", Kind: Text}, {Key: "count", Title: "Objects", Kind: Count}}

// siteTable lists the sites idx (limited) with extra columns.
func siteTable(c *Context, res *lifetime.Result, idx []int32, cols []Column, row func(*lifetime.Site) []any) (*Section, error) {
	n, err := limit(c, len(idx))
	if err != nil {
		return nil, err
	}
	t := &Table{Columns: append(append([]Column{}, siteColumns...), cols...)}
	for _, i := range idx[:n] {
		s := &res.Sites[i]
		t.Rows = append(t.Rows, append([]any{traceSiteName(s), s.Count}, row(s)...))
	}
	sec := &Section{Table: t}
	if n < len(idx) {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d more sites (-n 0 lists all)", len(idx)-n))
	}
	return sec, nil
}

func runLifetimes(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	r.Header = append(r.Header, leakVerdict(res))
	idx := res.SitesBy(func(s *lifetime.Site) bool {
		return s.Leaking || s.Staleness > 0 || s.OneAliveAtATime() || s.AllNonEscaping() || s.Inlinable() || s.AllUnused()
	}, func(a, b *lifetime.Site) bool {
		if a.Leaking != b.Leaking {
			return a.Leaking
		}
		return a.Staleness > b.Staleness
	})
	sec, err := siteTable(c, res, idx, []Column{
		{Key: "alive_at_end", Title: "Alive at end", Kind: Count},
		{Key: "staleness", Title: "Staleness", Kind: Count},
		{Key: "peak_stale", Title: "Peak stale", Kind: Count},
		{Key: "problems", Title: "Problems", Kind: Text},
	}, func(s *lifetime.Site) []any {
		return []any{s.AtEnd, int64(s.Staleness), s.MaxStale, strings.Join(problems(res, s), ", ")}
	})
	if err != nil {
		return nil, err
	}
	sec.Heading = "Allocation sites with problems, by staleness"
	sec.Notes = append(sec.Notes, "Leaking sites come first.")
	r.Sections = append(r.Sections, sec)
	tl, err := timelineSection(c.Int("samples"), 3, res)
	if err != nil {
		return nil, err
	}
	r.Sections = append(r.Sections, tl)
	r.Notes = append(r.Notes, "Staleness: the sum over the site's objects of the ticks from last use to unreachable (or the end). Times are the trace's clock.")
	return r, nil
}

// problems names what the client analyses flag at s.
func problems(res *lifetime.Result, s *lifetime.Site) []string {
	var p []string
	if s.Leaking {
		p = append(p, "leak")
	}
	if s.OneAliveAtATime() {
		p = append(p, "one alive at a time")
	}
	if s.AllNonEscaping() {
		p = append(p, "non-escaping")
	}
	if s.Inlinable() {
		owner := strconv.FormatUint(s.OwnerSite, 10)
		if i := res.SiteIndex(s.OwnerSite); i >= 0 {
			owner = traceSiteName(&res.Sites[i])
		} else if p, ok := res.Positions(s.OwnerSite); ok {
			owner = p.String()
		}
		p = append(p, "inlinable into "+owner)
	}
	if s.AllUnused() {
		p = append(p, "unused")
	}
	return p
}

func runStaleSites(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	idx := res.SitesBy(func(s *lifetime.Site) bool { return s.Staleness > 0 },
		func(a, b *lifetime.Site) bool { return a.Staleness > b.Staleness })
	sec, err := siteTable(c, res, idx, []Column{
		{Key: "staleness", Title: "Staleness", Kind: Count},
		{Key: "mean_staleness", Title: "Mean", Kind: Count},
		{Key: "max_staleness", Title: "Max", Kind: Count},
		{Key: "peak_stale", Title: "Peak stale", Kind: Count},
		{Key: "peak_stale_at", Title: "Peak at", Kind: Count},
		{Key: "alive_at_end", Title: "Alive at end", Kind: Count},
	}, func(s *lifetime.Site) []any {
		return []any{int64(s.Staleness), int64(s.Staleness / uint64(s.Count)), int64(s.MaxStaleness), s.MaxStale, int64(s.MaxStaleAt), s.AtEnd}
	})
	if err != nil {
		return nil, err
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}

func runTraceLeaks(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	r.Header = append(r.Header, leakVerdict(res))
	idx := res.SitesBy(func(s *lifetime.Site) bool { return s.Leaking },
		func(a, b *lifetime.Site) bool { return a.Trend.Growth > b.Trend.Growth })
	// A rate per minute where the idle points span a second or more.
	minutes := 0.0
	if n := len(res.Judged); n > 1 && len(res.IdleMillis) == len(res.Idles) {
		if ms := res.IdleMillis[res.Judged[n-1]] - res.IdleMillis[res.Judged[0]]; ms >= 1000 {
			minutes = float64(ms) / 60000
		}
	}
	sec, err := siteTable(c, res, idx, []Column{
		{Key: "max_alive", Title: "Max alive", Kind: Count},
		{Key: "alive_at_end", Title: "Alive at end", Kind: Count},
		{Key: "growth", Title: "Growth", Kind: Delta},
		{Key: "rate", Title: "Rate", Kind: Text},
		{Key: "tau", Title: "Tau", Kind: Text},
		{Key: "held_by", Title: "Held at the end by", Kind: Text},
		{Key: "stale_at_idle", Title: "Stale at idle points", Kind: Text},
	}, func(s *lifetime.Site) []any {
		rate := ""
		if minutes > 0 {
			rate = fmt.Sprintf("%+.1f a minute", s.Trend.Growth/minutes)
		}
		return []any{s.MaxAlive, s.AtEnd, int64(math.Round(s.Trend.Growth)), rate, strconv.FormatFloat(s.Trend.Tau, 'f', 2, 64),
			strings.Join(s.HeldBy, " > "), idleCounts(s.StaleAtIdle)}
	})
	if err != nil {
		return nil, err
	}
	if len(res.Judged) < len(res.Idles)-1 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("Stale counts at %d of the %s idle points, spread evenly.", len(res.Judged), humanize.Thousands(uint64(len(res.Idles)))))
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}

// idleCounts shows the stale counts at idle points, the first and last
// few of a long list.
func idleCounts(xs []int) string {
	var b strings.Builder
	for i, x := range xs {
		if len(xs) > 12 && i == 6 {
			fmt.Fprintf(&b, "… ")
		}
		if len(xs) > 12 && i >= 6 && i < len(xs)-6 {
			continue
		}
		fmt.Fprintf(&b, "%d ", x)
	}
	return strings.TrimSpace(b.String())
}

func runChurn(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	one := c.Bool("one")
	idx := res.SitesBy(func(s *lifetime.Site) bool { return !one || s.OneAliveAtATime() },
		func(a, b *lifetime.Site) bool { return a.Count > b.Count })
	life := make([]uint64, len(res.Sites))
	for i := range res.Objects {
		o := &res.Objects[i]
		life[o.Site] += o.Unreachable - o.Alloc
	}
	sec, err := siteTable(c, res, idx, []Column{
		{Key: "max_alive", Title: "Max alive", Kind: Count},
		{Key: "mean_lifetime", Title: "Mean lifetime", Kind: Count},
		{Key: "one_alive_at_a_time", Title: "One at a time", Kind: Text},
	}, func(s *lifetime.Site) []any {
		return []any{s.MaxAlive, int64(life[res.SiteIndex(s.IID)] / uint64(s.Count)), yes(s.OneAliveAtATime())}
	})
	if err != nil {
		return nil, err
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

func runUnused(c *Context) (*Result, error) {
	return runSitesWhere(c, (*lifetime.Site).AllUnused, Column{Key: "alive_at_end", Title: "Alive at end", Kind: Count},
		func(_ *lifetime.Result, s *lifetime.Site) any { return s.AtEnd })
}

func runNonEscaping(c *Context) (*Result, error) {
	return runSitesWhere(c, (*lifetime.Site).AllNonEscaping, Column{Key: "max_alive", Title: "Max alive", Kind: Count},
		func(_ *lifetime.Result, s *lifetime.Site) any { return s.MaxAlive })
}

func runInlining(c *Context) (*Result, error) {
	return runSitesWhere(c, (*lifetime.Site).Inlinable, Column{Key: "owner_site", Title: "Owned by objects of", Kind: Text},
		func(res *lifetime.Result, s *lifetime.Site) any {
			if i := res.SiteIndex(s.OwnerSite); i >= 0 {
				return traceSiteName(&res.Sites[i])
			}
			p, _ := res.Positions(s.OwnerSite)
			return p.String()
		})
}

// runSitesWhere answers a query that lists the allocation sites keep
// selects, most objects first, with one column of its own beside the
// site table's.
func runSitesWhere(c *Context, keep func(*lifetime.Site) bool, col Column, value func(*lifetime.Result, *lifetime.Site) any) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	idx := res.SitesBy(keep, func(a, b *lifetime.Site) bool { return a.Count > b.Count })
	sec, err := siteTable(c, res, idx, []Column{col}, func(s *lifetime.Site) []any { return []any{value(res, s)} })
	if err != nil {
		return nil, err
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}

// timelineSection is the live/stale timeline with the stale lines of the
// nSites sites of most drag: a line chart.
func timelineSection(samples, nSites int, res *lifetime.Result) (*Section, error) {
	if samples < 1 {
		return nil, fmt.Errorf("--samples must be 1 or more, not %d", samples)
	}
	if nSites < 0 {
		return nil, fmt.Errorf("--sites must be 0 or more, not %d", nSites)
	}
	top := res.SitesBy(func(s *lifetime.Site) bool { return s.Staleness > 0 },
		func(a, b *lifetime.Site) bool { return a.Staleness > b.Staleness })
	top = top[:min(nSites, len(top))]
	tl := res.Timeline(samples, top)
	t := &Table{Columns: []Column{{Key: "time", Title: "Time", Kind: Count}, {Key: "alive", Title: "Alive", Kind: Count},
		{Key: "stale", Title: "Stale", Kind: Count}}}
	for k, s := range top {
		t.Columns = append(t.Columns, Column{Key: "stale_site_" + strconv.Itoa(k+1), Title: "Stale at " + traceSiteName(&res.Sites[s]), Kind: Count})
	}
	for i, tm := range tl.Times {
		row := []any{int64(tm), tl.Alive[i], tl.Stale[i]}
		for k := range top {
			row = append(row, tl.SiteStale[k][i])
		}
		t.Rows = append(t.Rows, row)
	}
	return &Section{Heading: "Objects alive and stale over time", Table: t,
		Chart: &Chart{Label: "time", Value: "alive", Kind: ChartLine}}, nil
}

func runLifetimeTimeline(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	sec, err := timelineSection(c.Int("samples"), c.Int("sites"), res)
	if err != nil {
		return nil, err
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}

// findSite resolves --site, FILE:LINE[:COL] with FILE a suffix of the
// site's file, to the site of most objects that matches.
func findSite(res *lifetime.Result, spec string) (int32, error) {
	parts := strings.Split(spec, ":")
	line, col := -1, -1
	file := spec
	if n, err := strconv.Atoi(parts[len(parts)-1]); err == nil && len(parts) >= 2 {
		line, file = n, strings.Join(parts[:len(parts)-1], ":")
		if m, err := strconv.Atoi(parts[len(parts)-2]); err == nil && len(parts) >= 3 {
			line, col, file = m, n, strings.Join(parts[:len(parts)-2], ":")
		}
	}
	if line < 0 || file == "" {
		return -1, fmt.Errorf("--site %q: want FILE:LINE or FILE:LINE:COLUMN", spec)
	}
	best := int32(-1)
	for i := range res.Sites {
		p := res.Sites[i].Pos
		if p.Line == line && (col < 0 || p.Column == col) && strings.HasSuffix(p.File, file) &&
			(best < 0 || res.Sites[i].Count > res.Sites[best].Count) {
			best = int32(i)
		}
	}
	if best < 0 {
		return -1, fmt.Errorf("--site %q: no allocation site there (heapx lifetimes lists them)", spec)
	}
	return best, nil
}

func runCallTree(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	si, err := findSite(res, c.String("site"))
	if err != nil {
		return nil, err
	}
	site := &res.Sites[si]
	tree := &Tree{Columns: []Column{{Key: "call", Title: "Call site", Kind: Text}, {Key: "count", Title: "Objects", Kind: Count}}}
	for _, p := range res.CallTree(site.IID) {
		level := &tree.Roots
		for _, call := range p.Calls {
			pos, _ := res.Positions(call)
			name := pos.String()
			var n *TreeNode
			for _, x := range *level {
				if x.Values[0] == name {
					n = x
				}
			}
			if n == nil {
				n = &TreeNode{Values: []any{name, int64(0)}}
				*level = append(*level, n)
			}
			n.Values[1] = n.Values[1].(int64) + int64(p.Count)
			level = &n.Children
		}
		if len(p.Calls) == 0 {
			tree.Roots = append(tree.Roots, &TreeNode{Values: []any{"(top level)", int64(p.Count)}})
		}
	}
	r.Sections = append(r.Sections, &Section{Heading: "Calls that allocated at " + traceSiteName(site), Tree: tree})
	return r, nil
}

func runAccessPaths(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	si, err := findSite(res, c.String("site"))
	if err != nil {
		return nil, err
	}
	at := uint64(max(0, c.Int("at")))
	if c.Int("at") < 0 || at > res.End {
		return nil, fmt.Errorf("--at %d: the trace's times run from 1 to %d", c.Int("at"), res.End)
	}
	if at == 0 {
		at = res.End
	}
	stopped, err := c.Snapshots[0].Trace.Replay(lifetime.Options{StopAt: at})
	if err != nil {
		return nil, err
	}
	site := &res.Sites[si]
	paths := stopped.Heap.AccessPaths(site.IID, res.Positions)
	n, err := limit(c, math.MaxInt)
	if err != nil {
		return nil, err
	}
	tree := &Tree{Columns: []Column{{Key: "step", Title: "Held by", Kind: Text}, {Key: "count", Title: "Objects", Kind: Count}}}
	for _, p := range paths {
		level := &tree.Roots
		for j, step := range p.Steps {
			if j > 0 {
				step = mergedStep(p.Steps[j-1], step)
			}
			var node *TreeNode
			for _, x := range *level {
				if x.Values[0] == step {
					node = x
				}
			}
			if node == nil {
				node = &TreeNode{Values: []any{step, int64(0)}}
				*level = append(*level, node)
			}
			node.Values[1] = node.Values[1].(int64) + 1
			level = &node.Children
		}
	}
	sortTree(tree.Roots)
	sec := &Section{Heading: fmt.Sprintf("Paths to the %d objects of %s alive at time %d", len(paths), traceSiteName(site), at), Tree: tree}
	if shown, all := cutTree(tree, n); shown < all {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d of %d rows (-n 0 shows all)", shown, all))
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}

// mergedStep is step of an access path as the merged tree groups it, after
// the step prev: the entries, keys or elements of one collection merge
// whatever their key or index ("entries of requestLog").
func mergedStep(prev, step string) string {
	what := ""
	switch {
	case strings.HasPrefix(step, "(collection entry "):
		what = "entries"
	case strings.HasPrefix(step, "(collection key "):
		what = "keys"
	case strings.HasPrefix(step, "[") && strings.HasSuffix(step, "]") && strings.Trim(step[1:len(step)-1], "0123456789") == "":
		what = "elements"
	default:
		return step
	}
	holder := strings.TrimPrefix(strings.TrimPrefix(prev, "variable "), ".")
	if holder == "" || strings.HasPrefix(holder, "(") {
		return what
	}
	return what + " of " + holder
}

// sortTree orders each level of an access-path tree by objects, most
// first (then as first reached).
func sortTree(nodes []*TreeNode) {
	sort.SliceStable(nodes, func(x, y int) bool { return nodes[x].Values[1].(int64) > nodes[y].Values[1].(int64) })
	for _, nd := range nodes {
		sortTree(nd.Children)
	}
}

// cutTree keeps the first n rows of an access-path tree in depth-first
// order, and the rows down the largest branch while it holds more than
// half of its parent's objects, whatever n: -n never cuts the tree above
// the collection that holds them. It returns the rows kept and all.
func cutTree(t *Tree, n int) (shown, all int) {
	var keep func(nodes []*TreeNode, chain bool, parent int64) []*TreeNode
	keep = func(nodes []*TreeNode, chain bool, parent int64) []*TreeNode {
		var out []*TreeNode
		for i, nd := range nodes {
			all++
			count := nd.Values[1].(int64)
			onChain := chain && i == 0 && (parent < 0 || 2*count > parent)
			if shown >= n && !onChain {
				all += countRows(nd.Children)
				continue
			}
			shown++
			nd.Children = keep(nd.Children, onChain, count)
			out = append(out, nd)
		}
		return out
	}
	t.Roots = keep(t.Roots, true, -1)
	return shown, all
}

// countRows counts the rows of a tree.
func countRows(nodes []*TreeNode) int {
	n := len(nodes)
	for _, nd := range nodes {
		n += countRows(nd.Children)
	}
	return n
}

func runObjectLifetimes(c *Context) (*Result, error) {
	r, res, err := traceResult(c)
	if err != nil {
		return nil, err
	}
	only := int32(-1)
	if spec := c.String("site"); spec != "" {
		if only, err = findSite(res, spec); err != nil {
			return nil, err
		}
	}
	var idx []int
	for i := range res.Objects {
		if only < 0 || res.Objects[i].Site == only {
			idx = append(idx, i)
		}
	}
	n, err := limit(c, len(idx))
	if err != nil {
		return nil, err
	}
	t := &Table{Columns: []Column{{Key: "id", Title: "Object", Kind: ID}, {Key: "site", Title: "Allocation site", Kind: Text},
		{Key: "allocated", Title: "Allocated", Kind: Count}, {Key: "last_use", Title: "Last use", Kind: Count},
		{Key: "unreachable", Title: "Unreachable", Kind: Count}}}
	for _, i := range idx[:n] {
		o := &res.Objects[i]
		var last, dead any
		if o.LastUse != 0 {
			last = int64(o.LastUse)
		}
		if o.Flags&lifetime.RecAtEnd == 0 {
			dead = int64(o.Unreachable)
		}
		t.Rows = append(t.Rows, []any{o.ID, traceSiteName(&res.Sites[o.Site]), int64(o.Alloc), last, dead})
	}
	sec := &Section{Table: t}
	if n < len(idx) {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d more objects (-n 0 lists all)", len(idx)-n))
	}
	r.Sections = append(r.Sections, sec)
	return r, nil
}
