package model

import (
	"strings"
	"testing"
)

// small builds a 4-node graph: 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 1, 3 isolated.
func small(t *testing.T) *Graph {
	t.Helper()
	g := &Graph{}
	obj, _ := g.AddNodeType(NodeType{Namespace: "test", Name: "object", Category: CatObject})
	prop, _ := g.AddEdgeType(EdgeType{Namespace: "test", Name: "property", Category: EdgeProperty})
	el, _ := g.AddEdgeType(EdgeType{Namespace: "test", Name: "element", Category: EdgeElement, Indexed: true})
	for _, s := range []string{"", "A", "B", "C", "x"} {
		g.Strings.AddString(s)
	}
	g.Nodes = Nodes{
		Type:      []uint8{obj, obj, obj, obj},
		Name:      []StringID{0, 1, 2, 3},
		ID:        NewUint64s(1, 3, 5, 7),
		Size:      NewUint64s(0, 10, 20, 30),
		FirstEdge: []uint32{0, 2, 3, 4, 4},
	}
	g.Edges = Edges{
		Type: []uint8{prop, el, prop, el},
		Name: []uint32{4, 7, 4, 0},
		To:   []NodeIndex{1, 2, 2, 1},
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGraphAccessors(t *testing.T) {
	g := small(t)
	if g.NumNodes() != 4 || g.NumEdges() != 4 || g.TotalSize() != 60 {
		t.Fatalf("counts %d %d %d", g.NumNodes(), g.NumEdges(), g.TotalSize())
	}
	if g.EdgeName(0) != "x" || g.EdgeName(1) != "7" || g.NodeName(2) != "B" {
		t.Errorf("names %q %q %q", g.EdgeName(0), g.EdgeName(1), g.NodeName(2))
	}
	if s, e := g.EdgeRange(3); s != 4 || e != 4 {
		t.Errorf("node 3 edges [%d,%d)", s, e)
	}
	if i, _ := g.AddNodeType(NodeType{Namespace: "test", Name: "object", Category: CatObject}); i != 0 {
		t.Errorf("duplicate node type added at %d", i)
	}
	if g.NodeType(0).QualifiedName() != "test:object" || g.EdgeType(1).QualifiedName() != "test:element" {
		t.Errorf("qualified names %s %s", g.NodeType(0).QualifiedName(), g.EdgeType(1).QualifiedName())
	}
}

func TestRetainers(t *testing.T) {
	g := small(t)
	r := BuildRetainers(g)
	want := [][]NodeIndex{{}, {0, 2}, {0, 1}, {}}
	for n, w := range want {
		s, e := r.Of(NodeIndex(n))
		var got []NodeIndex
		for i := s; i < e; i++ {
			got = append(got, r.From(i))
			if g.Edges.To[r.Edge[i]] != NodeIndex(n) {
				t.Errorf("retainer edge %d of node %d points at %d", r.Edge[i], n, g.Edges.To[r.Edge[i]])
			}
		}
		if len(got) != len(w) || (len(w) > 0 && (got[0] != w[0] || got[1] != w[1])) {
			t.Errorf("retainers of %d: %v, want %v", n, got, w)
		}
	}
}

// TestRetainersFromAcrossStretches checks From, which searches for an
// edge's source from a table of every 64th edge, against the source
// each edge was made with, on a graph whose ranges cross the stretches
// in every way: runs of nodes without edges (at the start, in the middle,
// at the end), nodes with one edge, and nodes with more than a stretch.
func TestRetainersFromAcrossStretches(t *testing.T) {
	g := &Graph{}
	obj, _ := g.AddNodeType(NodeType{Namespace: "test", Name: "object", Category: CatObject})
	el, _ := g.AddEdgeType(EdgeType{Namespace: "test", Name: "element", Category: EdgeElement, Indexed: true})
	g.Strings.AddString("")
	const n = 3000
	var source []NodeIndex
	g.Nodes.FirstEdge = append(g.Nodes.FirstEdge, 0)
	for v := 0; v < n; v++ {
		g.Nodes.Type = append(g.Nodes.Type, obj)
		g.Nodes.Name = append(g.Nodes.Name, 0)
		g.Nodes.ID.Append(uint64(2*v + 1))
		g.Nodes.Size.Append(8)
		var out int
		switch {
		case v < 40 || (v >= 1000 && v < 1700) || v >= n-50:
			out = 0 // runs without edges, some longer than a stretch
		case v%97 == 0:
			out = 600 // more than two stretches
		default:
			out = v % 4
		}
		for i := 0; i < out; i++ {
			g.Edges.Type = append(g.Edges.Type, el)
			g.Edges.Name = append(g.Edges.Name, uint32(i))
			g.Edges.To = append(g.Edges.To, NodeIndex((v*7+i*13)%n))
			source = append(source, NodeIndex(v))
		}
		g.Nodes.FirstEdge = append(g.Nodes.FirstEdge, uint32(len(g.Edges.To)))
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	if g.NumEdges() < 4<<nearShift {
		t.Fatalf("only %d edges: the test needs several stretches", g.NumEdges())
	}
	r := BuildRetainers(g)
	seen := 0
	for v := NodeIndex(0); v < n; v++ {
		s, e := r.Of(v)
		for i := s; i < e; i++ {
			edge := r.Edge[i]
			if g.Edges.To[edge] != v {
				t.Fatalf("retainer %d of node %d is edge %d, which points at %d", i, v, edge, g.Edges.To[edge])
			}
			if i > s && r.Edge[i-1] >= edge {
				t.Fatalf("retainers of node %d out of edge order: %d then %d", v, r.Edge[i-1], edge)
			}
			if got := r.From(i); got != source[edge] {
				t.Fatalf("From(%d) (edge %d) = %d, want %d", i, edge, got, source[edge])
			}
			seen++
		}
	}
	if seen != g.NumEdges() {
		t.Errorf("the index holds %d retainers of %d edges", seen, g.NumEdges())
	}
}

func TestValidateCatchesBrokenGraphs(t *testing.T) {
	cases := map[string]func(g *Graph){
		"edge past end":   func(g *Graph) { g.Edges.To[1] = 9 },
		"negative target": func(g *Graph) { g.Edges.To[1] = -1 },
		"bad type":        func(g *Graph) { g.Nodes.Type[0] = 5 },
		"bad name":        func(g *Graph) { g.Nodes.Name[0] = 50 },
		"bad edge name":   func(g *Graph) { g.Edges.Name[0] = 50 },
		"csr not monotone": func(g *Graph) {
			g.Nodes.FirstEdge[1], g.Nodes.FirstEdge[2] = 3, 2
		},
		"csr short":      func(g *Graph) { g.Nodes.FirstEdge = g.Nodes.FirstEdge[:4] },
		"root":           func(g *Graph) { g.Root = 4 },
		"column lengths": func(g *Graph) { g.Nodes.Size.Truncate(3) },
		"detachedness":   func(g *Graph) { g.Detachedness = []uint8{0} },
		"location node":  func(g *Graph) { g.Locations = []Location{{Node: 4}} },
		"script column": func(g *Graph) {
			g.Locations = []Location{{Node: 1}, {Node: 2}}
			g.LocationScripts = []NodeIndex{3}
		},
		"script node": func(g *Graph) {
			g.Locations = []Location{{Node: 1}}
			g.LocationScripts = []NodeIndex{-1}
		},
		"script node past end": func(g *Graph) {
			g.Locations = []Location{{Node: 1}}
			g.LocationScripts = []NodeIndex{4}
		},
	}
	// A script column is optional, and may be empty with no locations.
	g := small(t)
	g.Locations, g.LocationScripts = []Location{{Node: 1}}, []NodeIndex{3}
	if err := g.Validate(); err != nil {
		t.Errorf("valid location script: %v", err)
	}
	g.Locations, g.LocationScripts = nil, []NodeIndex{}
	if err := g.Validate(); err != nil {
		t.Errorf("empty location script column: %v", err)
	}
	for name, breakIt := range cases {
		g := small(t)
		breakIt(g)
		if err := g.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestStrings(t *testing.T) {
	var s Strings
	big := strings.Repeat("x", stringChunkSize)
	ids := []StringID{s.AddString("a"), s.AddString(""), s.AddString(big), s.AddString("b")}
	for i := 0; i < 3*indexChunk; i++ {
		s.AddString("n")
	}
	if s.At(ids[0]) != "a" || s.At(ids[1]) != "" || s.At(ids[2]) != big || s.At(ids[3]) != "b" || s.Len() != 4+3*indexChunk {
		t.Errorf("strings read back wrong; len %d", s.Len())
	}
	if s.At(StringID(s.Len()-1)) != "n" || s.Bytes() != uint64(2+len(big)+3*indexChunk) {
		t.Errorf("last %q bytes %d", s.At(StringID(s.Len()-1)), s.Bytes())
	}
	in := NewInterner(&s)
	x, y := in.Intern([]byte("dup")), in.Intern([]byte("dup"))
	if x != y || s.At(x) != "dup" {
		t.Errorf("interner gave %d and %d", x, y)
	}
}

func TestStringsAddBlock(t *testing.T) {
	var s Strings
	s.AddString("before")
	lens := make([]uint32, indexChunk+2) // crosses an index chunk
	lens[0], lens[1], lens[len(lens)-1] = 3, 0, 2
	data := []byte("abczz")
	if !s.AddBlock(data, lens) {
		t.Fatal("AddBlock refused lengths that add up")
	}
	after := s.AddString("after")
	if s.Len() != 1+len(lens)+1 || s.At(1) != "abc" || s.At(2) != "" || s.At(StringID(len(lens))) != "zz" || s.At(after) != "after" {
		t.Errorf("read back %q %q %q %q, len %d", s.At(1), s.At(2), s.At(StringID(len(lens))), s.At(after), s.Len())
	}
	if string(data) != "abczz" {
		t.Errorf("a later Add wrote into the block: %q", data)
	}
	if s.AddBlock([]byte("abc"), []uint32{1, 1}) {
		t.Error("AddBlock took lengths that do not add up to the data")
	}
}

func TestAllocGrow(t *testing.T) {
	a := Alloc[uint64](1 << 20)
	if len(a) != 1<<20 || a[12345] != 0 {
		t.Fatal("Alloc")
	}
	var s []int32
	for i := 0; i < 1000; i++ {
		s = Grow(s, 1)
		s = append(s, int32(i))
	}
	if len(s) != 1000 || s[999] != 999 || s[0] != 0 {
		t.Errorf("Grow lost data")
	}
}

func TestCategoryNames(t *testing.T) {
	if CatConsString.String() != "concatenated string" || !CatSlicedString.IsString() || CatObject.IsString() ||
		EdgeContext.String() != "closure variable" || Ephemeron.String() != "ephemeron" || Category(200).String() != "other" {
		t.Error("names")
	}
}

func TestIDMap(t *testing.T) {
	// Small odd ids (the direct table), even ones and odd ones past its
	// span (the hash table, grown well past its first size), mixed.
	m := NewIDMap(4)
	span := uint64(1024 * directSpan)
	ids := []uint64{}
	for i := uint64(0); i < 5000; i++ {
		ids = append(ids, 2*i+1, 2*i+2, 2*(span+i)+1, 0x7f00_0000_0000+8*i)
	}
	for i, id := range ids {
		if !m.Insert(id, int32(i)) {
			t.Fatalf("insert %d (id %d) refused", i, id)
		}
	}
	for i, id := range ids {
		if got := m.Get(id); got != int32(i) {
			t.Fatalf("Get(%d) = %d, want %d", id, got, i)
		}
	}
	for _, id := range []uint64{7, 8, 2*span + 1, 0x7f00_0000_0000} {
		if m.Insert(id, 99) {
			t.Errorf("duplicate id %d accepted", id)
		}
	}
	for _, id := range []uint64{0, 10001, 10002 + 2*span, 2*(span+6000) + 1, 0x7f00_0000_0004} {
		if got := m.Get(id); got != -1 {
			t.Errorf("absent id %d found at %d", id, got)
		}
	}
	if m.direct == nil || m.n != 15000 {
		t.Errorf("direct table %v, %d hashed; want the 5,000 small odd ids direct", m.direct != nil, m.n)
	}
	// Addresses only: no direct table; an empty map finds nothing.
	a := NewIDMap(10)
	if a.Get(1) != -1 || a.Get(2) != -1 || !a.Insert(0x1000, 0) || a.Get(0x1000) != 0 || a.direct != nil {
		t.Error("an address-only map")
	}
}
