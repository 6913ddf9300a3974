package parquet_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all"
	"github.com/heapx/heapx/formats/exchange"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// ignoreMeta are the keys each reader sets for the file it read.
var ignoreMeta = model.CompareOptions{IgnoreMeta: []string{exchange.KeyFormat, exchange.KeySourceFormat, exchange.KeyGenerator}}

// fixtures are dumps of every runtime heapx reads: Node's and Chrome's
// V8 snapshots and timelines (allocation traces, locations with and
// without script nodes, detachedness), Java HPROF (GC roots), Firefox.
func fixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*.heapsnapshot.gz", "*.heaptimeline.gz", "hprof/java-leakdemo-small.hprof.gz",
		"spidermonkey/ff-small-page.fxsnapshot"} {
		m, err := filepath.Glob(filepath.Join("..", "..", "testdata", pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) < 10 {
		t.Fatalf("%d fixtures in testdata/, want every V8, HPROF and Firefox one", len(out))
	}
	return out
}

// readDump reads a dump file of any format with formats' registry.
func readDump(t testing.TB, path string) *model.Graph {
	t.Helper()
	in, err := formats.OpenInput(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	g, err := in.Read(formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// partitionOf is what heapx export writes for g, with id.
func partitionOf(t testing.TB, g *model.Graph, id string) (*parquet.Dump, *analysis.Analysis) {
	t.Helper()
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := &parquet.Dump{Graph: g, Results: a.Results(), ClassOf: a.Classes.Of, ClassNames: a.Classes.Names,
		Info: parquet.DumpRow{DumpID: id, Labels: []parquet.Label{{Key: "service", Value: "api"}}, TotalSize: int64(a.TotalSize())}}
	for _, c := range a.Summary() {
		d.Classes = append(d.Classes, parquet.ClassRow{Class: c.Name, ClassKey: c.Key, Count: int64(c.Count),
			ShallowSize: int64(c.Shallow), RetainedSize: int64(c.Retained), Distance: c.Distance})
	}
	return d, a
}

// write writes g as partition id of a new directory and returns its path.
func write(t testing.TB, g *model.Graph, id string) (string, *analysis.Analysis) {
	t.Helper()
	d, a := partitionOf(t, g, id)
	part, err := parquet.WritePartition(t.TempDir(), d)
	if err != nil {
		t.Fatal(err)
	}
	return part, a
}

// TestStacksRoundTrip: the threads' stacks of every kind (a core's
// JavaScript, runtime and native frames with small integers and missing
// nodes, a Java thread's object, state and locals) come back from the
// stacks, frames and frame_values tables field for field.
func TestStacksRoundTrip(t *testing.T) {
	g := readDump(t, filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"))
	g.Stacks = testfixtures.Stacks(g)
	part, _ := write(t, g, "00000000000000aa")
	h, _, err := parquet.ReadDump(part, parquet.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := model.Compare(g, h, ignoreMeta); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTripFixtures writes every fixture as a partition and reads it
// back: the graph must come back equal, column for column (parquet-go
// has had reports of corrupt files, so every kind of column is checked
// on real dumps), and so must the analysis results.
func TestRoundTripFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			g := readDump(t, path)
			part, a := write(t, g, "0123456789abcdef")
			f, err := formats.Detect(part)
			if err != nil || f.Name != parquet.Name {
				t.Fatalf("Detect(%s): %v, %v", part, f, err)
			}
			var back model.Results
			h, row, err := parquet.ReadDump(part, parquet.ReadOptions{Results: &back})
			if err != nil {
				t.Fatal(err)
			}
			if err := model.Compare(g, h, ignoreMeta); err != nil {
				t.Fatal(err)
			}
			if want := a.Results(); !reflect.DeepEqual(*want, back) {
				t.Errorf("results differ after the round trip (policy %q vs %q)", want.Policy, back.Policy)
			}
			if row.NodeCount != int64(g.NumNodes()) || row.EdgeCount != int64(g.NumEdges()) || row.TotalSize != int64(a.TotalSize()) ||
				row.FormatVersion != parquet.FormatVersion || len(row.Labels) != 1 || row.Labels[0].Value != "api" {
				t.Errorf("dumps row: %+v", row)
			}
			// The graph read back writes the same partition again.
			part2, _ := write(t, h, "0123456789abcdef")
			for _, table := range []string{parquet.TableObjects, parquet.TableReferences, parquet.TableStrings} {
				x, _ := os.ReadFile(parquet.TableFile(part, table))
				y, _ := os.ReadFile(parquet.TableFile(part2, table))
				if len(x) == 0 || string(x) != string(y) {
					t.Errorf("%s: %d bytes written from the dump, %d from its round trip", table, len(x), len(y))
				}
			}
		})
	}
}

// TestObjectsColumns checks the objects table against the analysis for
// one node: what SQL over the files sees is what heapx shows.
func TestObjectsColumns(t *testing.T) {
	g := readDump(t, "../../testdata/node-basic.heapsnapshot.gz")
	part, a := write(t, g, "0123456789abcdef")
	rows, err := readRows[parquet.ObjectRow](parquet.TableFile(part, parquet.TableObjects))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != g.NumNodes() {
		t.Fatalf("%d object rows for %d nodes", len(rows), g.NumNodes())
	}
	// The node that retains most after the root.
	best := -1
	for v := range g.NumNodes() {
		if model.NodeIndex(v) != g.Root && (best < 0 || a.Dominators.Retained[v] > a.Dominators.Retained[best]) {
			best = v
		}
	}
	r := rows[best]
	want := parquet.ObjectRow{DumpID: "0123456789abcdef", NodeID: int64(g.Nodes.ID.At(int(best))), Type: "v8:" + g.NodeType(int32(best)).Name,
		Category: g.NodeType(int32(best)).Category.String(), TypeIndex: int32(g.Nodes.Type[best]), Name: g.NodeName(int32(best)),
		NameID: int64(g.Nodes.Name[best]), Class: a.Classes.Name(int32(best)), SelfSize: int64(g.Nodes.Size.At(int(best))),
		ShallowSize: int64(a.Self.At(int(best))), RetainedSize: int64(a.Dominators.Retained[best]), Distance: a.Distances[best]}
	if r.Dominator == nil || *r.Dominator != int64(g.Nodes.ID.At(int(a.Dominators.IDom[best]))) {
		t.Errorf("dominator %v, want node id %d", r.Dominator, g.Nodes.ID.At(int(a.Dominators.IDom[best])))
	}
	if r.Detachedness == nil || r.TraceNodeID != nil {
		t.Errorf("detachedness %v (the dump has it), trace node id %v (it has none)", r.Detachedness, r.TraceNodeID)
	}
	r.Dominator, r.Detachedness = nil, nil
	if r != want {
		t.Errorf("row of node %d:\n%+v\nwant\n%+v", best, r, want)
	}
	if root := rows[g.Root]; root.Dominator != nil {
		t.Errorf("the root's dominator is %d, want NULL", *root.Dominator)
	}
	if g.Nodes.ID.At(int(best)) != 3 && a.Classes.Name(int32(best)) == "" {
		t.Error("no class")
	}
}

// TestCorruptFiles damages each table of a partition in the ways a disk
// or a copy does (cut short, bytes overwritten, emptied) and reads it: an
// error naming the file, never a panic or a graph.
func TestCorruptFiles(t *testing.T) {
	g := readDump(t, "../../testdata/node-basic.heapsnapshot.gz")
	src, _ := write(t, g, "0123456789abcdef")
	for _, table := range []string{parquet.TableDumps, parquet.TableObjects, parquet.TableReferences, parquet.TableStrings} {
		data, err := os.ReadFile(parquet.TableFile(src, table))
		if err != nil {
			t.Fatal(err)
		}
		mid := append([]byte{}, data...)
		for i := len(mid) / 3; i < len(mid)/3+64; i++ {
			mid[i] ^= 0x5a
		}
		footer := append([]byte{}, data...)
		for i := len(footer) - 200; i < len(footer)-8; i++ {
			footer[i] = 0xff
		}
		for _, c := range []struct {
			name string
			data []byte
		}{{"cut in half", data[:len(data)/2]}, {"empty", nil}, {"bytes overwritten", mid}, {"footer overwritten", footer}} {
			t.Run(table+"/"+c.name, func(t *testing.T) {
				part := copyPartition(t, src)
				file := parquet.TableFile(part, table)
				if err := os.WriteFile(file, c.data, 0o644); err != nil {
					t.Fatal(err)
				}
				h, _, err := parquet.ReadDump(part, parquet.ReadOptions{Results: &model.Results{}})
				if err == nil && c.name != "bytes overwritten" {
					t.Fatalf("read a %s %s without error", table, c.name)
				}
				if err == nil {
					// Overwritten bytes may fall in a page whose values
					// still decode; what comes back must then still be
					// the dump or an error, never a different graph.
					if cerr := model.Compare(g, h, ignoreMeta); cerr != nil {
						t.Fatalf("read a damaged %s without error, and the graph differs: %v", table, cerr)
					}
					return
				}
				var fe *formats.FormatError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), table+".parquet") && !strings.Contains(err.Error(), part) {
					t.Fatalf("error %q (%T) does not name the file", err, err)
				}
			})
		}
	}
}

// TestMissingTable: a partition without one of its required tables is
// incomplete, and the error says which.
func TestMissingTable(t *testing.T) {
	g := readDump(t, "../../testdata/node-basic.heapsnapshot.gz")
	src, _ := write(t, g, "0123456789abcdef")
	for _, table := range []string{parquet.TableDumps, parquet.TableObjects, parquet.TableReferences, parquet.TableStrings} {
		part := copyPartition(t, src)
		os.Remove(parquet.TableFile(part, table))
		_, _, err := parquet.ReadDump(part, parquet.ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "no "+table+".parquet") {
			t.Errorf("without %s: %v", table, err)
		}
	}
}

// copyPartition copies partition src into a new directory, under the
// same name.
func copyPartition(t *testing.T, src string) string {
	t.Helper()
	part := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(part, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(part, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return part
}

// TestLeaksTable: a partition has leaks.parquet only when a leak series
// was computed for it (Dump.Leaks not nil), empty when that found none,
// and its rows read back as written, with the partition's dump id.
func TestLeaksTable(t *testing.T) {
	g := readDump(t, "../../testdata/node-basic.heapsnapshot.gz")
	site := "leak app.js:3:10"
	for _, leaks := range [][]parquet.LeakRow{nil, {}, {
		{BaselineDumpID: "1111111111111111", TargetDumpID: "2222222222222222", Rank: 1, Class: "LeakedItem", Count: 500, Objects: 1000,
			RetainedSize: 143760, RepresentativeID: 92189, Path: "(root) @1 → .2 global @6049", Site: &site},
		{BaselineDumpID: "1111111111111111", TargetDumpID: "2222222222222222", Rank: 2, Class: "Object", Count: 1, Objects: 2,
			RetainedSize: 256, RepresentativeID: 93171, Path: "(root) @1"}}} {
		d, _ := partitionOf(t, g, "0123456789abcdef")
		d.Leaks = leaks
		part, err := parquet.WritePartition(t.TempDir(), d)
		if err != nil {
			t.Fatal(err)
		}
		_, statErr := os.Stat(parquet.TableFile(part, parquet.TableLeaks))
		if (leaks == nil) != os.IsNotExist(statErr) {
			t.Errorf("%d leaks (nil %v): leaks.parquet %v", len(leaks), leaks == nil, statErr)
		}
		got, err := parquet.ReadTable[parquet.LeakRow](part, parquet.TableLeaks, false)
		if err != nil || len(got) != len(leaks) {
			t.Fatalf("%d leaks read back of %d, %v", len(got), len(leaks), err)
		}
		for i, w := range leaks {
			w.DumpID = "0123456789abcdef"
			g := got[i]
			if (g.Site == nil) != (w.Site == nil) || g.Site != nil && *g.Site != *w.Site {
				t.Errorf("leak %d: site %v, want %v", i+1, g.Site, w.Site)
			}
			g.Site, w.Site = nil, nil
			if g != w {
				t.Errorf("leak %d: read %+v, wrote %+v", i+1, g, w)
			}
		}
	}
}
