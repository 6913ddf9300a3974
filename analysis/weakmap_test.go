package analysis

import (
	"math/rand"
	"regexp"
	"strings"
	"testing"

	"github.com/heapx/heapx/model"
)

// devtoolsWeakMapRE is DevTools' ephemeronNameRegex as written in
// HeapSnapshot.ts (JavaScript's "." spelled out for Go).
var devtoolsWeakMapRE = regexp.MustCompile(`^\d+( / part of key \([^\n\r\x{2028}\x{2029}]*? @\d+\) -> value \([^\n\r\x{2028}\x{2029}]*? @\d+\) pair in WeakMap \(table @(\d+)\))$`)

func checkWeakMapName(t *testing.T, s string) {
	t.Helper()
	dup, table, ok := parseWeakMapEdgeName(s)
	m := devtoolsWeakMapRE.FindStringSubmatch(s)
	if ok != (m != nil) {
		t.Fatalf("%q: parsed %v, regexp %v", s, ok, m != nil)
	}
	if ok && (dup != m[1] || table != m[2]) {
		t.Fatalf("%q: parsed %q %q, regexp %q %q", s, dup, table, m[1], m[2])
	}
}

func TestParseWeakMapEdgeName(t *testing.T) {
	for _, s := range []string{
		"5 / part of key (Customer @123) -> value (CustomerNote @456) pair in WeakMap (table @789)",
		"5 / part of key (Customer @123) -> value (system / Oddball @4) pair in WeakMap (table @7)",
		"12 / part of key (a @1) -> value (b @2) -> value (c @3) pair in WeakMap (table @4)",
		"1 / part of key ( @1) -> value ( @2) pair in WeakMap (table @3)",
		"1 / part of key (x @) -> value (y @2) pair in WeakMap (table @3)",
		"1 / part of key (x @1) -> value (y @2) pair in WeakMap (table @)",
		"1 / part of key (x @1) -> value (y @2) pair in WeakMap (table @3))",
		"1 / part of key (x\n @1) -> value (y @2) pair in WeakMap (table @3)",
		"1 / part of key (x\r @1) -> value (y @2) pair in WeakMap (table @3)",
		"1 / part of key (x\u2028 @1) -> value (y @2) pair in WeakMap (table @3)",
		"1 / part of key (x @1) -> value (y\u2029 @2) pair in WeakMap (table @3)",
		"1 / part of key (x\u2027\u202a @1) -> value (y\u20ac @2) pair in WeakMap (table @3)",
		"1 / part of key (x\xe2\x80 @1) -> value (y @2) pair in WeakMap (table @3)",
		" / part of key (x @1) -> value (y @2) pair in WeakMap (table @3)",
		"1 / part of key (x @1) -> value (y@2) pair in WeakMap (table @3)",
		"1 / part of key (x @1)-> value (y @2) pair in WeakMap (table @3)",
		"part of key -> value pair in ephemeron table",
		"", "1", "1 / part of key (", "elements",
	} {
		checkWeakMapName(t, s)
	}
	// Random mutations of a valid name.
	rng := rand.New(rand.NewSource(1))
	base := []byte("17 / part of key (K @11) -> value (V @13) pair in WeakMap (table @9)")
	alphabet := []byte("0123456789 @()->/kvWx\n")
	for i := 0; i < 200000; i++ {
		b := append([]byte(nil), base...)
		for k := rng.Intn(3); k >= 0; k-- {
			p := rng.Intn(len(b))
			switch rng.Intn(3) {
			case 0:
				b[p] = alphabet[rng.Intn(len(alphabet))]
			case 1:
				b = append(b[:p], b[p+1:]...)
			default:
				b = append(b[:p], append([]byte{alphabet[rng.Intn(len(alphabet))]}, b[p:]...)...)
			}
		}
		checkWeakMapName(t, string(b))
	}
}

// FuzzParseWeakMapEdgeName checks the hand-written parser against
// DevTools' regular expression.
func FuzzParseWeakMapEdgeName(f *testing.F) {
	f.Add("5 / part of key (Customer @123) -> value (CustomerNote @456) pair in WeakMap (table @789)")
	f.Add("12 / part of key (a @1) -> value (b @2) -> value (c @3) pair in WeakMap (table @4)")
	f.Add("elements")
	f.Fuzz(func(t *testing.T, s string) {
		checkWeakMapName(t, s)
	})
}

// TestWeakMapNamesMatch checks the cached shared parts, including one
// after an index too long for the cache's byte.
func TestWeakMapNamesMatch(t *testing.T) {
	tail := " / part of key (K @1) -> value (V @2) pair in WeakMap (table @3)"
	g := &model.Graph{}
	names := []string{"7" + tail, strings.Repeat("9", 300) + tail, "elements"}
	for _, n := range names {
		g.Strings.AddString(n)
	}
	w := newWeakMapNames(g)
	for round := range 2 { // parsed, then cached
		for i, n := range names {
			d, ok := w.match(model.StringID(i))
			want, wantOK := tail, i < 2
			if !wantOK {
				want = ""
			}
			if d != want || ok != wantOK {
				t.Errorf("round %d, %.20q: %q %v", round, n, d, ok)
			}
		}
	}
}
