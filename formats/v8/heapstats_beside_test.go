package v8

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// ReadFile takes the heap statistics kept beside a timeline with it; a
// side file it cannot read is said when the updates are wanted, and the
// timeline still reads.
func TestReadFileHeapStatsBeside(t *testing.T) {
	dir := t.TempDir()
	tl := filepath.Join(dir, "app.heaptimeline.gz")
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "node-timeline.heaptimeline.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tl, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(tl, ReadOptions{})
	if err != nil || g.HeapStats != nil {
		t.Fatalf("without a side file: %v, stats %+v", err, g.HeapStats)
	}
	side := filepath.Join(dir, "app.heaptimeline.stats.jsonl")
	if err := os.WriteFile(side, []byte(heapStatsSample), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = ReadFile(tl, ReadOptions{})
	if err != nil || g.HeapStats == nil || g.HeapStats.Err != nil || g.HeapStats.File != side ||
		len(g.HeapStats.Updates) != 4 || g.HeapStats.Updates[3].LastSeenID != 80101 {
		t.Fatalf("with a side file: %v, stats %+v", err, g.HeapStats)
	}
	if err := os.WriteFile(side, []byte(`{"format":"heapx.heapstats","version":99}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = ReadFile(tl, ReadOptions{})
	if err != nil || g.HeapStats == nil || g.HeapStats.Err == nil || g.HeapStats.Updates != nil {
		t.Fatalf("with a bad side file: %v, stats %+v", err, g.HeapStats)
	}
}
