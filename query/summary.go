package query

import (
	"fmt"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/humanize"
)

func init() {
	Register(&Query{
		Name: "summary", Group: GroupBasic, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the classes that hold the memory, like DevTools' Summary view",
		Help: `Show DevTools' Summary view: one row per constructor (class) with its
object count, smallest distance from a root, total shallow size and
retained size, largest retained size first. Numbers match the Chrome
DevTools Memory panel. Objects unreachable from the roots are counted as
DevTools counts them and totalled below the table; --unreachable lists
them by class instead of the classes.`,
		Args: []Arg{limitArg(20), {Name: "unreachable", Kind: BoolArg, Default: false,
			Help: "list the unreachable objects by class (all classes in --json)"}},
		Run: runSummary,
	})
}

// SummaryJSON is the `heapx summary --json` output.
type SummaryJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	Policy        string `json:"policy"`
	// TotalSize is DevTools' total: the root's retained size plus
	// extra_native_bytes; percentages are of it.
	TotalSize  uint64      `json:"total_size"`
	ClassCount int         `json:"class_count"`
	Classes    []ClassJSON `json:"classes"`
	// Unreachable describes the objects no root reaches over non-weak
	// edges. DevTools hangs them under the root, so they are also counted
	// in Classes (keeping the numbers equal to DevTools'); they are listed
	// here so they are never silently mixed in.
	Unreachable UnreachableJSON `json:"unreachable"`
}

// UnreachableJSON totals the unreachable objects, by class (largest
// first; all of them with --unreachable, else the first 10).
type UnreachableJSON struct {
	Count   int                    `json:"count"`
	Size    uint64                 `json:"shallow_size"`
	Classes []UnreachableClassJSON `json:"classes"`
}

// UnreachableClassJSON is one class of unreachable objects.
type UnreachableClassJSON struct {
	Constructor string `json:"constructor"`
	Count       int    `json:"count"`
	Size        uint64 `json:"shallow_size"`
}

// ClassJSON is one Summary row.
type ClassJSON struct {
	Constructor string `json:"constructor"`
	// Key is DevTools' class key: "," + name, or "script,line,column,name"
	// for object classes split by allocation site.
	Key          string        `json:"key"`
	Location     *LocationJSON `json:"location,omitempty"`
	Count        int           `json:"count"`
	Distance     int32         `json:"distance"`
	ShallowSize  uint64        `json:"shallow_size"`
	RetainedSize uint64        `json:"retained_size"`
	// AllocationSite is where most of the class's objects were
	// allocated, when the dump has allocation stacks (a value, so that
	// rows stay comparable).
	AllocationSite SiteJSON `json:"allocation_site,omitzero"`
}

// BuildSummary returns the summary view of a with at most limit classes
// (0: all) and the first 10 unreachable classes (all with
// allUnreachable).
func BuildSummary(path string, a *analysis.Analysis, limit int, allUnreachable bool) *SummaryJSON {
	// The two passes only read the analysis: side by side, not one after
	// the other on one core.
	var u *analysis.UnreachableReport
	done := make(chan struct{})
	go func() {
		defer close(done)
		u = a.Unreachable()
	}()
	rows := a.Summary()
	<-done
	s := &SummaryJSON{SchemaVersion: 1, File: path, Policy: a.Policy.Name, TotalSize: a.TotalSize(),
		ClassCount: len(rows), Classes: []ClassJSON{}}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	sites := alloc.ClassSites(a)
	for _, r := range rows {
		c := ClassJSON{Constructor: r.Name, Key: r.Key, Count: r.Count, Distance: r.Distance,
			ShallowSize: r.Shallow, RetainedSize: r.Retained}
		if sites != nil {
			c.AllocationSite = NewSiteJSON(&sites[r.Class])
		}
		if a.Classes.HasLoc[r.Class] {
			c.Location = NewLocationJSON(a, a.Classes.Loc[r.Class])
		}
		s.Classes = append(s.Classes, c)
	}
	s.Unreachable = UnreachableJSON{Count: u.Count, Size: u.Size, Classes: []UnreachableClassJSON{}}
	for i, c := range u.ByClass {
		if !allUnreachable && i == 10 {
			break
		}
		s.Unreachable.Classes = append(s.Unreachable.Classes, UnreachableClassJSON{Constructor: c.Name, Count: c.Count, Size: c.Size})
	}
	return s
}

func runSummary(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	sn := c.Snapshots[0]
	s := BuildSummary(sn.Path, sn.Analysis, n, c.Bool("unreachable"))
	r := &Result{JSON: s}
	if c.Bool("unreachable") {
		t := &Table{Columns: []Column{colClass, colCount, {Key: "shallow_size", Title: "Shallow size", Kind: Bytes}}}
		for _, u := range s.Unreachable.Classes {
			t.Rows = append(t.Rows, []any{u.Constructor, u.Count, u.Size})
		}
		r.Sections = []*Section{{Table: t}}
		r.Notes = []string{fmt.Sprintf("%s objects (%s) unreachable from the roots", humanize.Thousands(uint64(s.Unreachable.Count)), humanize.Size(s.Unreachable.Size))}
		return r, nil
	}
	r.Sections = []*Section{{Table: summaryTable(sn.Analysis, s), Chart: &Chart{Label: "constructor", Value: "retained_size"}}}
	r.Notes = []string{fmt.Sprintf("%d of %s classes; total size %s (%s bytes)",
		len(s.Classes), humanize.Thousands(uint64(s.ClassCount)), humanize.Size(s.TotalSize), humanize.Thousands(s.TotalSize))}
	if u := s.Unreachable; u.Count > 0 {
		as := ", as DevTools counts them"
		if s.Policy != analysis.DevToolsPolicy.Name {
			as = ""
		}
		r.Notes = append(r.Notes, fmt.Sprintf("%s objects (%s) are unreachable from the roots; they are counted above%s (see --unreachable)",
			humanize.Thousands(uint64(u.Count)), humanize.Size(u.Size), as))
	}
	return r, nil
}

// summaryTable is the Summary view of a as a table. A name shared by
// several rows (one class per allocation site) gets its site (file name,
// line and column one-based, as editors count), so the rows can be told
// apart.
func summaryTable(a *analysis.Analysis, s *SummaryJSON) *Table {
	seen := map[string]int{}
	sites := false
	for _, c := range s.Classes {
		seen[c.Constructor]++
		sites = sites || c.AllocationSite.Count > 0
	}
	t := &Table{Columns: []Column{colClass, colCount, colDistance, colShallow,
		{Key: "shallow_percent", Title: "%", Kind: Percent}, colRetained, colPercent}}
	if sites {
		t.Columns = append(t.Columns, colAllocatedIn)
	}
	for _, c := range s.Classes {
		name := Shorten(c.Constructor, MaxNameWidth)
		if l := c.Location; l != nil && seen[c.Constructor] > 1 {
			name += " (" + a.Resolver().Locate(l.ScriptID, l.Line, l.Column).Short() + ")"
		}
		row := []any{name, c.Count, c.Distance, c.ShallowSize, humanize.Share(c.ShallowSize, s.TotalSize),
			c.RetainedSize, humanize.Share(c.RetainedSize, s.TotalSize)}
		if sites {
			row = append(row, siteJSONText(c.AllocationSite))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
