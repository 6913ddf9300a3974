package capture

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/heapx/heapx/formats/sourcemap"
	"github.com/heapx/heapx/model"
)

// maxSavedMap bounds a source map or script heapx keeps of a target:
// more is left out of the side file, with an error saying so.
const maxSavedMap = 64 << 20

// SaveMaps writes the saved-maps side file of the dump at path
// (sourcemap.SavedPath): for every script the target reported with a
// source map URL, the map and the script's own text, so that heapx reads
// the dump mapped even when the page that served them is gone. A page's
// map is fetched through the browser (Network.loadNetworkResource, as
// DevTools fetches them: nothing runs in the page, whose heap is not
// touched); a map that is a file (a Node program's) is read from disk. A
// map that cannot be fetched is saved as an error, which heapx prints
// when it reads the dump. A map inlined as a data: URL is in the scripts
// side file already and is not saved again. Nothing is written when no
// script names a map.
func (sc *Scripts) SaveMaps(ctx context.Context, s *V8, path string) error {
	sc.mu.Lock()
	list := append([]model.Script(nil), sc.list...)
	sc.mu.Unlock()
	var saved []sourcemap.Saved
	for _, script := range list {
		if script.SourceMapURL == "" || sourcemap.IsDataURL(script.SourceMapURL) {
			continue
		}
		sc.mu.Lock()
		got, ok := sc.maps[script.ID]
		sc.mu.Unlock()
		if !ok || got.MapURL != resolveAgainst(script.URL, script.SourceMapURL) {
			// Not fetched yet, or the script was parsed again (a
			// reload) naming another map.
			got = s.fetchMap(ctx, script)
			sc.mu.Lock()
			sc.maps[script.ID] = got
			sc.mu.Unlock()
		}
		saved = append(saved, got)
	}
	if len(saved) == 0 {
		return nil
	}
	_, err := writeFile(sourcemap.SavedPath(path), func(w io.Writer) error { return sourcemap.WriteSaved(w, saved) })
	return err
}

// fetchMap fetches one script's source map and text.
func (s *V8) fetchMap(ctx context.Context, script model.Script) sourcemap.Saved {
	sv := sourcemap.Saved{ScriptID: script.ID, URL: script.URL, MapURL: resolveAgainst(script.URL, script.SourceMapURL)}
	var src struct {
		ScriptSource string `json:"scriptSource"`
	}
	if err := s.conn.Call(ctx, "Debugger.getScriptSource", map[string]string{"scriptId": strconv.FormatUint(uint64(script.ID), 10)}, &src); err == nil && len(src.ScriptSource) <= maxSavedMap {
		sv.Source = src.ScriptSource
	}
	data, err := s.loadResource(ctx, sv.MapURL)
	if err != nil {
		sv.Error = err.Error()
		return sv
	}
	sv.Map = data
	return sv
}

// resolveAgainst resolves a script's sourceMappingURL against the
// script's URL, as a browser does.
func resolveAgainst(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ref
	}
	r, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	return b.ResolveReference(r).String()
}

// loadResource fetches u: a file: URL (or a path) from disk, another
// through the target's browser.
func (s *V8) loadResource(ctx context.Context, u string) ([]byte, error) {
	if f, ok := strings.CutPrefix(u, "file://"); ok || !strings.Contains(u, "://") {
		if ok {
			p, err := url.PathUnescape(f)
			if err != nil {
				return nil, err
			}
			u = p
		}
		st, err := os.Stat(u)
		if err != nil {
			return nil, err
		}
		if st.Size() > maxSavedMap {
			return nil, fmt.Errorf("%d bytes, more than heapx saves (%d)", st.Size(), maxSavedMap)
		}
		return os.ReadFile(u)
	}
	var tree struct {
		FrameTree struct {
			Frame struct {
				ID string `json:"id"`
			} `json:"frame"`
		} `json:"frameTree"`
	}
	if err := s.conn.Call(ctx, "Page.getFrameTree", nil, &tree); err != nil {
		return nil, fmt.Errorf("the target has no page to fetch it from: %w", err)
	}
	var res struct {
		Resource struct {
			Success        bool    `json:"success"`
			NetError       float64 `json:"netError"`
			NetErrorName   string  `json:"netErrorName"`
			HTTPStatusCode float64 `json:"httpStatusCode"`
			Stream         string  `json:"stream"`
		} `json:"resource"`
	}
	err := s.conn.Call(ctx, "Network.loadNetworkResource", map[string]any{
		"frameId": tree.FrameTree.Frame.ID, "url": u,
		"options": map[string]bool{"disableCache": false, "includeCredentials": true},
	}, &res)
	if err != nil {
		return nil, err
	}
	r := res.Resource
	if !r.Success {
		if r.HTTPStatusCode != 0 {
			return nil, fmt.Errorf("HTTP status %d", int(r.HTTPStatusCode))
		}
		return nil, fmt.Errorf("not fetched: %s", r.NetErrorName)
	}
	return s.readStream(ctx, r.Stream)
}

// readStream reads a protocol stream (IO.read) to its end and closes it.
func (s *V8) readStream(ctx context.Context, handle string) ([]byte, error) {
	defer s.conn.Call(ctx, "IO.close", map[string]string{"handle": handle}, nil)
	var out []byte
	for {
		var chunk struct {
			Data          string `json:"data"`
			Base64Encoded bool   `json:"base64Encoded"`
			EOF           bool   `json:"eof"`
		}
		if err := s.conn.Call(ctx, "IO.read", map[string]any{"handle": handle, "size": 1 << 20}, &chunk); err != nil {
			return nil, err
		}
		if chunk.Base64Encoded {
			b, err := base64.StdEncoding.DecodeString(chunk.Data)
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		} else {
			out = append(out, chunk.Data...)
		}
		if len(out) > maxSavedMap {
			return nil, errors.New("larger than heapx saves")
		}
		if chunk.EOF {
			return out, nil
		}
	}
}
