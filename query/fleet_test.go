package query

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
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

// cohortFleet is 16 dumps of one service: releases 1 and 2, four pods
// each, two dumps a pod, and one dump without a release label. Release 1
// holds 600 more AuditRecord in every dump; pod 2 of release 1 alone
// holds 1,500 ReplayEntry (one pod of four differs: no release
// difference); Order varies from pod to pod alike in both releases. Pod 2
// of release 1 also has a leak suspect.
func cohortFleet() *Fleet {
	f := &Fleet{}
	class := func(id, name string, count, retained int64) {
		f.Classes = append(f.Classes, parquet.ClassRow{DumpID: id, Class: name, ClassKey: "," + name, Count: count, RetainedSize: retained})
	}
	for _, release := range []string{"2", "10"} { // 10 after 2, by value
		for pod := int64(1); pod <= 4; pod++ {
			for snap := int64(1); snap <= 2; snap++ {
				id := fmt.Sprintf("r%s-p%d-%d", release, pod, snap)
				f.Dumps = append(f.Dumps, parquet.DumpRow{DumpID: id, CaptureTimeMillis: 100*snap + pod, NodeCount: 1000 + pod,
					TotalSize: 50_000 + pod, Labels: []parquet.Label{{Key: "pod", Value: strconv.FormatInt(pod, 10)},
						{Key: "release", Value: release}}})
				audit := 100 + pod // a pod's noise: 101..104
				if release == "2" {
					audit += 600
				}
				class(id, "AuditRecord", audit, 40*audit)
				class(id, "Order", 150+23*pod+snap, 1000*pod)
				if release == "2" && pod == 2 {
					class(id, "ReplayEntry", 1500, 48_000)
					f.Suspects = append(f.Suspects, parquet.SuspectRow{DumpID: id, Rank: 1, Class: "ReplayEntry", HeldBy: "replay",
						RetainedSize: 48_000})
				}
			}
		}
	}
	f.Dumps = append(f.Dumps, parquet.DumpRow{DumpID: "unlabelled", Labels: []parquet.Label{{Key: "pod", Value: "9"}}})
	class("unlabelled", "AuditRecord", 5000, 200_000)
	return f
}

func TestFleetCompareCohorts(t *testing.T) {
	c, err := cohortFleet().Compare("release", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.A.Value != "2" || c.B.Value != "10" || len(c.A.Dumps) != 8 || len(c.B.Dumps) != 8 || c.Others != 1 {
		t.Fatalf("cohorts A %s (%d dumps), B %s (%d), others %d; want 2 and 10 of 8 dumps, 1 other",
			c.A.Value, len(c.A.Dumps), c.B.Value, len(c.B.Dumps), c.Others)
	}
	byClass := map[string]FleetClassDifference{}
	for _, d := range c.Classes {
		byClass[d.Class] = d
	}
	audit := c.Classes[0]
	// Means of 701..704 and 101..104, two dumps each: 702.5 and 102.5.
	// Eight dumps above eight: the smallest p, 2/C(16,8).
	if audit.Class != "AuditRecord" || audit.Count.MeanA != 702.5 || audit.Count.MeanB != 102.5 || audit.Count.Diff != -600 ||
		!audit.Count.Exact || math.Abs(audit.Count.P-2.0/12870) > 1e-15 || audit.Retained.Diff != -24_000 {
		t.Errorf("first class %+v, want AuditRecord, 702.5 and 102.5 per dump, p 2/12870", audit)
	}
	// One pod of four: U is 12 of 64, p 0.467 (coin, as in package stats'
	// test "one pod").
	if r := byClass["ReplayEntry"]; r.Count.MeanA != 375 || r.Count.MeanB != 0 || r.Count.P < 0.05 {
		t.Errorf("ReplayEntry %+v, want a mean of 375 against 0 with p >= 0.05", r)
	}
	if o := byClass["Order"]; o.Count.P < 0.05 || o.Count.Diff != 0 {
		t.Errorf("Order %+v, want no difference", o)
	}
	if len(c.Suspects) != 1 || c.Suspects[0].FoundA != 2 || c.Suspects[0].FoundB != 0 || c.Suspects[0].Retained.P < 0.05 {
		t.Errorf("suspects %+v, want ReplayEntry found in two dumps of A, p >= 0.05", c.Suspects)
	}

	r, err := FleetCompareResult(c, FleetCompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows := r.Sections[0].Table.Rows
	if len(rows) != 1 || rows[0][0] != "AuditRecord" || rows[0][1] != 702.5 || rows[0][2] != 102.5 {
		t.Errorf("the classes whose count differs: %v, want AuditRecord alone", rows)
	}
	if len(r.Sections[2].Table.Rows) != 0 || len(r.Warnings) != 0 {
		t.Errorf("suspects that differ %v, warnings %v; want none", r.Sections[2].Table.Rows, r.Warnings)
	}
	if all, _ := FleetCompareResult(c, FleetCompareOptions{Alpha: 1}); len(all.Sections[0].Table.Rows) != 3 {
		t.Errorf("--alpha 1 shows %d classes, want 3", len(all.Sections[0].Table.Rows))
	}
}

func TestFleetCompareBadInput(t *testing.T) {
	f := cohortFleet()
	f.Dumps[0].Labels[1].Value = "3" // a third release
	for _, c := range []struct {
		label  string
		values []string
		want   string
	}{
		{"zone", nil, `no dump has a label "zone"; the dumps' labels are pod, release`},
		{"release", nil, `label "release" has 3 values (2, 3, 10): say which two to compare, --compare release=2,3`},
		{"release", []string{"2", "2"}, "compares a value with itself"},
		{"release", []string{"2", "11"}, "no dump has release=11; its values are 2, 3, 10"},
	} {
		if _, err := f.Compare(c.label, c.values); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Compare(%s, %v): %v, want %q", c.label, c.values, err, c.want)
		}
	}
	c, err := f.Compare("release", []string{"3", "10"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := FleetCompareResult(c, FleetCompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || r.Warnings[0].Code != WarnTooFewDumps {
		t.Errorf("one dump against eight: warnings %v, want %s", r.Warnings, WarnTooFewDumps)
	}
	if _, err := FleetCompareResult(c, FleetCompareOptions{Alpha: 1.5}); err == nil {
		t.Error("--alpha 1.5 was taken")
	}
}
