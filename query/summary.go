package query

import (
	"fmt"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/humanize"
)

func init() {
	Register(&Query{
		Name: "summary", Group: GroupBasic, Usage: "FILE | --between A B [FILE] | --before A FILE | --after A FILE",
		MinInputs: 1, MaxInputs: 3, EarlierAsDigests: true,
		Title: "Show the classes that hold the memory, like DevTools' Summary view",
		Help: `Show DevTools' Summary view: one row per constructor (class) with its
object count, smallest distance from a root, total shallow size and
retained size, largest retained size first. Numbers match the Chrome
DevTools Memory panel. Objects unreachable from the roots are counted as
DevTools counts them and totalled below the table; --unreachable lists
them by class instead of the classes.
With --between A B, only the objects allocated between snapshots A and B
(DevTools' filter "Objects allocated between A and B"), as they are in
FILE (B when FILE is not given); with --before A, those allocated before
A; with --after A, those allocated after A. Give the snapshots oldest
first; all must be V8 snapshots of one process taken in one inspector
session, as V8's ids tell.`,
		Args: []Arg{limitArg(20), {Name: "unreachable", Kind: BoolArg, Default: false,
			Help: "list the unreachable objects by class (all classes in --json)"},
			{Name: "between", Kind: BoolArg, Default: false,
				Help: "the snapshots are A B [FILE]: only objects allocated between A and B"},
			{Name: "before", Kind: BoolArg, Default: false,
				Help: "the snapshots are A FILE: only objects allocated before A"},
			{Name: "after", Kind: BoolArg, Default: false,
				Help: "the snapshots are A FILE: only objects allocated after A"}},
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
	// Allocated is the filter of summary --between, --before or --after:
	// Classes, ClassCount and Unreachable are then of the objects it
	// keeps; TotalSize stays the whole heap's.
	Allocated *AllocatedJSON `json:"allocated,omitempty"`
}

// AllocatedJSON is DevTools' Summary filter "Objects allocated between
// Snapshot 1 and Snapshot 2": the objects whose id is above AfterID and
// at most ThroughID (leak.IDRange).
type AllocatedJSON struct {
	// Filter is "between", "before" or "after"; Title says it as
	// DevTools' filter menu does ("Objects allocated between a and b").
	Filter string `json:"filter"`
	Title  string `json:"title"`
	// Snapshots are the files whose newest ids bound the range.
	Snapshots []string `json:"snapshots"`
	AfterID   uint64   `json:"after_id"`
	ThroughID uint64   `json:"through_id"`
	// Count and ShallowSize total the kept objects with a non-zero
	// shallow size, as DevTools' grid totals a filtered Summary.
	Count       int    `json:"count"`
	ShallowSize uint64 `json:"shallow_size"`
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
// allUnreachable); with f, of the objects f keeps.
func BuildSummary(path string, a *analysis.Analysis, limit int, allUnreachable bool, f *AllocatedFilter) *SummaryJSON {
	// The two passes only read the analysis: side by side, not one after
	// the other on one core.
	var u *analysis.UnreachableReport
	done := make(chan struct{})
	var rows []analysis.ClassSummary
	var allocated *AllocatedJSON
	if f == nil {
		go func() {
			defer close(done)
			u = a.Unreachable()
		}()
		rows = a.Summary()
	} else {
		keep, _ := f.Range.Nodes(a.Graph)
		go func() {
			defer close(done)
			u = unreachableOf(a, keep)
		}()
		rows = a.SummaryOf(keep)
		allocated = &AllocatedJSON{Filter: f.Filter, Title: f.Title, Snapshots: f.Snapshots, AfterID: f.Range.After, ThroughID: f.Range.Through}
		for _, r := range rows {
			allocated.Count += r.Count
			allocated.ShallowSize += r.Shallow
		}
	}
	<-done
	s := &SummaryJSON{SchemaVersion: 1, File: path, Policy: a.Policy.Name, TotalSize: a.TotalSize(),
		ClassCount: len(rows), Classes: []ClassJSON{}, Allocated: allocated}
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

// unreachableOf totals the unreachable nodes of a in keep by class.
func unreachableOf(a *analysis.Analysis, keep analysis.Bits) *analysis.UnreachableReport {
	reach := analysis.Reachable(a.Graph)
	for i := range reach {
		reach[i] |= ^keep[i] // a node left out counts as reached
	}
	return analysis.Unreachable(a.Graph, reach, a.Classes, a.Self)
}

func runSummary(c *Context) (*Result, error) {
	n := c.Int("limit")
	if n < 0 {
		return nil, fmt.Errorf("-n must be 0 or more, not %d", n)
	}
	f, err := allocatedFilter(c)
	if err != nil {
		return nil, err
	}
	sn := c.Snapshots[len(c.Snapshots)-1]
	s := BuildSummary(sn.Path, sn.Analysis, n, c.Bool("unreachable"), f)
	r := &Result{JSON: s}
	if f != nil {
		ids := fmt.Sprintf("ids above @%d, up to @%d", f.Range.After, f.Range.Through)
		if f.Range.After == 0 {
			ids = fmt.Sprintf("ids up to @%d", f.Range.Through)
		}
		r.Header = []string{fmt.Sprintf("%s (%s), alive in %s: %s objects, %s", f.Title, ids,
			fileNames(snapshotPaths(c.Snapshots))[len(c.Snapshots)-1],
			humanize.Thousands(uint64(s.Allocated.Count)), humanize.Size(s.Allocated.ShallowSize))}
	}
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
