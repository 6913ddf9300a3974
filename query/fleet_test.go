package query

import (
	"reflect"
	"testing"

	"github.com/heapx/heapx/formats/parquet"
)

// testFleet is two pods of release 1 and one of release 2. Dump ids run
// against capture time, so an order by id would be wrong.
func testFleet() *Fleet {
	dump := func(id string, ms int64, release, pod string) parquet.DumpRow {
		return parquet.DumpRow{DumpID: id, CaptureTimeMillis: ms, FormatVersion: parquet.FormatVersion,
			Labels: []parquet.Label{{Key: "release", Value: release}, {Key: "pod", Value: pod}}}
	}
	class := func(id, name string, count, retained int64) parquet.ClassRow {
		return parquet.ClassRow{DumpID: id, Class: name, ClassKey: "," + name, Count: count, RetainedSize: retained}
	}
	return &Fleet{
		Dumps: []parquet.DumpRow{
			dump("c", 100, "1", "a"), dump("b", 200, "1", "a"), dump("a", 300, "1", "a"),
			dump("f", 100, "1", "b"), dump("e", 200, "1", "b"),
			dump("z", 150, "2", "a"), dump("y", 250, "2", "a"),
		},
		Classes: []parquet.ClassRow{
			// Leak grows at every step in pod a (in two rows, split by
			// site, in the last dump), and in pod b.
			class("c", "Leak", 10, 100), class("b", "Leak", 20, 200), class("a", "Leak", 20, 150), class("a", "Leak", 10, 150),
			class("f", "Leak", 10, 100), class("e", "Leak", 15, 120),
			// Holder retains more but has as many instances: left out.
			class("c", "Holder", 1, 1000), class("b", "Holder", 1, 1100), class("a", "Holder", 1, 1200),
			// Flat stays level once: left out; Late is missing from the
			// first dump: left out.
			class("c", "Flat", 1, 10), class("b", "Flat", 2, 10), class("a", "Flat", 3, 20),
			class("b", "Late", 1, 10), class("a", "Late", 2, 20),
			// In release 2, Leak shrinks.
			class("z", "Leak", 10, 100), class("y", "Leak", 5, 50),
		},
		Suspects: []parquet.SuspectRow{
			{DumpID: "a", Rank: 1, Class: "Leak", HeldBy: "list", RetainedSize: 300, Share: 0.3},
			{DumpID: "a", Rank: 2, Class: "Leak", HeldBy: "list", RetainedSize: 100, Share: 0.1},
			{DumpID: "b", Rank: 1, Class: "Leak", HeldBy: "list", RetainedSize: 200, Share: 0.2},
			{DumpID: "e", Rank: 1, Class: "Leak", HeldBy: "list", RetainedSize: 120, Share: 0.25},
			{DumpID: "y", Rank: 1, Class: "Cache", HeldBy: "map", RetainedSize: 500, Share: 0.5},
		},
	}
}

func TestFleetSeriesByCaptureTime(t *testing.T) {
	f := testFleet()
	var got [][]string
	for _, s := range f.Series(nil) {
		ids := []string{s.Labels}
		for _, d := range s.Dumps {
			ids = append(ids, d.DumpID)
		}
		got = append(got, ids)
	}
	want := [][]string{{"release=1 pod=a", "c", "b", "a"}, {"release=1 pod=b", "f", "e"}, {"release=2 pod=a", "z", "y"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series %v, want %v", got, want)
	}
	if s := f.Series([]string{"release"}); len(s) != 2 || len(s[0].Dumps) != 5 || s[0].Labels != "release=1" {
		t.Errorf("--by release: %+v", s)
	}
}

func TestFleetClassGrowth(t *testing.T) {
	got := testFleet().ClassGrowth(nil)
	want := []FleetClassGrowth{
		{Series: "release=1 pod=a", Pairs: []parquet.Label{{Key: "release", Value: "1"}, {Key: "pod", Value: "a"}}, Class: "Leak", Dumps: 3, Retained: []int64{100, 200, 300}, Counts: []int64{10, 20, 30}},
		{Series: "release=1 pod=b", Pairs: []parquet.Label{{Key: "release", Value: "1"}, {Key: "pod", Value: "b"}}, Class: "Leak", Dumps: 2, Retained: []int64{100, 120}, Counts: []int64{10, 15}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("growing classes %+v, want %+v", got, want)
	}
	// Pooled by release, pod a's and b's dumps interleave in time and
	// Leak no longer grows at every step.
	if got := testFleet().ClassGrowth([]string{"release"}); len(got) != 0 {
		t.Errorf("growing classes by release: %+v, want none", got)
	}
}

func TestFleetSuspectCounts(t *testing.T) {
	got := testFleet().SuspectCounts([]string{"release"})
	want := []FleetSuspect{
		{Class: "Leak", HeldBy: "list", Dumps: 3, PerSeries: map[string]int{"release=1": 3}, MaxRetained: 300, MaxShare: 0.3},
		{Class: "Cache", HeldBy: "map", Dumps: 1, PerSeries: map[string]int{"release=2": 1}, MaxRetained: 500, MaxShare: 0.5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("suspects %+v, want %+v", got, want)
	}
	r, err := FleetResult(testFleet(), FleetOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Sections); n != 3 {
		t.Fatalf("%d sections, want 3", n)
	}
	for i, s := range r.Sections {
		if len(s.Table.Rows) != 1 {
			t.Errorf("section %d has %d rows with -n 1", i, len(s.Table.Rows))
		}
	}
	if row := r.Sections[1].Table.Rows[0]; row[4] != "release=1 pod=a 2/3, release=1 pod=b 1/2" {
		t.Errorf("the suspect was found in %q", row[4])
	}
	// One row a class: Leak grows in both pods of release 1.
	if row := r.Sections[0].Table.Rows[0]; row[0] != "Leak" || row[1] != 2 || row[3] != "release=1 pod=a,b" || row[4] != int64(220) || row[5] != int64(25) {
		t.Errorf("the growing class's row %v", row)
	}
}
