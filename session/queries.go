package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/heapx/heapx/query"
)

// MaxQueryRows is what a query's row limit (its "limit" argument) is
// clamped to, 0 ("all") included: a front end pages through the lists of
// its own views, and a registry query's table is drawn whole.
const MaxQueryRows = 1000

// queryEntry is a query result, computed once for its arguments.
type queryEntry struct {
	once   sync.Once
	res    *query.Result
	inputs []string
	err    error
}

// maxQueries bounds the results kept: the next ask of a kept one is
// free, and a forgotten one is computed again.
const maxQueries = 64

// QueryResult is a registry query's result with the snapshots it ran on.
type QueryResult struct {
	Result *query.Result
	// Inputs are the paths of the snapshots, in the query's order.
	Inputs []string
}

// Query runs the registered query name with the arguments args, given as
// on the command line (flag names without dashes, values as text: "10MB"
// for a size, "true" for a flag), on the session's snapshots: the file
// for a query of one snapshot; the last baseline and the file for one of
// two (diff); the first and last baselines and the file for one of three
// (leaks, as heapx report runs it); all of them, oldest first, for a query
// of a series (growth). Results are kept, so asking again is free.
func (s *Session) Query(name string, args map[string]string) (*QueryResult, error) {
	q := query.Lookup(name)
	if q == nil || q.Traces != (s.trace != nil) {
		what := "a snapshot"
		if s.trace != nil {
			what = "a memory trace"
		}
		return nil, notFound("no query named %q for %s (heapx list names them)", name, what)
	}
	values, err := queryValues(q, args)
	if err != nil {
		return nil, err
	}
	snaps, err := s.queryInputs(q)
	if err != nil {
		return nil, err
	}
	key := cacheKey(name, values)
	s.queryMu.Lock()
	e := s.queries[key]
	if e == nil {
		if len(s.queries) >= maxQueries {
			for k := range s.queries { // any one: results are cheap to recompute relative to their number
				delete(s.queries, k)
				break
			}
		}
		e = &queryEntry{}
		s.queries[key] = e
	}
	s.queryMu.Unlock()
	e.once.Do(func() {
		for _, sn := range snaps {
			e.inputs = append(e.inputs, sn.Path)
		}
		e.res, e.err = q.Exec(&query.Context{Snapshots: snaps, Values: values})
		if e.err != nil {
			// A query's own refusal (a bad --id, a class that does not
			// exist, a threshold out of range) is a bad request.
			e.err = &Error{Kind: Invalid, Msg: e.err.Error()}
		}
	})
	if e.err != nil {
		return nil, e.err
	}
	return &QueryResult{Result: e.res, Inputs: e.inputs}, nil
}

// queryInputs picks the snapshots query q runs on (see Query).
func (s *Session) queryInputs(q *query.Query) ([]query.Snapshot, error) {
	if s.trace != nil {
		return []query.Snapshot{{Path: s.file.Path, Trace: s.traceIn}}, nil
	}
	all := series(s.file, s.baselines)
	n := len(all)
	if n < q.MinInputs {
		return nil, invalid("%s needs %d snapshots and the session has %d: %s", q.Name, q.MinInputs, n, s.openSeries())
	}
	switch {
	case q.MinInputs == 1:
		// summary's --between takes more, but the session has its own
		// allocation filters (ListQuery.Allocated).
		return all[n-1:], nil
	case q.MaxInputs == 0:
		return all, nil
	case q.MaxInputs == 3 && q.MinInputs == 3:
		return []query.Snapshot{all[0], all[n-2], all[n-1]}, nil
	}
	return all[n-min(n, q.MaxInputs):], nil
}

// queryValues parses args as q's flags would and clamps the row limit.
func queryValues(q *query.Query, args map[string]string) (map[string]any, error) {
	values := map[string]any{}
	for name, text := range args {
		i := slices.IndexFunc(q.Args, func(a query.Arg) bool { return a.Name == name })
		if i < 0 {
			return nil, invalid("%s has no argument %q", q.Name, name)
		}
		a := q.Args[i]
		v, err := a.Parse(text)
		if err != nil {
			return nil, invalid("%s: %s=%q is not a valid %s", q.Name, name, text, a.Kind)
		}
		values[name] = v
	}
	// The row limit: paths' is a count of paths, the others' of rows.
	if i := slices.IndexFunc(q.Args, func(a query.Arg) bool { return a.Name == "limit" && a.Kind == query.IntArg }); i >= 0 {
		n, ok := values["limit"].(int)
		if !ok {
			n = q.Args[i].Default.(int)
		}
		bound := MaxQueryRows
		if q.Name == "paths" {
			bound = MaxPaths
		}
		if n == 0 || n > bound {
			n = bound
		}
		values["limit"] = n
	}
	return values, nil
}

// cacheKey identifies a query and its argument values.
func cacheKey(name string, values map[string]any) string {
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=")
		b.WriteString(strconv.Quote(fmt.Sprint(values[k])))
	}
	return b.String()
}
