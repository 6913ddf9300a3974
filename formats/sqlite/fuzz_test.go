package sqlite

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// FuzzRead feeds arbitrary bytes to the reader as a .db file: it must
// return a graph that validates (with results that fit it) or a
// FormatError, and never panic. The seed is a small file written by the
// writer, with analysis results, a location and an allocation trace, so
// mutations land in real pages, records and values; written with 512-byte
// pages it is 16 KB, which keeps each run fast. More seeds tell the lies
// of issue 12.10 in it (stored results that do not add up, a packed root
// index past the nodes).
func FuzzRead(f *testing.F) {
	g := chain(7)
	g.Locations = []model.Location{{Node: 1, ScriptID: 2, Line: 3, Column: 4}}
	g.Trace = &model.AllocationTrace{
		Functions: []model.TraceFunction{{ID: 1, Name: 1, ScriptName: 2, ScriptID: 3, Line: -1, Column: -1}},
		Tree:      []model.TraceNode{{ID: 1, Parent: -1}},
	}
	res := chainResults(7)
	db := filepath.Join(f.TempDir(), "seed.db")
	defer func(p int) { pageSize = p }(pageSize)
	pageSize = 512 // SQLite's smallest: a 16 KB file instead of 400 KB
	if err := Save(db, g, WriteOptions{Results: res}); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(db)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	for _, b := range hostileSeeds(f, seed) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.db")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var res model.Results
		g, err := ReadFile(path, ReadOptions{Results: &res})
		if !testfixtures.CheckRead(t, g, err) {
			return
		}
		if res.Shallow != nil {
			if err := res.Check(g); err != nil {
				t.Fatalf("results returned without error do not fit: %v", err)
			}
		}
	})
}
