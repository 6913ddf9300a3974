package inspect

import (
	"hash/maphash"
	"slices"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/parallel"
	"github.com/heapx/heapx/model"
)

// The inspections (inspect_*.go) answer the questions a leak hunt asks
// after the Summary: which strings are duplicated, which DOM trees are
// detached, what closures capture, which collections are big, which
// object shapes and globals hold memory, how the instances of a class are
// reached, and what the dominator tree holds under a node. Each is a pure
// function of an *Analysis returning rows sorted the way a user reads
// them, cut to a limit (0 or less means all rows).

// limitRows cuts rows to limit when limit is positive.
func limitRows[T any](rows []T, limit int) []T {
	if limit > 0 && len(rows) > limit {
		return rows[:limit]
	}
	return rows
}

// namedStrings marks the StringIDs whose text is one of names. Readers need
// not intern strings, so a name may have several IDs; one pass over the
// table finds them all and later tests are a bit lookup per edge.
func namedStrings(g *model.Graph, names ...string) analysis.Bits {
	b := analysis.NewBits(g.Strings.Len())
	for id := 0; id < g.Strings.Len(); id++ {
		if slices.Contains(names, g.Strings.At(model.StringID(id))) {
			b.Set(id)
		}
	}
	return b
}

// className is node n's class when classes were computed, else its name.
func className(a *analysis.Analysis, n model.NodeIndex) string {
	if a.Classes != nil {
		return a.Classes.Name(n)
	}
	return a.Graph.NodeName(n)
}

// hashSeed is the seed of every inspection hash; grouping never depends on
// hash values, only on equality, so a per-process seed is fine.
var hashSeed = maphash.MakeSeed()

// hashKeys packs a 32-bit hash above each member index, so one sort of
// plain integers brings equal hashes together without a Go map of the
// members (there may be 10^7 of them).
func hashKeys(members []int32, hash func(int32) uint64) []uint64 {
	keys := make([]uint64, len(members))
	parallel.Chunks(len(members), 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			keys[i] = hash(members[i])>>32<<32 | uint64(uint32(members[i]))
		}
	})
	slices.Sort(keys)
	return keys
}

// groupSorted calls emit once per group of equal members in keys (sorted
// hashKeys). A 32-bit hash can collide, so within a run of equal hashes
// members are split exactly by same; each group's members are in index
// order.
func groupSorted(keys []uint64, same func(a, b int32) bool, emit func(group []int32)) {
	var run, group, rest []int32
	for i := 0; i < len(keys); {
		j := i
		run = run[:0]
		for ; j < len(keys) && keys[j]>>32 == keys[i]>>32; j++ {
			run = append(run, int32(uint32(keys[j])))
		}
		i = j
		for len(run) > 0 {
			group, rest = append(group[:0], run[0]), rest[:0]
			for _, m := range run[1:] {
				if same(run[0], m) {
					group = append(group, m)
				} else {
					rest = append(rest, m)
				}
			}
			emit(group)
			run = append(run[:0], rest...)
		}
	}
}
