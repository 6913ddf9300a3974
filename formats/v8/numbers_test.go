package v8

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"
)

// TestParseBlockNumbers checks the 8-digits-at-a-time fast path against
// strconv on numbers of every length, with the separators V8 writes.
func TestParseBlockNumbers(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var want []int64
	var sb strings.Builder
	seps := []string{",", ",\n", "\n,", ", ", ","}
	for i := 0; i < 5000; i++ {
		digits := 1 + rng.Intn(18)
		v := rng.Int63n(1 << 62)
		s := strconv.FormatInt(v, 10)
		if len(s) > digits {
			s = s[:digits]
		}
		if rng.Intn(10) == 0 {
			s = "-" + s
		}
		n, _ := strconv.ParseInt(s, 10, 64)
		want = append(want, n)
		if i > 0 {
			sb.WriteString(seps[rng.Intn(len(seps))])
		}
		sb.WriteString(s)
	}
	blk := []byte(sb.String())
	ts := &tableSink{limit: 1 << 30}
	j := job{blk: blk, count: uint64(len(want)), last: true, sink: ts}
	if err := parseBlock(j, make([]int64, 0, 64)); err != nil {
		t.Fatal(err)
	}
	if len(ts.vals) != len(want) {
		t.Fatalf("parsed %d numbers, want %d", len(ts.vals), len(want))
	}
	for i := range want {
		if ts.vals[i] != want[i] {
			t.Fatalf("number %d: got %d want %d", i, ts.vals[i], want[i])
		}
	}
}
