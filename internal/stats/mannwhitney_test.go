package stats

import (
	"math"
	"testing"
)

// TestMannWhitneyAgainstR checks U and the p-value against R 4.2.2
// (Debian bookworm's r-base-core, coin 1.4.2). Without ties, and for the
// normal approximation past 30 values, the reference is wilcox.test(x, y)
// (two-sided; exact below 50 values without ties, else the normal
// approximation with tie and continuity corrections); with ties in at
// most 30 values, coin's exact permutation test. The values were printed
// by
//
//	Rscript -e 'w <- suppressWarnings(wilcox.test(x, y)); cat(sprintf("W=%s p=%.17g\n", w$statistic, w$p.value))'
//	Rscript -e 'library(coin); d <- data.frame(v = c(x, y), g = factor(rep(c("x", "y"), c(length(x), length(y)))));
//	  cat(sprintf("p=%.17g\n", pvalue(wilcox_test(v ~ g, data = d, distribution = "exact"))))'
//
// with x and y as below, each marked by which it checks. The first two
// cases can be checked by hand: with x all below y, U = 0 and the exact
// one-sided probability is 1/C(6,3) = 1/20, so p = 0.1; and
// 2/C(16,8) = 2/12870 for eight against eight.
func TestMannWhitneyAgainstR(t *testing.T) {
	cases := []struct {
		name  string
		x, y  []float64
		u, p  float64
		exact bool
	}{
		// wilcox.test, exact.
		{"three below three", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.10000000000000001, true},
		{"three above three", []float64{4, 5, 6}, []float64{1, 2, 3}, 9, 0.10000000000000001, true},
		{"eight above eight", []float64{10, 11, 12, 13, 14, 15, 16, 17}, []float64{1, 2, 3, 4, 5, 6, 7, 8}, 64, 0.0001554001554001554, true},
		{"interleaved", []float64{1.1, 2.2, 3.3, 4.4}, []float64{0.5, 1.7, 2.9, 6.1, 7.3}, 9, 0.90476190476190488, true},
		{"49 against 49", seq(1, 49, 0), seq(50, 98, 0), 0, 7.8500291929632906e-29, true},
		// coin, exact given the ties. R's own example, ?wilcox.test
		// (depression scores, without its paired = TRUE), has ties across
		// the samples (1.29, 1.06); wilcox.test's normal approximation
		// says 0.133.
		{"R's example", []float64{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30},
			[]float64{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29}, 58, 0.12990538872891813, true},
		// A cohort at 700 against one at 100: all ties within a cohort,
		// as likely as eight above eight (wilcox.test: 0.000138).
		{"constant cohorts", []float64{700, 700, 700, 700, 700, 700, 700, 700}, []float64{100, 100, 100, 100, 100, 100, 100, 100},
			64, 0.0001554001554001554, true},
		// One pod (two dumps) of eight differs: far from significant
		// (wilcox.test: 0.170).
		{"one pod", []float64{2000, 2000, 0, 0, 0, 0, 0, 0}, []float64{0, 0, 0, 0, 0, 0, 0, 0}, 40, 0.46666666666666667, true},
		{"ties in both", []float64{3, 1, 4, 1, 5, 9, 2, 6}, []float64{5, 3, 5, 8, 9, 7, 9, 3}, 17, 0.12540792540792542, true},
		// Ties whose mid-ranks are not symmetric about their mean: each
		// tail is counted, so both orders give one p.
		{"uneven ties", []float64{1, 1, 1, 2, 6}, []float64{2, 3, 4, 5, 5, 5, 7}, 6.5, 0.071969696969696961, true},
		{"uneven ties reversed", []float64{2, 3, 4, 5, 5, 5, 7}, []float64{1, 1, 1, 2, 6}, 28.5, 0.071969696969696961, true},
		// wilcox.test, the normal approximation: 50 values or more
		// without ties, more than 30 with ties.
		{"60 against 60", seq(1, 60, 0.5), seq(1, 60, 0), 1830, 0.87695152018682465, false},
		{"33 against 33 tied", repeat([]float64{0, 1, 2}, 11), repeat([]float64{1, 2, 3}, 11), 242, 5.2381141746705782e-05, false},
	}
	for _, c := range cases {
		r := MannWhitney(c.x, c.y)
		if r.U != c.u || r.Exact != c.exact || !near(r.P, c.p) {
			t.Errorf("%s: U %v, p %.17g, exact %v; R says W %v, p %.17g (exact %v)", c.name, r.U, r.P, r.Exact, c.u, c.p, c.exact)
		}
	}
}

// TestMannWhitneyAllEqual: when every value is the same, R's p is NaN
// (no variance); heapx says 1, no evidence of a difference.
func TestMannWhitneyAllEqual(t *testing.T) {
	if r := MannWhitney([]float64{5, 5, 5}, []float64{5, 5, 5}); r.P != 1 || r.U != 4.5 {
		t.Errorf("all equal: %+v, want U 4.5, p 1", r)
	}
	if r := MannWhitney(repeat([]float64{5}, 40), repeat([]float64{5}, 40)); r.P != 1 || r.Exact {
		t.Errorf("40 against 40 all equal: %+v, want p 1 from the approximation", r)
	}
	if r := MannWhitney(nil, []float64{1}); r.P != 1 {
		t.Errorf("an empty sample: %+v, want p 1", r)
	}
}

// seq is from, from+1, ..., to, each plus add.
func seq(from, to int, add float64) []float64 {
	var out []float64
	for v := from; v <= to; v++ {
		out = append(out, float64(v)+add)
	}
	return out
}

// repeat is v, times times over (R's rep(v, times)).
func repeat(v []float64, times int) []float64 {
	var out []float64
	for range times {
		out = append(out, v...)
	}
	return out
}

// near compares p-values to 1e-12 relative: R and Go compute the normal
// tail with different erfc implementations, and sum the permutation
// counts in different orders.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(math.Abs(want), 1e-300)
}

// BenchmarkMannWhitneyTies is one class of a fleet of 16 dumps whose
// pattern of ties is new (no cached distribution), the slowest case of
// heapx fleet --compare: 21 µs, 0.8 µs once cached.
func BenchmarkMannWhitneyTies(b *testing.B) {
	x := []float64{1, 1, 3, 4, 5, 6, 7, 8}
	y := []float64{2, 3, 9, 10, 11, 12, 13, 14}
	for b.Loop() {
		clear(tiedDistributions.byKey)
		MannWhitney(x, y)
	}
}
