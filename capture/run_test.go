package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/capture/cdp/cdptest"
	"github.com/heapx/heapx/formats/sourcemap"
	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// TestOutputPath checks where a capture writes: the file named, the
// default name in a directory named (with or without its slash) or in
// the current one, and the errors for a directory that is not there.
func TestOutputPath(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, c := range []struct {
		o    Options
		want string
		err  string
	}{
		{Options{Endpoint: "9229"}, "heap-20260304-050607.heapsnapshot", ""},
		{Options{Endpoint: "9229", Output: dir}, filepath.Join(dir, "heap-20260304-050607.heapsnapshot"), ""},
		{Options{Endpoint: "9229", Output: dir + "/", Timeline: time.Second}, filepath.Join(dir, "heap-20260304-050607.heaptimeline"), ""},
		{Options{Endpoint: "9229", Output: dir, Sampling: time.Second}, filepath.Join(dir, "heap-20260304-050607.heapprofile"), ""},
		{Options{JVM: 1, Output: dir}, filepath.Join(dir, "heap-20260304-050607.hprof"), ""},
		{Options{Endpoint: "9229", Output: filepath.Join(dir, "a.heapsnapshot.gz")}, filepath.Join(dir, "a.heapsnapshot.gz"), ""},
		{Options{Endpoint: "9229", Output: filepath.Join(dir, "nope") + "/"}, "", filepath.Join(dir, "nope") + "/: no such directory"},
		{Options{Endpoint: "9229", Output: filepath.Join(dir, "nope", "a.heapsnapshot")}, "", "no directory " + filepath.Join(dir, "nope") + " to write it in"},
	} {
		got, err := c.o.OutputPath(now)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %q, %v; want %q, %q", c.o, got, err, c.want, c.err)
		}
	}
}

// TestOptionsCheck checks the options a Go caller can get wrong.
func TestOptionsCheck(t *testing.T) {
	sigs := make(chan os.Signal)
	for _, c := range []struct {
		o   Options
		err string
	}{
		{Options{}, "need one target"},
		{Options{Endpoint: "1", JVM: 2}, "need one target"},
		{Options{Endpoint: "1", Timeline: time.Second, Sampling: time.Second}, "take one of"},
		{Options{Endpoint: "1", Timeline: time.Second, Every: time.Second}, "take one of"},
		{Options{JVM: 1, Grow: 0.2}, "a JVM gives heap dumps"},
		{Options{Endpoint: "1", Count: 3}, "nothing says when"},
		{Options{Command: []string{"python3", "app.py"}, Signals: sigs}, `not "python3"`},
		{Options{Command: []string{"node", "app.js"}, Signals: sigs}, ""},
		{Options{Endpoint: "1", Count: 3, Signals: sigs}, ""},
		{Options{Endpoint: "1", Every: time.Second}, ""},
	} {
		err := c.o.Check()
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%+v: %v, want %q", c.o, err, c.err)
		}
	}
}

// TestLastWords picks the line that says why a program ended from its
// last lines on stderr, as node and V8 print them.
func TestLastWords(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"/app/throw.js:4", "  throw new Error('boom');", "  ^", "", "Error: boom", "    at Timeout._onTimeout (/app/throw.js:4:9)", "", "Node.js v20.20.2"}, "Error: boom"},
		{[]string{"node:internal/modules/cjs/loader:1210", "  throw err;", "  ^", "", "Error: Cannot find module '/x.js'", "    at Module._resolveFilename (node:internal/modules/cjs/loader:1207:15) {", "  code: 'MODULE_NOT_FOUND',", "  requireStack: []", "}", "", "Node.js v20.20.2"}, "Error: Cannot find module '/x.js'"},
		{[]string{"<--- Last few GCs --->", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", "----- Native stack trace -----", " 1: 0xb8ced0 node::Abort() [node]"}, "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory"},
		{[]string{"listening on :8080", "fatal: config missing"}, "fatal: config missing"},
		{[]string{"----- Native stack trace -----", "", " 1: 0xd3a3c0  [node]", "----- JavaScript stack trace -----", "1: /a.js:1:26"}, ""},
		{nil, ""},
	} {
		if got := LastWords(c.lines); got != c.want {
			t.Errorf("LastWords(%q) = %q, want %q", c.lines, got, c.want)
		}
	}
	e := &ProgramExit{Program: "node", Status: -1, Signal: syscall.SIGKILL, Done: "after 1.0 s; 1 of 3 snapshots taken"}
	if e.ExitCode() != 137 || e.Error() != "node was killed by SIGKILL before the capture was complete (after 1.0 s; 1 of 3 snapshots taken)" {
		t.Errorf("%d %q", e.ExitCode(), e.Error())
	}
	e = &ProgramExit{Program: "node", Status: 0}
	if e.ExitCode() != 1 || e.Error() != "node exited normally (status 0) before the capture was complete" {
		t.Errorf("%d %q", e.ExitCode(), e.Error())
	}
}

// TestLineFilterTail: the program's output passes on, less the
// inspector's lines; the last tailLines lines are kept, each cut at
// maxLine; a line that never ends is passed on in pieces, not held.
func TestLineFilterTail(t *testing.T) {
	var out bytes.Buffer
	f := &lineFilter{out: &out, found: make(chan string, 1)}
	f.Write([]byte("Debugger listening on ws://127.0.0.1:1/x\nFor help, see: https://nodejs.org/en/docs/inspector\n"))
	for i := range tailLines + 10 {
		f.Write([]byte(strings.Repeat("x", i) + "\n"))
	}
	f.Write([]byte(strings.Repeat("y", 2000) + "\nno newline"))
	f.flush()
	tail := f.tail()
	if len(tail) != tailLines || tail[0] != strings.Repeat("x", 12) || tail[len(tail)-2] != strings.Repeat("y", maxLine)+"…" || tail[len(tail)-1] != "no newline" {
		t.Errorf("tail %q", tail)
	}
	if strings.Contains(out.String(), "Debugger") || !strings.HasSuffix(out.String(), "no newline") {
		t.Errorf("output %q", out.String())
	}
	f.Write(bytes.Repeat([]byte("z"), 3*maxPartial))
	if len(f.partial) > maxPartial {
		t.Errorf("%d bytes of an unended line held", len(f.partial))
	}
}

// TestSnapshotProgressDeadline: a snapshot whose progress moves on is
// given time past the timeout; a target that repeats the same progress
// report is not building a snapshot, and times out.
func TestSnapshotProgressDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, c := range []struct {
		name    string
		advance bool
		err     error
	}{{"moving", true, nil}, {"stuck", false, cdp.ErrTimeout}} {
		t.Run(c.name, func(t *testing.T) {
			srv := cdptest.New(func(method string, _ json.RawMessage, send func(string, any)) (any, int, string, bool) {
				if method != "HeapProfiler.takeHeapSnapshot" {
					return nil, 0, "", false
				}
				for i := range 10 {
					time.Sleep(timeout / 3)
					done := 1
					if c.advance {
						done = i + 1
					}
					send("HeapProfiler.reportHeapSnapshotProgress", map[string]int{"done": done, "total": 10})
				}
				send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": "{}"})
				return nil, 0, "", false
			})
			defer srv.Close()
			s, err := ConnectV8(context.Background(), srv.HostPort(), "", timeout)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			dir := t.TempDir()
			_, err = s.Snapshot(context.Background(), filepath.Join(dir, "s.heapsnapshot"), nil)
			if c.err == nil && err != nil || c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("got %v, want %v", err, c.err)
			}
			want := "s.heapsnapshot"
			if c.err != nil {
				want = ""
			}
			noFilesBut(t, dir, strings.Fields(want)...)
		})
	}
}

// TestRunWritesAndTells runs a series against a scripted target through
// Run: each file is told to Wrote as it is written, named after the
// output, and returned.
func TestRunWritesAndTells(t *testing.T) {
	srv := snapshotServer([]string{`{"a":`, `1}`}, -1)
	defer srv.Close()
	dir := t.TempDir()
	var told []string
	res, err := Run(context.Background(), Options{Endpoint: srv.HostPort(), Every: 10 * time.Millisecond, Count: 2,
		Output: filepath.Join(dir, "s.heapsnapshot"), Wrote: func(f File) { told = append(told, filepath.Base(f.Path)) }})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(told, " "); got != "s-1.heapsnapshot s-2.heapsnapshot" || len(res.Files) != 2 || res.Files[1].Size != 7 {
		t.Errorf("told %q, result %+v", got, res)
	}
	if !regexp.MustCompile(`s-2\.heapsnapshot$`).MatchString(res.Paths()[1]) {
		t.Errorf("paths %q", res.Paths())
	}
}

// TestRunWritesScripts checks the scripts side file beside each file of a
// series: the scripts the target reported when the debugger was enabled
// and those parsed later, with their source maps; pauses are turned off
// before the program runs; a target without a Debugger domain gets no
// side file, and its snapshots are still taken.
func TestRunWritesScripts(t *testing.T) {
	snapshots := 0
	srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		switch method {
		case "Debugger.enable":
			send("Debugger.scriptParsed", map[string]any{"scriptId": "6", "url": "node:internal/timers", "hash": "h6", "length": 100})
			send("Debugger.scriptParsed", map[string]any{"scriptId": "81", "url": "file:///srv/app.js", "sourceMapURL": "app.js.map", "startLine": 0, "isModule": true})
			send("Debugger.scriptParsed", map[string]any{"scriptId": "not a number", "url": "x.js"})
		case "HeapProfiler.takeHeapSnapshot":
			if snapshots++; snapshots == 2 {
				// A script loaded since the first snapshot, one parsed
				// again (a reload): listed once, as last reported.
				send("Debugger.scriptParsed", map[string]any{"scriptId": "90", "url": "file:///srv/late.js"})
				send("Debugger.scriptParsed", map[string]any{"scriptId": "81", "url": "file:///srv/app.js", "sourceMapURL": "app2.js.map", "isModule": true})
			}
			send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": `{"a":1}`})
		}
		return nil, 0, "", false
	})
	defer srv.Close()
	dir := t.TempDir()
	res, err := Run(context.Background(), Options{Endpoint: srv.HostPort(), Every: 10 * time.Millisecond, Count: 2,
		Output: filepath.Join(dir, "s.heapsnapshot.gz")})
	if err != nil {
		t.Fatal(err)
	}
	read := func(path string) []model.Script {
		t.Helper()
		f, err := os.Open(v8.ScriptsPath(path))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		list, err := v8.ReadScripts(f, f.Name())
		if err != nil {
			t.Fatal(err)
		}
		return list
	}
	first, second := read(res.Files[0].Path), read(res.Files[1].Path)
	want := []model.Script{{ID: 6, URL: "node:internal/timers", Hash: "h6", Length: 100},
		{ID: 81, URL: "file:///srv/app.js", SourceMapURL: "app.js.map", Module: true}}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("first side file %+v, want %+v", first, want)
	}
	want[1].SourceMapURL = "app2.js.map"
	want = append(want, model.Script{ID: 90, URL: "file:///srv/late.js"})
	if !reflect.DeepEqual(second, want) {
		t.Errorf("second side file %+v, want %+v", second, want)
	}
	calls := strings.Join(srv.Calls(), " ")
	if !strings.Contains(calls, "Debugger.enable Debugger.setSkipAllPauses") || strings.Index(calls, "Debugger") > strings.Index(calls, "HeapProfiler.takeHeapSnapshot") {
		t.Errorf("calls %s: want the debugger enabled, pauses skipped, before the first snapshot", calls)
	}
	noFilesBut(t, dir, "s-1.heapsnapshot.gz", "s-1.heapsnapshot.scripts.jsonl", "s-1.heapsnapshot.sourcemaps.jsonl",
		"s-2.heapsnapshot.gz", "s-2.heapsnapshot.scripts.jsonl", "s-2.heapsnapshot.sourcemaps.jsonl")
	// The map app.js names is no file here: saved as an error, which
	// heapx prints when it reads the dump; refetched when a reload names
	// another.
	for i, mapURL := range []string{"file:///srv/app.js.map", "file:///srv/app2.js.map"} {
		saved, err := sourcemap.ReadSaved(res.Files[i].Path, func(uint32, string) bool { return true })
		if err != nil || len(saved) != 1 || saved[0].ScriptID != 81 || saved[0].MapURL != mapURL || saved[0].Error == "" || saved[0].Map != nil {
			t.Errorf("saved maps of file %d: %v %+v", i+1, err, saved)
		}
	}

	bare := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		switch {
		case strings.HasPrefix(method, "Debugger."):
			return nil, cdp.CodeMethodNotFound, "'" + method + "' wasn't found", false
		case method == "HeapProfiler.takeHeapSnapshot":
			send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": `{"a":1}`})
		}
		return nil, 0, "", false
	})
	defer bare.Close()
	dir = t.TempDir()
	if _, err := Run(context.Background(), Options{Endpoint: bare.HostPort(), Output: filepath.Join(dir, "b.heapsnapshot")}); err != nil {
		t.Fatal(err)
	}
	noFilesBut(t, dir, "b.heapsnapshot")
}
