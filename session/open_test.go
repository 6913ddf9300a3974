package session_test

import (
	"slices"
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/internal/partitiontest"
	"github.com/heapx/heapx/session"
	"github.com/heapx/heapx/sqlquery"
)

// TestOpenParquetPartition: Open reads a Parquet partition through the
// facade, telling Options.Dump.Progress each stage, and the session
// answers as on the snapshot the partition was written from; Info
// describes the input as heapx info does.
func TestOpenParquetPartition(t *testing.T) {
	snap := open(t, "node-leak-3.heapsnapshot.gz")
	part := partitiontest.Write(t, fixture("node-leak-3.heapsnapshot.gz"))
	var stages []heapx.Stage
	s, err := session.Open(part, nil, session.Options{SQLCache: sqlquery.Choice{None: true}, Dump: heapx.Options{
		Progress: func(stage heapx.Stage, done, total int64) {
			if len(stages) == 0 || stages[len(stages)-1] != stage {
				stages = append(stages, stage)
			}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !slices.Equal(stages, []heapx.Stage{heapx.Reading, heapx.Analyzing}) {
		t.Errorf("progress stages %v, want reading then analyzing", stages)
	}
	in := s.Info().Inputs[0]
	if in.Format != "parquet" || in.Info == nil || in.Info.Format != "parquet" || in.Info.File != part || in.Info.Producer != "Node.js (V8)" ||
		in.Nodes != 53155 || in.Info.NodeCount != in.Nodes || in.Edges != in.Info.EdgeCount {
		t.Fatalf("input %+v, info %+v", in, in.Info)
	}
	want, err := snap.Classes(session.ListQuery{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Classes(session.ListQuery{Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want.Classes {
		if g := got.Classes[i]; g.Constructor != w.Constructor || g.Count != w.Count || g.RetainedSize != w.RetainedSize {
			t.Errorf("class %d: %+v, want %+v", i, g, w)
		}
	}
}

// TestNewOnDumps: New takes dumps opened by the facade, analysed or not,
// and describes each with its heapx info summary (Dump.Info).
func TestNewOnDumps(t *testing.T) {
	var ds []*heapx.Dump
	for _, rel := range []string{"node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz"} {
		d, err := heapx.Open(fixture(rel), heapx.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if _, err := ds[0].Analysis(); err != nil { // one analysed before, one by New
		t.Fatal(err)
	}
	s, err := session.New(ds[0], ds[1:], session.Options{SQLCache: sqlquery.Choice{None: true}})
	if err != nil {
		t.Fatal(err)
	}
	info := s.Info()
	if len(info.Inputs) != 2 || info.Baselines[0] != ds[1].Path() {
		t.Fatalf("inputs %+v", info.Inputs)
	}
	for i, in := range info.Inputs {
		d := ds[i].Info()
		if in.Path != ds[i].Path() || in.Info.File != d.File || in.Info.NodeCount != d.NodeCount || in.Nodes != ds[i].Graph().NumNodes() ||
			in.Info.TotalSelfSize != d.TotalSelfSize || in.Info.Compression != "gzip" {
			t.Errorf("input %d: %+v, info %+v; the dump's %+v", i, in, in.Info, d)
		}
	}
	if ds[1].Path() != fixture("node-leak-1.heapsnapshot.gz") || info.Inputs[1].Role != "baseline" {
		t.Errorf("baseline %+v", info.Inputs[1])
	}
}

// TestOpenNodeCore: Open reads a Node.js core (made at test time by
// gcore) with Options.Dump.Binary; Info counts its thread stacks. It
// skips without gcore or the node binary, unless CI=true.
func TestOpenNodeCore(t *testing.T) {
	c := coretest.Make(t, coretest.Majors(t)[0])
	s, err := session.Open(c.Core, nil, session.Options{SQLCache: sqlquery.Choice{None: true}, Dump: heapx.Options{Binary: c.Binary}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	info := s.Info()
	if in := info.Inputs[0]; in.Format != "nodecore" || info.IDs != "address" || info.Threads < 1 || info.Threads != in.Info.ThreadCount {
		t.Fatalf("info: ids %q, threads %d, input %+v", info.IDs, info.Threads, in)
	}
	p, err := s.Classes(session.ListQuery{Filter: c.Expect.Tickets.Class, Limit: session.MaxPage})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, cl := range p.Classes {
		if cl.Constructor == c.Expect.Tickets.Class {
			n = cl.Count
		}
	}
	if n != c.Expect.Tickets.Count {
		t.Errorf("%d %s, want %d", n, c.Expect.Tickets.Class, c.Expect.Tickets.Count)
	}
}
