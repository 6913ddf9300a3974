package sourcemaps

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/sourcemap"
)

// bundle is esbuild's minified bundle of formats/sourcemap/testdata/app,
// "(()=>{var n=class{constructor(t,o,s){...":
const bundleDir = "../formats/sourcemap/testdata/esbuild"

// definitions are where V8 places what the bundle defines (the
// locations of a heap snapshot of it under Node 20, zero-based): a
// class at its constructor's '(', a function at its parameters' '('
// (an arrow with one parameter at the parameter), with the minified
// name, and the name the map gives ("" for none: total and addRows are
// not renamed by the minifier).
var definitions = []struct {
	col        int
	name, want string
}{
	{29, "n", "LedgerRow"},
	{138, "e", "Ledger"},
	{273, "i", "makeHandlers"},
	{322, "s", "onChange"},
	{378, "a", "keepForever"},
	{91, "total", ""},
	{166, "addRows", ""},
	{322, "", ""}, // an anonymous function is left anonymous
}

// copyBundle copies the bundle and its map to a new directory, the map
// named mapName ("" for none), the script's comment removed unless
// comment; it returns the script's path.
func copyBundle(t *testing.T, mapName string, comment bool) string {
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join(bundleDir, "bundle.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !comment {
		script = script[:bytes.Index(script, []byte("//# sourceMappingURL"))]
	}
	m, err := os.ReadFile(filepath.Join(bundleDir, "bundle.js.map"))
	if err != nil {
		t.Fatal(err)
	}
	if mapName != "" {
		if err := os.WriteFile(filepath.Join(dir, mapName), m, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "bundle.js")
	if err := os.WriteFile(path, script, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func checkNames(t *testing.T, s *Set, p analysis.Position) {
	t.Helper()
	for _, d := range definitions {
		p.Line, p.Column = 1, int32(d.col)+1
		got, ok := s.MapName(p, d.name)
		if ok != (d.want != "") || got != d.want && ok {
			t.Errorf("%s at 1:%d: got %q %v, want %q", d.name, d.col+1, got, ok, d.want)
		}
	}
}

// TestBundleOnDisk finds the map by the script's comment, and NAME.map
// beside a script without one, and maps positions and names.
func TestBundleOnDisk(t *testing.T) {
	for _, c := range []struct {
		name    string
		mapName string
		comment bool
	}{{"comment", "bundle.js.map", true}, {"beside", "bundle.js.map", false}} {
		t.Run(c.name, func(t *testing.T) {
			var warnings []string
			s := New(func(w string) { warnings = append(warnings, w) })
			script := copyBundle(t, c.mapName, c.comment)
			p := analysis.Position{Script: script, Line: 1, Column: 274}
			m, ok := s.MapPosition(p)
			want := filepath.Join(filepath.Dir(script), "..", "app", "listeners.js")
			if !ok || m.Script != filepath.Clean(want) || m.Line != 3 || m.Column != 17 {
				t.Errorf("makeHandlers' '(' maps to %+v %v, want %s:3:17", m, ok, want)
			}
			checkNames(t, s, analysis.Position{Script: script})
			if len(warnings) != 0 {
				t.Errorf("warnings: %q", warnings)
			}
		})
	}
}

// TestSavedMap reads a map capture saved beside a dump, with and without
// the script's text: without it, a class's name (a few tokens before its
// constructor) is not guessed, the others are found.
func TestSavedMap(t *testing.T) {
	m, err := os.ReadFile(filepath.Join(bundleDir, "bundle.js.map"))
	if err != nil {
		t.Fatal(err)
	}
	script, _ := os.ReadFile(filepath.Join(bundleDir, "bundle.js"))
	const url = "http://127.0.0.1:8080/js/bundle.js"
	for _, withText := range []bool{true, false} {
		dump := filepath.Join(t.TempDir(), "page.heapsnapshot")
		sv := sourcemap.Saved{ScriptID: 17, URL: url, MapURL: url + ".map", Map: m}
		if withText {
			sv.Source = string(script)
		}
		var b bytes.Buffer
		if err := sourcemap.WriteSaved(&b, []sourcemap.Saved{sv, {ScriptID: 18, URL: "http://127.0.0.1:8080/x.js", MapURL: "http://127.0.0.1:8080/x.js.map", Error: "404 Not Found"}}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(sourcemap.SavedPath(dump), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var warnings []string
		s := ForDump(dump, nil, func(w string) { warnings = append(warnings, w) })
		p, ok := s.MapPosition(analysis.Position{ScriptID: 17, Line: 1, Column: 30})
		if !ok || p.Script != "http://127.0.0.1:8080/app/ledger.js" || p.Line != 4 || p.Column != 3 {
			t.Errorf("LedgerRow's constructor maps to %+v %v", p, ok)
		}
		if withText {
			checkNames(t, s, analysis.Position{ScriptID: 17})
		} else {
			for _, d := range definitions {
				got, ok := s.MapName(analysis.Position{ScriptID: 17, Line: 1, Column: int32(d.col) + 1}, d.name)
				want := d.want
				if d.name == "n" || d.name == "e" {
					want = "" // classes need the text
				}
				if ok != (want != "") || ok && got != want {
					t.Errorf("without the text, %s: got %q %v, want %q", d.name, got, ok, want)
				}
			}
		}
		if _, ok := s.MapPosition(analysis.Position{ScriptID: 18, Line: 1, Column: 1}); ok {
			t.Error("a script whose map was not saved maps")
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "404 Not Found") {
			t.Errorf("warnings %q, want the unsaved map's", warnings)
		}
	}
}

// TestInlineMap reads a map inlined as a data: URL.
func TestInlineMap(t *testing.T) {
	s := New(nil)
	p, ok := s.MapPosition(analysis.Position{Script: filepath.Join(bundleDir, "inline.js"), Line: 1, Column: 1})
	if !ok || !strings.HasSuffix(p.Script, filepath.Join("app", "ledger.js")) {
		t.Errorf("1:1 maps to %+v %v", p, ok)
	}
}

// TestBrokenMap: a map that does not parse is a warning, and positions
// stay as they are.
func TestBrokenMap(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "app.js")
	os.WriteFile(script, []byte("x()\n//# sourceMappingURL=app.js.map\n"), 0o644)
	os.WriteFile(script+".map", []byte(`{"version":3,"sources":["a.js"],"mappings":"AA!A"}`), 0o644)
	var warnings []string
	s := New(func(w string) { warnings = append(warnings, w) })
	for range 2 {
		if p, ok := s.MapPosition(analysis.Position{Script: script, Line: 1, Column: 1}); ok {
			t.Errorf("mapped through a broken map: %+v", p)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "does not parse") || !strings.Contains(warnings[0], "app.js.map") {
		t.Errorf("warnings %q, want one that names the map", warnings)
	}
	// A map named but missing is a warning too; a script naming none
	// and with no NAME.map beside it is none.
	os.Remove(script + ".map")
	warnings = nil
	s = New(func(w string) { warnings = append(warnings, w) })
	s.MapPosition(analysis.Position{Script: script, Line: 1, Column: 1})
	if len(warnings) != 1 {
		t.Errorf("a missing map: warnings %q", warnings)
	}
	os.WriteFile(script, []byte("x()\n"), 0o644)
	warnings = nil
	s = New(func(w string) { warnings = append(warnings, w) })
	s.MapPosition(analysis.Position{Script: script, Line: 1, Column: 1})
	if len(warnings) != 0 {
		t.Errorf("a script without a map: warnings %q", warnings)
	}
}

// TestTerserBundle: rollup's bundle minified by terser, a shape the
// rules were not written for. Terser gives an arrow and its single
// parameter one letter ("const t=t=>"): the name is the binding's,
// before the position, not the parameter's at it.
func TestTerserBundle(t *testing.T) {
	script := "../formats/sourcemap/testdata/rollup/bundle.min.js"
	text, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	s := New(nil)
	for _, c := range []struct{ before, name, want string }{
		{"class t{constructor", "t", "LedgerRow"},
		{"class s{constructor", "s", "Ledger"},
		{"const t=", "t", "onChange"},
		{"function o", "o", "keepForever"},
		{"total", "total", ""},
	} {
		at := bytes.Index(text, []byte(c.before))
		if at < 0 {
			t.Fatalf("%q not in the bundle", c.before)
		}
		col := at + len(c.before) // V8's position: the '(' or the parameter after
		got, ok := s.MapName(analysis.Position{Script: script, Line: 1, Column: int32(col) + 1}, c.name)
		if ok != (c.want != "") || ok && got != c.want {
			t.Errorf("%s before %q: got %q %v, want %q", c.name, c.before, got, ok, c.want)
		}
	}
}
