package sourcemap

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/heapx/heapx/formats"
)

// Map is a parsed source map: a plain map, or an index map whose
// sections are plain maps placed at offsets of the generated code. It
// keeps the input it was parsed from (the mappings are read from it at
// lookup, the sources' contents decoded from it when asked for) and a
// small index over each section's mappings. Safe for concurrent use.
type Map struct {
	// File is the generated file the map says it describes ("" when it
	// does not say).
	File string
	// Sources are the original files of every section, in order.
	Sources []Source
	// Names are the original names of every section, in order.
	Names []string
	// Warnings are what was wrong in the map but did not stop it from
	// being read (a version other than 3, a field of the wrong type,
	// read as missing, as the format says).
	Warnings []string

	data     []byte
	sections []section
}

// Source is one original file of a map.
type Source struct {
	// URL is where the file is: the map's source with its sourceRoot,
	// resolved against where the map is (a path, or a URL for a map
	// that came from one); "" when the map gives it as null.
	URL string
	// Ignored says the map lists the file as third-party code
	// (ignoreList) that debuggers skip.
	Ignored bool

	content span // in Map.data; start < 0 for none
}

// span is a JSON string's contents in the map's input.
type span struct {
	start, end int
	escaped    bool
}

// section is one plain map of a Map, at its offset in the generated
// code, with its sources and names at base indexes of the Map's.
type section struct {
	line, col            uint32
	sourceBase, nameBase int32
	sources, names       int32
	x                    *index
}

// Original is where a generated position came from.
type Original struct {
	// Source is the index of the original file in Map.Sources.
	Source int
	// Line and Column are zero-based; Column counts UTF-16 code units,
	// as JavaScript and V8's positions do.
	Line, Column int
	// Name is the original name of what is at the position (a function
	// or class a minifier renamed), "" when the map gives none.
	Name string
}

// Parse reads a source map. base is where the map is, a file path or a
// URL ("" when unknown): the sources are resolved against it. Parse
// keeps data, which must not change afterwards. An error is a
// *formats.FormatError naming base, the field and the byte offset.
func Parse(data []byte, base string) (*Map, error) {
	m := &Map{data: data}
	s := &scanner{b: data}
	skipPrefix(s)
	m.data = s.b
	field := "the map"
	if err := m.parse(s, base, &field); err != nil {
		at := int64(-1)
		var e *errAt
		if errors.As(err, &e) {
			at = int64(e.at)
		}
		return nil, &formats.FormatError{File: base, Section: field, Offset: at, Msg: err.Error()}
	}
	if s.peek() != 0 {
		return nil, &formats.FormatError{File: base, Section: "the map", Offset: int64(s.i), Msg: "more after the map's object"}
	}
	return m, nil
}

// ParseFile reads the source map in file.
func ParseFile(file string) (*Map, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(data, file)
}

// skipPrefix steps over what may come before a map's JSON: a byte
// order mark, and the line starting with ")]}'" that servers put before
// a map to stop it being run as a script.
func skipPrefix(s *scanner) {
	s.b, _ = bytes.CutPrefix(s.b, []byte("\xEF\xBB\xBF"))
	if bytes.HasPrefix(s.b, []byte(")]}'")) {
		if nl := bytes.IndexAny(s.b, "\r\n"); nl >= 0 {
			s.i = nl
		} else {
			s.i = len(s.b)
		}
	}
}

// fields is what a plain map's object holds, before its mappings are
// indexed.
type fields struct {
	sourceRoot     string
	hasRoot        bool
	sources        []*string
	contents       []span
	ignore         []int32
	names          []string
	mappings       span
	hasMappings    bool
	hasSources     bool
	sections       bool
	version        int32
	hasVersion     bool
	mappingsOffset int
}

// parse reads the top-level object: a plain map, or an index map.
func (m *Map) parse(s *scanner, base string, field *string) error {
	var f fields
	var sections []sectionAt
	err := s.object(func(key []byte) error {
		*field = string(key)
		switch string(key) {
		case "sections":
			f.sections = true
			return s.array(func(int) error {
				sec, err := m.parseSection(s, base, field)
				if err == nil {
					sections = append(sections, sec)
				}
				return err
			})
		case "file":
			v, ok, err := m.optionalString(s, "file")
			if ok {
				m.File = v
			}
			return err
		}
		return f.field(m, s, key)
	})
	if err != nil {
		return err
	}
	*field = "the map"
	if !f.sections {
		return m.addSection(&f, s, base, 0, 0, field)
	}
	m.checkVersion(&f)
	for i := 1; i < len(sections); i++ {
		a, b := sections[i-1], sections[i]
		if b.line < a.line || b.line == a.line && b.col < a.col {
			return fmt.Errorf("section %d's offset (%d:%d) is before section %d's (%d:%d): want them in order",
				i, b.line, b.col, i-1, a.line, a.col)
		}
	}
	for _, sec := range sections {
		*field = "sections"
		if err := m.addSection(&sec.f, s, base, sec.line, sec.col, field); err != nil {
			return err
		}
	}
	return nil
}

// sectionAt is one section of an index map as read.
type sectionAt struct {
	line, col uint32
	f         fields
}

// parseSection reads one entry of an index map's sections.
func (m *Map) parseSection(s *scanner, base string, field *string) (sectionAt, error) {
	var sec sectionAt
	hasMap, hasOffset := false, false
	err := s.object(func(key []byte) error {
		switch string(key) {
		case "offset":
			hasOffset = true
			return s.object(func(key []byte) error {
				switch string(key) {
				case "line", "column":
					v, ok, err := s.integer()
					if err != nil {
						return err
					}
					if !ok || v < 0 {
						return fmt.Errorf("a section's offset %s is not a non-negative integer", key)
					}
					if key[0] == 'l' {
						sec.line = uint32(v)
					} else {
						sec.col = uint32(v)
					}
					return nil
				}
				return s.skip()
			})
		case "map":
			hasMap = true
			return s.object(func(key []byte) error {
				*field = "sections: " + string(key)
				switch string(key) {
				case "sections":
					return s.fail("a section's map is an index map: sections do not nest")
				case "file":
					return s.skip()
				}
				return sec.f.field(m, s, key)
			})
		case "url":
			return s.fail("a section with a url: only sections with their map inline are read")
		}
		return s.skip()
	})
	if err == nil && !hasOffset {
		err = s.fail("a section without an offset")
	}
	if err == nil && !hasMap {
		err = s.fail("a section without a map")
	}
	return sec, err
}

// field reads one key of a plain map into f, skipping those it does
// not know. A field of the wrong type is a warning and read as missing,
// as the format says; mappings and sources must be there.
func (f *fields) field(m *Map, s *scanner, key []byte) error {
	switch string(key) {
	case "version":
		f.hasVersion = true
		if s.peek() == '"' || s.peek() == '[' || s.peek() == '{' {
			return s.skip()
		}
		v, _, err := s.integer()
		f.version = v
		return err
	case "mappings":
		if s.peek() != '"' {
			return s.unexpected("the mappings as a string")
		}
		f.mappingsOffset = s.i + 1
		start, end, escaped, err := s.span()
		f.mappings, f.hasMappings = span{start, end, escaped}, true
		return err
	case "sourceRoot":
		v, ok, err := m.optionalString(s, "sourceRoot")
		f.sourceRoot, f.hasRoot = v, ok
		return err
	case "sources":
		if s.peek() != '[' {
			return s.unexpected("the sources as an array")
		}
		f.hasSources = true
		return s.array(func(int) error {
			if s.peek() == 'n' {
				f.sources = append(f.sources, nil)
				return s.literal("null")
			}
			if s.peek() != '"' {
				m.warn("a source that is not a string is read as null")
				f.sources = append(f.sources, nil)
				return s.skip()
			}
			v, err := s.str()
			f.sources = append(f.sources, &v)
			return err
		})
	case "sourcesContent":
		if s.peek() != '[' {
			m.warn("sourcesContent is not an array: read as missing")
			return s.skip()
		}
		return s.array(func(int) error {
			if s.peek() != '"' {
				f.contents = append(f.contents, span{start: -1})
				return s.skip()
			}
			start, end, escaped, err := s.span()
			f.contents = append(f.contents, span{start, end, escaped})
			return err
		})
	case "names":
		if s.peek() != '[' {
			m.warn("names is not an array: read as missing")
			return s.skip()
		}
		return s.array(func(int) error {
			if s.peek() != '"' {
				m.warn("a name that is not a string is read as \"\"")
				f.names = append(f.names, "")
				return s.skip()
			}
			v, err := s.str()
			f.names = append(f.names, v)
			return err
		})
	case "ignoreList", "x_google_ignoreList":
		if string(key) == "x_google_ignoreList" && f.ignore != nil || s.peek() != '[' {
			return s.skip()
		}
		f.ignore = []int32{}
		return s.array(func(int) error {
			if s.peek() == '"' || s.peek() == '[' || s.peek() == '{' || s.peek() == 'n' || s.peek() == 't' || s.peek() == 'f' {
				return s.skip()
			}
			v, ok, err := s.integer()
			if ok && v >= 0 {
				f.ignore = append(f.ignore, v)
			}
			return err
		})
	}
	return s.skip()
}

// optionalString reads a string field; another type is a warning and
// read as missing.
func (m *Map) optionalString(s *scanner, key string) (string, bool, error) {
	if s.peek() != '"' {
		m.warn(key + " is not a string: read as missing")
		return "", false, s.skip()
	}
	v, err := s.str()
	return v, err == nil, err
}

func (m *Map) warn(msg string) {
	if !slices.Contains(m.Warnings, msg) {
		m.Warnings = append(m.Warnings, msg)
	}
}

func (m *Map) checkVersion(f *fields) {
	if f.hasVersion && f.version != 3 {
		m.warn(fmt.Sprintf("version %d: read as version 3, the only one there is", f.version))
	}
}

// addSection indexes a plain map's mappings and adds its sources and
// names to m's.
func (m *Map) addSection(f *fields, s *scanner, base string, line, col uint32, field *string) error {
	if !f.hasMappings {
		return errors.New("no mappings")
	}
	if !f.hasSources {
		return errors.New("no sources")
	}
	m.checkVersion(f)
	text := s.b[f.mappings.start:f.mappings.end]
	if f.mappings.escaped {
		text = []byte(unquote(text))
	}
	*field = "mappings"
	x, err := newIndex(text)
	if err != nil {
		var e *errAt
		if errors.As(err, &e) && !f.mappings.escaped {
			e.at += f.mappingsOffset
		}
		return err
	}
	sec := section{line: line, col: col, sourceBase: int32(len(m.Sources)), nameBase: int32(len(m.Names)),
		sources: int32(len(f.sources)), names: int32(len(f.names)), x: x}
	for i, src := range f.sources {
		out := Source{content: span{start: -1}}
		if src != nil {
			out.URL = resolve(base, f.sourceRoot, f.hasRoot, *src)
		}
		if i < len(f.contents) {
			out.content = f.contents[i]
		}
		out.Ignored = slices.Contains(f.ignore, int32(i))
		m.Sources = append(m.Sources, out)
	}
	m.Names = append(m.Names, f.names...)
	m.sections = append(m.sections, sec)
	return nil
}

// resolve places a map's source: the source root before it (with a '/'
// between them), then, unless that is an absolute URL or path, the
// directory of the map's own URL or path before that.
func resolve(base, root string, hasRoot bool, source string) string {
	src := source
	if hasRoot && root != "" {
		if !strings.HasSuffix(root, "/") {
			root += "/"
		}
		src = root + source
	}
	if u, err := url.Parse(src); err == nil && u.Scheme != "" && len(u.Scheme) > 1 {
		return src
	}
	if base == "" || strings.HasPrefix(base, "data:") {
		return src
	}
	if b, err := url.Parse(base); err == nil && b.Scheme != "" && len(b.Scheme) > 1 {
		if r, err := url.Parse(src); err == nil {
			return b.ResolveReference(r).String()
		}
		return src
	}
	if filepath.IsAbs(src) {
		return filepath.Clean(src)
	}
	return filepath.Join(filepath.Dir(base), filepath.FromSlash(src))
}

// Lookup returns where generated line and column (zero-based, the column
// in UTF-16 code units) came from: the mapping at or before it on its
// line, as browsers and Mozilla's source-map library find it. ok is false
// when the map places nothing there: no mapping on the line before the
// column, or one that says the code has no original.
func (m *Map) Lookup(line, column int) (o Original, ok bool) {
	sec, l, c, ok := m.section(line, column)
	if !ok {
		return o, false
	}
	seg, found := sec.x.lookup(l, c)
	if !found {
		return o, false
	}
	return m.original(sec, seg)
}

// Mapping is one mapping of generated code, as Mappings lists them.
type Mapping struct {
	// Column is the generated column, zero-based.
	Column int
	// Original is where the code there came from, when Mapped.
	Original Original
	Mapped   bool
}

// Mappings returns the mappings on generated line (zero-based) at
// columns from to to, inclusive, in order: what is around a position,
// for a caller that looks for the name of what is defined there.
func (m *Map) Mappings(line, from, to int) []Mapping {
	from = max(from, 0)
	if to < from {
		return nil
	}
	sec, l, c, ok := m.section(line, to)
	if !ok {
		return nil
	}
	start := c - min(c, uint32(to-from)) // not before the section's start
	var out []Mapping
	sec.x.between(l, start, c, func(s segment) {
		o, ok := m.original(sec, s)
		col := int(s.col)
		if l == 0 {
			col += int(sec.col)
		}
		out = append(out, Mapping{Column: col, Original: o, Mapped: ok})
	})
	return out
}

// section returns the section that holds generated (line, column) and
// the position within it.
func (m *Map) section(line, column int) (sec *section, l, c uint32, ok bool) {
	if line < 0 || column < 0 || line > 1<<32-1 || column > 1<<32-1 {
		return nil, 0, 0, false
	}
	l, c = uint32(line), uint32(column)
	// The last section that starts at or before the position.
	i := sort.Search(len(m.sections), func(i int) bool {
		s := &m.sections[i]
		return s.line > l || s.line == l && s.col > c
	}) - 1
	if i < 0 {
		return nil, 0, 0, false
	}
	sec = &m.sections[i]
	if l == sec.line {
		c -= sec.col
	}
	return sec, l - sec.line, c, true
}

// original is segment seg of section sec as an Original; ok is false
// for an unmapped segment or one whose source, line or column is out of
// range.
func (m *Map) original(sec *section, seg segment) (o Original, ok bool) {
	if seg.fields < 4 || seg.src < 0 || seg.src >= sec.sources || seg.oline < 0 || seg.ocol < 0 {
		return o, false
	}
	o = Original{Source: int(sec.sourceBase + seg.src), Line: int(seg.oline), Column: int(seg.ocol)}
	if seg.fields == 5 && seg.name >= 0 && seg.name < sec.names {
		o.Name = m.Names[sec.nameBase+seg.name]
	}
	return o, true
}

// Content returns the text of source i as the map holds it
// (sourcesContent); ok is false when it holds none.
func (m *Map) Content(i int) (string, bool) {
	if i < 0 || i >= len(m.Sources) || m.Sources[i].content.start < 0 {
		return "", false
	}
	c := m.Sources[i].content
	if c.escaped {
		return unquote(m.data[c.start:c.end]), true
	}
	return string(m.data[c.start:c.end]), true
}
