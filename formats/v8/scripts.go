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
	"strings"

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
func ScriptsPath(path string) string {
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		path = path[:len(path)-3]
	}
	return path + ".scripts.jsonl"
}

// scriptsHeader is the side file's first line.
type scriptsHeader struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
}

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
	if err := writeJSONLine(bw, scriptsHeader{Format: ScriptsFormat, Version: ScriptsVersion}); err != nil {
		return err
	}
	for _, s := range scripts {
		id := s.ID
		l := scriptLine{ID: &id, URL: s.URL, SourceMapURL: s.SourceMapURL, Hash: s.Hash, StartLine: s.StartLine,
			StartColumn: s.StartColumn, Length: s.Length, Module: s.Module}
		if err := writeJSONLine(bw, l); err != nil {
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
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxScriptLine)
	var offset int64
	bad := func(line int, msg string, args ...any) error {
		return &formats.FormatError{File: file, Section: fmt.Sprintf("line %d", line), Offset: offset, Msg: fmt.Sprintf(msg, args...)}
	}
	var scripts []model.Script
	seen := map[uint32]bool{}
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			var h scriptsHeader
			if err := json.Unmarshal(b, &h); err != nil || h.Format != ScriptsFormat {
				return nil, bad(line, "want the header {\"format\":%q,\"version\":%d}", ScriptsFormat, ScriptsVersion)
			}
			if h.Version != ScriptsVersion {
				return nil, bad(line, "version %d of %s; this heapx reads version %d", h.Version, ScriptsFormat, ScriptsVersion)
			}
		} else {
			var l scriptLine
			if err := json.Unmarshal(b, &l); err != nil {
				return nil, bad(line, "want a script {\"id\":ID,\"url\":URL,...}: %v", err)
			}
			if l.ID == nil {
				return nil, bad(line, "a script without an id")
			}
			if seen[*l.ID] {
				return nil, bad(line, "script id %d a second time", *l.ID)
			}
			seen[*l.ID] = true
			scripts = append(scripts, model.Script{ID: *l.ID, URL: l.URL, SourceMapURL: l.SourceMapURL, Hash: l.Hash,
				StartLine: l.StartLine, StartColumn: l.StartColumn, Length: l.Length, Module: l.Module})
		}
		offset += int64(len(b)) + 1
	}
	if err := sc.Err(); err != nil {
		return nil, &formats.FormatError{File: file, Section: fmt.Sprintf("line %d", line+1), Offset: offset, Msg: err.Error()}
	}
	if line == 0 {
		return nil, &formats.FormatError{File: file, Offset: 0, Msg: "empty: want a header line", Err: formats.ErrTruncated}
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
