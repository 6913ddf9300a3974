package analysis_test

import (
	"regexp"
	"strconv"

	"github.com/heapx/heapx/model"
)

// devtoolsOracle is a line-by-line port of the parts of Chrome DevTools'
// HeapSnapshot.ts (chrome-devtools-frontend 1.0.1705227) that decide self
// sizes, dominators and retained sizes: markPageOwnedNodes,
// calculateShallowSizes, computeIsEssentialEdge and the Lengauer–Tarjan
// calculateDominatorsAndRetainedSizes, with its 1-based arrays, buckets
// and the handling of unreachable nodes. It is slow and simple on purpose:
// heapx's semi-NCA must agree with it on every graph. It ignores DOM state
// (test graphs have no detachedness).
func devtoolsOracle(g *model.Graph) (dominator []int32, retained []float64, self []float64) {
	n := g.NumNodes()
	root := int(g.Root)
	typeName := func(i int) string { return g.NodeTypes[g.Nodes.Type[i]].Name }
	edgeTypeName := func(e int) string { return g.EdgeTypes[g.Edges.Type[e]].Name }
	first := func(i int) int { return int(g.Nodes.FirstEdge[i]) }
	isSynthetic := func(i int) bool { return typeName(i) == "synthetic" }
	isDocTrees := func(i int) bool { return isSynthetic(i) && g.NodeName(int32(i)) == "(Document DOM trees)" }
	isUserRoot := func(i int) bool { return !isSynthetic(i) || isDocTrees(i) }

	// markPageOwnedNodes.
	page := make([]bool, n)
	var stack []int
	for e := first(root); e < first(root+1); e++ {
		t := int(g.Edges.To[e])
		switch edgeTypeName(e) {
		case "element":
			if !isDocTrees(t) {
				continue
			}
		case "shortcut":
		default:
			continue
		}
		stack = append(stack, t)
		page[t] = true
	}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := first(v); e < first(v+1); e++ {
			t := int(g.Edges.To[e])
			if page[t] || edgeTypeName(e) == "weak" {
				continue
			}
			stack = append(stack, t)
			page[t] = true
		}
	}

	// calculateShallowSizes.
	self = make([]float64, n)
	for i := range self {
		self[i] = float64(g.Nodes.Size.At(i))
	}
	hasUserRoots := false
	for e := first(root); e < first(root+1); e++ {
		if isUserRoot(int(g.Edges.To[e])) {
			hasUserRoots = true
		}
	}
	if hasUserRoots {
		const unvisited, multiple = -1, -2
		owners := make([]int, n)
		var work []int
		for i := 0; i < n; i++ {
			tn := typeName(i)
			if tn == "hidden" || tn == "array" || (tn == "native" && g.NodeName(int32(i)) == "system / ExternalStringData") {
				owners[i] = unvisited
			} else {
				owners[i] = i
				work = append(work, i)
			}
		}
		for len(work) > 0 {
			id := work[len(work)-1]
			work = work[:len(work)-1]
			owner := owners[id]
			for e := first(id); e < first(id+1); e++ {
				if edgeTypeName(e) == "weak" {
					continue
				}
				t := int(g.Edges.To[e])
				switch owners[t] {
				case unvisited:
					owners[t] = owner
					work = append(work, t)
				case t, owner, multiple:
				default:
					owners[t] = multiple
					work = append(work, t)
				}
			}
		}
		for i := 0; i < n; i++ {
			o := owners[i]
			if o == unvisited || o == multiple || o == i {
				continue
			}
			if isSynthetic(o) || o == root {
				continue
			}
			self[o] += self[i]
			self[i] = 0
		}
	}

	// computeIsEssentialEdge.
	re := regexp.MustCompile(`^\d+(?P<dup> / part of key \(.*? @\d+\) -> value \(.*? @\d+\) pair in WeakMap \(table @(?P<table>\d+)\))$`)
	essential := make([]bool, g.NumEdges())
	for v := 0; v < n; v++ {
		for e := first(v); e < first(v+1); e++ {
			et := edgeTypeName(e)
			ok := true
			if et == "internal" {
				if m := re.FindStringSubmatch(g.Strings.At(g.Edges.Name[e])); m != nil {
					if id, _ := strconv.ParseUint(m[2], 10, 64); id == g.Nodes.ID.At(v) {
						ok = false
					}
				}
			}
			t := int(g.Edges.To[e])
			if et == "weak" || t == v {
				ok = false
			}
			if v != root {
				if et == "shortcut" {
					ok = false
				}
				if page[t] && !page[v] {
					ok = false
				}
			}
			essential[e] = ok
		}
	}
	// Retainers.
	var retFrom, retEdge [][]int
	retFrom = make([][]int, n)
	retEdge = make([][]int, n)
	for v := 0; v < n; v++ {
		for e := first(v); e < first(v+1); e++ {
			t := int(g.Edges.To[e])
			retFrom[t] = append(retFrom[t], v)
			retEdge[t] = append(retEdge[t], e)
		}
	}
	hasOnlyWeakRetainers := func(v int) bool {
		for _, e := range retEdge[v] {
			if essential[e] {
				return false
			}
		}
		return true
	}

	// calculateDominatorsAndRetainedSizes, 1-based.
	parent := make([]int, n+1)
	ancestor := make([]int, n+1)
	vertex := make([]int, n+1)
	label := make([]int, n+1)
	semi := make([]int, n+1)
	bucket := make([][]int, n+1)
	next := make([]int, n+1)
	cnt := 0
	dfs := func(r int) {
		next[r-1] = first(r - 1)
		v := r
		for v != 0 {
			if semi[v] == 0 {
				cnt++
				semi[v] = cnt
				vertex[cnt] = v
				label[v] = v
			}
			vNext := parent[v]
			vo := v - 1
			for ; next[vo] < first(vo+1); next[vo]++ {
				e := next[vo]
				if !essential[e] {
					continue
				}
				w := int(g.Edges.To[e]) + 1
				if semi[w] == 0 {
					parent[w] = v
					next[w-1] = first(w - 1)
					vNext = w
					break
				}
			}
			v = vNext
		}
	}
	compress := func(v int) {
		var st []int
		for ancestor[ancestor[v]] != 0 {
			st = append(st, v)
			v = ancestor[v]
		}
		for len(st) > 0 {
			w := st[len(st)-1]
			st = st[:len(st)-1]
			if semi[label[ancestor[w]]] < semi[label[w]] {
				label[w] = label[ancestor[w]]
			}
			ancestor[w] = ancestor[ancestor[w]]
		}
	}
	eval := func(v int) int {
		if ancestor[v] == 0 {
			return v
		}
		compress(v)
		return label[v]
	}
	r := root + 1
	idom := make([]int, n+1)
	dfs(r)
	if cnt < n {
		for v := 1; v <= n; v++ {
			if semi[v] == 0 && hasOnlyWeakRetainers(v-1) {
				parent[v] = r
				dfs(v)
			}
		}
	}
	if cnt < n {
		for v := 1; v <= n; v++ {
			if semi[v] == 0 {
				parent[v] = r
				cnt++
				semi[v] = cnt
				vertex[cnt] = v
				label[v] = v
			}
		}
	}
	for i := cnt; i >= 2; i-- {
		w := vertex[i]
		orphan := true
		for k, e := range retEdge[w-1] {
			if !essential[e] {
				continue
			}
			orphan = false
			v := retFrom[w-1][k] + 1
			u := eval(v)
			if semi[u] < semi[w] {
				semi[w] = semi[u]
			}
		}
		if orphan {
			semi[w] = semi[r]
		}
		b := vertex[semi[w]]
		bucket[b] = append(bucket[b], w)
		ancestor[w] = parent[w]
		pw := parent[w]
		for _, v := range bucket[pw] {
			u := eval(v)
			if semi[u] < semi[v] {
				idom[v] = u
			} else {
				idom[v] = pw
			}
		}
		bucket[pw] = nil
	}
	idom[0], idom[r] = r, r
	for i := 2; i <= cnt; i++ {
		w := vertex[i]
		if idom[w] != vertex[semi[w]] {
			idom[w] = idom[idom[w]]
		}
	}
	dominator = make([]int32, n)
	retained = make([]float64, n)
	for i := 0; i < n; i++ {
		dominator[i] = int32(idom[i+1] - 1)
		retained[i] = self[i]
	}
	for i := cnt; i > 1; i-- {
		v := vertex[i] - 1
		retained[dominator[v]] += retained[v]
	}
	return dominator, retained, self
}

// devtoolsDistances is a port of HeapSnapshot.calculateDistances with
// JSHeapSnapshot's filter (the same DevTools version as devtoolsOracle).
func devtoolsDistances(g *model.Graph) []int32 {
	n := g.NumNodes()
	const noDistance = -5
	typeName := func(i int) string { return g.NodeTypes[g.Nodes.Type[i]].Name }
	edgeTypeName := func(e int) string { return g.EdgeTypes[g.Edges.Type[e]].Name }
	edgeName := func(e int) string { return g.EdgeName(uint32(e)) }
	isSynthetic := func(i int) bool { return typeName(i) == "synthetic" }
	isUserRoot := func(i int) bool {
		return !isSynthetic(i) || g.NodeName(int32(i)) == "(Document DOM trees)"
	}
	re := regexp.MustCompile(`^\d+(?P<dup> / part of key \(.*? @\d+\) -> value \(.*? @\d+\) pair in WeakMap \(table @(?P<table>\d+)\))$`)
	pending := map[string]bool{}
	filter := func(v, e int) bool {
		if typeName(v) == "hidden" && edgeName(e) == "sloppy_function_map" && g.NodeName(int32(v)) == "system / NativeContext" {
			return false
		}
		if typeName(v) == "array" && g.NodeName(int32(v)) == "(map descriptors)" {
			idx, err := strconv.Atoi(edgeName(e))
			if err != nil {
				return true
			}
			return idx < 2 || idx%3 != 1
		}
		if edgeTypeName(e) == "internal" {
			if m := re.FindStringSubmatch(g.Strings.At(g.Edges.Name[e])); m != nil {
				if !pending[m[1]] {
					pending[m[1]] = true
					return false
				}
				delete(pending, m[1])
			}
		}
		return true
	}
	dist := make([]int32, n)
	for i := range dist {
		dist[i] = noDistance
	}
	var queue []int
	bfs := func() {
		for i := 0; i < len(queue); i++ {
			v := queue[i]
			for e := int(g.Nodes.FirstEdge[v]); e < int(g.Nodes.FirstEdge[v+1]); e++ {
				if edgeTypeName(e) == "weak" {
					continue
				}
				t := int(g.Edges.To[e])
				if dist[t] != noDistance || !filter(v, e) {
					continue
				}
				dist[t] = dist[v] + 1
				queue = append(queue, t)
			}
		}
	}
	root := int(g.Root)
	for e := int(g.Nodes.FirstEdge[root]); e < int(g.Nodes.FirstEdge[root+1]); e++ {
		if t := int(g.Edges.To[e]); isUserRoot(t) {
			dist[t] = 1
			queue = append(queue, t)
		}
	}
	bfs()
	if len(queue) > 0 {
		dist[root] = 100000000
	} else {
		dist[root] = 0
	}
	queue = append(queue[:0], root)
	bfs()
	return dist
}
