//go:build unix

// Package unlinked tests what the formats registry says to a program that
// links no format: a Go program that uses heapx as a library and forgot
// to import formats/all. It must stay a package that imports no format.
package unlinked

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestNoFormatLinked opens a real dump, from a file and from a pipe, with
// an empty registry: the error names the file and says what to import,
// where it used to end in "known formats: )".
func TestNoFormatLinked(t *testing.T) {
	if n := len(formats.All()); n != 0 {
		t.Fatalf("%d formats linked into a test that must have none", n)
	}
	path := filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz")
	advice := ": no heap-dump format is linked into this program, so none can read it: import github.com/heapx/heapx/formats/all (or the packages of the formats to read, such as formats/v8)"
	if _, _, err := formats.Open(path, formats.ReadOptions{}); err == nil || err.Error() != path+advice {
		t.Errorf("Open: got %v\nwant %s", err, path+advice)
	}
	if _, err := formats.Detect(path); err == nil || err.Error() != path+advice {
		t.Errorf("Detect: got %v\nwant %s", err, path+advice)
	}

	// A pipe is read once, by OpenInput's stream branch.
	dump, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "dump")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(dump) // fails once the reader has what it needs and closes
		w.Close()
	}()
	if _, err := formats.OpenInput(fifo); err == nil || err.Error() != fifo+advice {
		t.Errorf("OpenInput of a pipe: got %v\nwant %s", err, fifo+advice)
	}
}
