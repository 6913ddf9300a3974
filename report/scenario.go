package report

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/capture"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/query"
)

// BuildScenario composes the report of a scenario's run
// (capture.RunScenario, run with so): it reads the run's three snapshots
// with read, in the order they were taken (baseline, target, final), and
// reports in memlab's order, the final snapshot reported on and the
// baseline and the target its baselines (Build), with what the scenario
// measured of the page (AddScenario). snapshots says where the snapshot
// files are, for the report's reader.
func BuildScenario(so capture.ScenarioOptions, res *capture.ScenarioResult, read func(path string) (Input, error), snapshots string, opt Options) (*Report, error) {
	paths := res.Paths()
	if len(paths) != 3 {
		return nil, fmt.Errorf("report: a scenario's run has 3 snapshots (baseline, target, final), not %d", len(paths))
	}
	in := make([]Input, len(paths))
	for i, p := range paths {
		var err error
		if in[i], err = read(p); err != nil {
			return nil, err
		}
	}
	r, err := Build(in[2], in[:2], opt)
	if err != nil {
		return nil, err
	}
	return r, r.AddScenario(so.Scenario, so.Warmup, res, snapshots, opt.Rows)
}

// AddScenario adds to r, the report of a scenario's final snapshot with
// its baseline and target as baselines (memlab's order), what the
// scenario was and what it measured of the page (capture.RunScenario):
// the page, the browser, the steps and where the snapshots are (snapshots)
// in the overview; its warnings; and, after the leaks, a part on the
// page: its DOM and heap after each repetition, the event listeners left
// behind with where their function is, and the collections that grew at
// every repetition with what holds them in the final snapshot; rows
// bounds its tables (0: no bound).
func (r *Report) AddScenario(sc capture.Scenario, warmup int, res *capture.ScenarioResult, snapshots string, rows int) error {
	r.Overview = append([][2]string{
		{"Page", sc.URL},
		{"Browser", res.Browser},
		{"Scenario", scenarioText(sc, warmup)},
		{"Snapshots", snapshots},
	}, r.Overview...)
	for _, w := range res.Warnings {
		r.Warnings = append(r.Warnings, query.Warning{Code: w.Code, Message: w.Message})
	}
	page, err := pagePart(res, sc, r.File, rows)
	if err != nil {
		return err
	}
	// After memlab's leaks, which lead.
	at := 0
	if len(r.Parts) > 0 && r.Parts[0].Key == "leaks" {
		at = 1
	}
	r.Parts = append(r.Parts[:at], append([]Part{{Key: "page", Title: "The page, repetition by repetition", Result: page}}, r.Parts[at:]...)...)
	return nil
}

// scenarioText says what the scenario did: "setup 1 step, action 2
// steps, back 1 step; 1 warm-up, 3 repetitions".
func scenarioText(sc capture.Scenario, warmup int) string {
	steps := func(n int) string {
		if n == 1 {
			return "1 step"
		}
		return fmt.Sprintf("%d steps", n)
	}
	s := fmt.Sprintf("action %s, back %s; ", steps(len(sc.Action)), steps(len(sc.Back)))
	if len(sc.Setup) > 0 {
		s = fmt.Sprintf("setup %s, ", steps(len(sc.Setup))) + s
	}
	return s + fmt.Sprintf("%d warm-up, %d repetition(s)", warmup, max(sc.Repeat, 1))
}

// pagePart is what the page's own counts say: its DOM and heap after
// each repetition, the event listeners added and not removed, and the
// collections that grew at every repetition, each with the path that
// holds it in the final snapshot.
func pagePart(res *capture.ScenarioResult, sc capture.Scenario, final Input, rows int) (*query.Result, error) {
	n := max(sc.Repeat, 1)
	r := &query.Result{Query: "scenario"}
	r.Sections = append(r.Sections, countsSection(res.Counts, n))
	r.Sections = append(r.Sections, listenersSection(res.Listeners, n, sc.URL, rows))
	cs, paths, err := collectionsSections(res.Collections, n, final, rows)
	if err != nil {
		return nil, err
	}
	r.Sections = append(append(r.Sections, cs), paths...)
	return r, nil
}

// countsSection is the page's counts at each point, with what grew at
// every repetition.
func countsSection(counts []capture.PageCounts, n int) *query.Section {
	t := &query.Table{Columns: []query.Column{{Key: "at", Title: "After", Kind: query.Text},
		{Key: "documents", Title: "Documents", Kind: query.Count}, {Key: "nodes", Title: "DOM nodes", Kind: query.Count},
		{Key: "listeners", Title: "JS event listeners", Kind: query.Count}, {Key: "heap_used", Title: "JS heap used", Kind: query.Bytes}}}
	var base capture.PageCounts
	var reps []capture.PageCounts
	for _, c := range counts {
		t.Rows = append(t.Rows, []any{c.At, c.Documents, c.Nodes, c.Listeners, uint64(c.HeapUsed)})
		switch {
		case c.At == "baseline":
			base = c
		case strings.HasPrefix(c.At, "repetition "):
			reps = append(reps, c)
		}
	}
	s := &query.Section{Heading: "DOM and JavaScript heap (after full garbage collections)", Table: t}
	var grew []string
	for _, m := range []struct {
		what string
		get  func(capture.PageCounts) int
	}{{"DOM nodes", func(c capture.PageCounts) int { return c.Nodes }},
		{"JS event listeners", func(c capture.PageCounts) int { return c.Listeners }},
		{"documents", func(c capture.PageCounts) int { return c.Documents }}} {
		if note := growthNote(m.what, base, reps, m.get); note != "" {
			grew = append(grew, note)
		}
	}
	if len(grew) == 0 && len(reps) == n {
		grew = append(grew, "DOM nodes, event listeners and documents are back to the baseline's counts or below after the repetitions.")
	}
	s.Notes = grew
	return s
}

// growthNote says how a count grew from the baseline over the
// repetitions: at every one, or overall; "" when it did not.
func growthNote(what string, base capture.PageCounts, reps []capture.PageCounts, get func(capture.PageCounts) int) string {
	if len(reps) == 0 {
		return ""
	}
	first, last := get(base), get(reps[len(reps)-1])
	if last <= first {
		return ""
	}
	every := true
	prev := first
	for _, c := range reps {
		if get(c) <= prev {
			every = false
		}
		prev = get(c)
	}
	per := perRepetition(last-first, len(reps))
	if every {
		return fmt.Sprintf("%s grew at every repetition: %s at the baseline, %s after %d (%s per repetition).",
			upperFirst(what), humanize.Thousands(uint64(first)), humanize.Thousands(uint64(last)), len(reps), per)
	}
	return fmt.Sprintf("%s grew from %s at the baseline to %s after %d repetitions, not at every one.",
		upperFirst(what), humanize.Thousands(uint64(first)), humanize.Thousands(uint64(last)), len(reps))
}

// perRepetition is d over n, as a count: "+81", "+0.7".
func perRepetition(d, n int) string {
	if d%n == 0 {
		return fmt.Sprintf("%+d", d/n)
	}
	return fmt.Sprintf("%+.1f", float64(d)/float64(n))
}

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// listenersSection lists the event listeners added and not removed.
func listenersSection(ls []capture.ListenerGrowth, n int, pageURL string, rows int) *query.Section {
	t := &query.Table{Columns: []query.Column{{Key: "target", Title: "On", Kind: query.Text}, {Key: "event", Title: "Event", Kind: query.Text},
		{Key: "baseline", Title: "Baseline", Kind: query.Count}, {Key: "final", Title: "Final", Kind: query.Count},
		{Key: "per_repetition", Title: "Per repetition", Kind: query.Text}, {Key: "handler", Title: "Handler", Kind: query.Text},
		{Key: "defined_at", Title: "Defined at", Kind: query.Text}}}
	origin := ""
	if u, err := url.Parse(pageURL); err == nil && u.Host != "" {
		origin = u.Scheme + "://" + u.Host
	}
	for i, l := range ls {
		if rows > 0 && i == rows {
			break
		}
		at := ""
		if l.Script != "" {
			at = fmt.Sprintf("%s:%d:%d", strings.TrimPrefix(l.Script, origin), l.Line, l.Column)
		}
		t.Rows = append(t.Rows, []any{l.Target, l.Type, l.Before, l.After, perRepetition(l.After-l.Before, n), l.Handler, at})
	}
	s := &query.Section{Heading: "Event listeners added and not removed (on the window, the document and its elements)", Table: t}
	if len(ls) == 0 {
		s.Notes = []string{"No event listener on the window, the document or its elements was left behind."}
	} else if rows > 0 && len(ls) > rows {
		s.Notes = []string{fmt.Sprintf("%d of %d kinds of listener shown (-n 0 shows all).", rows, len(ls))}
	}
	return s
}

// maxCollectionPaths is how many growing collections get their retainer
// path shown.
const maxCollectionPaths = 3

// collectionsSections lists the collections that grew at every
// repetition, then the retainer path of the first few in the final
// snapshot: what holds them.
func collectionsSections(cs []capture.CollectionGrowth, n int, final Input, rows int) (*query.Section, []*query.Section, error) {
	t := &query.Table{Columns: []query.Column{{Key: "id", Title: "Id", Kind: query.ID}, {Key: "type", Title: "Type", Kind: query.Text},
		{Key: "before", Title: "Baseline", Kind: query.Count}, {Key: "after", Title: "Final", Kind: query.Count},
		{Key: "per_repetition", Title: "Per repetition", Kind: query.Text}, {Key: "held_by", Title: "Held by", Kind: query.Text},
		{Key: "preview", Title: "First item", Kind: query.Text}}}
	a := final.A
	sn := query.Snapshot{Path: final.Path, Analysis: a}
	var paths []*query.Section
	for i, c := range cs {
		if rows > 0 && i == rows {
			break
		}
		held := ""
		if node, ok := a.NodeByID(c.HeapID); ok && c.HeapID != 0 {
			if ps := a.Paths(node, analysis.PathOptions{K: 1}); len(ps) > 0 {
				steps := ps[0].Steps
				held = query.Shorten(analysis.EdgeString(a.Graph, steps[len(steps)-1].Edge), query.MaxNameWidth)
			}
			if len(paths) < maxCollectionPaths {
				p, err := query.Lookup("paths").Exec(&query.Context{Snapshots: []query.Snapshot{sn}, Values: map[string]any{"id": fmt.Sprintf("@%d", c.HeapID), "limit": 1}})
				if err != nil {
					return nil, nil, err
				}
				if len(p.Sections) > 0 {
					s := p.Sections[0]
					s.Heading = fmt.Sprintf("Collection %d: %s @%d (%s), its retainer path in the final snapshot", i+1, c.Type, c.HeapID, c.Preview)
					paths = append(paths, s)
				}
			}
		}
		t.Rows = append(t.Rows, []any{c.HeapID, c.Type, c.Before, c.After, perRepetition(c.After-c.Before, n), held, c.Preview})
	}
	s := &query.Section{Heading: fmt.Sprintf("Collections that grew by a multiple of the %d repetition(s) (Arrays, Maps, Sets, plain Objects that existed at the baseline)", n), Table: t}
	if len(cs) == 0 {
		s.Notes = []string{"No collection of the page grew by a multiple of the repetitions."}
	}
	return s, paths, nil
}
