package query

import (
	"sort"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
)

// classSuggestions returns up to n class names of a that look like what
// someone typing name meant: names that contain it or that it contains,
// ignoring case (a Java class's simple name, "Session" for
// "LeakDemo$Session"), then names a few typing mistakes away (at most a
// third of its length, as edit distance). Closest first, then the
// classes with more instances.
func classSuggestions(a *analysis.Analysis, name string, n int) []string {
	lname := strings.ToLower(name)
	counts := map[string]int{}
	for _, c := range a.Classes.Of {
		counts[a.Classes.Names[c]]++
	}
	type cand struct {
		name  string
		score int // 0 for containment, else the edit distance
	}
	var cands []cand
	maxDist := max(1, len([]rune(name))/3)
	for cn := range counts {
		lc := strings.ToLower(cn)
		switch {
		case strings.Contains(lc, lname) || strings.Contains(lname, lc) && len(lc) >= 3:
			cands = append(cands, cand{cn, 0})
		default:
			if d := editDistance(lname, lc, maxDist); d <= maxDist {
				cands = append(cands, cand{cn, d})
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		x, y := cands[i], cands[j]
		if x.score != y.score {
			return x.score < y.score
		}
		if counts[x.name] != counts[y.name] {
			return counts[x.name] > counts[y.name]
		}
		return x.name < y.name
	})
	var out []string
	for _, c := range cands[:min(n, len(cands))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, or limit+1
// as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	x, y := []rune(a), []rune(b)
	if d := len(x) - len(y); d > limit || -d > limit {
		return limit + 1
	}
	prev, cur := make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(y)]
}

// quotedList writes names as `"A", "B" or "C"`.
func quotedList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}
