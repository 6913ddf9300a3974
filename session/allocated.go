package session

import (
	"fmt"
	"strings"
	"sync"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/query"
)

// AllocationFilterJSON is one of the Summary's filters by when objects
// were allocated, as DevTools' Summary offers them with earlier snapshots
// loaded: "Objects allocated before" the oldest baseline, then "between"
// each snapshot and the next, the last being what the file added.
type AllocationFilterJSON struct {
	// Key names the filter in requests (ListQuery.Allocated):
	// "before:I" or "between:I:J", I and J indexes of Info().Inputs.
	Key   string `json:"key"`
	Title string `json:"title"`
	// AfterID and ThroughID bound the ids it keeps (leak.IDRange).
	AfterID   uint64 `json:"after_id"`
	ThroughID uint64 `json:"through_id"`
}

// allocationView is the Summary under one allocation filter.
type allocationView struct {
	keep    analysis.Bits
	classes []analysis.ClassSummary
	json    *query.AllocatedJSON
}

// allocation holds the session's allocation filters and the views made
// of them.
type allocation struct {
	once    sync.Once
	filters []query.AllocatedFilter
	keys    []string
	note    string // why there are none, with baselines
	mu      sync.Mutex
	views   map[string]*allocationView
}

// allocationFilters returns the filters the series offers (keys and
// titles), or why it offers none; none without baselines.
func (s *Session) allocationFilters() ([]AllocationFilterJSON, string) {
	al := &s.alloc
	al.once.Do(func() {
		if len(s.baselines) == 0 || s.trace != nil {
			return
		}
		fs, err := query.AllocatedFilters(series(s.file, s.baselines), query.SeriesRules{Expected: "FILE, the newest snapshot, then the BASELINEs oldest first",
			Command: serveCommand})
		if err != nil {
			al.note = err.Error()
			return
		}
		// Inputs index the file 0 and the baselines from 1, oldest
		// first; the series is the baselines, then the file.
		input := func(i int) int {
			if i == len(s.baselines) {
				return 0
			}
			return i + 1
		}
		al.filters = fs
		al.keys = []string{fmt.Sprintf("before:%d", input(0))}
		for i := 1; i < len(fs); i++ {
			al.keys = append(al.keys, fmt.Sprintf("between:%d:%d", input(i-1), input(i)))
		}
	})
	out := make([]AllocationFilterJSON, len(al.filters))
	for i, f := range al.filters {
		out[i] = AllocationFilterJSON{Key: al.keys[i], Title: f.Title, AfterID: f.Range.After, ThroughID: f.Range.Through}
	}
	return out, al.note
}

// allocationView returns the Summary under the filter key, made on first
// use.
func (s *Session) allocationView(key string) (*allocationView, error) {
	filters, note := s.allocationFilters()
	i := 0
	for i < len(filters) && filters[i].Key != key {
		i++
	}
	if i == len(filters) {
		switch {
		case len(s.baselines) == 0:
			return nil, invalid("no allocation filter without earlier snapshots: %s", s.openSeries())
		case note != "":
			return nil, invalid("no allocation filter: %s", note)
		}
		keys := make([]string, len(filters))
		for j, f := range filters {
			keys[j] = f.Key
		}
		return nil, invalid("no allocation filter %q; the filters are %s", key, strings.Join(keys, ", "))
	}
	al := &s.alloc
	al.mu.Lock()
	defer al.mu.Unlock()
	if v := al.views[key]; v != nil {
		return v, nil
	}
	f := al.filters[i]
	keep, _ := f.Range.Nodes(s.g)
	v := &allocationView{keep: keep, classes: s.a.SummaryOf(keep),
		json: &query.AllocatedJSON{Filter: f.Filter, Title: f.Title, Snapshots: f.Snapshots, AfterID: f.Range.After, ThroughID: f.Range.Through}}
	for _, c := range v.classes {
		v.json.Count += c.Count
		v.json.ShallowSize += c.Shallow
	}
	if al.views == nil {
		al.views = map[string]*allocationView{}
	}
	al.views[key] = v
	return v, nil
}
