package fleet

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

func testdata(name string) string { return filepath.Join("..", "testdata", name) }

// TestExport exports dumps of two runtimes with labels: each partition
// holds the dump's nodes, its labels and where its capture time came
// from, and a second export of the same dumps (one twice) writes nothing.
func TestExport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	in := []string{testdata("node-basic.heapsnapshot.gz"), testdata("hprof/java-leakdemo-small.hprof.gz")}
	labels := []parquet.Label{{Key: "service", Value: "api"}}
	var last, total int64
	res, err := Export(dir, in, Options{Labels: labels, Jobs: 2, Generator: "fleet test",
		Progress: func(done, all int64) { last, total = done, all }})
	if err != nil {
		t.Fatal(err)
	}
	var sizes int64
	for i, r := range res {
		st, _ := os.Stat(in[i])
		sizes += st.Size()
		id, _, _ := parquet.ContentID(in[i])
		d, err := hx.Open(in[i], hx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Err != nil || r.Skipped || r.ID != id || r.Path != in[i] || r.Size != st.Size() || r.Nodes != d.Graph().NumNodes() {
			t.Fatalf("dump %d: %+v, want id %s, %d nodes", i, r, id, d.Graph().NumNodes())
		}
		var stored model.Results
		g, row, err := parquet.ReadDump(parquet.PartitionDir(dir, id), parquet.ReadOptions{Results: &stored})
		if err != nil {
			t.Fatal(err)
		}
		// HPROF records when it was taken; V8 does not.
		from := map[bool]string{false: "file", true: "dump"}[strings.HasSuffix(in[i], ".hprof.gz")]
		if g.NumNodes() != r.Nodes || len(row.Labels) != 1 || row.Labels[0] != labels[0] || row.CaptureTimeFrom != from || stored.Policy == "" {
			t.Errorf("%s: %d nodes, labels %v, capture time from %s, policy %q", in[i], g.NumNodes(), row.Labels, row.CaptureTimeFrom, stored.Policy)
		}
	}
	if total != sizes || last != sizes {
		t.Errorf("progress %d of %d, want %d", last, total, sizes)
	}
	res, err = Export(dir, append(in, in[0]), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Skipped || r.Err != nil {
			t.Errorf("again: %+v", r)
		}
	}
	if _, err := Export(dir, []string{testdata("no-such.heapsnapshot")}, Options{}); err == nil || !strings.Contains(err.Error(), "no-such.heapsnapshot: no such file") {
		t.Errorf("missing dump: %v", err)
	}
}

// TestExportSuspects: the suspects table holds heapx suspects' rows.
func TestExportSuspects(t *testing.T) {
	src := testdata("node-leak-3.heapsnapshot.gz")
	d, err := hx.Open(src, hx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	_, sus, err := query.SuspectsResult(query.Snapshot{Path: src, Analysis: a}, suspectThreshold, 0)
	if err != nil {
		t.Fatal(err)
	}
	pd, err := partition(a, src, "0123456789abcdef", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sus) == 0 || len(pd.Suspects) != len(sus) {
		t.Fatalf("%d suspect rows, heapx suspects finds %d", len(pd.Suspects), len(sus))
	}
	for i, s := range sus {
		r := pd.Suspects[i]
		if int(r.Rank) != i+1 || r.RetainedSize != int64(s.Retained) || r.HolderID != int64(a.Graph.Nodes.ID.At(int(s.Holder))) ||
			r.Count != int64(s.Count) || !strings.Contains(r.Holder, "@") {
			t.Errorf("suspect %d: %+v, want %+v", i+1, r, s)
		}
	}
	if len(pd.Classes) != len(a.Summary()) || pd.Info.TotalSize != int64(a.TotalSize()) || pd.Info.CaptureTimeFrom != "file" {
		t.Errorf("%d classes (want %d), total %d, capture time from %s", len(pd.Classes), len(a.Summary()), pd.Info.TotalSize, pd.Info.CaptureTimeFrom)
	}
}

// TestExportLeaks: a leak series' FINAL gets the leaks table, with the
// ids of BASELINE and TARGET; the others get none, and FINAL in the
// directory already, or a FINAL that is BASELINE again, is refused.
func TestExportLeaks(t *testing.T) {
	series := []string{testdata("node-leak-1.heapsnapshot.gz"), testdata("node-leak-2.heapsnapshot.gz"), testdata("node-leak-3.heapsnapshot.gz")}
	dir := t.TempDir()
	var checked bool
	res, err := Export(dir, series, Options{Leaks: true, Warn: func([]query.Warning) { checked = true }})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.Skipped {
			t.Fatalf("%+v", r)
		}
	}
	for _, r := range res[:2] {
		if _, err := os.Stat(parquet.TableFile(parquet.PartitionDir(dir, r.ID), parquet.TableLeaks)); err == nil {
			t.Errorf("%s, not FINAL, has a leaks table", r.Path)
		}
	}
	rows, err := parquet.ReadTable[parquet.LeakRow](parquet.PartitionDir(dir, res[2].ID), parquet.TableLeaks, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || !checked {
		t.Fatalf("%d leak rows, series checked %v", len(rows), checked)
	}
	for i, r := range rows {
		if int(r.Rank) != i+1 || r.BaselineDumpID != res[0].ID || r.TargetDumpID != res[1].ID || r.Matching != "id" ||
			r.Objects < r.Count || r.Count < 1 || r.RetainedSize <= 0 || r.Path == "" {
			t.Errorf("leak %d: %+v", i+1, r)
		}
	}
	if _, err := Export(dir, series, Options{Leaks: true}); err == nil || !strings.Contains(err.Error(), "is in "+dir+" already") {
		t.Errorf("FINAL in the directory: %v", err)
	}
	res, err = Export(t.TempDir(), []string{series[0], series[1], series[0]}, Options{Leaks: true})
	if err != nil || res[2].Err == nil || !strings.Contains(res[2].Err.Error(), "the same dump as BASELINE or TARGET") {
		t.Errorf("FINAL as BASELINE: %v, %+v", err, res)
	}
}
