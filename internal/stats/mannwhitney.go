// Package stats compares two samples by ranks: the Mann-Whitney U test
// (the Wilcoxon rank-sum test), which asks whether values of one sample
// tend to be larger than those of the other without assuming how they are
// distributed. heapx fleet --compare uses it with the dumps of two cohorts
// as the samples, so that one pod far from the others moves a rank, not a
// mean.
//
// The p-value is two-sided and exact for small samples: from U's exact
// distribution when both samples have fewer than 50 values and no value
// occurs twice (as R's wilcox.test(x, y) computes it), and from the exact
// distribution given the ties (the permutation distribution of the
// mid-ranks, two-sided as R coin's wilcox_test(distribution = "exact"))
// when some value occurs twice in at most 30 values in all, which heap
// dumps' counts often do (a class absent from most dumps, counted 0
// there).
// Otherwise it is the normal approximation with the variance corrected
// for ties and a continuity correction, as wilcox.test's.
package stats

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"sync"
)

// Result is one test's outcome.
type Result struct {
	// U is the Mann-Whitney statistic of x: the number of pairs (x[i],
	// y[j]) with x[i] > y[j], ties counting one half (R's W).
	U float64
	// P is the two-sided p-value: how likely a difference at least this
	// large between the ranks is when x and y come from one
	// distribution. 1 when every value is the same.
	P float64
	// Exact says P comes from U's exact distribution (given the ties),
	// not the normal approximation.
	Exact bool
}

// exactBelow bounds the sample sizes tested exactly (R's rule): both
// must be smaller. With ties, the exact distribution is computed for
// each test (it depends on the ties), so it is used up to exactTiesUpTo
// values in all, where it costs well under a millisecond.
const (
	exactBelow    = 50
	exactTiesUpTo = 30
)

// MannWhitney tests whether x and y differ in location. Both must be
// non-empty; NaNs are not allowed (a caller has no missing values: a class
// absent from a dump counts 0 there).
func MannWhitney(x, y []float64) Result {
	m, n := len(x), len(y)
	if m == 0 || n == 0 {
		return Result{P: 1}
	}
	type value struct {
		v     float64
		fromX bool
	}
	all := make([]value, 0, m+n)
	for _, v := range x {
		all = append(all, value{v, true})
	}
	for _, v := range y {
		all = append(all, value{v, false})
	}
	slices.SortFunc(all, func(a, b value) int { return cmp.Compare(a.v, b.v) })
	// Ranks from 1, the mean rank for a run of equal values; tieTerm sums
	// t^3 - t over the runs of t equal values. groups are the runs, each
	// with twice its mean rank (an integer).
	var rankSumX, tieTerm float64
	var groups []tieGroup
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		rank := float64(i+1+j) / 2 // the mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			if all[k].fromX {
				rankSumX += rank
			}
		}
		if t := float64(j - i); t > 1 {
			tieTerm += t*t*t - t
		}
		groups = append(groups, tieGroup{size: j - i, score: i + 1 + j})
		i = j
	}
	fm, fn := float64(m), float64(n)
	u := rankSumX - fm*(fm+1)/2
	if m < exactBelow && n < exactBelow && tieTerm == 0 {
		dist := distribution(m, n)
		var p float64
		if u > fm*fn/2 {
			p = dist[m*n-int(u)] // P(U >= u), by U's symmetry
		} else {
			p = dist[int(u)] // P(U <= u)
		}
		return Result{U: u, P: min(1, 2*p), Exact: true}
	}
	if m < exactBelow && n < exactBelow && m+n <= exactTiesUpTo {
		if len(groups) == 1 {
			return Result{U: u, P: 1, Exact: true} // every value the same
		}
		return Result{U: u, P: min(1, tiedP(groups, m, int(2*rankSumX))), Exact: true}
	}
	N := fm + fn
	sigma := math.Sqrt(fm * fn / 12 * ((N + 1) - tieTerm/(N*(N-1))))
	if sigma == 0 {
		return Result{U: u, P: 1}
	}
	z := u - fm*fn/2
	z = (z - math.Copysign(0.5, z)) / sigma
	if z == 0 { // the correction may overshoot 0; R's sign(0) is 0
		return Result{U: u, P: 1}
	}
	return Result{U: u, P: min(1, 2*normalUpper(math.Abs(z)))}
}

// tieGroup is a run of equal values: how many, and twice their mean
// rank.
type tieGroup struct{ size, score int }

// tiedP is the two-sided exact p-value given the ties: the probability
// that m values drawn at random from the ranked values (groups) have a
// doubled rank sum at least as far from its mean, m(N+1), as sum2 is,
// on either side. The mid-ranks of ties are not symmetric about their
// mean, so both tails are counted, not one doubled.
func tiedP(groups []tieGroup, m, sum2 int) float64 {
	N := 0
	for _, g := range groups {
		N += g.size
	}
	mean := m * (N + 1)
	far := abs(sum2 - mean)
	var tail float64
	for s, p := range tiedDistribution(groups, m) {
		if abs(s-mean) >= far {
			tail += p
		}
	}
	return tail
}

// tiedDistributions caches tiedDistribution by m and the groups' sizes
// (which fix their scores): the classes of a fleet share a few patterns
// of ties, such as the dumps without the class, counted 0. At most
// maxTiedDistributions are kept.
var tiedDistributions = struct {
	sync.Mutex
	byKey map[string][]float64
}{byKey: map[string][]float64{}}

const maxTiedDistributions = 4096

// tiedDistribution returns the distribution of the doubled rank sum of m
// values drawn at random from the ranked values (groups, in ascending
// order): element s is its probability of being s. It counts the ways to
// take k values of each group, one group at a time, by their doubled sum
// (the shift algorithm of Streitberg and Röhmel).
func tiedDistribution(groups []tieGroup, m int) []float64 {
	key := make([]byte, 0, 2+2*len(groups))
	key = binary.AppendUvarint(key, uint64(m))
	N := 0
	for _, g := range groups {
		key = binary.AppendUvarint(key, uint64(g.size))
		N += g.size
	}
	tiedDistributions.Lock()
	d, ok := tiedDistributions.byKey[string(key)]
	tiedDistributions.Unlock()
	if ok {
		return d
	}
	maxSum := m * groups[len(groups)-1].score
	ways := make([][]float64, m+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	seen := 0 // the largest score of the groups counted so far
	for _, g := range groups {
		// Descending j, so each count is read before it grows; j values
		// of the groups seen sum to at most j*seen.
		for j := m - 1; j >= 0; j-- {
			for s, w := range ways[j][:j*seen+1] {
				if w == 0 {
					continue
				}
				choose := 1.0
				for k := 1; k <= g.size && j+k <= m; k++ {
					choose = choose * float64(g.size-k+1) / float64(k)
					ways[j+k][s+k*g.score] += w * choose
				}
			}
		}
		seen = g.score
	}
	d = ways[m]
	total := binomial(N, m)
	for s := range d {
		d[s] /= total
	}
	tiedDistributions.Lock()
	if len(tiedDistributions.byKey) < maxTiedDistributions {
		tiedDistributions.byKey[string(key)] = d
	}
	tiedDistributions.Unlock()
	return d
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// binomial is C(n, k) as a float64.
func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// normalUpper is P(Z > z) for a standard normal Z.
func normalUpper(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// distributions caches U's cumulative distribution by sample sizes: a
// comparison tests every class with the same two sizes.
var distributions sync.Map // [2]int -> []float64

// distribution returns the cumulative distribution of U for samples of m
// and n values without ties: element u is P(U <= u), for u = 0 .. m*n.
// It counts, for each j, the j-subsets of the ranks 1..m+n by their sum,
// one rank at a time (additions only, so the counts stay exact in float64
// well past C(98, 49)), then reads off the m-subsets: U is the rank sum
// less m(m+1)/2.
func distribution(m, n int) []float64 {
	key := [2]int{m, n}
	if d, ok := distributions.Load(key); ok {
		return d.([]float64)
	}
	N := m + n
	maxSum := N * (N + 1) / 2
	// ways[j][s]: j-subsets of the ranks seen so far with rank sum s.
	ways := make([][]float64, m+1)
	for j := range ways {
		ways[j] = make([]float64, maxSum+1)
	}
	ways[0][0] = 1
	for r := 1; r <= N; r++ {
		for j := min(r, m); j >= 1; j-- {
			from, to := ways[j-1], ways[j]
			for s := maxSum; s >= r; s-- {
				to[s] += from[s-r]
			}
		}
	}
	base := m * (m + 1) / 2
	cdf := make([]float64, m*n+1)
	var total float64
	for u := 0; u <= m*n; u++ {
		total += ways[m][base+u]
	}
	var acc float64
	for u := range cdf {
		acc += ways[m][base+u]
		cdf[u] = acc / total
	}
	distributions.Store(key, cdf)
	return cdf
}
