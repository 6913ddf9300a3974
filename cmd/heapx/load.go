package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/heapx/heapx/formats"
	// Formats register themselves; importing one is what makes heapx read it.
	_ "github.com/heapx/heapx/formats/hprof"
	_ "github.com/heapx/heapx/formats/jsonl"
	_ "github.com/heapx/heapx/formats/spidermonkey"
	_ "github.com/heapx/heapx/formats/sqlite"
	_ "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// dump is a loaded heap dump with what info reports about the file itself.
type dump struct {
	path     string
	format   *formats.Format
	fileSize int64
	gzip     bool
	graph    *model.Graph
	readTime time.Duration
}

// load reads the heap dump at path in whatever registered format it is,
// drawing a progress bar on stderr when that is a terminal and the read is
// slow. formats.OpenInput checks the file first, so the common mistakes
// (wrong path, a directory, a file that is not a heap dump) get a message
// that says so instead of a parse error at byte 0, and reads a pipe once.
func load(path string, stderr *os.File) (*dump, error) {
	return loadResults(path, stderr, nil)
}

// loadResults is load, also collecting the analysis results the file
// carries into res (when res is not nil; res.Shallow stays nil when the
// file has none).
func loadResults(path string, stderr *os.File, res *model.Results) (_ *dump, err error) {
	in, err := formats.OpenInput(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	d := &dump{path: path, format: in.Format, gzip: in.Gzip}

	bar := startProgress(stderr, "reading "+filepath.Base(path), in.Size)
	defer func() {
		bar.done()
		// A reader bug on hostile input must still end in "heapx: ...",
		// exit code 1, not a goroutine dump.
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: internal error while reading (please report it): %v", path, r)
		}
	}()
	start := time.Now()
	g, err := in.Read(formats.ReadOptions{Progress: func(done, _ int64) { bar.set(done) }, Results: res})
	if err != nil {
		return nil, readError(path, err)
	}
	d.graph, d.readTime, d.fileSize = g, time.Since(start), in.Size
	return d, nil
}

// readError makes sure a read error names the file: a *formats.FormatError
// does already (with section and offset), an I/O error from the gzip layer
// may not.
func readError(path string, err error) error {
	var fe *formats.FormatError
	if errors.As(err, &fe) {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
