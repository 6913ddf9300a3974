package sourcemap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// oracle decodes a plain map's mappings the slow, obvious way (every
// segment into a slice) and looks positions up by a linear search: what
// the checkpoint index must agree with.
type oracle struct{ segs []segment }

func newOracle(t testing.TB, text string) oracle {
	var o oracle
	var s segment
	for l, line := range strings.Split(text, ";") {
		s.line, s.col = uint32(l), 0
		for _, seg := range strings.Split(line, ",") {
			if seg == "" {
				continue
			}
			var v []int32
			for i := 0; i < len(seg); {
				x, next, err := vlq([]byte(seg), i)
				if err != nil {
					t.Fatalf("oracle: %v", err)
				}
				v, i = append(v, x), next
			}
			s.col = uint32(int32(s.col) + v[0])
			s.fields = uint8(len(v))
			if len(v) >= 4 {
				s.src, s.oline, s.ocol = s.src+v[1], s.oline+v[2], s.ocol+v[3]
			}
			if len(v) == 5 {
				s.name += v[4]
			}
			o.segs = append(o.segs, s)
		}
	}
	return o
}

// lookup is the last segment at or before (line, col) on line.
func (o oracle) lookup(line, col uint32) (segment, bool) {
	var best segment
	found := false
	for _, s := range o.segs {
		if s.line == line && s.col <= col && (!found || s.col >= best.col) {
			best, found = s, true
		}
	}
	return best, found
}

// randomMappings writes a mappings text of lines lines holding segs
// segments in all, sorted or not, with empty lines, unmapped and named
// segments, and runs of segments at one position.
func randomMappings(r *rand.Rand, lines, segs int, sorted bool) string {
	var b strings.Builder
	var prev [5]int32
	per := max(1, segs/max(1, lines))
	for l := range lines {
		if l > 0 {
			b.WriteByte(';')
		}
		prev[0] = 0
		if r.IntN(10) == 0 {
			continue // an empty line
		}
		n := r.IntN(2*per + 1)
		col := int32(0)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			if sorted {
				if r.IntN(8) != 0 {
					col += int32(r.IntN(12))
				}
			} else {
				col = int32(r.IntN(200))
			}
			v := []int32{col - prev[0]}
			prev[0] = col
			switch k := r.IntN(10); {
			case k == 0: // unmapped
			default:
				for f := 1; f <= 3; f++ {
					next := max(0, prev[f]+int32(r.IntN(21)-10))
					v = append(v, next-prev[f])
					prev[f] = next
				}
				if k < 4 {
					next := max(0, prev[4]+int32(r.IntN(9)-4))
					v = append(v, next-prev[4])
					prev[4] = next
				}
			}
			for _, x := range v {
				b.WriteString(encodeVLQ(x))
			}
		}
	}
	return b.String()
}

// encodeVLQ is base64 VLQ of x, for the tests' maps.
func encodeVLQ(x int32) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	v := uint64(x) << 1
	if x < 0 {
		v = uint64(-int64(x))<<1 | 1
	}
	var out []byte
	for {
		d := v & 31
		v >>= 5
		if v != 0 {
			d |= 32
		}
		out = append(out, alphabet[d])
		if v == 0 {
			return string(out)
		}
	}
}

// TestIndexAgainstOracle checks the checkpoint index against a full
// decode on maps large enough to have many checkpoints: one long line
// (a minified bundle), many short lines, unsorted lines.
func TestIndexAgainstOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		lines, segs int
		sorted      bool
	}{{1, 5000, true}, {300, 6000, true}, {40, 3000, false}, {2000, 200, true}} {
		t.Run(fmt.Sprintf("%d lines %d segments sorted %v", c.lines, c.segs, c.sorted), func(t *testing.T) {
			text := randomMappings(r, c.lines, c.segs, c.sorted)
			x, err := newIndex([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if x.dense == c.sorted {
				t.Errorf("dense %v for a map sorted %v", x.dense, c.sorted)
			}
			o := newOracle(t, text)
			maxCol := uint32(0)
			for _, s := range o.segs {
				maxCol = max(maxCol, s.col)
			}
			for q := 0; q < 20000; q++ {
				line, col := uint32(r.IntN(c.lines+1)), uint32(r.IntN(int(maxCol)+3))
				got, gok := x.lookup(line, col)
				want, wok := o.lookup(line, col)
				if gok != wok || gok && got != want {
					t.Fatalf("%d:%d: got %+v %v, want %+v %v", line, col, got, gok, want, wok)
				}
			}
		})
	}
}

// bigMap is a map of about size bytes in the shape of a large minified
// bundle's: one generated line per module, thousands of segments each,
// many sources and names, and the sources' contents (a third of the
// file, as in real bundles).
func bigMap(size int) []byte {
	r := rand.New(rand.NewPCG(3, 4))
	mappings := randomMappings(r, 40, size/8, true)
	var b bytes.Buffer
	b.WriteString(`{"version":3,"file":"big.js","sources":[`)
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"src/module%d.ts"`, i)
	}
	b.WriteString(`],"names":[`)
	for i := range 5000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"name%d"`, i)
	}
	b.WriteString(`],"sourcesContent":[`)
	line := strings.Repeat(`export function f() { return \"x\"; }\n`, (size/3)/200/40+1)
	for i := range 200 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + line + `"`)
	}
	b.WriteString(`],"mappings":"` + mappings + `"}`)
	return b.Bytes()
}

// BenchmarkParse parses a 10 MB map: checking every segment and building
// the index. Reported: bytes of index (and of everything Parse allocates)
// per byte of map. For comparison, on this machine json.Unmarshal of the
// same map into a struct of strings alone takes about 3x as long
// (BenchmarkUnmarshalOnly).
func BenchmarkParse(b *testing.B) {
	data := bigMap(10 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var m *Map
	for b.Loop() {
		var err error
		if m, err = Parse(data, "big.js.map"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(m.sections[0].x.size())/float64(len(data)), "index/map-bytes")
}

// BenchmarkUnmarshalOnly is what encoding/json takes to read the same
// map into its fields, before any mapping is decoded.
func BenchmarkUnmarshalOnly(b *testing.B) {
	data := bigMap(10 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var v struct {
			Sources, Names, SourcesContent []string
			Mappings                       string
		}
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup looks up random positions of the 10 MB map.
func BenchmarkLookup(b *testing.B) {
	data := bigMap(10 << 20)
	m, err := Parse(data, "big.js.map")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	b.ResetTimer()
	for b.Loop() {
		m.Lookup(r.IntN(40), r.IntN(200000))
	}
}

// TestBigMapMemory checks the bound the package promises: on a 10 MB map
// the index is a small fraction of the map, and Parse allocates little
// beyond it.
func TestBigMapMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a 10 MB map")
	}
	data := bigMap(10 << 20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := Parse(data, "big.js.map")
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	idx := m.sections[0].x.size()
	t.Logf("map %d bytes, index %d bytes (%.1f%%), Parse allocated %d bytes", len(data), idx, 100*float64(idx)/float64(len(data)), alloc)
	if idx > len(data)/5 {
		t.Errorf("index %d bytes for a %d-byte map: want at most a fifth", idx, len(data))
	}
	if alloc > uint64(len(data))/2 {
		t.Errorf("Parse allocated %d bytes for a %d-byte map: want at most half", alloc, len(data))
	}
}

// FuzzParse parses anything, starting from real maps (esbuild, rollup,
// terser, crafted edge cases): no panic; a map that parses is JSON; and
// its lookups agree with the oracle on a plain map.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/*.map")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"sources":["a"],"mappings":"AAAA;;CAAC,EAAE,A;gBAAgB"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data, "fuzz.map")
		if err != nil {
			return
		}
		if !json.Valid(bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))) && !bytes.HasPrefix(data, []byte(")]}'")) {
			t.Fatalf("Parse accepted what is not JSON: %q", data)
		}
		for line := range 4 {
			for col := range 40 {
				if o, ok := m.Lookup(line, col); ok {
					if o.Source < 0 || o.Source >= len(m.Sources) || o.Line < 0 || o.Column < 0 {
						t.Fatalf("%d:%d: %+v out of range", line, col, o)
					}
				}
			}
		}
		if len(m.sections) == 1 && !m.sections[0].x.dense {
			o := newOracle(t, string(m.sections[0].x.text))
			for line := range uint32(4) {
				for col := range uint32(40) {
					got, gok := m.sections[0].x.lookup(line, col)
					want, wok := o.lookup(line, col)
					if gok != wok || gok && got != want {
						t.Fatalf("%d:%d: got %+v %v, oracle %+v %v", line, col, got, gok, want, wok)
					}
				}
			}
		}
		for i := range m.Sources {
			m.Content(i)
		}
	})
}
