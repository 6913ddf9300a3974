package jsonl

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// TestTruncated cuts node-basic's flat file, plain and gzip-compressed, in
// the lines the reader parses itself (strings) and in those its parallel
// parser takes (nodes, edges): each cut gives the error every reader gives
// for a dump cut short. A .jsonl.gz cut short read as complete up to a
// bad last line ("line 20007: string not terminated"), and a plain file
// cut after a line said "the file promises N edge records ... (truncated
// file?)".
func TestTruncated(t *testing.T) {
	b := flatFile(t, "node-basic.heapsnapshot.gz", false)
	gz := filepath.Join(t.TempDir(), "node-basic.jsonl.gz")
	if err := os.WriteFile(gz, testfixtures.Gzip(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	testfixtures.CheckTruncated(t, gz, func(name string, b []byte) error {
		_, err := Read(bytes.NewReader(b), name, ReadOptions{})
		return err
	})
	// Cut after a whole line, the file holds fewer records than its
	// metadata promises.
	cut := bytes.LastIndexByte(b[:len(b)/2], '\n') + 1
	n := bytes.Count(b[:cut], []byte("\n"))
	_, err := Read(bytes.NewReader(b[:cut]), "cut.jsonl", ReadOptions{})
	if want := fmt.Sprintf("cut.jsonl: line %d: byte %d: file ends early: the dump is truncated", n+1, cut); err == nil || err.Error() != want {
		t.Errorf("cut after line %d: %v, want %s", n, err, want)
	}
	// Cut inside a line the reader parses itself (no counts promised).
	small := lines(`["metadata","version_major","1"]`, `["record","string",["id","text"]]`, `["string",0,"first"]`, `["string",1,"second"]`)
	small = small[:len(small)-5]
	_, err = Read(strings.NewReader(small), "cut.jsonl", ReadOptions{})
	if want := fmt.Sprintf("cut.jsonl: line 4: byte %d: file ends early: the dump is truncated", len(small)); err == nil || err.Error() != want {
		t.Errorf("cut inside a string: %v, want %s", err, want)
	}
}
