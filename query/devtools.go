package query

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/heapx/heapx/analysis"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

// maxDeviationClasses bounds the classes a class-name warning lists.
const maxDeviationClasses = 5

// DevToolsDeviations says where Chrome DevTools, loading g as
// formats/v8.Write writes it, will show other numbers than heapx shows for
// g itself, one sentence each; nothing for a V8 graph, which is written as
// it was read. The writer maps types so that shallow and retained sizes,
// distances and class names agree (v8.DevToolsTypes); what it cannot
// change is DevTools' own naming of some types and its 32-bit node ids.
// Class names are compared as heapx computes them for both (heapx applies
// DevTools' rules to V8 types), over the nodes DevTools counts in its
// Summary (self size above 0).
func DevToolsDeviations(g *model.Graph) []string {
	if v8.FromV8(g) || g.NumNodes() == 0 {
		return nil
	}
	nts, ets := v8.DevToolsTypes(g)
	ours := analysis.ClassifyNodes(g, nil)
	var out []string
	if s := classDeviations(g, ours, nts, ets); s != "" {
		out = append(out, s)
	}
	if s := unreachableDistances(g, ours); s != "" {
		out = append(out, s)
	}
	if n := v8.DuplicateRootEdges(g); n > 0 {
		out = append(out, fmt.Sprintf("%s of the root's references repeat an earlier one's target and are merged into it, as DevTools cannot load a snapshot whose root references an object twice: the file has %s edges fewer",
			humanize.Thousands(uint64(n)), humanize.Thousands(uint64(n))))
	}
	var wide int
	var example uint64
	for i := range g.Nodes.ID.Len() {
		id := g.Nodes.ID.At(i)
		if id > math.MaxUint32 {
			if wide == 0 {
				example = id
			}
			wide++
		}
	}
	if wide > 0 {
		out = append(out, fmt.Sprintf("DevTools keeps 32 bits of a node id: %s of the %s ids are larger and show as their low 32 bits (@%d as @%d)",
			humanize.Thousands(uint64(wide)), humanize.Thousands(uint64(g.NumNodes())), example, example&math.MaxUint32))
	}
	return out
}

// classDeviations compares heapx's classes for g with those of g retyped
// as DevTools sees it and describes the classes whose objects DevTools
// files under another name, largest first; "" when all agree.
func classDeviations(g *model.Graph, ours *analysis.Classes, nts []model.NodeType, ets []model.EdgeType) string {
	view := *g
	view.NodeTypes, view.EdgeTypes = nts, ets
	theirs := analysis.ClassifyNodes(&view, nil)
	type moved struct {
		count int
		size  uint64
		to    map[uint32]int // DevTools class -> objects
	}
	byClass := map[uint32]*moved{}
	all := make([]int, len(ours.Names))
	for i := range g.Nodes.Size.Len() {
		size := g.Nodes.Size.At(i)
		if size == 0 {
			continue
		}
		c := ours.Of[i]
		all[c]++
		d := theirs.Of[i]
		if ours.Names[c] == theirs.Names[d] {
			continue
		}
		m := byClass[c]
		if m == nil {
			m = &moved{to: map[uint32]int{}}
			byClass[c] = m
		}
		m.count++
		m.size += size
		m.to[d]++
	}
	if len(byClass) == 0 {
		return ""
	}
	classes := make([]uint32, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := byClass[classes[i]], byClass[classes[j]]
		if a.count != b.count {
			return a.count > b.count
		}
		return ours.Names[classes[i]] < ours.Names[classes[j]]
	})
	var parts []string
	for k, c := range classes {
		if k == maxDeviationClasses {
			parts = append(parts, fmt.Sprintf("and %d more", len(classes)-k))
			break
		}
		m := byClass[c]
		what := humanize.Thousands(uint64(m.count))
		if m.count < all[c] {
			what += " of " + humanize.Thousands(uint64(all[c]))
		}
		what += " object"
		if all[c] > 1 {
			what += "s"
		}
		to := make([]uint32, 0, len(m.to))
		for d := range m.to {
			to = append(to, d)
		}
		sort.Slice(to, func(i, j int) bool {
			if m.to[to[i]] != m.to[to[j]] {
				return m.to[to[i]] > m.to[to[j]]
			}
			return theirs.Names[to[i]] < theirs.Names[to[j]]
		})
		as := theirs.Names[to[0]]
		if len(to) > 1 {
			var names []string
			for _, d := range to[:min(len(to), 3)] {
				names = append(names, fmt.Sprintf("%s (%s)", theirs.Names[d], humanize.Thousands(uint64(m.to[d]))))
			}
			as = fmt.Sprintf("%d classes: %s", len(to), strings.Join(names, ", "))
			if len(to) > 3 {
				as += ", …"
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%s, %s) as %s", Shorten(ours.Names[c], 60), what, humanize.Size(m.size), as))
	}
	return "DevTools classes some objects under other names than heapx (counts and sizes per class differ accordingly): " + strings.Join(parts, "; ")
}

// unreachableDistances names the classes DevTools shows at distance -5
// where heapx shows a distance: DevTools takes a class's distance from all
// its instances (those its Summary counts, self size above 0), so one
// instance no root reaches makes it -5, where heapx takes the nearest
// reachable instance's (docs/devtools-deviations.md); "" when no class
// has both kinds.
func unreachableDistances(g *model.Graph, cls *analysis.Classes) string {
	reach := analysis.Reachable(g)
	reached := make([]bool, len(cls.Names))
	unreached := make([]int, len(cls.Names))
	for i := range g.Nodes.Size.Len() {
		size := g.Nodes.Size.At(i)
		if size == 0 {
			continue
		}
		if c := cls.Of[i]; reach.Has(i) {
			reached[c] = true
		} else {
			unreached[c]++
		}
	}
	var classes []int
	for c := range cls.Names {
		if reached[c] && unreached[c] > 0 {
			classes = append(classes, c)
		}
	}
	if len(classes) == 0 {
		return ""
	}
	sort.Slice(classes, func(i, j int) bool {
		a, b := classes[i], classes[j]
		if unreached[a] != unreached[b] {
			return unreached[a] > unreached[b]
		}
		return cls.Names[a] < cls.Names[b]
	})
	var names []string
	for _, c := range classes[:min(len(classes), maxDeviationClasses)] {
		names = append(names, fmt.Sprintf("%s (%s unreachable)", Shorten(cls.Names[c], 60), humanize.Thousands(uint64(unreached[c]))))
	}
	if len(classes) > maxDeviationClasses {
		names = append(names, fmt.Sprintf("and %d more", len(classes)-maxDeviationClasses))
	}
	return fmt.Sprintf("%s classes have instances no root reaches: DevTools shows their distance as -5, the smallest over every instance, where heapx shows the nearest reachable one's: %s",
		humanize.Thousands(uint64(len(classes))), strings.Join(names, ", "))
}
