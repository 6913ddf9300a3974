package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/hostile"
	"github.com/heapx/heapx/model"
)

// chainResults are consistent results for chain(n): each node dominates
// the next.
func chainResults(n int) *model.Results {
	r := &model.Results{Policy: "raw", Shallow: make([]uint64, n), Retained: make([]uint64, n),
		Dominator: make([]model.NodeIndex, n), Distance: make([]int32, n)}
	for i := n - 1; i >= 0; i-- {
		r.Shallow[i], r.Dominator[i], r.Distance[i] = uint64(i), model.NodeIndex(i-1), int32(i)
		r.Retained[i] = uint64(i)
		if i+1 < n {
			r.Retained[i] += r.Retained[i+1]
		}
	}
	r.Dominator[0] = model.NoNode
	return r
}

// TestHostileResults reads analysed files whose stored results lie (issue
// 12.10), in the rows and in heapx_packed: they were taken as they were
// (top printed a retained size of 2^64-1 as 544884523868812.1% of the
// heap, and a packed root index of 2^32+2 made node 2 the root).
func TestHostileResults(t *testing.T) {
	g := chain(5)
	for _, c := range []struct {
		name string
		lie  func(path string) error
		msg  string
	}{
		{"retained 2^64-1", hostile.DBRetainedMax, "table heapx_result: results: node id 1 retains 10 bytes, not its shallow size 0 plus the 18446744073709551615 its dominated nodes retain"},
		{"dominator cycle", hostile.DBDominatorCycle, "table heapx_result: results: the dominators of node id 3 go round in a cycle"},
		{"packed retained 2^64-1", hostile.DBPackedRetainedMax, "table heapx_packed: results: node id 1 retains 10 bytes, not its shallow size 0 plus the 18446744073709551615 its dominated nodes retain"},
		{"packed root index 2^32+2", hostile.DBPackedRoot, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "lies.db")
			if err := Save(db, g, WriteOptions{Results: chainResults(5)}); err != nil {
				t.Fatal(err)
			}
			if err := c.lie(db); err != nil {
				t.Fatal(err)
			}
			var res model.Results
			h, err := ReadFile(db, ReadOptions{Results: &res})
			if c.msg == "" {
				// The cache that lies is not used: the rows say node
				// id 1 is the root.
				if err != nil || h.Root != 0 || res.Retained[0] != 10 {
					t.Fatalf("%v; root %d", err, h.Root)
				}
				return
			}
			var fe *formats.FormatError
			if !errors.As(err, &fe) || !strings.HasSuffix(err.Error(), c.msg) {
				t.Errorf("%v, want %q", err, c.msg)
			}
		})
	}
}

// hostileSeeds are the fuzz seed seed with each lie of TestHostileResults
// told in it.
func hostileSeeds(t testing.TB, seed []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for _, lie := range []func(string) error{hostile.DBRetainedMax, hostile.DBDominatorCycle, hostile.DBPackedRetainedMax, hostile.DBPackedRoot} {
		db := filepath.Join(t.TempDir(), "lie.db")
		if err := os.WriteFile(db, seed, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := lie(db); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
