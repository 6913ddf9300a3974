package session

import (
	"cmp"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/leak"
	"github.com/heapx/heapx/query"
)

// instanceIndex lists every class's instances, as the Summary counts them
// (a non-zero shallow size; not the root of a runtime whose root has a
// size), largest retained size first, then in node order: CSR arrays, the
// instances of class c being inst[from[c]:from[c+1]]. One int32 per
// object, so that a class's page of instances is a slice, not a scan.
func instanceIndex(a *analysis.Analysis) (from []uint32, inst []int32) {
	g := a.Graph
	nc := len(a.Classes.Names)
	root := int32(-1)
	if leak.Runtime(g) != "v8" {
		root = g.Root
	}
	counted := func(n int32) bool { return a.Self.At(int(n)) != 0 && n != root }
	from = make([]uint32, nc+1)
	for n, c := range a.Classes.Of {
		if counted(int32(n)) {
			from[c+1]++
		}
	}
	for c := 1; c <= nc; c++ {
		from[c] += from[c-1]
	}
	inst = a.Spare(int(from[nc]))
	next := slices.Clone(from[:nc])
	for n, c := range a.Classes.Of {
		if counted(int32(n)) {
			inst[next[c]] = int32(n)
			next[c]++
		}
	}
	// Each class sorted on its own; the classes are shared out between
	// the cores, largest first so that none is left to one core at the end.
	order := make([]int, nc)
	for c := range order {
		order[c] = c
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Compare(from[y+1]-from[y], from[x+1]-from[x]) })
	ret := a.Dominators.Retained
	byRetained := func(x, y int32) int {
		if c := cmp.Compare(ret[y], ret[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				slices.SortFunc(inst[from[c]:from[c+1]], byRetained)
			}
		}()
	}
	for _, c := range order {
		if from[c+1]-from[c] > 1 {
			work <- c
		}
	}
	close(work)
	wg.Wait()
	return from, inst
}

// ClassRow is one Summary row (summary --json's classes) with the class's
// index, which names it in the requests for its instances.
type ClassRow struct {
	Index int `json:"index"`
	query.ClassJSON
}

// ClassPage is a page of the Summary: summary --json's fields, with the
// classes of the page and how many match the filter.
type ClassPage struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	Policy        string `json:"policy"`
	TotalSize     uint64 `json:"total_size"`
	// ClassCount counts all classes; Matched those the filter matches.
	ClassCount int        `json:"class_count"`
	Matched    int        `json:"matched"`
	Offset     int        `json:"offset"`
	Classes    []ClassRow `json:"classes"`
	// Allocated is the allocation filter of ListQuery.Allocated: the
	// classes, counts and sizes are then of the objects it keeps, as in
	// summary --between's.
	Allocated *query.AllocatedJSON `json:"allocated,omitempty"`
}

// ListQuery selects a page of a list of classes: those whose name
// contains Filter (ignoring case), ordered by the column Sort (a key of
// the list's rows; "" for the list's own order), Desc for descending.
// Allocated, for the Summary, is the key of an allocation filter
// (Info().AllocationFilters): only the objects it keeps are counted.
type ListQuery struct {
	Filter        string
	Sort          string
	Desc          bool
	Offset, Limit int
	Allocated     string
}

// page clamps a requested page to a list of total rows: the rows
// [lo, hi).
func page(offset, limit, total int) (lo, hi int, err error) {
	if offset < 0 {
		return 0, 0, invalid("offset must be 0 or more, not %d", offset)
	}
	if limit < 0 {
		return 0, 0, invalid("limit must be 0 or more, not %d", limit)
	}
	if limit == 0 {
		limit = DefaultPage
	}
	limit = min(limit, MaxPage)
	lo = min(offset, total)
	return lo, min(total, lo+limit), nil
}

// distanceRank orders distances as DevTools' grid does when sorting by
// them: from user roots first, then through internal roots, unreachable
// last.
func distanceRank(d int32) int64 {
	if d < 0 {
		return 1 << 40
	}
	return int64(d)
}

// Classes returns a page of the Summary.
func (s *Session) Classes(q ListQuery) (*ClassPage, error) {
	if err := s.notForTrace("classes"); err != nil {
		return nil, err
	}
	s.prepare()
	a := s.a
	classes := s.classes
	var view *allocationView
	if q.Allocated != "" {
		v, err := s.allocationView(q.Allocated)
		if err != nil {
			return nil, err
		}
		view, classes = v, v.classes
	}
	rows := make([]int, 0, len(classes))
	filter := strings.ToLower(q.Filter)
	for i, c := range classes {
		if filter == "" || strings.Contains(strings.ToLower(c.Name), filter) {
			rows = append(rows, i)
		}
	}
	var key func(x, y analysis.ClassSummary) int
	switch q.Sort {
	case "", "retained_size":
	case "shallow_size":
		key = func(x, y analysis.ClassSummary) int { return cmp.Compare(x.Shallow, y.Shallow) }
	case "count":
		key = func(x, y analysis.ClassSummary) int { return cmp.Compare(x.Count, y.Count) }
	case "distance":
		key = func(x, y analysis.ClassSummary) int {
			return cmp.Compare(distanceRank(x.Distance), distanceRank(y.Distance))
		}
	case "constructor":
		key = func(x, y analysis.ClassSummary) int { return strings.Compare(x.Name, y.Name) }
	default:
		return nil, invalid("cannot sort classes by %q (retained_size, shallow_size, count, distance or constructor)", q.Sort)
	}
	// The Summary's own order (retained size descending) breaks ties.
	if key != nil || !q.Desc && q.Sort != "" {
		if key == nil {
			key = func(x, y analysis.ClassSummary) int { return cmp.Compare(x.Retained, y.Retained) }
		}
		slices.SortStableFunc(rows, func(i, j int) int {
			c := key(classes[i], classes[j])
			if q.Desc {
				c = -c
			}
			if c == 0 {
				c = cmp.Compare(i, j)
			}
			return c
		})
	}
	lo, hi, err := page(q.Offset, q.Limit, len(rows))
	if err != nil {
		return nil, err
	}
	p := &ClassPage{SchemaVersion: SchemaVersion, File: s.file.Path, Policy: a.Policy.Name, TotalSize: a.TotalSize(),
		ClassCount: len(classes), Matched: len(rows), Offset: lo, Classes: []ClassRow{}}
	if view != nil {
		p.Allocated = view.json
	}
	for _, i := range rows[lo:hi] {
		p.Classes = append(p.Classes, s.classRow(classes[i]))
	}
	return p, nil
}

// classRow is Summary row c as a ClassRow.
func (s *Session) classRow(c analysis.ClassSummary) ClassRow {
	cj := query.ClassJSON{Constructor: c.Name, Key: c.Key, Count: c.Count, Distance: c.Distance, ShallowSize: c.Shallow, RetainedSize: c.Retained}
	if s.a.Classes.HasLoc[c.Class] {
		cj.Location = query.NewLocationJSON(s.a, s.a.Classes.Loc[c.Class])
	}
	if s.sites != nil {
		cj.AllocationSite = query.NewSiteJSON(&s.sites[c.Class])
	}
	return ClassRow{Index: int(c.Class), ClassJSON: cj}
}

// class returns the Summary row of class index c.
func (s *Session) class(c int) (analysis.ClassSummary, error) {
	if err := s.notForTrace("classes"); err != nil {
		return analysis.ClassSummary{}, err
	}
	s.prepare()
	if c < 0 || c >= len(s.rowOf) || s.rowOf[c] < 0 {
		return analysis.ClassSummary{}, notFound("no class with index %d", c)
	}
	return s.classes[s.rowOf[c]], nil
}

// ObjectPage is a page of objects (top --json's nodes), of Total.
type ObjectPage struct {
	SchemaVersion int              `json:"schema_version"`
	Total         int              `json:"total"`
	Offset        int              `json:"offset"`
	Objects       []query.NodeJSON `json:"objects"`
}

// InstancePage is a page of a class's instances, largest retained size
// first (DevTools' Summary, a class expanded).
type InstancePage struct {
	Class ClassRow `json:"class"`
	ObjectPage
}

// Instances returns a page of the instances of class index c; with
// allocated, the key of an allocation filter (ListQuery.Allocated), of
// those it keeps, and the class's row under it.
func (s *Session) Instances(c int, allocated string, offset, limit int) (*InstancePage, error) {
	cs, err := s.class(c)
	if err != nil {
		return nil, err
	}
	all := s.inst[s.instFrom[c]:s.instFrom[c+1]]
	if allocated != "" {
		v, err := s.allocationView(allocated)
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(v.classes, func(r analysis.ClassSummary) bool { return int(r.Class) == c })
		if i < 0 {
			return nil, notFound("class %d has no instances under the filter %s", c, allocated)
		}
		cs = v.classes[i]
		kept := make([]int32, 0, cs.Count)
		for _, n := range all {
			if v.keep.Has(int(n)) {
				kept = append(kept, n)
			}
		}
		all = kept
	}
	p, err := s.objectPage(all, offset, limit)
	if err != nil {
		return nil, err
	}
	return &InstancePage{Class: s.classRow(cs), ObjectPage: *p}, nil
}

// objectPage returns a page of the nodes all.
func (s *Session) objectPage(all []int32, offset, limit int) (*ObjectPage, error) {
	lo, hi, err := page(offset, limit, len(all))
	if err != nil {
		return nil, err
	}
	p := &ObjectPage{SchemaVersion: SchemaVersion, Total: len(all), Offset: lo, Objects: make([]query.NodeJSON, 0, hi-lo)}
	for _, n := range all[lo:hi] {
		p.Objects = append(p.Objects, s.node(n))
	}
	return p, nil
}

// node is node n of the file as top --json writes it.
func (s *Session) node(n int32) query.NodeJSON {
	return query.NewNodeJSON(s.g, s.a.Row(s.nm, n))
}
