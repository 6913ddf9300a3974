// Package query is heapx's registry of analyses: the Go form of Eclipse
// MAT's IQuery extension point and memlab's analysis plugins. Each query
// declares a name, the snapshots it takes, its arguments and what it
// returns: a Result made of tables and trees with typed columns. Front ends
// (the CLI, the report, later the web UI) list the registry and render any
// result without knowing the query, so adding an analysis is writing one
// Run function and registering it.
//
// Queries read analysed snapshots (*analysis.Analysis) or opened memory
// traces (Trace) and never print or touch files; the front end loads the
// inputs (heapx.Open, heapx.OpenTrace) and renders the Result (package
// render, which writes sizes and counts as package humanize does).
package query

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
)

// Kind says what a column's values are, so every front end formats them
// the same way: sizes human-readable in text and raw in CSV and JSON.
type Kind uint8

// Column kinds.
const (
	// Text values are strings.
	Text Kind = iota
	// Count values are integers (int or int64), drawn with thousands
	// separators, or float64 means of counts (one decimal).
	Count
	// Bytes values are sizes in bytes (uint64), or float64 means of
	// sizes.
	Bytes
	// Percent values are float64 percentages (12.5 means 12.5%).
	Percent
	// ID values are runtime node ids (uint64), drawn as "@id".
	ID
	// Distance values are DevTools distances (int32): "-" for objects
	// reached only through system roots or not at all.
	Distance
	// Delta values are signed integers (int64) drawn with a sign, or
	// float64 differences of means.
	Delta
	// BytesDelta values are signed sizes in bytes (int64), or float64
	// differences of means.
	BytesDelta
	// Probability values are float64 from 0 to 1: a test's p-value,
	// drawn with three decimals, or in scientific notation below 0.001.
	Probability
)

var kindNames = [...]string{"text", "count", "bytes", "percent", "id", "distance", "delta", "bytes_delta", "probability"}

// String returns the kind's name as JSON output spells it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "text"
}

// Column describes one column of a table or tree.
type Column struct {
	Key   string // stable identifier, the JSON field name ("retained_size")
	Title string // header for people ("Retained size")
	Kind  Kind
}

// Table is a list of rows; each row has one value per column, of the Go
// type the column's Kind names, or nil for a cell with no value (shown
// empty; the sizes of the hops a path table elides).
type Table struct {
	Columns []Column
	Rows    [][]any
}

// Tree is a forest of rows with children (dominator trees, merged paths).
type Tree struct {
	Columns []Column
	Roots   []*TreeNode
}

// TreeNode is one row of a Tree.
type TreeNode struct {
	Values   []any
	Children []*TreeNode
}

// Chart suggests how a section is best drawn as a picture: a bar per row
// of Label with length Value (both column keys), or with Kind ChartLine
// lines over the rows: Label a numeric column for the x axis, a line for
// Value and for each numeric column after it. Front ends without
// pictures ignore it.
type Chart struct {
	Label string `json:"label"`
	Value string `json:"value"`
	Kind  string `json:"kind,omitempty"`
}

// ChartLine is the Chart kind of values over time (rows in order).
const ChartLine = "line"

// Warning is something the reader of a result must know before trusting
// it, such as snapshots given in the wrong order: front ends show it
// before everything else.
type Warning struct {
	// Code is a stable identifier (WarnOrderReversed,
	// WarnNotOneProcess), for scripts.
	Code string `json:"code"`
	// Message says what is wrong, why heapx thinks so and what it did.
	Message string `json:"message"`
}

// Warning codes.
const (
	// WarnOrderReversed: the ids show that a snapshot given as later
	// was taken before one given as earlier.
	WarnOrderReversed = "order_reversed"
	// WarnNotOneProcess: the snapshots share too few objects to come from
	// one process, so objects were not matched by id.
	WarnNotOneProcess = "not_one_process"
	// WarnSourceMap: a script's source map was not found where it was
	// named, or does not parse; positions in that script are shown as
	// the dump has them.
	WarnSourceMap = "source_map"
	// WarnTooFewDumps: the cohorts of heapx fleet --compare are too
	// small for any difference to pass the test.
	WarnTooFewDumps = "too_few_dumps"
)

// Section is one titled table or tree of a result.
type Section struct {
	// Heading names the section; it may be empty for single-table results.
	Heading string
	Table   *Table
	Tree    *Tree
	Chart   *Chart
	// Notes are lines shown below the section (totals, explanations).
	Notes []string
	// Path, for a section whose table is the retainer path of a finding,
	// lists the path's objects from the root (and Notes[0] says what the
	// path is of), and Ref is how another section refers to the finding
	// ("Leak 1"): heapx report shows a path once, and a later finding
	// whose object is on it says so instead of repeating it. Neither is
	// rendered.
	Path []model.NodeIndex
	Ref  string
}

// Result is what a query returns.
type Result struct {
	// Query is the name of the query that made it.
	Query string
	// Header lines come before the sections (what was analysed).
	Header   []string
	Sections []*Section
	// Notes are lines shown after all sections.
	Notes []string
	// Warnings come before everything else.
	Warnings []Warning
	// JSON, when not nil, is the result's JSON form, replacing the
	// generic one (render.Document): the commands that predate the
	// registry keep their released --json schemas this way.
	JSON any
	// Failed is set by queries that check a condition (a CI gate): the
	// front end exits non-zero after rendering.
	Failed string
}

// ArgKind is the type of a query argument.
type ArgKind uint8

// Argument kinds.
const (
	IntArg ArgKind = iota
	StringArg
	BoolArg
	FloatArg
	// SizeArg is a byte size; front ends accept "10MB", "512kB", "1GiB".
	SizeArg
)

var argKindNames = [...]string{"int", "string", "bool", "float", "size"}

// String returns the kind's name as heapx list --json spells it.
func (k ArgKind) String() string {
	if int(k) < len(argKindNames) {
		return argKindNames[k]
	}
	return "string"
}

// Arg declares one argument of a query (a flag on the command line).
type Arg struct {
	Name    string // flag name, without dashes ("limit")
	Short   string // one-letter flag, or ""
	Kind    ArgKind
	Default any // int, string, bool, float64 or uint64 per Kind
	Help    string
	// Required arguments have no useful default.
	Required bool
}

// Parse reads text as the argument's value, of the Go type of its Kind,
// as its flag would: "10MB" for a size, "true" for a bool (spaces around
// a number or a bool are ignored).
func (a Arg) Parse(text string) (any, error) {
	switch a.Kind {
	case IntArg:
		return strconv.Atoi(strings.TrimSpace(text))
	case BoolArg:
		return strconv.ParseBool(strings.TrimSpace(text))
	case FloatArg:
		return strconv.ParseFloat(strings.TrimSpace(text), 64)
	case SizeArg:
		return humanize.ParseSize(text)
	}
	return text, nil
}

// Snapshot is one analysed input of a query.
type Snapshot struct {
	Path     string
	Analysis *analysis.Analysis
	// Digest stands for Analysis for a snapshot other than the last of
	// a query that sets EarlierAsDigests: made after the digest of the
	// snapshot before it (leak.NewDigest).
	Digest *leak.Digest
	// Trace stands for Analysis for a query of memory traces
	// (Query.Traces).
	Trace *Trace
}

// Context is what a query's Run receives: its snapshots, in command-line
// order, and its argument values.
type Context struct {
	Snapshots []Snapshot
	Values    map[string]any
}

// Int returns the value of an IntArg.
func (c *Context) Int(name string) int { return c.Values[name].(int) }

// String returns the value of a StringArg.
func (c *Context) String(name string) string { return c.Values[name].(string) }

// Bool returns the value of a BoolArg.
func (c *Context) Bool(name string) bool { return c.Values[name].(bool) }

// Float returns the value of a FloatArg.
func (c *Context) Float(name string) float64 { return c.Values[name].(float64) }

// Size returns the value of a SizeArg.
func (c *Context) Size(name string) uint64 { return c.Values[name].(uint64) }

// Query is one registered analysis.
type Query struct {
	// Name is the command name ("duplicates"); Title a one-line
	// description; Help the long description.
	Name, Title, Help string
	// Group orders `heapx list` ("basic", "leaks", "inspections").
	Group string
	// Usage names the positional arguments ("FILE", "BASELINE TARGET").
	Usage string
	// MinInputs and MaxInputs bound the number of snapshots (MaxInputs 0:
	// no limit).
	MinInputs, MaxInputs int
	// EarlierAsDigests says the query needs of every snapshot but the
	// last only its digest (Snapshot.Digest): a front end may read them
	// in order into digests and drop their graphs, so a series costs
	// about what its last snapshot does.
	EarlierAsDigests bool
	// Traces says the inputs are memory traces (heapx trace), not heap
	// snapshots: front ends give them as Snapshot.Trace.
	Traces bool
	Args   []Arg
	Run    func(c *Context) (*Result, error)
}

var (
	mu       sync.RWMutex
	registry = map[string]*Query{}
)

// Register adds q to the registry. It panics on a duplicate or malformed
// registration: that is a programming error found by any test.
func Register(q *Query) {
	mu.Lock()
	defer mu.Unlock()
	if q.Name == "" || q.Run == nil || q.MinInputs < 1 || (q.MaxInputs != 0 && q.MaxInputs < q.MinInputs) {
		panic(fmt.Sprintf("query: malformed registration %q", q.Name))
	}
	if _, dup := registry[q.Name]; dup {
		panic(fmt.Sprintf("query: %q registered twice", q.Name))
	}
	for _, a := range q.Args {
		if !defaultFits(a) {
			panic(fmt.Sprintf("query %q: default of --%s does not match its kind", q.Name, a.Name))
		}
	}
	registry[q.Name] = q
}

func defaultFits(a Arg) bool {
	switch a.Kind {
	case IntArg:
		_, ok := a.Default.(int)
		return ok
	case StringArg:
		_, ok := a.Default.(string)
		return ok
	case BoolArg:
		_, ok := a.Default.(bool)
		return ok
	case FloatArg:
		_, ok := a.Default.(float64)
		return ok
	case SizeArg:
		_, ok := a.Default.(uint64)
		return ok
	}
	return false
}

// Descriptor describes a query to programs: heapx list --json prints
// one per query, and heapx serve's API and the MCP server's tool list
// carry it, so a front end finds every analysis and its arguments
// without knowing them.
type Descriptor struct {
	Name      string          `json:"name"`
	Group     string          `json:"group"`
	Usage     string          `json:"usage"`
	Title     string          `json:"title"`
	MinInputs int             `json:"min_inputs"`
	MaxInputs int             `json:"max_inputs"`
	Args      []ArgDescriptor `json:"args"`
}

// ArgDescriptor describes one argument of a query (its flag).
type ArgDescriptor struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Default any    `json:"default"`
	Help    string `json:"help"`
}

// Describe returns q's descriptor.
func (q *Query) Describe() Descriptor {
	d := Descriptor{Name: q.Name, Group: q.Group, Usage: q.Usage, Title: q.Title, MinInputs: q.MinInputs,
		MaxInputs: q.MaxInputs, Args: []ArgDescriptor{}}
	for _, a := range q.Args {
		d.Args = append(d.Args, ArgDescriptor{Name: a.Name, Kind: a.Kind.String(), Default: a.Default, Help: a.Help})
	}
	return d
}

// Lookup returns the query named name, or nil.
func Lookup(name string) *Query {
	mu.RLock()
	defer mu.RUnlock()
	return registry[name]
}

// All returns every registered query, by group then name.
func All() []*Query {
	mu.RLock()
	defer mu.RUnlock()
	qs := make([]*Query, 0, len(registry))
	for _, q := range registry {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool {
		if gi, gj := groupRank(qs[i].Group), groupRank(qs[j].Group); gi != gj {
			return gi < gj
		}
		return qs[i].Name < qs[j].Name
	})
	return qs
}

// Groups in `heapx list` order.
const (
	GroupBasic       = "basic"
	GroupLeaks       = "leaks"
	GroupInspections = "inspections"
)

func groupRank(g string) int {
	switch g {
	case GroupBasic:
		return 0
	case GroupLeaks:
		return 1
	case GroupInspections:
		return 2
	case GroupLifetimes:
		return 3
	}
	return 4
}

// Exec checks c against q's declaration, fills in the defaults of
// missing arguments and runs q. Values of the wrong type are an error, not
// a panic inside Run.
func (q *Query) Exec(c *Context) (*Result, error) {
	if n := len(c.Snapshots); n < q.MinInputs || (q.MaxInputs > 0 && n > q.MaxInputs) {
		return nil, fmt.Errorf("%s takes %s, got %d", q.Name, q.inputsText(), n)
	}
	vals := make(map[string]any, len(q.Args))
	for _, a := range q.Args {
		v, ok := c.Values[a.Name]
		if !ok {
			if a.Required {
				return nil, fmt.Errorf("%s needs --%s", q.Name, a.Name)
			}
			v = a.Default
		}
		if !defaultFits(Arg{Kind: a.Kind, Default: v}) {
			return nil, fmt.Errorf("%s: --%s has a value of the wrong type (%T)", q.Name, a.Name, v)
		}
		vals[a.Name] = v
	}
	r, err := q.Run(&Context{Snapshots: c.Snapshots, Values: vals})
	if err != nil {
		return nil, err
	}
	r.Query = q.Name
	return r, nil
}

func (q *Query) inputsText() string {
	switch {
	case q.MaxInputs == q.MinInputs && q.MinInputs == 1:
		return "one snapshot"
	case q.MaxInputs == q.MinInputs:
		return fmt.Sprintf("%d snapshots", q.MinInputs)
	case q.MaxInputs == 0:
		return fmt.Sprintf("%d or more snapshots", q.MinInputs)
	}
	return fmt.Sprintf("%d to %d snapshots", q.MinInputs, q.MaxInputs)
}
