package capture

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	"github.com/heapx/heapx/formats/sourcemap"
	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// Scripts is the list of scripts a V8 target has loaded, kept up to date
// as the inspector reports them (Debugger.scriptParsed), so that each
// dump can be written with its scripts side file (v8.ScriptsPath), which
// names every script by its file and gives its source map.
type Scripts struct {
	mu   sync.Mutex
	list []model.Script
	at   map[uint32]int // index in list by id
	// maps are the scripts' source maps SaveMaps fetched, by id, kept
	// for the session's next dump.
	maps map[uint32]sourcemap.Saved
}

// RecordScripts starts listening to the target's scripts: the debugger
// reports those already loaded at once, then each new one. It also tells
// the debugger never to pause (a `debugger;` statement would otherwise
// stop the program while heapx holds the session) and to keep no
// collected script alive for itself, so the heap is the program's.
func (s *V8) RecordScripts(ctx context.Context) (*Scripts, error) {
	sc := &Scripts{at: map[uint32]int{}, maps: map[uint32]sourcemap.Saved{}}
	s.conn.On("Debugger.scriptParsed", sc.parsed)
	if err := s.conn.Call(ctx, "Debugger.enable", map[string]float64{"maxScriptsCacheSize": 0}, nil); err != nil {
		return nil, s.cause(ctx, err)
	}
	if err := s.conn.Call(ctx, "Debugger.setSkipAllPauses", map[string]bool{"skip": true}, nil); err != nil {
		return nil, s.cause(ctx, err)
	}
	return sc, nil
}

// parsed records one Debugger.scriptParsed event. A script id that is
// not a number (no V8 sends one) names no snapshot location: it is left
// out.
func (sc *Scripts) parsed(params json.RawMessage) {
	var p struct {
		ScriptID     string `json:"scriptId"`
		URL          string `json:"url"`
		SourceMapURL string `json:"sourceMapURL"`
		Hash         string `json:"hash"`
		StartLine    int32  `json:"startLine"`
		StartColumn  int32  `json:"startColumn"`
		Length       int64  `json:"length"`
		IsModule     bool   `json:"isModule"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := strconv.ParseUint(p.ScriptID, 10, 32)
	if err != nil {
		return
	}
	s := model.Script{ID: uint32(id), URL: p.URL, SourceMapURL: p.SourceMapURL, Hash: p.Hash,
		StartLine: p.StartLine, StartColumn: p.StartColumn, Length: p.Length, Module: p.IsModule}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if i, ok := sc.at[s.ID]; ok {
		sc.list[i] = s
		return
	}
	sc.at[s.ID] = len(sc.list)
	sc.list = append(sc.list, s)
}

// WriteBeside writes the scripts known by now to the side file of the
// dump at path (v8.ScriptsPath(path)), atomically.
func (sc *Scripts) WriteBeside(path string) error {
	sc.mu.Lock()
	list := append([]model.Script(nil), sc.list...)
	sc.mu.Unlock()
	_, err := writeFile(v8.ScriptsPath(path), func(w io.Writer) error { return v8.WriteScripts(w, list) })
	return err
}
