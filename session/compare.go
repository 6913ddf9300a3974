package session

import (
	"cmp"
	"slices"
	"strings"

	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/report"
)

// DiffRow is one class of the comparison (diff --json's row, keyed alike),
// with the indexes that name it in requests.
type DiffRow struct {
	// Index names the row in the request for its new objects.
	Index int `json:"index"`
	// Class is the class's index in the file's Summary, -1 when the file
	// has no instance of it.
	Class       int    `json:"class"`
	Constructor string `json:"constructor"`
	Key         string `json:"key"`
	New         int    `json:"new"`
	Deleted     int    `json:"deleted"`
	Delta       int    `json:"delta"`
	AllocSize   uint64 `json:"alloc_size"`
	FreedSize   uint64 `json:"freed_size"`
	SizeDelta   int64  `json:"size_delta"`
	BaseCount   int    `json:"base_count"`
	TargetCount int    `json:"target_count"`
}

// DiffPage is a page of the comparison of the file with the last
// baseline (DevTools' Comparison view).
type DiffPage struct {
	SchemaVersion int    `json:"schema_version"`
	Base          string `json:"base"`
	Target        string `json:"target"`
	// Matching is "id" when objects were matched by id (New and Deleted
	// count objects, and a class's new objects can be listed), "class"
	// when only class counts and sizes could be compared.
	Matching  string          `json:"matching"`
	New       int             `json:"new"`
	Deleted   int             `json:"deleted"`
	AllocSize uint64          `json:"alloc_size"`
	FreedSize uint64          `json:"freed_size"`
	Warnings  []query.Warning `json:"warnings"`
	// ClassCount counts the classes that changed; Matched those the
	// filter matches.
	ClassCount int       `json:"class_count"`
	Matched    int       `json:"matched"`
	Offset     int       `json:"offset"`
	Classes    []DiffRow `json:"classes"`
}

// comparison returns the diff of the file against the last baseline,
// computed once.
func (s *Session) comparison() (*leak.DiffResult, error) {
	if err := s.notForTrace("snapshots to compare"); err != nil {
		return nil, err
	}
	if len(s.baselines) == 0 {
		return nil, invalid("no baseline to compare with: %s", s.openSeries())
	}
	s.diffOnce.Do(func() {
		s.diff = leak.Diff(s.base().A, s.a)
		s.diffWarnings, _ = query.CheckSeries(series(s.file, s.baselines[len(s.baselines)-1:]), query.SeriesRules{Expected: "BASE, then TARGET taken after it",
			Command: func(p []string) string { return "heapx diff " + strings.Join(p, " ") }})
		s.targetClass = map[string]int{}
		for c := range s.a.Classes.Names {
			s.targetClass[s.a.Classes.Key(uint32(c))] = c
		}
	})
	return s.diff, nil
}

// base is the snapshot the comparison is with: the last baseline.
func (s *Session) base() report.Input { return s.baselines[len(s.baselines)-1] }

// Diff returns a page of the comparison with the last baseline, ordered
// as DevTools orders it (q.Sort "") or by a column of DiffRow.
func (s *Session) Diff(q ListQuery) (*DiffPage, error) {
	d, err := s.comparison()
	if err != nil {
		return nil, err
	}
	p := &DiffPage{SchemaVersion: SchemaVersion, Base: s.base().Path, Target: s.file.Path, Matching: d.Matching.String(),
		New: d.New, Deleted: d.Deleted, AllocSize: d.AllocSize, FreedSize: d.FreedSize,
		Warnings: append([]query.Warning{}, s.diffWarnings...), ClassCount: len(d.Classes), Classes: []DiffRow{}}
	filter := strings.ToLower(q.Filter)
	var rows []int
	for i, c := range d.Classes {
		if filter == "" || strings.Contains(strings.ToLower(c.Name), filter) {
			rows = append(rows, i)
		}
	}
	var key func(x, y *leak.ClassDiff) int
	switch q.Sort {
	case "":
	case "constructor":
		key = func(x, y *leak.ClassDiff) int { return strings.Compare(x.Name, y.Name) }
	case "new":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.New, y.New) }
	case "deleted":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.Deleted, y.Deleted) }
	case "delta":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.Delta, y.Delta) }
	case "alloc_size":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.AllocSize, y.AllocSize) }
	case "freed_size":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.FreedSize, y.FreedSize) }
	case "size_delta":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.SizeDelta, y.SizeDelta) }
	case "base_count":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.BaseCount, y.BaseCount) }
	case "target_count":
		key = func(x, y *leak.ClassDiff) int { return cmp.Compare(x.TargetCount, y.TargetCount) }
	default:
		return nil, invalid("cannot sort the comparison by %q (a column key of its rows)", q.Sort)
	}
	if key != nil {
		slices.SortStableFunc(rows, func(i, j int) int {
			c := key(&d.Classes[i], &d.Classes[j])
			if q.Desc {
				c = -c
			}
			return c
		})
	}
	lo, hi, err := page(q.Offset, q.Limit, len(rows))
	if err != nil {
		return nil, err
	}
	p.Matched, p.Offset = len(rows), lo
	for _, i := range rows[lo:hi] {
		p.Classes = append(p.Classes, s.diffRow(d, i))
	}
	return p, nil
}

func (s *Session) diffRow(d *leak.DiffResult, i int) DiffRow {
	c := d.Classes[i]
	class, ok := s.targetClass[c.Key]
	if !ok {
		class = -1
	}
	return DiffRow{Index: i, Class: class, Constructor: c.Name, Key: c.Key, New: c.New, Deleted: c.Deleted, Delta: c.Delta,
		AllocSize: c.AllocSize, FreedSize: c.FreedSize, SizeDelta: c.SizeDelta, BaseCount: c.BaseCount, TargetCount: c.TargetCount}
}

// NewObjectPage is a page of the objects of one class of the comparison
// that are new in the file, or deleted since the baseline, largest
// retained size first.
type NewObjectPage struct {
	Class DiffRow `json:"class"`
	// Snapshot is the index in the session's inputs of the snapshot the
	// objects are in: 0, the file, for new objects, that of the baseline
	// for deleted ones. Requests about one of them name it
	// (Session.Snapshot; ?snapshot=N in the web API).
	Snapshot int `json:"snapshot"`
	ObjectPage
}

// matchedRow is comparison row i, for a request for the objects that
// which ("are new"): an error unless the snapshots' objects were matched
// by id.
func (s *Session) matchedRow(i int, which string) (DiffRow, error) {
	d, err := s.comparison()
	if err != nil {
		return DiffRow{}, err
	}
	if i < 0 || i >= len(d.Classes) {
		return DiffRow{}, notFound("no class with index %d in the comparison", i)
	}
	if d.Matching != leak.MatchByID {
		return DiffRow{}, invalid("objects were not matched by id between the snapshots (see the comparison's notes), so which ones %s cannot be told", which)
	}
	return s.diffRow(d, i), nil
}

// NewObjects returns a page of the objects of comparison row i that are
// not in the baseline (DevTools' Comparison view, a class expanded).
func (s *Session) NewObjects(i, offset, limit int) (*NewObjectPage, error) {
	row, err := s.matchedRow(i, "are new")
	if err != nil {
		return nil, err
	}
	objs := s.lists.get("new:"+itoa(i), func() []int32 {
		if row.Class < 0 {
			return nil
		}
		s.prepare()
		// The baseline's ids of the class, sorted, then the file's
		// instances (already largest first) whose id is not among them.
		base, _ := s.Snapshot(len(s.baselines))
		ids := base.instanceIDs(row.Key)
		var out []int32
		for _, n := range s.inst[s.instFrom[row.Class]:s.instFrom[row.Class+1]] {
			if _, found := slices.BinarySearch(ids, s.g.NodeID(n)); !found {
				out = append(out, n)
			}
		}
		return out
	})
	op, err := s.objectPage(objs, offset, limit)
	if err != nil {
		return nil, err
	}
	return &NewObjectPage{Class: row, ObjectPage: *op}, nil
}

// instanceIDs returns the sorted ids of s's objects of the classes of
// key key that the Summary counts (a non-zero shallow size), those Diff
// matches between snapshots.
func (s *Session) instanceIDs(key string) []uint64 {
	a := s.a
	var classes []uint32
	for c := range a.Classes.Names {
		if a.Classes.Key(uint32(c)) == key {
			classes = append(classes, uint32(c))
		}
	}
	var ids []uint64
	for n, c := range a.Classes.Of {
		if a.Self.At(int(n)) != 0 && slices.Contains(classes, c) {
			ids = append(ids, s.g.Nodes.ID.At(n))
		}
	}
	slices.Sort(ids)
	return ids
}

// DeletedObjects returns a page of the objects of comparison row i that
// the baseline has and the file does not (DevTools' Comparison view, the
// "deleted" column), largest retained size first: objects of the
// baseline, whose details, retainers and paths its session answers
// (Snapshot, with the page's Snapshot).
func (s *Session) DeletedObjects(i, offset, limit int) (*NewObjectPage, error) {
	row, err := s.matchedRow(i, "were deleted")
	if err != nil {
		return nil, err
	}
	bi := len(s.baselines)
	base, _ := s.Snapshot(bi)
	objs := s.lists.get("deleted:"+itoa(i), func() []int32 {
		base.prepare()
		// The file's ids of the row's class, sorted, then the
		// baseline's instances of it (each class's already largest
		// first) whose id is not among them.
		ids := s.instanceIDs(row.Key)
		var out []int32
		for c := range base.a.Classes.Names {
			if base.a.Classes.Key(uint32(c)) != row.Key {
				continue
			}
			for _, n := range base.inst[base.instFrom[c]:base.instFrom[c+1]] {
				if _, found := slices.BinarySearch(ids, base.g.NodeID(n)); !found {
					out = append(out, n)
				}
			}
		}
		ret := base.a.Dominators.Retained
		slices.SortStableFunc(out, func(x, y int32) int {
			if c := cmp.Compare(ret[y], ret[x]); c != 0 {
				return c
			}
			return cmp.Compare(x, y)
		})
		return out
	})
	op, err := base.objectPage(objs, offset, limit)
	if err != nil {
		return nil, err
	}
	return &NewObjectPage{Class: row, Snapshot: bi, ObjectPage: *op}, nil
}
