package heapx

import (
	"fmt"
	"io"
	"strings"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

// Query runs the registered query name (a command of `heapx list`:
// "summary", "suspects", "duplicates", "diff", "leaks", ...; query.All
// lists them with their arguments) on d and then more, in the order the
// query takes its dumps, as on the command line: for "diff" d is the base
// and more the target; for "leaks" d, then more, are the baseline, the
// target and the final dump. Each dump is analysed first.
//
// args are the query's arguments by name (the flag names without dashes,
// "limit" for -n), of the Go type of their query.ArgKind: int, string,
// bool, float64, or uint64 bytes for a size; those left out take their
// defaults. A name the query does not declare is an error, not ignored.
//
// The result is what every heapx front end renders (tables and trees with
// typed columns, notes, warnings). A query that checks a condition (a CI
// gate) sets Result.Failed rather than returning an error.
func (d *Dump) Query(name string, args map[string]any, more ...*Dump) (*Result, error) {
	q := query.Lookup(name)
	if q == nil {
		var names []string
		for _, q := range query.All() {
			names = append(names, q.Name)
		}
		return nil, fmt.Errorf("no query %q (queries: %s)", name, strings.Join(names, ", "))
	}
	for k := range args {
		if !declares(q, k) {
			var names []string
			for _, a := range q.Args {
				names = append(names, a.Name)
			}
			if len(names) == 0 {
				return nil, fmt.Errorf("query %s has no argument %q (it takes none)", name, k)
			}
			return nil, fmt.Errorf("query %s has no argument %q (its arguments: %s)", name, k, strings.Join(names, ", "))
		}
	}
	c := &query.Context{Values: args}
	var inputs []string
	for _, x := range append([]*Dump{d}, more...) {
		a, err := x.Analysis()
		if err != nil {
			return nil, err
		}
		c.Snapshots = append(c.Snapshots, query.Snapshot{Path: x.path, Analysis: a})
		inputs = append(inputs, x.path)
	}
	r, err := q.Exec(c)
	if err != nil {
		return nil, err
	}
	return &Result{Result: r, inputs: inputs}, nil
}

// Result is a query's result (its sections, tables and trees, notes and
// warnings), which Render writes in any of heapx's output forms.
type Result struct {
	*query.Result
	inputs []string // the dumps' paths, for the JSON document
}

// Format is an output form of Render: Text (the tables heapx prints), CSV,
// JSON (the --json documents) or HTML (a fragment of the report's page).
type Format = render.Format

// The output forms of Render.
const (
	Text = render.Text
	CSV  = render.CSV
	JSON = render.JSON
	HTML = render.HTML
)

// Render writes the result to w as heapx's commands print it in form f:
// Text as `heapx NAME` prints it, CSV as with --csv, JSON as with --json.
func (r *Result) Render(w io.Writer, f Format) error {
	return render.Write(w, r.Result, f, render.Options{Inputs: r.inputs})
}

// declares reports whether q has an argument named name.
func declares(q *query.Query, name string) bool {
	for _, a := range q.Args {
		if a.Name == name {
			return true
		}
	}
	return false
}
