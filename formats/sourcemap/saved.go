package sourcemap

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/heapx/heapx/formats"
)

// The saved source maps of a dump (FILE.sourcemaps.jsonl), which heapx
// capture writes beside each snapshot of a program whose scripts name
// source maps: a page's maps are fetched from its server, which may be
// gone when the dump is read. docs/sourcemaps.md describes the file.
const (
	SavedFormat  = "heapx.sourcemaps"
	SavedVersion = 1
)

// SavedPath is the saved-maps side file of the dump at path: the dump's
// name without ".gz", plus ".sourcemaps.jsonl".
func SavedPath(path string) string { return formats.SidePath(path, ".sourcemaps.jsonl") }

// Saved is one script's source map as capture saved it.
type Saved struct {
	// ScriptID is V8's id of the script; URL its name.
	ScriptID uint32 `json:"script_id"`
	URL      string `json:"url"`
	// MapURL is where the map was found (the script's sourceMappingURL
	// resolved against URL); "" for a map inlined as a data: URL, which
	// the scripts side file holds itself.
	MapURL string `json:"map_url,omitempty"`
	// Map is the map's JSON, as fetched; empty when it could not be.
	Map json.RawMessage `json:"map,omitempty"`
	// Source is the script's own text, which tells the minified name of
	// what is defined at a position from its neighbours.
	Source string `json:"source,omitempty"`
	// Error says why the map could not be fetched.
	Error string `json:"error,omitempty"`
}

// WriteSaved writes a saved-maps side file: the header, then one line
// per script. A map that is not JSON is saved as an error.
func WriteSaved(w io.Writer, saved []Saved) error {
	bw := bufio.NewWriter(w)
	if err := formats.WriteSideHeader(bw, SavedFormat, SavedVersion); err != nil {
		return err
	}
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var buf bytes.Buffer
	for _, s := range saved {
		if len(s.Map) > 0 {
			buf.Reset()
			// One line per script: a pretty-printed map is compacted.
			if err := json.Compact(&buf, s.Map); err != nil {
				s.Map, s.Error = nil, "the map is not JSON: "+err.Error()
			} else {
				s.Map = buf.Bytes()
			}
		}
		if err := enc.Encode(s); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// maxSavedLine bounds one line of the side file: a map and its script.
const maxSavedLine = 512 << 20

// ReadSaved reads the saved-maps side file of the dump at dump, keeping
// the scripts want says are wanted (by id and URL): nil, nil when there
// is no such file.
func ReadSaved(dump string, want func(id uint32, url string) bool) ([]Saved, error) {
	file := SavedPath(dump)
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Saved
	err = formats.ReadSideFile(f, file, SavedFormat, SavedVersion, maxSavedLine, func(b []byte) error {
		// The id and URL come first: a script not wanted is skipped
		// without decoding its map.
		var head struct {
			ScriptID *uint32 `json:"script_id"`
			URL      string  `json:"url"`
		}
		if err := json.Unmarshal(b, &head); err != nil || head.ScriptID == nil {
			return errors.New("want a saved map {\"script_id\":ID,\"url\":URL,...}")
		}
		if !want(*head.ScriptID, head.URL) {
			return nil
		}
		var s Saved
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
