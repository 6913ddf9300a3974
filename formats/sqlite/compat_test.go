package sqlite

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/heapx/heapx/analysis"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestReadsPackedLayout2 reads a .db written by heapx before heapx_packed
// was compressed (layout 2, testdata/sqlite/README.md): the graph and the
// results are the snapshot's, and they come from its uncompressed cache,
// not from the rows.
func TestReadsPackedLayout2(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "sqlite")
	g, err := v8.ReadFile(filepath.Join(dir, "tiny.heapsnapshot"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{NoClasses: true})
	if err != nil {
		t.Fatal(err)
	}
	db := gunzipTo(t, filepath.Join(dir, "tiny-layout2.db.gz"))
	var version int64
	if err := query(mustOpen(t, db), "SELECT data FROM heapx_packed WHERE name = 'header'", func(st *sqlite.Stmt) error {
		b := make([]byte, st.ColumnLen(0))
		st.ColumnBytes(0, b)
		version = int64(b[0])
		return nil
	}); err != nil || version != packedRawVersion {
		t.Fatalf("the fixture's heapx_packed layout is %d (%v), want %d", version, err, packedRawVersion)
	}
	read := func() (*model.Graph, model.Results) {
		t.Helper()
		var res model.Results
		h, err := ReadFile(db, ReadOptions{Results: &res})
		if err != nil {
			t.Fatal(err)
		}
		return h, res
	}
	h, res := read()
	want := a.Results()
	if err := model.Compare(g, h, ignoreMeta); err != nil || !reflect.DeepEqual(res.Retained, want.Retained) ||
		!reflect.DeepEqual(res.Dominator, want.Dominator) || !reflect.DeepEqual(res.Distance, want.Distance) {
		t.Fatalf("read back: %v; results %+v, want %+v", err, res, *want)
	}
	// A row changed behind the cache's back (its trigger dropped) is not
	// seen: the old cache is what is read.
	mutate(t, db, `DROP TRIGGER heapx_packed_node_update`, `UPDATE node SET self_size = 99 WHERE seq = 2`)
	if h, _ := read(); h.NodeSize(2) != g.NodeSize(2) {
		t.Errorf("self_size %d: the layout-2 cache was not used", h.NodeSize(2))
	}
}

// TestFilterIndexes: the filters people put on nodes_full first (a class
// or name, a type, a retained size) are answered through indexes, not by
// reading every node (the name filter took 42 s on the 300 MB snapshot's
// .db), and give what the graph says.
func TestFilterIndexes(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{NoClasses: true})
	if err != nil {
		t.Fatal(err)
	}
	res := a.Results()
	for _, withResults := range []bool{true, false} {
		opt := WriteOptions{}
		if withResults {
			opt.Results = res
		}
		db := filepath.Join(t.TempDir(), "f.db")
		if err := Save(db, g, opt); err != nil {
			t.Fatal(err)
		}
		conn := mustOpen(t, db)
		var objects, closures, big int64
		for i := range g.NumNodes() {
			if g.Strings.At(g.Nodes.Name[i]) == "Object" {
				objects++
			}
			if g.NodeTypes[g.Nodes.Type[i]].Name == "closure" {
				closures++
			}
			if res.Retained[i] > 100000 {
				big++
			}
		}
		cases := []struct {
			where string
			uses  []string
			want  int64
		}{
			{"name = 'Object'", []string{"USING COVERING INDEX strings_data (data=?)", "USING INDEX node_name (name=?)"}, objects},
			{"type = 'v8:closure'", []string{"USING COVERING INDEX node_types_name (name=?)", "USING INDEX node_type (nodetypeid=?)"}, closures},
		}
		if withResults {
			cases = append(cases, struct {
				where string
				uses  []string
				want  int64
			}{"retained_size > 100000", []string{"USING COVERING INDEX heapx_result_retained (retained_size>?)"}, big})
		}
		for _, c := range cases {
			q := "SELECT count(*) FROM nodes_full WHERE " + c.where
			var plan []string
			if err := query(conn, "EXPLAIN QUERY PLAN "+q, func(st *sqlite.Stmt) error {
				plan = append(plan, st.ColumnText(3))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			p := strings.Join(plan, "; ")
			for _, u := range c.uses {
				if !strings.Contains(p, "SEARCH") || !strings.Contains(p, u) {
					t.Errorf("results %v, %s: plan %q does not search %q", withResults, c.where, p, u)
				}
			}
			var got int64
			if err := query(conn, q, func(st *sqlite.Stmt) error { got = st.ColumnInt64(0); return nil }); err != nil {
				t.Fatal(err)
			}
			if got != c.want || got == 0 {
				t.Errorf("results %v, %s: %d nodes, want %d", withResults, c.where, got, c.want)
			}
		}
		conn.Close()
	}
}

// mustOpen opens a database read-only for the rest of the test.
func mustOpen(t *testing.T, path string) *sqlite.Conn {
	t.Helper()
	conn, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// gunzipTo inflates a gzipped fixture into a new file and returns its path.
func gunzipTo(t *testing.T, gz string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(gz), ".gz"))
	if err := os.WriteFile(out, testfixtures.Gunzip(t, gz), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPackedPartsDamaged: compressed parts that are not what heapx wrote —
// cut short, not zstd, or far larger than their column could compress
// to — send the reader to the rows.
func TestPackedPartsDamaged(t *testing.T) {
	g := fan()
	res := &model.Results{Policy: "raw", Shallow: []uint64{0, 1, 2, 3}, Retained: []uint64{6, 3, 2, 3},
		Dominator: []model.NodeIndex{model.NoNode, 0, 1, 0}, Distance: []int32{0, 1, 2, 1}}
	for _, damage := range []string{
		`UPDATE heapx_packed SET data = substr(data, 1, 8) WHERE name = 'edge.to'`,
		`UPDATE heapx_packed SET data = zeroblob(length(data)) WHERE name = 'edge.to'`,
		`UPDATE heapx_packed SET data = zeroblob(1000000) WHERE name = 'edge.to'`,
	} {
		db := filepath.Join(t.TempDir(), "d.db")
		if err := Save(db, g, WriteOptions{Results: res}); err != nil {
			t.Fatal(err)
		}
		mutate(t, db, `DROP TRIGGER heapx_packed_edge_update`, `UPDATE edge SET dest = 1 WHERE seq = 6`, damage)
		var back model.Results
		h, err := ReadFile(db, ReadOptions{Results: &back})
		if err != nil {
			t.Fatal(err)
		}
		if h.NodeID(h.Edges.To[6]) != 1 || !reflect.DeepEqual(*res, back) {
			t.Errorf("%s: edge 6 to id %d, results %+v: the damaged cache was used", damage, h.NodeID(h.Edges.To[6]), back)
		}
	}
}
