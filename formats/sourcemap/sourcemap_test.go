package sourcemap

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
)

// golden is what testdata/golden.mjs wrote for one map: Mozilla's
// source-map answer at every position of a grid over the map.
type golden struct {
	Map     string  `json:"map"`
	URL     string  `json:"url"`
	Lines   int     `json:"lines"`
	Columns int     `json:"columns"`
	Found   [][]any `json:"found"`
	Ties    [][]any `json:"ties"`
}

// tied returns the mappings at the last position of line at or before
// col that has several, nil when there is none: there Mozilla's answer is
// any one of them.
func (g *golden) tied(line, col int) [][]any {
	var best [][]any
	bestCol := -1
	for _, t := range g.Ties {
		l, c := int(t[0].(float64)), int(t[1].(float64))
		if l == line && c <= col && c > bestCol {
			bestCol, best = c, nil
			for _, alt := range t[2].([]any) {
				best = append(best, alt.([]any))
			}
		}
	}
	return best
}

// same reports whether o, found or not (ok), is Mozilla's answer w
// (source, line, column, name; nil for none).
func same(m *Map, o Original, ok bool, w []any) bool {
	if w == nil || w[0] == nil && w[1].(float64) < 0 {
		return !ok
	}
	if !ok {
		return false
	}
	src := m.Sources[o.Source].URL
	wantSrc, _ := w[0].(string)
	if src == "" && (w[0] == nil || strings.HasSuffix(wantSrc, "/null")) {
		// A null source: Mozilla makes the string "null" of it, the
		// format says it has no URL.
		wantSrc = ""
	}
	name, _ := w[3].(string)
	return src == wantSrc && o.Line == int(w[1].(float64)) && o.Column == int(w[2].(float64)) && o.Name == name
}

// TestMozillaGoldens compares Lookup with Mozilla's source-map
// (originalPositionFor, npm source-map@0.8.0) at every generated line and
// column of maps made by esbuild, rollup and terser and of crafted ones
// (an index map, unsorted segments, duplicate positions, unmapped
// segments, a null source, a source root). The goldens are made by
// testdata/golden.mjs (the command is in its header).
func TestMozillaGoldens(t *testing.T) {
	files, _ := filepath.Glob("testdata/golden/*.json")
	if len(files) < 6 {
		t.Fatalf("want the 6 goldens of testdata/golden.mjs, found %d", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var g golden
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &g); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join("testdata", g.Map))
			if err != nil {
				t.Fatal(err)
			}
			m, err := Parse(data, g.URL)
			if err != nil {
				t.Fatal(err)
			}
			want := map[[2]int][]any{}
			for _, f := range g.Found {
				want[[2]int{int(f[0].(float64)), int(f[1].(float64))}] = f[2:]
			}
			checked, tied := 0, 0
			for line := range g.Lines {
				for col := range g.Columns {
					w, mapped := want[[2]int{line, col}]
					if mapped {
						checked++
					}
					o, ok := m.Lookup(line, col)
					if same(m, o, ok, w) {
						continue
					}
					if alts := g.tied(line, col); alts != nil && slices.ContainsFunc(alts, func(a []any) bool { return same(m, o, ok, a) }) {
						tied++
						continue
					}
					t.Errorf("%d:%d: got %+v %v, Mozilla %v", line, col, o, ok, w)
				}
			}
			t.Logf("%d positions mapped, %d where Mozilla chose another of several mappings", checked, tied)
			if checked != len(g.Found) {
				t.Errorf("checked %d positions, the golden has %d", checked, len(g.Found))
			}
		})
	}
}

// TestEdgeMap checks what the goldens do not show: sources' contents,
// the ignore list, sourceRoot with file paths, warnings.
func TestEdgeMap(t *testing.T) {
	m, err := ParseFile("testdata/crafted/edge.js.map")
	if err != nil {
		t.Fatal(err)
	}
	if m.File != "edge.js" || len(m.Sources) != 3 || len(m.Names) != 3 {
		t.Fatalf("file %q, %d sources, %d names", m.File, len(m.Sources), len(m.Names))
	}
	if want := filepath.Join("testdata", "crafted", "src", "a.js"); m.Sources[0].URL != want {
		t.Errorf("source 0 is %q, want %q (sourceRoot, then the map's directory)", m.Sources[0].URL, want)
	}
	if m.Sources[1].URL != "" {
		t.Errorf("a null source is %q", m.Sources[1].URL)
	}
	if m.Sources[0].Ignored || !m.Sources[2].Ignored {
		t.Errorf("ignored: %v %v, want only source 2", m.Sources[0].Ignored, m.Sources[2].Ignored)
	}
	if c, ok := m.Content(0); !ok || c != "let a = \"\u00e9\";\n" {
		t.Errorf("content 0: %q %v", c, ok)
	}
	for _, i := range []int{1, 2, 3, -1} {
		if c, ok := m.Content(i); ok {
			t.Errorf("content %d: %q, want none", i, c)
		}
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings %q", m.Warnings)
	}
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		base, root, src, want string
	}{
		{"/srv/dist/app.js.map", "", "../src/a.js", "/srv/src/a.js"},
		{"/srv/dist/app.js.map", "", "/abs/a.js", "/abs/a.js"},
		{"/srv/dist/app.js.map", "", "webpack:///./src/a.js", "webpack:///./src/a.js"},
		{"/srv/dist/app.js.map", "/root", "a.js", "/root/a.js"},
		{"/srv/dist/app.js.map", "lib/", "a.js", "/srv/dist/lib/a.js"},
		{"http://127.0.0.1:8080/js/app.js.map", "", "../src/a.js", "http://127.0.0.1:8080/src/a.js"},
		{"file:///srv/dist/app.js.map", "", "a.js", "file:///srv/dist/a.js"},
		{"data:application/json;base64,e30=", "", "a.js", "a.js"},
		{"", "", "a.js", "a.js"},
	} {
		if got := resolve(c.base, c.root, c.root != "", c.src); got != c.want {
			t.Errorf("resolve(%q, %q, %q) = %q, want %q", c.base, c.root, c.src, got, c.want)
		}
	}
}

// TestBadMaps checks that broken maps are errors naming the field and
// the offset, and that fields of the wrong type are warnings.
func TestBadMaps(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
		offset           int64
	}{
		{"not json", `{"version":3,`, "ends early", 13},
		{"no mappings", `{"version":3,"sources":[]}`, "no mappings", -1},
		{"no sources", `{"version":3,"mappings":""}`, "no sources", -1},
		{"bad digit", `{"sources":["a"],"mappings":"AAAA,A!AA"}`, `'!' is not a base64 digit`, 35},
		{"two fields", `{"sources":["a"],"mappings":"AA"}`, "2 fields", 29},
		{"six fields", `{"sources":["a"],"mappings":"AAAAAA"}`, "more than 5", 29},
		{"cut number", `{"sources":["a"],"mappings":"AAAg"}`, "cut short", 33},
		{"huge number", `{"sources":["a"],"mappings":"gggggggggB"}`, "too large", 36},
		{"negative column", `{"sources":["a"],"mappings":"D"}`, "before the line's start", 29},
		{"trailing", `{"sources":[],"mappings":""} x`, "more after", 29},
		{"nested sections", `{"sections":[{"offset":{"line":0,"column":0},"map":{"sections":[]}}]}`, "do not nest", -2},
		{"sections out of order", `{"sections":[{"offset":{"line":2,"column":0},"map":{"sources":[],"mappings":""}},{"offset":{"line":1,"column":0},"map":{"sources":[],"mappings":""}}]}`, "want them in order", -1},
		{"bad escape", `{"sources":["\x"],"mappings":""}`, "bad escape", -2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.data), "bad.map")
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a FormatError", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "bad.map") {
				t.Errorf("got %q, want %q and the file", err, c.want)
			}
			if c.offset != -2 && fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, err)
			}
		})
	}
	m, err := Parse([]byte(`)]}'`+"\n"+`{"version":2,"file":7,"names":{},"sourceRoot":null,"sources":[1,"b.js"],"mappings":"AAAA,KCAA"}`), "w.map")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Warnings) != 5 {
		t.Errorf("warnings %q, want 5", m.Warnings)
	}
	if o, ok := m.Lookup(0, 0); !ok || m.Sources[o.Source].URL != "" {
		t.Errorf("a source that is not a string: %+v %v, want it mapped with no URL", o, ok)
	}
	if o, ok := m.Lookup(0, 5); !ok || m.Sources[o.Source].URL != "b.js" {
		t.Errorf("lookup 0:5: %+v %v", o, ok)
	}
}

func TestLinkedURL(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{"x()\n//# sourceMappingURL=app.js.map\n", "app.js.map"},
		{"x()\n//# sourceMappingURL=app.js.map", "app.js.map"},
		{"x()\r\n//@ sourceMappingURL=old.map  \r\n\r\n// trailing comment\n  \n", "old.map"},
		{"x()\n//# sourceMappingURL=a.map\n//# sourceMappingURL=b.map\n", "b.map"},
		{"x() //# sourceMappingURL=app.js.map\n", ""},
		{"let a = `\n//# sourceMappingURL=foo.js.map\n// `;\n", ""},
		{"//# sourceMappingURL=a.map\nx()\n", ""},
		{"x()\n//# sourceMappingURL=data:application/json;base64,e30=\n", "data:application/json;base64,e30="},
		{"x()\n//# sourceMappingURL=a b.map\n", ""},
		{"", ""},
	} {
		if got := LinkedURL([]byte(c.script)); got != c.want {
			t.Errorf("LinkedURL(%q) = %q, want %q", c.script, got, c.want)
		}
	}
}

func TestDataURL(t *testing.T) {
	for _, c := range []struct{ u, want string }{
		{"data:application/json;base64,eyJ2ZXJzaW9uIjozfQ==", `{"version":3}`},
		{"data:application/json;charset=utf-8;base64,eyJ2ZXJzaW9uIjozfQ", `{"version":3}`},
		{"data:application/json,%7B%22version%22%3A3%7D", `{"version":3}`},
		{"DATA:,x", "x"},
	} {
		got, err := DataURL(c.u)
		if err != nil || string(got) != c.want {
			t.Errorf("DataURL(%q) = %q, %v; want %q", c.u, got, err, c.want)
		}
	}
	for _, u := range []string{"http://x/a.map", "data:application/json;base64", "data:;base64,!!!"} {
		if _, err := DataURL(u); err == nil {
			t.Errorf("DataURL(%q): no error", u)
		}
	}
}

// TestInlineBundle reads the map esbuild inlined into a bundle
// (--sourcemap=inline) and finds the class it renamed.
func TestInlineBundle(t *testing.T) {
	script, err := os.ReadFile("testdata/esbuild/inline.js")
	if err != nil {
		t.Fatal(err)
	}
	u := LinkedURL(script)
	if !IsDataURL(u) {
		t.Fatalf("linked URL %.40q, want a data: URL", u)
	}
	data, err := DataURL(u)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(data, "testdata/esbuild/inline.js")
	if err != nil {
		t.Fatal(err)
	}
	// The bundle starts "var n=class{": n is LedgerRow.
	o, ok := m.Lookup(0, strings.Index(string(script), "=class{")-1)
	if !ok || o.Name != "LedgerRow" || !strings.HasSuffix(m.Sources[o.Source].URL, "ledger.js") || o.Line != 2 {
		t.Errorf("the first class: %+v %v (%s)", o, ok, m.Sources[o.Source].URL)
	}
}

// TestMappings lists what is around a position of esbuild's bundle: the
// renamed class before "=class{", as the names of definitions are found.
func TestMappings(t *testing.T) {
	m, err := ParseFile("testdata/esbuild/bundle.js.map")
	if err != nil {
		t.Fatal(err)
	}
	// "(()=>{var n=class{constructor(t,o,s){": n at 10, class at 12,
	// constructor at 18, its '(' at 29.
	got := m.Mappings(0, 5, 29)
	var cols []int
	named := ""
	for _, mp := range got {
		cols = append(cols, mp.Column)
		if mp.Column == 10 {
			named = mp.Original.Name
		}
	}
	if !slices.Equal(cols, []int{6, 10, 12, 17, 18}) || named != "LedgerRow" {
		t.Errorf("mappings at 0:5-29: columns %v, name at 10 %q", cols, named)
	}
	if all := m.Mappings(0, 0, 1<<20); len(all) < 100 {
		t.Errorf("the whole line has %d mappings", len(all))
	}
	if none := m.Mappings(3, 0, 100); none != nil {
		t.Errorf("a line past the end has %v", none)
	}
}
