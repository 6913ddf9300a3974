package session_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/heapx/heapx/session"
)

// TestAllocationFilters: with the leak series' two baselines, the Summary
// offers DevTools' three filters, and each equals DevTools' own Summary of
// node-leak-3 under it (testdata/golden/node-leak.devtools-allocated.*):
// every class's count, sizes and distance; a class's instances under a
// filter are the ones it keeps. Without a series of one session there are
// none, and the session says why.
func TestAllocationFilters(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz")
	info := s.Info()
	var keys, titles []string
	for _, f := range info.AllocationFilters {
		keys, titles = append(keys, f.Key), append(titles, f.Title)
	}
	if !slices.Equal(keys, []string{"before:1", "between:1:2", "between:2:0"}) || info.AllocationFiltersNote != "" ||
		titles[1] != "Objects allocated between node-leak-1.heapsnapshot.gz and node-leak-2.heapsnapshot.gz" ||
		titles[2] != "Objects allocated between node-leak-2.heapsnapshot.gz and node-leak-3.heapsnapshot.gz" {
		t.Fatalf("filters %+v, note %q", info.AllocationFilters, info.AllocationFiltersNote)
	}
	for key, golden := range map[string]string{"between:1:2": "between-1-2-3", "between:2:0": "after-2-3"} {
		var want struct {
			Count   int `json:"count"`
			Classes []struct {
				Key      string `json:"key"`
				Count    int    `json:"count"`
				Self     uint64 `json:"self_size"`
				Retained uint64 `json:"retained_size"`
				Distance int32  `json:"distance"`
			} `json:"classes"`
		}
		b, err := os.ReadFile(fixture("golden/node-leak.devtools-allocated." + golden + ".json"))
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(b, &want)
		p, err := s.Classes(session.ListQuery{Allocated: key, Limit: session.MaxPage})
		if err != nil {
			t.Fatal(err)
		}
		if p.Allocated == nil || p.Allocated.Count != want.Count || p.ClassCount != len(want.Classes) {
			t.Errorf("%s: %+v, %d classes; DevTools %d objects, %d classes", key, p.Allocated, p.ClassCount, want.Count, len(want.Classes))
			continue
		}
		rows := map[string]session.ClassRow{}
		for _, c := range p.Classes {
			rows[c.Key] = c
		}
		for _, w := range want.Classes {
			c := rows[w.Key]
			if c.Count != w.Count || c.ShallowSize != w.Self || c.RetainedSize != w.Retained || c.Distance != w.Distance {
				t.Errorf("%s: class %s: %+v, DevTools %+v", key, w.Key, c.ClassJSON, w)
			}
		}
		// LeakedItem is the first row: its 500 instances of the step.
		ip, err := s.Instances(p.Classes[0].Index, key, 0, session.MaxPage)
		if err != nil {
			t.Fatal(err)
		}
		if p.Classes[0].Constructor != "LeakedItem" || ip.Total != 500 || ip.Class.Count != 500 || len(ip.Objects) != 500 {
			t.Errorf("%s: %s, %d instances", key, p.Classes[0].Constructor, ip.Total)
		}
		for _, o := range ip.Objects {
			if o.ID <= p.Allocated.AfterID || o.ID > p.Allocated.ThroughID {
				t.Errorf("%s: instance @%d outside (%d, %d]", key, o.ID, p.Allocated.AfterID, p.Allocated.ThroughID)
				break
			}
		}
	}
	if _, err := s.Classes(session.ListQuery{Allocated: "between:0:1"}); session.KindOf(err) != session.Invalid ||
		!strings.Contains(err.Error(), "the filters are before:1, between:1:2, between:2:0") {
		t.Errorf("an unknown filter: %v", err)
	}

	for _, c := range []struct {
		file, want string
		baselines  []string
	}{
		{"sessions/chromium-separate-3.heapsnapshot.gz", "are not snapshots of one process taken in one inspector session",
			[]string{"sessions/chromium-separate-1.heapsnapshot.gz", "sessions/chromium-separate-2.heapsnapshot.gz"}},
		{"hprof/java-ticketleak-2.hprof.gz", "needs V8 snapshots (Node.js, Chrome)", []string{"hprof/java-ticketleak-1.hprof.gz"}},
		{"node-leak-3.heapsnapshot.gz", "", nil},
	} {
		s := open(t, c.file, c.baselines...)
		info := s.Info()
		if len(info.AllocationFilters) != 0 || !strings.Contains(info.AllocationFiltersNote, c.want) {
			t.Errorf("%s: filters %+v, note %q", c.file, info.AllocationFilters, info.AllocationFiltersNote)
		}
		if _, err := s.Classes(session.ListQuery{Allocated: "before:1"}); session.KindOf(err) != session.Invalid {
			t.Errorf("%s: a filter: %v", c.file, err)
		}
	}
}
