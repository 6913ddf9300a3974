package v8

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// TestScriptsRoundTrip writes scripts and reads them back as they were.
func TestScriptsRoundTrip(t *testing.T) {
	want := []model.Script{
		{ID: 0, URL: ""},
		{ID: 6, URL: "node:internal/timers", Hash: "ab12", Length: 21684},
		{ID: 81, URL: "file:///srv/app.mjs", SourceMapURL: "data:application/json;base64,e30=", StartLine: 3, StartColumn: 8, Module: true},
	}
	var b bytes.Buffer
	if err := WriteScripts(&b, want); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), `{"format":"heapx.scripts","version":1}`+"\n") {
		t.Errorf("header: %q", b.String())
	}
	got, err := ReadScripts(&b, "x.scripts.jsonl")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read back %+v, %v; want %+v", got, err, want)
	}
}

// TestReadScriptsErrors: a bad side file is an error naming the file,
// the line and what was wanted.
func TestReadScriptsErrors(t *testing.T) {
	header := `{"format":"heapx.scripts","version":1}` + "\n"
	for _, tc := range []struct{ in, want string }{
		{"", "empty: want a header line"},
		{`{"format":"heapx.heapstats","version":1}` + "\n", `line 1: byte 0: want the header {"format":"heapx.scripts","version":1}`},
		{`{"format":"heapx.scripts","version":2}` + "\n", "line 1: byte 0: version 2 of heapx.scripts; this heapx reads version 1"},
		{header + `{"url":"a.js"}` + "\n", "line 2: byte 39: a script without an id"},
		{header + `{"id":-1,"url":"a.js"}` + "\n", "line 2: byte 39: want a script"},
		{header + `{"id":1,"url":"a.js"}` + "\n" + `{"id":1,"url":"b.js"}` + "\n", "line 3: byte 61: script id 1 a second time"},
		{header + "[1,2]\n", "line 2: byte 39: want a script"},
	} {
		_, err := ReadScripts(strings.NewReader(tc.in), "x.scripts.jsonl")
		var fe *formats.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "x.scripts.jsonl") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a format error with %q", tc.in, err, tc.want)
		}
	}
}

// ReadFile takes the scripts kept beside a dump with it; a side file it
// cannot read is kept as an error and the dump still reads.
func TestReadFileScriptsBeside(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "app.heapsnapshot.gz")
	b, err := os.ReadFile(filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := ReadFile(snap, ReadOptions{})
	if err != nil || g.Scripts != nil {
		t.Fatalf("without a side file: %v, scripts %+v", err, g.Scripts)
	}
	side := filepath.Join(dir, "app.heapsnapshot.scripts.jsonl")
	if ScriptsPath(snap) != side {
		t.Fatalf("ScriptsPath(%s) = %s, want %s", snap, ScriptsPath(snap), side)
	}
	if err := os.WriteFile(side, []byte(`{"format":"heapx.scripts","version":1}`+"\n"+`{"id":81,"url":"file:///srv/app.js","source_map_url":"app.js.map"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = ReadFile(snap, ReadOptions{})
	if err != nil || g.Scripts == nil || g.Scripts.Err != nil || g.Scripts.File != side ||
		!reflect.DeepEqual(g.Scripts.List, []model.Script{{ID: 81, URL: "file:///srv/app.js", SourceMapURL: "app.js.map"}}) {
		t.Fatalf("with a side file: %v, scripts %+v", err, g.Scripts)
	}
	if err := os.WriteFile(side, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err = ReadFile(snap, ReadOptions{})
	if err != nil || g.Scripts == nil || g.Scripts.Err == nil || g.Scripts.List != nil {
		t.Fatalf("with a bad side file: %v, scripts %+v", err, g.Scripts)
	}
}

// FuzzReadScripts: any input reads as scripts or is a format error,
// never a panic; what reads writes back to the same scripts.
func FuzzReadScripts(f *testing.F) {
	var b bytes.Buffer
	WriteScripts(&b, []model.Script{{ID: 6, URL: "node:internal/timers", Hash: "1849a758", Length: 21684},
		{ID: 81, URL: "file:///tmp/srv.js", Hash: "70158be1", Length: 605, SourceMapURL: "srv.js.map", Module: true}})
	f.Add(b.Bytes())
	f.Add([]byte(`{"format":"heapx.scripts","version":1}` + "\n" + `{"id":1}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := ReadScripts(bytes.NewReader(in), "fuzz")
		if err != nil {
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("not a format error: %v", err)
			}
			return
		}
		var out bytes.Buffer
		if err := WriteScripts(&out, got); err != nil {
			t.Fatal(err)
		}
		again, err := ReadScripts(&out, "again")
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("written back and read %+v, %v; want %+v", again, err, got)
		}
	})
}
