package query

import (
	"fmt"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

func init() {
	Register(&Query{
		Name: "suspects", Group: GroupLeaks, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Find leak suspects: objects and classes holding a large share of the heap, and where it accumulates",
		Help: `Find leak suspects as Eclipse MAT's Leak Suspects report does: objects
whose retained size is at least --threshold percent of the heap, walked
down the dominator tree to the accumulation point where the memory spreads
over many children, and classes whose instances accumulate there. Each
suspect comes with the shortest retainer path to its accumulation point.
In V8 snapshots the global objects are not suspects themselves: the search
starts below them.`,
		Args: []Arg{limitArg(10), {Name: "threshold", Kind: FloatArg, Default: 10.0,
			Help: "minimum share of the heap a suspect retains, in percent"}},
		Run: runSuspects,
	})
}

// SuspectsResult computes the leak suspects of sn as a Result: a table of
// the suspects, then one section per suspect with its sentence and the
// path to its accumulation point. It also returns every suspect found,
// largest first, before limit cut the list.
func SuspectsResult(sn Snapshot, threshold float64, limit int) (*Result, []analysis.Suspect, error) {
	if threshold <= 0 || threshold > 100 {
		return nil, nil, fmt.Errorf("--threshold must be above 0 and at most 100, not %g", threshold)
	}
	a := sn.Analysis
	g := a.Graph
	all := analysis.LeakSuspects(a, analysis.SuspectOptions{Threshold: threshold / 100})
	total := a.Dominators.Retained[g.Root]
	sus := all
	if limit > 0 && len(sus) > limit {
		sus = sus[:limit]
	}
	nm := analysis.NewNamer(g, a.DOM)
	node := func(n model.NodeIndex) NodeJSON { return NewNodeJSON(g, a.Row(nm, n)) }
	t := &Table{Columns: []Column{{Key: "rank", Title: "#", Kind: Count}, {Key: "holder", Title: "Holder", Kind: Text},
		colRetained, colPercent, {Key: "point", Title: "Accumulation point", Kind: Text},
		{Key: "class", Title: "Accumulated class", Kind: Text}, colCount,
		{Key: "class_retained", Title: "Class retained", Kind: Bytes}}}
	r := &Result{Sections: []*Section{{Heading: fmt.Sprintf("Leak suspects (objects or classes retaining at least %g%% of %s)", threshold, HumanSize(total)), Table: t}}}
	points := make([]model.NodeIndex, len(sus))
	for i, s := range sus {
		points[i] = s.Point
	}
	paths := a.ShortestPaths(points)
	for i, s := range sus {
		holder, class := "", ""
		if s.Holder != model.NoNode {
			holder = objectName(a, nm, s.Holder)
		}
		if s.Count > 0 {
			class = Shorten(a.Classes.Names[s.Class], MaxNameWidth)
		}
		point := node(s.Point)
		t.Rows = append(t.Rows, []any{i + 1, holder, s.Retained, Share(s.Retained, total), ObjectName(point), class, s.Count, s.ClassRetained})
		sec := &Section{Heading: fmt.Sprintf("Suspect %d: %s", i+1, suspectSentence(s, holder, point, class, total))}
		if p := paths[i]; p.Cost >= 0 {
			sec.Table = pathTable(a, nm, p)
			sec.Notes = []string{"The shortest retainer path to the accumulation point, from the root."}
		} else {
			sec.Notes = []string{"No retainer path reaches the accumulation point from the roots."}
		}
		r.Sections = append(r.Sections, sec)
	}
	if len(sus) == 0 {
		r.Notes = []string{fmt.Sprintf("No object or class retains %g%% of the heap; try a lower --threshold.", threshold)}
	}
	return r, all, nil
}

// suspectSentence says what a suspect is in one sentence, in the words of
// MAT's report.
func suspectSentence(s analysis.Suspect, holder string, point NodeJSON, class string, total uint64) string {
	var text string
	if holder != "" {
		text = fmt.Sprintf("%s retains %s (%s of the heap).", holder, HumanSize(s.Retained), PercentOf(s.Retained, total))
		if point.ID != 0 || holder != ObjectName(point) {
			text += fmt.Sprintf(" The memory is accumulated in %s (%s)", ObjectName(point), HumanSize(point.RetainedSize))
			if s.Count > 0 {
				text += fmt.Sprintf(", which holds %s instances of %s retaining %s", Thousands(uint64(s.Count)), class, HumanSize(s.ClassRetained))
			}
			text += "."
		}
		return text
	}
	return fmt.Sprintf("%s instances of %s retain %s (%s of the heap), all held directly by %s.",
		Thousands(uint64(s.Count)), class, HumanSize(s.ClassRetained), PercentOf(s.ClassRetained, total), ObjectName(point))
}

func runSuspects(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	r, _, err := SuspectsResult(c.Snapshots[0], c.Float("threshold"), n)
	return r, err
}
