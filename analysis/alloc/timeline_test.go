package alloc_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/analysis/internal/analysistest"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestTimelineFixture checks the buckets of the bundled timeline
// (testdata/gen/README.md, "Timeline"): six batches of 250 TimelineItem,
// 120 ms apart, of which batches 0, 2 and 4 are kept. V8 took its first
// sample after batch 0 (its items have ids below the first sample's), so
// batch 0 is before the first sample; batches 2 and 4 are the two buckets
// of 1,490 TimelineItem objects (an item, its label and values array, as
// V8 counts them in the constructor's trace node), batches 1, 3 and 5
// left nothing. Every odd-id node is in exactly one place.
func TestTimelineFixture(t *testing.T) {
	g := analysistest.ReadFixture(t, "node-timeline.heaptimeline.gz")
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := alloc.Timeline(a, alloc.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tl.Duration != 839760 || tl.Samples != 18 || tl.BucketMicros != 83976 || len(tl.Buckets) != 10 {
		t.Fatalf("duration %d µs, %d samples, buckets %d µs × %d", tl.Duration, tl.Samples, tl.BucketMicros, len(tl.Buckets))
	}
	if tl.BeforeCount != 44308 || tl.BeforeSize != 3203032 || tl.AfterCount != 30 || tl.AfterSize != 10611 {
		t.Errorf("before %d (%d B), after %d (%d B)", tl.BeforeCount, tl.BeforeSize, tl.AfterCount, tl.AfterSize)
	}
	var counts []int
	odd := tl.BeforeCount + tl.AfterCount
	for _, b := range tl.Buckets {
		counts = append(counts, b.Count)
		odd += b.Count
	}
	if want := []int{0, 71, 0, 1746, 0, 1745, 0, 9, 17, 3}; !reflect.DeepEqual(counts, want) {
		t.Errorf("bucket counts %v, want %v", counts, want)
	}
	n := 0
	for i := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(i)
		n += int(id & 1)
	}
	if last := tl.Buckets[9]; odd != n || last.Surviving != n-tl.AfterCount || last.End != tl.Duration {
		t.Errorf("%d objects placed, %d odd-id nodes; last bucket %+v", odd, n, last)
	}
	item := alloc.TimelineSite{Frame: alloc.Frame{Function: "TimelineItem", URL: "/work/main/testdata/gen/make-fixtures.js", Line: 172, Column: 16}, Count: 1490, Size: 49760}
	for _, b := range []int{3, 5} {
		if s := tl.Buckets[b].Sites; len(s) != 3 || s[0] != item {
			t.Errorf("bucket %d sites %+v, want %+v first", b, s, item)
		}
	}
	if s := tl.Series[0]; s.Frame != item.Frame || !reflect.DeepEqual(s.Counts, []int{0, 0, 0, 1490, 0, 1490, 0, 0, 0, 0}) {
		t.Errorf("first series %+v", s)
	}
	if want := []alloc.AgeBin{{Min: 0, Max: 100e3, Count: 20, Size: 912}, {Min: 100e3, Max: 1e6, Count: 3571, Size: 140520}}; !reflect.DeepEqual(tl.Ages, want) {
		t.Errorf("ages %+v, want %+v", tl.Ages, want)
	}

	// 100 ms buckets: batch 2 ended in the interval ending at 252 ms,
	// batch 4 at 503 ms.
	tl, err = alloc.Timeline(a, alloc.TimelineOptions{BucketMicros: 100e3})
	if err != nil {
		t.Fatal(err)
	}
	if len(tl.Buckets) != 9 || tl.Buckets[2].Count != 1746 || tl.Buckets[5].Count != 1745 || tl.Buckets[8].End != 900e3 {
		t.Errorf("100 ms buckets: %d, [2] %d, [5] %d", len(tl.Buckets), tl.Buckets[2].Count, tl.Buckets[5].Count)
	}
}

// TestTimelineMatchesDevTools compares the sizes of one-millisecond
// buckets with DevTools' timeline samples of the same file
// (testdata/golden/node-timeline.devtools-samples.json, made by
// testdata/gen/devtools-allocation.mjs samples): each sample interval, 50 ms
// long, is alone in its bucket, and DevTools' first interval is what
// Timeline counts before the first sample. DevTools sizes objects after
// its shallow-size redistribution, as the devtools policy does.
func TestTimelineMatchesDevTools(t *testing.T) {
	a, err := analysis.Analyze(analysistest.ReadFixture(t, "node-timeline.heaptimeline.gz"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := alloc.Timeline(a, alloc.TimelineOptions{BucketMicros: 1000})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "golden", "node-timeline.devtools-samples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var gold []struct {
		Timestamp float64 `json:"timestamp_ms"`
		Size      uint64  `json:"size"`
	}
	if err := json.Unmarshal(b, &gold); err != nil {
		t.Fatal(err)
	}
	if len(gold) != tl.Samples || gold[0].Size != tl.BeforeSize {
		t.Fatalf("%d samples, DevTools %d; before the first %d B, DevTools %d B", tl.Samples, len(gold), tl.BeforeSize, gold[0].Size)
	}
	got := make([]uint64, len(tl.Buckets))
	want := make([]uint64, len(tl.Buckets))
	for i, b := range tl.Buckets {
		got[i] = b.Size
	}
	for _, s := range gold[1:] {
		us := uint64(math.Round(s.Timestamp * 1000))
		want[(us-1)/1000] += s.Size
	}
	if !reflect.DeepEqual(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("bucket %d: %d B, DevTools %d B", i, got[i], want[i])
			}
		}
	}
}

// TestTimelineNeedsSamples: a dump with allocation stacks but no samples
// (node --track-heap-objects) says how to record a timeline.
func TestTimelineNeedsSamples(t *testing.T) {
	a, err := analysis.Analyze(analysistest.ReadFixture(t, "node-trace.heapsnapshot.gz"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = alloc.Timeline(a, alloc.TimelineOptions{})
	if !errors.Is(err, alloc.ErrNoTimeline) || !strings.Contains(err.Error(), "heapx capture --timeline") {
		t.Errorf("error %v", err)
	}
}

// TestAllocationChurnFixture: of the timeline's six batches three are
// kept, so TimelineItem's constructor allocated twice what is alive
// (8,954 objects tracked, 4,481 alive: batch 0 was allocated after
// tracking began, before the first sample), while the 250 scratch
// strings of each batch (String.prototype.repeat) are all gone.
func TestAllocationChurnFixture(t *testing.T) {
	sites, err := alloc.AllocationChurn(analysistest.AnalyzeDump(t, "node-timeline.heaptimeline.gz"))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]alloc.SiteChurn{}
	for _, s := range sites {
		by[s.Function] = s
	}
	if s := by["TimelineItem"]; s.Line != 172 || s.Allocated != 8954 || s.AllocatedSize != 323424 || s.Live != 4481 || s.LiveSize != 150072 {
		t.Errorf("TimelineItem %+v", s)
	}
	if s := by["repeat"]; s.Allocated != 2340 || s.Live != 0 || s.FreedSize() != 56160 {
		t.Errorf("repeat %+v", s)
	}
	for i := 1; i < len(sites); i++ {
		if sites[i].FreedSize() > sites[i-1].FreedSize() {
			t.Fatalf("not by bytes gone: %+v before %+v", sites[i-1], sites[i])
		}
	}
	if sites[0].Function != "allocateBatches" || sites[0].FreedSize() != 278336 {
		t.Errorf("first %+v", sites[0])
	}
	if _, err := alloc.AllocationChurn(analysistest.AnalyzeDump(t, "node-leak-1.heapsnapshot.gz")); !errors.Is(err, alloc.ErrNoAllocationStacks) {
		t.Errorf("a dump without stacks: %v", err)
	}
}

// TestSitesOverSeriesSame: a snapshot given twice has the same counts
// at both steps, so no site grows; every site is listed with its count,
// the same as AllocationSites.
func TestSitesOverSeriesSame(t *testing.T) {
	a, err := analysis.Analyze(analysistest.ReadFixture(t, "node-sites.heapsnapshot.gz"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sites, err := alloc.SitesOverSeries([]*analysis.Analysis{a, a})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := alloc.AllocationSites(a)
	total := 0
	for _, s := range sites {
		if s.Grows || s.Counts[0] != s.Counts[1] {
			t.Errorf("%+v grows", s)
		}
		total += s.Counts[1]
	}
	want := 0
	for _, s := range one {
		want += s.Count
	}
	if total != want || total != 45733 {
		t.Errorf("%d objects in the series' sites, %d in AllocationSites", total, want)
	}
	b, err := analysis.Analyze(analysistest.ReadFixture(t, "node-leak-1.heapsnapshot.gz"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alloc.SitesOverSeries([]*analysis.Analysis{a, b}); !errors.Is(err, alloc.ErrNoAllocationStacks) || !strings.HasPrefix(err.Error(), "snapshot 2:") {
		t.Errorf("a snapshot without stacks: %v", err)
	}
}

// TestTimelineLive gives the bundled timeline hand-made heap statistics
// updates: the live curve sums each update's changed intervals with the
// others' last numbers, at times from the first update, and each bucket
// (83.9 ms long) has the live heap of the last update by its end.
func TestTimelineLive(t *testing.T) {
	a, err := analysis.Analyze(analysistest.ReadFixture(t, "node-timeline.heaptimeline.gz"), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := alloc.Timeline(a, alloc.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stats := []model.HeapStatsUpdate{
		{TimestampMillis: 1000, LastSeenID: 10, Intervals: []model.IntervalStats{{Index: 0, Count: 100, Size: 1000}}},
		{TimestampMillis: 1050, LastSeenID: 20, Intervals: []model.IntervalStats{{Index: 0, Count: 90, Size: 900}, {Index: 1, Count: 20, Size: 400}}},
		{TimestampMillis: 1300, LastSeenID: 30, Intervals: []model.IntervalStats{{Index: 1, Count: 5, Size: 100}, {Index: 2, Count: 50, Size: 500}}},
		{TimestampMillis: 1800, LastSeenID: 30},
	}
	tl, err := alloc.Timeline(a, alloc.TimelineOptions{Stats: stats})
	if err != nil {
		t.Fatal(err)
	}
	want := []alloc.LivePoint{{0, 100, 1000}, {50000, 110, 1300}, {300000, 145, 1500}, {800000, 145, 1500}}
	if !reflect.DeepEqual(tl.Live, want) {
		t.Errorf("live curve %+v, want %+v", tl.Live, want)
	}
	var got []int64
	for i, b := range tl.Buckets {
		got = append(got, b.LiveCount)
		// The rest is what it is without the updates.
		b.LiveCount, b.LiveSize = 0, 0
		if !reflect.DeepEqual(b, plain.Buckets[i]) {
			t.Errorf("bucket %d: %+v, without updates %+v", i, b, plain.Buckets[i])
		}
	}
	if fmt.Sprint(got) != "[110 110 110 145 145 145 145 145 145 145]" || tl.Buckets[3].LiveSize != 1500 || tl.Buckets[2].LiveSize != 1300 {
		t.Errorf("live counts at the buckets' ends %v, sizes %d %d", got, tl.Buckets[2].LiveSize, tl.Buckets[3].LiveSize)
	}
	if plain.Live != nil || plain.Buckets[0].LiveCount != 0 {
		t.Errorf("without updates: live %v, bucket 0 %d", plain.Live, plain.Buckets[0].LiveCount)
	}
}
