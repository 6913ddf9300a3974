package analysis

import (
	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Distance values DevTools uses (HeapSnapshotModel.ts).
const (
	// NoDistance marks a node no BFS reached.
	NoDistance int32 = -5
	// BaseSystemDistance is added to the distance of nodes reached only
	// from the root, not from a user root; DevTools shows them as "−".
	BaseSystemDistance int32 = 100000000
	// BaseUnreachableDistance is what DevTools' retainers view adds to
	// the distance of a node that ignoring nodes made unreachable.
	BaseUnreachableDistance int32 = 2 * BaseSystemDistance
)

// Distances computes DevTools' "Distance" column
// (HeapSnapshot.calculateDistances with JSHeapSnapshot's edge filter):
//
//   - every node starts at NoDistance;
//   - a BFS from the user roots, each at distance 1;
//   - then a BFS from the root, which gets BaseSystemDistance when there
//     are user roots (so nodes reached only from it get 100000000+depth)
//     and 0 otherwise;
//   - both skip weak edges, the hidden edge "sloppy_function_map" out of a
//     hidden "system / NativeContext", elements of "(map descriptors)"
//     arrays with index >= 2 and index % 3 == 1, and the first of the two
//     internal edges of each WeakMap entry met during the walk (so a value's
//     distance is that of the later of table and key, plus one);
//   - edges to nodes in ignore (may be nil) are skipped, which gives the
//     distances of DevTools' retainers view after "Ignore this retainer".
func Distances(g *model.Graph, roots *Roots, ignore Bits) []int32 {
	dist, _ := distances(g, roots, ignore)
	return dist
}

// distances is Distances; it also returns the nodes it left at NoDistance
// although a non-weak edge from a node it reached leads to them (the
// edges its filter or ignore refused), so that reachability can be
// completed from them instead of searching the whole graph once more
// (reachableFromDistances).
func distances(g *model.Graph, roots *Roots, ignore Bits) (dist, refused []int32) {
	n := g.NumNodes()
	dist = model.Alloc[int32](n)
	if n == 0 {
		return dist, nil
	}
	for i := range dist {
		dist[i] = NoDistance
	}
	k := kinds.New(g)
	wm := newWeakMapNames(g)
	pending := map[string]struct{}{}
	var queue fifo
	fe, to, typ, ename := g.Nodes.FirstEdge, g.Edges.To, g.Edges.Type, g.Edges.Name
	// filter is JSHeapSnapshot.calculateDistances' filter; it runs only for
	// edges that would reach an unvisited node, as in DevTools, because the
	// WeakMap pairing depends on that.
	filter := func(src int32, e uint32) bool {
		if ignore != nil && ignore.Has(int(to[e])) {
			return false
		}
		srcKind := k.Node[g.Nodes.Type[src]]
		et := typ[e]
		if srcKind == kinds.Hidden && !k.Indexed[et] && g.Strings.At(ename[e]) == "sloppy_function_map" &&
			g.NodeName(src) == "system / NativeContext" {
			return false
		}
		if srcKind == kinds.Array && g.NodeName(src) == "(map descriptors)" {
			var idx int64
			ok := true
			if k.Indexed[et] {
				idx = int64(ename[e])
			} else {
				idx, ok = jsstr.ParseInt(g.Strings.At(ename[e]))
			}
			if !ok {
				return true
			}
			return idx < 2 || idx%3 != 1
		}
		if k.Edge[et] == kinds.EdgeInternal {
			if d, ok := wm.match(ename[e]); ok {
				if _, seen := pending[d]; seen {
					delete(pending, d)
				} else {
					pending[d] = struct{}{}
					return false
				}
			}
		}
		return true
	}
	bfs := func() {
		for !queue.empty() {
			v := queue.pop()
			nd := dist[v] + 1
			for e := fe[v]; e < fe[v+1]; e++ {
				if k.Weak[typ[e]] {
					continue
				}
				t := to[e]
				if dist[t] != NoDistance {
					continue
				}
				if !filter(v, e) {
					refused = append(refused, t)
					continue
				}
				dist[t] = nd
				queue.push(t)
			}
		}
	}
	for _, u := range roots.User {
		dist[u] = 1
		queue.push(u)
	}
	bfs()
	if len(roots.User) > 0 {
		dist[g.Root] = BaseSystemDistance
	} else {
		dist[g.Root] = 0
	}
	queue.push(g.Root)
	bfs()
	queue.close()
	return dist, refused
}

// reachableFromDistances returns Reachable(g) from what the distances
// search found: the nodes it gave a distance, and those a non-weak edge
// leads to from there although its filter refused the edge (refused, as
// distances returns them). It holds when every user root is the target of
// a non-weak edge of the root, so that everything the search reached from
// them the root reaches too; otherwise, and when dist is not distances'
// own (read from a file), it returns nil and Reachable must search.
func reachableFromDistances(g *model.Graph, roots *Roots, dist, refused []int32) Bits {
	n := g.NumNodes()
	if n == 0 || len(dist) != n {
		return nil
	}
	k := kinds.New(g)
	seen := NewBits(n)
	start, end := g.EdgeRange(g.Root)
	for e := start; e < end; e++ {
		if !k.Weak[g.Edges.Type[e]] {
			seen.Set(int(g.Edges.To[e]))
		}
	}
	for _, u := range roots.User {
		if !seen.Has(int(u)) {
			return nil
		}
	}
	clear(seen)
	for i, d := range dist {
		if d != NoDistance {
			seen.Set(i)
		}
	}
	// The refused targets and what they alone lead to: few nodes, as the
	// filter refuses few edges.
	return markFrom(g, k, seen, refused)
}

// fifo is the BFS queue of distances: a list of fixed-size chunks,
// mapped outside the Go heap (newChunk) and unmapped as soon as they are
// used up but for one kept for the next push, so the queue holds about
// the search's current frontier, never one entry per node, and what it
// held goes back to the system as the frontier shrinks and when the
// search ends, for the Summary that comes next (Go allocations would stay
// resident until a collection and the scavenger). It needs no buffer from
// the dominator pass, so the search can run beside it from its start.
type fifo struct {
	chunks []fifoBuf // chunks[0].c[head:] are the oldest entries
	head   int
	spare  fifoBuf // a used-up chunk, for the next push
}

// fifoBuf is a chunk and whether it is mapped (newChunk) rather than
// allocated.
type fifoBuf struct {
	c      []int32
	mapped bool
}

// fifoChunk is the entries per chunk (256 KB).
const fifoChunk = 1 << 16

func (q *fifo) empty() bool { return len(q.chunks) == 0 }

func (q *fifo) push(v int32) {
	last := len(q.chunks) - 1
	if last < 0 || len(q.chunks[last].c) == fifoChunk {
		b := q.spare
		q.spare = fifoBuf{}
		if b.c == nil {
			if c := newChunk(fifoChunk); c != nil {
				b = fifoBuf{c, true}
			} else {
				b = fifoBuf{make([]int32, fifoChunk), false}
			}
		}
		b.c = b.c[:0]
		q.chunks = append(q.chunks, b)
		last++
	}
	q.chunks[last].c = append(q.chunks[last].c, v)
}

// pop removes and returns the oldest entry; the queue must not be empty.
func (q *fifo) pop() int32 {
	b := q.chunks[0]
	v := b.c[q.head]
	q.head++
	if q.head == len(b.c) {
		// Only the last chunk can be partly filled: this one is used up.
		q.head = 0
		if q.spare.c == nil {
			q.spare = b
		} else {
			q.release(b)
		}
		copy(q.chunks, q.chunks[1:])
		q.chunks = q.chunks[:len(q.chunks)-1]
	}
	return v
}

// release gives a chunk back.
func (q *fifo) release(b fifoBuf) {
	if b.mapped {
		freeChunk(b.c)
	}
}

// close gives back every chunk the queue holds.
func (q *fifo) close() {
	for _, b := range q.chunks {
		q.release(b)
	}
	q.release(q.spare)
	*q = fifo{}
}
