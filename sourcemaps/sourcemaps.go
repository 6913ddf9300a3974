// Package sourcemaps finds the source maps of a program's scripts and
// maps what heapx prints through them: a minified bundle's positions
// (bundle.js:1:7324) become the sources' (src/ledger.js:23:18), and the
// minifier's names of functions and classes (t) the program's
// (LedgerRow).
//
// A script's map is found, in order: in the maps heapx capture saved
// beside the dump (formats/sourcemap.SavedPath: a page's maps, fetched
// while the page was there); from the source map URL the scripts side
// file records for it (a data: URL, or a file); and, for a script that is
// a file on disk, from its trailing //# sourceMappingURL comment, then
// from NAME.map beside it. A map that cannot be read or does not parse is
// a warning, and the script's positions are printed as they are.
//
// A Set is an analysis.PositionMapper: set on a dump's Resolver, it maps
// every position the views print. Rename gives the nodes of a V8 graph
// the names the map has for the functions and classes they are, before
// the analysis groups them into classes, so every view shows those.
package sourcemaps

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/sourcemap"
	"github.com/heapx/heapx/model"
)

// Set is the source maps of one program's scripts, each found and read
// on first use. Safe for concurrent use.
type Set struct {
	warn    func(string)
	scripts map[uint32]model.Script // by V8 id, from the scripts side file
	saved   map[string]*sourcemap.Saved

	mu     sync.Mutex
	loaded map[string]*script // by script name
}

// script is one script's map and text, as found.
type script struct {
	m    *sourcemap.Map // nil: the script has none
	text []byte         // the generated code, nil when not at hand
	// lines are the byte offsets where text's lines start, made on
	// first use; ascii says which lines are ASCII only (a column is
	// then a byte offset).
	lines []int
	ascii []bool
}

// ForDump returns the source maps of the scripts of the dump at path: res
// names its scripts (the scripts side file, the snapshot's Script
// objects), and the maps capture saved beside it are read. warn is told
// what could not be read (nil: nobody).
func ForDump(path string, res *analysis.Resolver, warn func(string)) *Set {
	s := New(warn)
	if res != nil {
		for _, sc := range res.Scripts() {
			s.scripts[sc.ID] = sc
		}
	}
	saved, err := sourcemap.ReadSaved(path, func(id uint32, u string) bool { return true })
	if err != nil {
		s.warnf("source maps saved beside the dump not read: %v", err)
	}
	for i := range saved {
		sv := &saved[i]
		s.saved[sv.URL] = sv
		if _, ok := s.scripts[sv.ScriptID]; !ok {
			s.scripts[sv.ScriptID] = model.Script{ID: sv.ScriptID, URL: sv.URL}
		}
	}
	return s
}

// New returns a Set of the maps of scripts named by file path or URL
// alone (a memory trace's positions).
func New(warn func(string)) *Set {
	if warn == nil {
		warn = func(string) {}
	}
	return &Set{warn: warn, scripts: map[uint32]model.Script{}, saved: map[string]*sourcemap.Saved{}, loaded: map[string]*script{}}
}

func (s *Set) warnf(format string, args ...any) { s.warn(fmt.Sprintf(format, args...)) }

// scriptFor returns what is known of the script p is in, loaded on first
// use; nil when it has no map.
func (s *Set) scriptFor(p analysis.Position) *script {
	name := p.Script
	if sc, ok := s.scripts[p.ScriptID]; ok && p.ScriptID != 0 && sc.URL != "" {
		name = sc.URL
	}
	if name == "" || analysis.IsRuntimeScript(name) || strings.HasPrefix(name, "script ") {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.loaded[name]
	if !ok {
		sc = s.load(name, s.scripts[p.ScriptID])
		s.loaded[name] = sc
	}
	if sc.m == nil {
		return nil
	}
	return sc
}

// load finds and reads the map of the script called name (info is what
// the scripts side file says of it, when it does).
func (s *Set) load(name string, info model.Script) *script {
	sc := &script{}
	if sv, ok := s.saved[name]; ok {
		if sv.Source != "" {
			sc.text = []byte(sv.Source)
		}
		switch {
		case len(sv.Map) > 0:
			sc.m = s.parse(sv.Map, orName(sv.MapURL, name), name)
			return sc
		case sv.Error != "":
			s.warnf("%s: its source map %s was not saved: %s", name, sv.MapURL, sv.Error)
			return sc
		}
	}
	file := filePath(name)
	if file != "" && sc.text == nil {
		if b, err := os.ReadFile(file); err == nil {
			sc.text = b
		}
	}
	mapURL := info.SourceMapURL
	if mapURL == "" && sc.text != nil {
		mapURL = sourcemap.LinkedURL(sc.text)
	}
	switch {
	case sourcemap.IsDataURL(mapURL):
		data, err := sourcemap.DataURL(mapURL)
		if err != nil {
			s.warnf("%s: its inline source map: %v", name, err)
			return sc
		}
		sc.m = s.parse(data, name, name)
	case mapURL != "":
		at := resolveRef(name, mapURL)
		f := filePath(at)
		if f == "" {
			s.warnf("%s: its source map %s is not a file and was not saved beside the dump (heapx capture saves a page's maps)", name, at)
			return sc
		}
		data, err := os.ReadFile(f)
		if err != nil {
			s.warnf("%s: its source map: %v", name, err)
			return sc
		}
		sc.m = s.parse(data, f, name)
	case file != "":
		// No comment names a map: the convention is NAME.map beside it.
		if data, err := os.ReadFile(file + ".map"); err == nil {
			sc.m = s.parse(data, file+".map", name)
		}
	}
	return sc
}

// parse reads a map, or warns that it could not and returns nil.
func (s *Set) parse(data []byte, base, script string) *sourcemap.Map {
	m, err := sourcemap.Parse(data, base)
	if err != nil {
		s.warnf("%s: its source map does not parse, positions in it are shown unmapped: %v", script, err)
		return nil
	}
	for _, w := range m.Warnings {
		s.warnf("%s: its source map: %s", base, w)
	}
	return m
}

func orName(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// filePath returns the file a script name or URL is on this machine (a
// path, or a file: URL), "" for another URL.
func filePath(name string) string {
	if strings.HasPrefix(name, "file:") {
		u, err := url.Parse(name)
		if err != nil {
			return ""
		}
		return filepath.FromSlash(u.Path)
	}
	if u, err := url.Parse(name); err == nil && len(u.Scheme) > 1 {
		return ""
	}
	return name
}

// resolveRef resolves a script's source map URL against the script's own
// name: a URL against a URL, a path against a path.
func resolveRef(script, ref string) string {
	if u, err := url.Parse(ref); err == nil && len(u.Scheme) > 1 {
		return ref
	}
	if b, err := url.Parse(script); err == nil && len(b.Scheme) > 1 {
		if r, err := url.Parse(ref); err == nil {
			return b.ResolveReference(r).String()
		}
		return ref
	}
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(filepath.Dir(script), filepath.FromSlash(ref))
}

// MapPosition maps p through its script's map: the original source
// (its path or URL), line and column, one-based. ok is false when the
// script has no map or the map places nothing at p.
func (s *Set) MapPosition(p analysis.Position) (analysis.Position, bool) {
	if p.Line <= 0 {
		return p, false
	}
	sc := s.scriptFor(p)
	if sc == nil {
		return p, false
	}
	o, ok := sc.m.Lookup(int(p.Line)-1, int(max(p.Column, 1))-1)
	if !ok || sc.m.Sources[o.Source].URL == "" {
		return p, false
	}
	return analysis.Position{Script: displayName(sc.m.Sources[o.Source].URL), Line: int32(o.Line) + 1, Column: int32(o.Column) + 1}, true
}

// displayName is how an original source is named: a file: URL as its
// path.
func displayName(u string) string {
	if strings.HasPrefix(u, "file:") {
		if f := filePath(u); f != "" {
			return f
		}
	}
	return u
}

// lookBack bounds how far before a function's position its name is
// looked for: "function name(", "name=class{constructor(" and
// "name=async(a,b)=>" put it a few tokens before.
const lookBack = 256

// MapName returns the original name of the function (or class) called
// name in the generated code whose definition V8 places at p (a
// function's parameters, a class's constructor), from the map's names.
// The name is the map's name of the mapping at name's own identifier:
// with the script's text, the nearest mapping before p whose code is
// name (the name always precedes the position: "function name(",
// "name=class{constructor(", "name=x=>"); without it, the mapping just before p when it is named and fits
// name's length (function name(, name=(a)=>). ok is false when the map
// has no name there, or the function is anonymous.
func (s *Set) MapName(p analysis.Position, name string) (string, bool) {
	if name == "" || p.Line <= 0 || !isIdentifier(name) {
		return "", false
	}
	sc := s.scriptFor(p)
	if sc == nil {
		return "", false
	}
	line, col := int(p.Line)-1, int(max(p.Column, 1))-1
	ms := sc.m.Mappings(line, col-lookBack, col)
	if sc.text != nil {
		for i := len(ms) - 1; i >= 0; i-- {
			// The name comes before the definition's position (an
			// arrow's single parameter is at it, and may be minified
			// to the same letter).
			if ms[i].Column < col && sc.identifierAt(line, ms[i].Column) == name {
				o := ms[i].Original
				return o.Name, ms[i].Mapped && o.Name != "" && o.Name != name
			}
		}
		return "", false
	}
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.Column >= col {
			continue
		}
		ok := m.Mapped && m.Original.Name != "" && m.Column+utf16Len(name) <= col && m.Original.Name != name
		return m.Original.Name, ok
	}
	return "", false
}

// identifierAt returns the identifier that starts at generated line and
// column (UTF-16) of the script's text, "" when none does.
func (sc *script) identifierAt(line, col int) string {
	if sc.lines == nil {
		sc.lines = append(sc.lines, 0)
		for i, c := range sc.text {
			if c == '\n' {
				sc.lines = append(sc.lines, i+1)
			}
		}
		sc.ascii = make([]bool, len(sc.lines))
		for l := range sc.lines {
			sc.ascii[l] = isASCII(sc.lineText(l))
		}
	}
	if line >= len(sc.lines) {
		return ""
	}
	text := sc.lineText(line)
	at := col
	if !sc.ascii[line] {
		at = byteOffset(text, col)
	}
	if at < 0 || at >= len(text) {
		return ""
	}
	if at > 0 {
		if r, _ := utf8.DecodeLastRune(text[:at]); isIdentRune(r) {
			return "" // inside an identifier
		}
	}
	end := at
	for end < len(text) {
		r, size := utf8.DecodeRune(text[end:])
		if !isIdentRune(r) {
			break
		}
		end += size
	}
	return string(text[at:end])
}

// lineText is line l of the script's text, without its line break.
func (sc *script) lineText(l int) []byte {
	end := len(sc.text)
	if l+1 < len(sc.lines) {
		end = sc.lines[l+1] - 1
	}
	return bytes.TrimSuffix(sc.text[sc.lines[l]:end], []byte("\r"))
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// byteOffset converts a UTF-16 column of a line to a byte offset, -1
// past its end.
func byteOffset(text []byte, col int) int {
	units := 0
	for i := 0; i < len(text); {
		if units >= col {
			return i
		}
		r, size := utf8.DecodeRune(text[i:])
		units += utf16Len(string(r))
		i += size
	}
	return -1
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

func isIdentRune(r rune) bool {
	return r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x80 && r != utf8.RuneError
}

// isIdentifier reports whether name can be a minified function's name.
func isIdentifier(name string) bool {
	for i, r := range name {
		if !isIdentRune(r) || i == 0 && r >= '0' && r <= '9' {
			return false
		}
	}
	return name != ""
}
