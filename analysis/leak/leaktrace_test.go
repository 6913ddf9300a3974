package leak

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestTraceSimilarityMatchesMemlab compares traceSimilarity with memlab's
// own ClusterUtils.isSimilarTrace on 2,000 pseudo-random trace pairs
// around its threshold (testdata/memlab-similarity.json.gz, made by
// testdata/gen/memlab-similarity.cjs).
func TestTraceSimilarityMatchesMemlab(t *testing.T) {
	f, err := os.Open("testdata/memlab-similarity.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var pairs []struct {
		T1, T2  []string
		Similar bool
	}
	if err := json.NewDecoder(zr).Decode(&pairs); err != nil {
		t.Fatal(err)
	}
	types := map[string]uint8{}
	conv := func(tr []string) []traceElem {
		var out []traceElem
		for _, s := range tr {
			f := strings.SplitN(s, "|", 3)
			typ, ok := types[f[1]]
			if !ok {
				typ = uint8(len(types))
				types[f[1]] = typ
			}
			e := traceElem{edge: f[0] == "e", typ: typ, name: f[2]}
			if e.edge {
				if strings.HasPrefix(e.name, "=") || representsNumber(e.name) {
					e.numeric, e.name = true, "" // a JS number, or a name memlab reads as one
				}
			}
			out = append(out, e)
		}
		return out
	}
	if len(pairs) != 2000 {
		t.Fatalf("%d pairs", len(pairs))
	}
	similar, wrong := 0, 0
	for i, p := range pairs {
		got := traceSimilarity(conv(p.T1), conv(p.T2)) >= similarTraceThreshold
		if got != p.Similar {
			wrong++
			if wrong <= 5 {
				t.Errorf("pair %d: similar %v, memlab %v\n%q\n%q", i, got, p.Similar, p.T1, p.T2)
			}
		}
		if p.Similar {
			similar++
		}
	}
	if wrong > 0 {
		t.Errorf("%d of %d pairs differ from memlab", wrong, len(pairs))
	}
	if similar < 500 || similar > 1500 {
		t.Errorf("%d similar pairs: the golden does not straddle the threshold", similar)
	}
}

// TestTraceShapesFoldRepeats checks the folding of repeated blocks on
// a trie built by hand: a list's hops, a period-2 chain, and a block that
// only looks like a repeat.
func TestTraceShapesFoldRepeats(t *testing.T) {
	s := &traceShapes{child: map[trieKey]int32{}}
	s.parent, s.step, s.depth = []int32{-1}, []traceStep{{}}, []int32{0}
	st := func(e, n uint32) traceStep { return traceStep{edgeName: e, nodeName: n} }
	a, b, c := st(1, 1), st(2, 2), st(3, 3)
	walk := func(steps ...traceStep) int32 {
		p := int32(0)
		for _, x := range steps {
			p = s.extend(p, x)
		}
		return p
	}
	if x, y := walk(a, b), walk(a, b, b, b, b); x != y {
		t.Errorf("a b b b b: shape %d, want a b's %d", y, x)
	}
	if x, y := walk(a, b, c), walk(a, b, c, b, c, b, c); x != y {
		t.Errorf("a (b c)^3: shape %d, want a b c's %d", y, x)
	}
	if x, y := walk(c, a, b, c), walk(c, a, b, c, a, b, c, a, b, c); x != y {
		t.Errorf("c (a b c)^3: shape %d, want c a b c's %d", y, x)
	}
	if x, y := walk(a, b, c), walk(a, b, c, a); x == y || s.depth[y] != 4 {
		t.Errorf("a b c a folded to %d (depth %d)", y, s.depth[y])
	}
}

// TestSameHolders checks which similar traces are one leak, on traces
// written as in a path table: nodes and edges alternate from the root,
// ".name" a property, "[]" an element (any index).
func TestSameHolders(t *testing.T) {
	tr := func(s string) []traceElem {
		var out []traceElem
		for i, f := range strings.Fields(s) {
			switch {
			case i%2 == 0:
				out = append(out, traceElem{name: f})
			case f == "[]":
				out = append(out, traceElem{edge: true, typ: 1, numeric: true})
			default:
				out = append(out, traceElem{edge: true, typ: 2, name: f})
			}
		}
		return out
	}
	const exports = "root .2 global .process process .mainModule Module .exports Object"
	for _, c := range []struct {
		a, b string
		same bool
	}{
		// Keys of one cache object; a CartItem of a session that is not
		// leaked, in the same cache.
		{".byToken Object .tok_1 Session", ".byToken Object .tok_2 Session", true},
		{".byToken Object .tok_1 Session", ".byToken Object .tok_2 Session .cart Array [] CartItem", true},
		// The values of one cache object or one Map, of two classes.
		{".byToken Object .tok_1 Session", ".byToken Object .tok_2 Guest", true},
		{".m Map .table Array [] Foo", ".m Map .table Array [] Bar", true},
		// The next and the previous hops of a list.
		{".list List ._idleNext Timeout", ".list List ._idlePrev Timeout", true},
		// Structures side by side: an array of arrays and an object; two
		// arrays of different classes; an array and an array of arrays.
		{".buckets Array [] Array [] Bucketed", ".byNum Object .100 Numbered", false},
		{".listA Array [] Foo", ".listB Array [] Bar", false},
		{".buckets Array [] Array [] Bucketed", ".others Array [] Other", false},
		// Another kind of reference to another object.
		{".bus Emitter ._events Object .evt0 Array", ".bus Emitter ._events Object [] Array", false},
	} {
		a, b := tr(exports+" "+c.a), tr(exports+" "+c.b)
		if got := sameHolders(a, b); got != c.same || sameHolders(b, a) != got {
			t.Errorf("%s | %s: %v, want %v", c.a, c.b, got, c.same)
		}
		// All are similar by memlab's measure: the shared way to the
		// module's exports weighs most.
		if traceSimilarity(a, b) < similarTraceThreshold {
			t.Errorf("%s | %s: similarity %.2f", c.a, c.b, traceSimilarity(a, b))
		}
	}
}

// A cluster of Blink's own objects (Chromium 156 keeps a layout or
// hit-test cache entry from a click, in some runs) is the browser's, as
// its timing entries are; one with a page's object among them is not.
func TestOnlyBookkeeping(t *testing.T) {
	for _, c := range []struct {
		classes []string
		want    bool
	}{
		{[]string{"blink::LayoutResult"}, true},
		{[]string{"Detached blink::HitTestData", "InternalNode"}, true},
		{[]string{"InteractionContentfulPaint"}, true},
		{[]string{"PerformanceEventTiming", "cppgc::internal::BasicMember"}, true},
		{[]string{"Dialog", "blink::TextRecord", "PerformanceEventTiming"}, false},
		{[]string{"Detached <div>", "blink::LayoutResult"}, false},
	} {
		var lc []LeakClass
		for _, n := range c.classes {
			lc = append(lc, LeakClass{Name: n})
		}
		if got := onlyBookkeeping(lc); got != c.want {
			t.Errorf("onlyBookkeeping(%q) = %v, want %v", c.classes, got, c.want)
		}
	}
}
