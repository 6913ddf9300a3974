package analysis

import (
	"strings"

	"github.com/heapx/heapx/analysis/internal/jsstr"
	"github.com/heapx/heapx/analysis/internal/kinds"
	"github.com/heapx/heapx/model"
)

// Namer produces node names as DevTools shows them in its Object column
// (JSHeapSnapshotNode.name): concatenated strings spelled out, plain objects
// as "{a, b, …, z}", detached DOM nodes with the "Detached " prefix.
type Namer struct {
	g  *model.Graph
	k  *kinds.Table
	ds *DOMState
}

// NewNamer returns a Namer for g; ds (may be nil) supplies the "Detached "
// renaming.
func NewNamer(g *model.Graph, ds *DOMState) *Namer {
	return &Namer{g: g, k: kinds.New(g), ds: ds}
}

// maxConsNameLength is where DevTools stops expanding a cons string.
const maxConsNameLength = 1024

// maxPlainObjectNameLength bounds DevTools' "{a, b, …}" names.
const maxPlainObjectNameLength = 100

// Name returns the display name of node n.
func (nm *Namer) Name(n model.NodeIndex) string {
	g := nm.g
	t := g.Nodes.Type[n]
	if nm.k.NodeV8[t] {
		switch nm.k.Node[t] {
		case kinds.ConsString:
			return nm.consString(n)
		case kinds.Object:
			if g.NodeName(n) == "Object" {
				return nm.plainObject(n)
			}
		}
	}
	return nm.ds.rawName(g, n)
}

// consString concatenates the leaves of a cons-string tree, first part
// first, until the name reaches 1024 UTF-16 units (DevTools consStringName).
func (nm *Namer) consString(n model.NodeIndex) string {
	g := nm.g
	var b strings.Builder
	length := 0
	stack := []int32{n}
	for len(stack) > 0 && length < maxConsNameLength {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v < 0 {
			// DevTools pushes node index 0 for a missing part and reads
			// that node's name; mirror it.
			v = 0
		}
		if nm.k.Node[g.Nodes.Type[v]] != kinds.ConsString {
			s := nm.ds.rawName(g, v)
			b.WriteString(s)
			length += jsstr.Len(s)
			continue
		}
		first, second := int32(-1), int32(-1)
		start, end := g.EdgeRange(v)
		for e := start; e < end && (first < 0 || second < 0); e++ {
			if nm.k.Edge[g.Edges.Type[e]] != kinds.EdgeInternal {
				continue
			}
			switch g.Strings.At(g.Edges.Name[e]) {
			case "first":
				first = g.Edges.To[e]
			case "second":
				second = g.Edges.To[e]
			}
		}
		stack = append(stack, second, first)
	}
	return b.String()
}

// plainObject names a plain object by its property names, taken
// alternately from the front and the back (DevTools #plainObjectName).
func (nm *Namer) plainObject(n model.NodeIndex) string {
	g := nm.g
	start, end := g.EdgeRange(n)
	from, to := int64(start), int64(end)-1
	head, tail := "{", "}"
	headLen, tailLen := 1, 1
	fromEnd := false
	for from <= to {
		e := uint32(from)
		if fromEnd {
			e = uint32(to)
		}
		name := ""
		isProp := nm.k.Edge[g.Edges.Type[e]] == kinds.EdgeProperty
		if isProp {
			name = g.Strings.At(g.Edges.Name[e])
		}
		if !isProp || name == "__proto__" {
			if fromEnd {
				to--
			} else {
				from++
			}
			continue
		}
		f := jsstr.PropertyName(name)
		fl := jsstr.Len(f)
		if headLen > 1 && headLen+tailLen+fl > maxPlainObjectNameLength {
			break
		}
		if fromEnd {
			to--
			if tailLen > 1 {
				tail = ", " + tail
				tailLen += 2
			}
			tail = f + tail
			tailLen += fl
		} else {
			from++
			if headLen > 1 {
				head += ", "
				headLen += 2
			}
			head += f
			headLen += fl
		}
		fromEnd = !fromEnd
	}
	if from <= to {
		head += ", …"
	}
	if tailLen > 1 {
		head += ", "
	}
	return head + tail
}
