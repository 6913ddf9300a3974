package inspect

import (
	"hash/maphash"
	"sort"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// DuplicateString is one text held by several string objects (memlab's
// "duplicated strings"; DevTools has no such view).
type DuplicateString struct {
	Text    string          // the shared contents (as far as the dump spells them)
	Count   int             // string objects holding it
	Size    uint64          // shallow size of each copy
	Total   uint64          // Count × Size
	Wasted  uint64          // (Count-1) × Size: what keeping one copy would save
	Example model.NodeIndex // the copy with the smallest node index
}

// DuplicateStrings groups the string objects by contents and shallow size
// and returns the groups of two or more, most wasted bytes first (then by
// count, then by example node), at most limit of them.
//
// Which strings count: every flat string (model.CatString) of any runtime,
// and the concatenated and sliced strings of runtimes other than V8, whose
// readers name string nodes by their contents (HPROF's java.lang.String).
// V8 names its concatenated and sliced strings by placeholders, not text:
// their contents live in the flat strings they point to, which are counted
// themselves, and their own shallow size is a fixed-size cell, so spelling
// them out (Namer) would cost a tree walk per string to report 20-byte
// cells as duplicates; they are skipped.
//
// The size is part of the key because V8 cuts string names at 1024
// characters (--heap-snapshot-string-limit): two long strings with a common
// prefix but different lengths have equal names and different sizes.
// Grouping sorts one packed (hash, node) integer per string, so it needs
// 8 bytes per string and no map of texts.
func DuplicateStrings(a *analysis.Analysis, limit int) []DuplicateString {
	g := a.Graph
	k := kinds.New(g)
	var take [256]bool
	for t, nt := range g.NodeTypes {
		if t < 256 && nt.Category.IsString() {
			take[t] = nt.Category == model.CatString || !k.NodeV8[t]
		}
	}
	var members []int32
	for i, t := range g.Nodes.Type {
		if take[t] && hasContents(g, k, int32(i)) {
			members = append(members, int32(i))
		}
	}
	names, self := g.Nodes.Name, a.Self
	keys := hashKeys(members, func(n int32) uint64 {
		return maphash.String(hashSeed, g.Strings.At(names[n])) ^ self.At(int(n))*0x9e3779b97f4a7c15
	})
	var rows []DuplicateString
	groupSorted(keys, func(x, y int32) bool {
		return self.At(int(x)) == self.At(int(y)) && (names[x] == names[y] || g.Strings.At(names[x]) == g.Strings.At(names[y]))
	}, func(group []int32) {
		if len(group) < 2 {
			return
		}
		c, s := uint64(len(group)), self.At(int(group[0]))
		rows = append(rows, DuplicateString{Text: g.Strings.At(names[group[0]]), Count: len(group),
			Size: s, Total: c * s, Wasted: (c - 1) * s, Example: group[0]})
	})
	sort.Slice(rows, func(i, j int) bool {
		x, y := &rows[i], &rows[j]
		if x.Wasted != y.Wasted {
			return x.Wasted > y.Wasted
		}
		if x.Count != y.Count {
			return x.Count > y.Count
		}
		return x.Example < y.Example
	})
	return limitRows(rows, limit)
}

// HasStringContents reports whether the dump records what its strings
// say: false when it has strings but none with contents (Firefox's core
// dumps name every string "JSString" and keep only its size), so no
// question about texts, such as duplicates, can be answered.
func HasStringContents(a *analysis.Analysis) bool {
	g := a.Graph
	k := kinds.For(g)
	seen := false
	for i, t := range g.Nodes.Type {
		if int(t) < len(g.NodeTypes) && g.NodeTypes[t].Category.IsString() {
			if hasContents(g, k, int32(i)) {
				return true
			}
			seen = true
		}
	}
	return !seen
}

// hasContents reports whether string node n is named by its contents: a
// string named after its own type carries none, and such strings would
// all look like copies of one text.
func hasContents(g *model.Graph, k *kinds.Table, n int32) bool {
	t := g.Nodes.Type[n]
	return k.NodeV8[t] || g.NodeName(n) != g.NodeTypes[t].Name
}
