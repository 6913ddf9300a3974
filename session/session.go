// Package session is an analysed heap dump, or a series of dumps of one
// program, held open for interactive exploration: heapx serve's web view
// and heapx mcp's MCP server (package mcpserver) ask it the questions a
// heap viewer answers (a page of classes, a class's instances, an object's references,
// retainers and paths, a level of the dominator tree, the comparison with
// a baseline, any registered query, SQL), or a memory trace held open
// for its lifetime queries (OpenTrace). Each answer is computed from
// indexes built once, a page at a time, so a dump of ten million objects
// answers as fast as a small one, and comes in the shapes of heapx's
// --json output (query.NodeJSON, query.ClassJSON, query.PathsJSON, the
// report's and the registry's documents), with paging fields added.
//
// A Session only reads its analyses once built; every method may be
// called from several goroutines at once.
package session

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/leak"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/report"
	"github.com/heapx/heapx/sqlquery"
)

// SchemaVersion is the version of the shapes this package adds to
// heapx's --json ones (pages, object details). It changes only when a
// field is removed or changes meaning.
const SchemaVersion = 1

// Paging limits: a page holds DefaultPage rows unless asked otherwise,
// and never more than MaxPage, so no answer makes the browser (or an
// agent) hold more than a few thousand rows.
const (
	DefaultPage = 100
	MaxPage     = 1000
)

// Kind says what kind of mistake an Error reports, so front ends can
// answer with the right status (HTTP 404 or 400).
type Kind uint8

// Error kinds.
const (
	// NotFound: the request names something the dump does not have (an
	// object id, a class, a query).
	NotFound Kind = iota + 1
	// Invalid: the request itself is wrong (an argument that does not
	// parse, SQL that does not compile, a comparison without baseline).
	Invalid
)

// Error is a mistake in a request, said so that the person who made it
// can correct it.
type Error struct {
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func notFound(format string, args ...any) error {
	return &Error{Kind: NotFound, Msg: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) error {
	return &Error{Kind: Invalid, Msg: fmt.Sprintf(format, args...)}
}

// KindOf returns the kind of err when it is an *Error, else 0 (a failure
// of heapx, not of the request).
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// Options tune a Session.
type Options struct {
	// SQLCache is where the SQL console keeps the SQLite copy of a dump
	// that is not a .db, as heapx sql's --cache and --no-cache say;
	// the zero value keeps it where heapx sql does.
	SQLCache sqlquery.Choice
	// SaveSQL writes the SQLite copy the SQL console queries, when no
	// fresh one exists (sqlquery.Builder.Save); front ends wrap it to say
	// what they write. Nil writes it silently.
	SaveSQL func(source, target string, g *model.Graph, opt hsql.WriteOptions, temp bool) error
	// OpenSeries tells the user of the front end how to give earlier
	// snapshots, in the answer to a request that needs them; "" says
	// heapx serve's command line.
	OpenSeries string
	// Dump is how Open and OpenTrace read their files (heapx.Open's
	// options): Binary for a Node.js core, NoSourceMaps, Progress,
	// Stored, Warn (see Open).
	Dump heapx.Options
}

// openSeries is how the front end's user gives earlier snapshots.
func (s *Session) openSeries() string {
	if s.opt.OpenSeries != "" {
		return s.opt.OpenSeries
	}
	return "start heapx serve with FILE and earlier snapshots (heapx serve FILE BASELINE...)"
}

// Session is an analysed dump (File) with the earlier snapshots of the
// same program it is compared with (Baselines, oldest first).
type Session struct {
	file      report.Input
	baselines []report.Input
	infos     []*heapx.Info // what each dump holds (heapx info's), the file's first; nil for a trace
	opt       Options
	warnings  []query.Warning // what is wrong with the series (query.CheckSeries)
	trace     *TraceJSON      // a session on a memory trace (OpenTrace); nil on snapshots
	traceIn   *query.Trace    // that trace, as its queries read it

	a  *analysis.Analysis // file's analysis
	g  *model.Graph
	nm *analysis.Namer

	infoOnce sync.Once
	info     *InfoJSON

	alloc allocation // the Summary's filters by allocation time

	prepOnce sync.Once
	classes  []analysis.ClassSummary // the Summary, largest retained first
	rowOf    []int32                 // class index -> row in classes, -1 if none
	sites    []alloc.SiteShare       // per class, where most of it was allocated; nil without allocation stacks
	instFrom []uint32                // instances of class c: inst[instFrom[c]:instFrom[c+1]]
	inst     []int32                 // by class, largest retained size first
	byID     []int32                 // every node, by id

	domOnce  sync.Once
	domFirst []uint32 // the dominator tree's children index (Flame)
	domKids  []int32

	reportOnce sync.Once
	reportDoc  *report.Doc
	reportErr  error

	diffOnce     sync.Once
	diff         *leak.DiffResult
	diffWarnings []query.Warning
	targetClass  map[string]int // the file's class index of each class key

	lists listCache

	finderOnce sync.Once
	pathFinder *analysis.PathFinder

	queryMu sync.Mutex
	queries map[string]*queryEntry

	sqlMu sync.Mutex
	sqlDB *sqlquery.DB

	// The sessions on the baselines (Snapshot), made on first use.
	baseOnce []sync.Once
	baseView []*Session
}

// New opens a session on file, compared with baselines (oldest first):
// dumps opened by heapx.Open, analysed here unless they were (with
// classes and distances, which the session's views need). The session
// keeps their analyses, not the Dumps. The indexes are built on first
// use, or by Prepare.
func New(file *heapx.Dump, baselines []*heapx.Dump, opt Options) (*Session, error) {
	in, err := file.ReportInput()
	if err != nil {
		return nil, err
	}
	bs := make([]report.Input, len(baselines))
	infos := []*heapx.Info{file.Info()}
	for i, b := range baselines {
		if bs[i], err = b.ReportInput(); err != nil {
			return nil, err
		}
		infos = append(infos, b.Info())
	}
	return newSession(in, bs, infos, opt)
}

// newSession opens a session on analysed inputs, described by infos (the
// file's, then the baselines').
func newSession(file report.Input, baselines []report.Input, infos []*heapx.Info, opt Options) (*Session, error) {
	for _, in := range append([]report.Input{file}, baselines...) {
		if in.A == nil || in.A.Classes == nil || in.A.Distances == nil {
			return nil, fmt.Errorf("session: %s is not analysed with classes and distances", in.Path)
		}
	}
	s := &Session{file: file, baselines: baselines, infos: infos, opt: opt, a: file.A, g: file.A.Graph,
		nm: analysis.NewNamer(file.A.Graph, file.A.DOM), queries: map[string]*queryEntry{}, warnings: []query.Warning{},
		baseOnce: make([]sync.Once, len(baselines)), baseView: make([]*Session, len(baselines))}
	if len(baselines) > 0 {
		ws, err := query.CheckSeries(series(file, baselines), query.SeriesRules{Expected: "FILE, the newest snapshot, then the BASELINEs oldest first",
			Command: func(p []string) string { return serveCommand(p) }})
		if err != nil {
			return nil, err
		}
		s.warnings = append(s.warnings, ws...)
	}
	return s, nil
}

// Snapshot returns the session on snapshot i of Info().Inputs: s itself
// for 0 (the file), for 1 and on a session on that baseline (the oldest
// first), made on first use, whose object views (Object, References,
// Retainers, Paths, Children, ChildClasses) answer about the baseline's
// objects, as the Comparison's deleted objects need; it builds its
// indexes (ids, instances, retainers) when first asked, so a baseline
// nobody opens costs nothing more.
func (s *Session) Snapshot(i int) (*Session, error) {
	if i == 0 {
		return s, nil
	}
	if i < 0 || i > len(s.baselines) {
		if len(s.baselines) == 0 {
			return nil, notFound("no snapshot %d: the session has 1, FILE (0), and no baseline", i)
		}
		return nil, notFound("no snapshot %d: the session has %d (0 is FILE, 1 to %d its baselines, oldest first)", i, len(s.baselines)+1, len(s.baselines))
	}
	s.baseOnce[i-1].Do(func() {
		// New fails only on inputs it was given and checked already.
		s.baseView[i-1], _ = newSession(s.baselines[i-1], nil, s.infos[i:i+1], s.opt)
	})
	return s.baseView[i-1], nil
}

// serveCommand is heapx serve's command line for snapshots given oldest
// first: the newest, then the others oldest first.
func serveCommand(oldestFirst []string) string {
	if len(oldestFirst) == 0 {
		return "heapx serve"
	}
	n := len(oldestFirst) - 1
	return "heapx serve " + strings.Join(append([]string{oldestFirst[n]}, oldestFirst[:n]...), " ")
}

// series is the snapshots oldest first: the baselines, then the file.
func series(file report.Input, baselines []report.Input) []query.Snapshot {
	out := make([]query.Snapshot, 0, len(baselines)+1)
	for _, b := range append(baselines[:len(baselines):len(baselines)], file) {
		out = append(out, query.Snapshot{Path: b.Path, Analysis: b.A})
	}
	return out
}

// Prepare builds what the first answers need: the report the overview
// shows, the Summary, the index of each class's instances. Every method
// builds what it needs on first use anyway; a front end calls Prepare
// while it shows progress, so no click waits for those. What an object's
// retainers and paths need (the retainer index, 4 bytes an edge and a
// node, and the finder's distances) is built at the first object opened,
// not here: beside the report's and the indexes' memory it made the
// peak of a server's start (docs/benchmarks.md, "Fourth session").
func (s *Session) Prepare() error {
	s.Info()
	if s.trace != nil {
		_, err := s.Report()
		return err
	}
	// The report first: its passes borrow the buffers the analysis keeps
	// spare and drop a few hundred megabytes on a large heap, which a
	// collection then frees for the indexes built after it, instead of
	// the indexes adding to the peak (see docs/benchmarks.md).
	_, err := s.Report()
	runtime.GC()
	s.prepare()
	// The indexes took what they could of those buffers; the rest, and
	// what the report left, is returned to the system (the front end
	// frees it), not kept beside them.
	s.a.DropSpare()
	runtime.GC()
	return err
}

// prepare builds the Summary and the instance index.
func (s *Session) prepare() {
	s.prepOnce.Do(func() {
		s.classes = s.a.Summary()
		s.sites = alloc.ClassSites(s.a)
		s.rowOf = make([]int32, len(s.a.Classes.Names))
		for i := range s.rowOf {
			s.rowOf[i] = -1
		}
		for i, c := range s.classes {
			s.rowOf[c.Class] = int32(i)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.byID = idIndex(s.a)
		}()
		s.instFrom, s.inst = instanceIndex(s.a)
		<-done
	})
}

// Close deletes the SQL console's temporary copy of the dump, if it made
// one (Options.SQLCache.None).
func (s *Session) Close() error {
	s.sqlMu.Lock()
	defer s.sqlMu.Unlock()
	if s.sqlDB != nil && s.sqlDB.Temp {
		return os.Remove(s.sqlDB.Path)
	}
	return nil
}

// Words are what the runtime calls things, for labels: DevTools says
// "Constructor" for a V8 object's class, MAT and Firefox's tools "Class".
type Words struct {
	Class   string `json:"class"`
	Classes string `json:"classes"`
}

// wordsOf returns the runtime's words.
func wordsOf(g *model.Graph) Words {
	if leak.Runtime(g) == "v8" {
		return Words{Class: "Constructor", Classes: "Constructors"}
	}
	return Words{Class: "Class", Classes: "Classes"}
}

// InputJSON describes one snapshot of the session.
type InputJSON struct {
	Path string `json:"path"`
	// Role is "file" for the snapshot explored, "baseline" for the
	// earlier ones.
	Role      string `json:"role"`
	Format    string `json:"format"`
	Nodes     int    `json:"nodes"`
	Edges     int    `json:"edges"`
	TotalSize uint64 `json:"total_size"`
	// Info is the snapshot as heapx info --json describes it
	// (heapx.Dump.Info): its file, producer, metadata, census by node
	// type and optional sections; absent for a memory trace.
	Info *heapx.Info `json:"info,omitempty"`
}

// CategoryJSON totals the objects of one neutral category (info --json's
// categories, with the analysis's shallow sizes).
type CategoryJSON struct {
	Category    string `json:"category"`
	Count       int    `json:"count"`
	ShallowSize uint64 `json:"shallow_size"`
}

// QueryJSON describes a registered query as `heapx list --json` does
// (query.Descriptor), with whether each argument is required and whether
// the session has the snapshots the query takes.
type QueryJSON struct {
	query.Descriptor
	// Args are the descriptor's, each with whether it is required; they
	// take the descriptor's place in JSON (heapx list --json has no
	// "required", and keeps its released shape).
	Args []ArgJSON `json:"args"`
	// Runnable is false when the session has fewer snapshots than the
	// query takes.
	Runnable bool `json:"runnable"`
}

// ArgJSON is one argument of a query, with whether it is required.
type ArgJSON struct {
	query.ArgDescriptor
	Required bool `json:"required"`
}

// DescribeQuery returns the descriptor of q for a session of inputs
// snapshots.
func DescribeQuery(q *query.Query, inputs int) QueryJSON {
	d := q.Describe()
	qj := QueryJSON{Descriptor: d, Args: []ArgJSON{}, Runnable: inputs >= q.MinInputs}
	for i, a := range d.Args {
		qj.Args = append(qj.Args, ArgJSON{ArgDescriptor: a, Required: q.Args[i].Required})
	}
	qj.Descriptor.Args = nil // shadowed by Args
	return qj
}

// InfoJSON is what a front end shows first: the snapshots, the runtime's
// words, how ids are written, and what can be asked.
type InfoJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	// Baselines are the earlier snapshots, oldest first.
	Baselines []string    `json:"baselines"`
	Inputs    []InputJSON `json:"inputs"`
	// Runtime is "v8", "hprof" or "spidermonkey" (leak.Runtime), or
	// "memtrace" for a memory trace (OpenTrace).
	Runtime string `json:"runtime"`
	// IDs is "counted" when ids are V8's numbers (shown "@123") and
	// "address" when they are addresses (shown "@0x7f3a10").
	IDs       string `json:"ids"`
	Words     Words  `json:"words"`
	Policy    string `json:"policy"`
	TotalSize uint64 `json:"total_size"`
	// RootID is the id of the synthetic root the dominator tree starts
	// from.
	RootID     uint64         `json:"root_id"`
	Categories []CategoryJSON `json:"categories"`
	Queries    []QueryJSON    `json:"queries"`
	// Warnings say what is wrong with the snapshots given (out of order,
	// not of one process), as report --json's do; always present.
	Warnings []query.Warning `json:"warnings"`
	// AllocationFilters are the Summary's filters by when objects were
	// allocated (DevTools' "Objects allocated between Snapshot 1 and
	// Snapshot 2"), with baselines of one V8 process taken in one
	// session; AllocationFiltersNote says why there are none when there
	// are baselines.
	AllocationFilters     []AllocationFilterJSON `json:"allocation_filters,omitempty"`
	AllocationFiltersNote string                 `json:"allocation_filters_note,omitempty"`
	// Threads is how many thread stacks the dump records (Java's HPROF,
	// a Node.js core): the threads query shows them.
	Threads int `json:"threads"`
	// Limits are the paging bounds (DefaultPage, MaxPage).
	DefaultPage int `json:"default_page"`
	MaxPage     int `json:"max_page"`
	// Trace is present when the file is a memory trace (OpenTrace):
	// Queries are then the lifetime queries, and there are no objects,
	// classes or categories to show.
	Trace *TraceJSON `json:"trace,omitempty"`
}

// Info describes the session; it is computed once.
func (s *Session) Info() *InfoJSON {
	s.infoOnce.Do(func() { s.info = s.makeInfo() })
	return s.info
}

func (s *Session) makeInfo() *InfoJSON {
	if s.trace != nil {
		return s.traceInfo()
	}
	g := s.g
	info := &InfoJSON{SchemaVersion: SchemaVersion, File: s.file.Path, Baselines: []string{}, Runtime: leak.Runtime(g),
		IDs: "counted", Words: wordsOf(g), Policy: s.a.Policy.Name, TotalSize: s.a.TotalSize(), RootID: g.NodeID(g.Root),
		Warnings: s.warnings, Threads: s.infos[0].ThreadCount, DefaultPage: DefaultPage, MaxPage: MaxPage}
	if leak.IDKindOf(g) == leak.AddressIDs {
		info.IDs = "address"
	}
	input := func(in report.Input, d *heapx.Info, role string) InputJSON {
		return InputJSON{Path: in.Path, Role: role, Format: in.Format, Nodes: d.NodeCount, Edges: d.EdgeCount, TotalSize: in.A.TotalSize(), Info: d}
	}
	info.Inputs = append(info.Inputs, input(s.file, s.infos[0], "file"))
	for i, b := range s.baselines {
		info.Baselines = append(info.Baselines, b.Path)
		info.Inputs = append(info.Inputs, input(b, s.infos[i+1], "baseline"))
	}
	info.AllocationFilters, info.AllocationFiltersNote = s.allocationFilters()
	info.Categories = s.categories()
	for _, q := range query.All() {
		if q.Traces {
			continue // a session holds snapshots, not memory traces
		}
		info.Queries = append(info.Queries, DescribeQuery(q, len(s.baselines)+1))
	}
	return info
}

// categories totals the file's objects by neutral category, largest
// first.
func (s *Session) categories() []CategoryJSON {
	g := s.g
	var count [256]int
	var size [256]uint64
	for n, t := range g.Nodes.Type {
		c := g.NodeTypes[t].Category
		count[c]++
		size[c] += s.a.Self.At(int(n))
	}
	var out []CategoryJSON
	for c := range count {
		if count[c] > 0 {
			out = append(out, CategoryJSON{Category: model.Category(c).String(), Count: count[c], ShallowSize: size[c]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ShallowSize != out[j].ShallowSize {
			return out[i].ShallowSize > out[j].ShallowSize
		}
		return out[i].Category < out[j].Category
	})
	return out
}

// Report returns the report of the session's snapshots (heapx report
// --json), built once.
func (s *Session) Report() (*report.Doc, error) {
	s.reportOnce.Do(func() {
		var r *report.Report
		var err error
		if s.trace != nil {
			r, err = report.BuildTrace(s.file.Path, s.traceIn, report.Options{})
		} else {
			r, err = report.Build(s.file, s.baselines, report.Options{})
		}
		if err != nil {
			s.reportErr = err
			return
		}
		s.reportDoc = r.Doc()
	})
	return s.reportDoc, s.reportErr
}
