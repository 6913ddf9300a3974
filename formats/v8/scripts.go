// The scripts side file of a V8 dump (FILE.scripts.jsonl), which heapx
// capture writes beside each snapshot, timeline and profile: the
// scripts the inspector reported (Debugger.scriptParsed), so that every
// view names a script by its file and finds its source map.

package v8

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// ScriptsFormat and ScriptsVersion name the side file's format in its
// first line; a reader refuses a version it does not know.
const (
	ScriptsFormat  = "heapx.scripts"
	ScriptsVersion = 1
)

// ScriptsPath is the scripts side file of the dump at path: the dump's
// name without ".gz", plus ".scripts.jsonl" (app.heapsnapshot.gz gives
// app.heapsnapshot.scripts.jsonl).
func ScriptsPath(path string) string { return formats.SidePath(path, ".scripts.jsonl") }

// scriptLine is one script, as docs/capture.md, "The scripts side file",
// lists its keys.
type scriptLine struct {
	ID           *uint32 `json:"id"`
	URL          string  `json:"url"`
	SourceMapURL string  `json:"source_map_url,omitempty"`
	Hash         string  `json:"hash,omitempty"`
	StartLine    int32   `json:"start_line,omitempty"`
	StartColumn  int32   `json:"start_column,omitempty"`
	Length       int64   `json:"length,omitempty"`
	Module       bool    `json:"module,omitempty"`
}

// WriteScripts writes a scripts side file: the header, then one line
// per script, in order.
func WriteScripts(w io.Writer, scripts []model.Script) error {
	bw := bufio.NewWriter(w)
	if err := formats.WriteSideHeader(bw, ScriptsFormat, ScriptsVersion); err != nil {
		return err
	}
	for _, s := range scripts {
		id := s.ID
		l := scriptLine{ID: &id, URL: s.URL, SourceMapURL: s.SourceMapURL, Hash: s.Hash, StartLine: s.StartLine,
			StartColumn: s.StartColumn, Length: s.Length, Module: s.Module}
		if err := formats.WriteJSONLine(bw, l); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// maxScriptLine bounds one line of the side file: a script's URL and
// source map URL (a data: URL holds the whole map).
const maxScriptLine = 64 << 20

// ReadScripts reads a scripts side file (named file in errors): its
// header, then one script per line. A script id may appear once.
func ReadScripts(r io.Reader, file string) ([]model.Script, error) {
	var scripts []model.Script
	seen := map[uint32]bool{}
	err := formats.ReadSideFile(r, file, ScriptsFormat, ScriptsVersion, maxScriptLine, func(b []byte) error {
		var l scriptLine
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("want a script {\"id\":ID,\"url\":URL,...}: %v", err)
		}
		if l.ID == nil {
			return errors.New("a script without an id")
		}
		if seen[*l.ID] {
			return fmt.Errorf("script id %d a second time", *l.ID)
		}
		seen[*l.ID] = true
		scripts = append(scripts, model.Script{ID: *l.ID, URL: l.URL, SourceMapURL: l.SourceMapURL, Hash: l.Hash,
			StartLine: l.StartLine, StartColumn: l.StartColumn, Length: l.Length, Module: l.Module})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return scripts, nil
}

// scriptsBeside reads the scripts side file of the dump at path
// (ScriptsPath), nil when there is none.
func scriptsBeside(path string) *model.Scripts {
	file := ScriptsPath(path)
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	s := &model.Scripts{File: file}
	if err != nil {
		s.Err = err
		return s
	}
	defer f.Close()
	s.List, s.Err = ReadScripts(f, f.Name())
	return s
}
