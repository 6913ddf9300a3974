package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapx/heapx/formats"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestTruncated cuts node-basic's database in its middle and inside its
// last page: each gives the error every reader gives for a dump cut short,
// where SQLite said "database disk image is malformed" for the first and
// read the second as if whole.
func TestTruncated(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(smallDB(t, g))
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(binary.BigEndian.Uint16(good[16:])) // heapx writes 16 KB pages
	for _, cut := range []int{len(good) / 2, len(good) - 5} {
		path := filepath.Join(t.TempDir(), "cut.db")
		if err := os.WriteFile(path, good[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path, ReadOptions{})
		want := fmt.Sprintf("%s: page %d: byte %d: file ends early: the dump is truncated", path, cut/pageSize+1, cut)
		if err == nil || err.Error() != want || !errors.Is(err, formats.ErrTruncated) {
			t.Errorf("cut at %d: %v, want %s", cut, err, want)
		}
	}
}
