// Package analysistest holds what the tests of the analysis packages
// share: hand-built V8-like graphs (Build), the bundled fixtures read and
// analysed once per test binary, and the benchmarks' snapshot and peak RSS.
package analysistest

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/spidermonkey"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// V8 type tables as the V8 reader builds them.
var (
	V8NodeTypes = []string{"hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native",
		"synthetic", "concatenated string", "sliced string", "symbol", "bigint", "object shape"}
	V8EdgeTypes = []model.EdgeType{
		{Namespace: "v8", Name: "context", Category: model.EdgeContext},
		{Namespace: "v8", Name: "element", Category: model.EdgeElement, Indexed: true},
		{Namespace: "v8", Name: "property", Category: model.EdgeProperty},
		{Namespace: "v8", Name: "internal", Category: model.EdgeInternal},
		{Namespace: "v8", Name: "hidden", Category: model.EdgeInternal, Indexed: true},
		{Namespace: "v8", Name: "shortcut", Strength: model.Shortcut},
		{Namespace: "v8", Name: "weak", Category: model.EdgeInternal, Strength: model.Weak},
		{Namespace: "v8", Name: "internal", Category: model.EdgeInternal, Strength: model.Ephemeron},
	}
)

// v8Categories is the V8 reader's mapping to neutral categories.
var v8Categories = map[string]model.Category{
	"hidden": model.CatInternal, "array": model.CatArray, "string": model.CatString, "object": model.CatObject,
	"code": model.CatCode, "closure": model.CatClosure, "regexp": model.CatRegExp, "number": model.CatHeapNumber,
	"native": model.CatNative, "synthetic": model.CatSynthetic, "concatenated string": model.CatConsString,
	"sliced string": model.CatSlicedString, "symbol": model.CatSymbol, "bigint": model.CatBigInt, "object shape": model.CatShape,
}

// Edge type indexes in V8EdgeTypes.
const (
	ContextEdge   = 0
	ElementEdge   = 1
	PropertyEdge  = 2
	InternalEdge  = 3
	HiddenEdge    = 4
	ShortcutEdge  = 5
	WeakEdge      = 6
	EphemeronEdge = 7
)

// Node is a node of a hand-built graph: its V8 type name, name and size.
type Node struct {
	Type string
	Name string
	Size uint64
}

// Edge is an edge of a hand-built graph; Type indexes V8EdgeTypes.
type Edge struct {
	From, To int32
	Type     int
	Name     string // for named types
	Index    uint32 // for indexed types
}

// Build makes a V8-like graph: node 0 is the root unless root says
// otherwise; ids are 2*i+1.
func Build(nodes []Node, edges []Edge) *model.Graph {
	g := &model.Graph{}
	for _, t := range V8NodeTypes {
		g.NodeTypes = append(g.NodeTypes, model.NodeType{Namespace: "v8", Name: t, Category: v8Categories[t]})
	}
	g.EdgeTypes = append(g.EdgeTypes, V8EdgeTypes...)
	strs := map[string]uint32{}
	str := func(s string) uint32 {
		if id, ok := strs[s]; ok {
			return id
		}
		id := g.Strings.AddString(s)
		strs[s] = id
		return id
	}
	typeIndex := map[string]uint8{}
	for i, t := range V8NodeTypes {
		typeIndex[t] = uint8(i)
	}
	n := len(nodes)
	g.Nodes.FirstEdge = make([]uint32, n+1)
	for _, e := range edges {
		g.Nodes.FirstEdge[e.From+1]++
	}
	for i := 1; i <= n; i++ {
		g.Nodes.FirstEdge[i] += g.Nodes.FirstEdge[i-1]
	}
	m := len(edges)
	g.Edges.Type = make([]uint8, m)
	g.Edges.Name = make([]uint32, m)
	g.Edges.To = make([]int32, m)
	pos := append([]uint32(nil), g.Nodes.FirstEdge[:n]...)
	for _, e := range edges {
		p := pos[e.From]
		pos[e.From]++
		g.Edges.Type[p] = uint8(e.Type)
		g.Edges.To[p] = e.To
		if V8EdgeTypes[e.Type].Indexed {
			g.Edges.Name[p] = e.Index
		} else {
			g.Edges.Name[p] = str(e.Name)
		}
	}
	for i, nd := range nodes {
		t, ok := typeIndex[nd.Type]
		if !ok {
			panic("unknown type " + nd.Type)
		}
		g.Nodes.Type = append(g.Nodes.Type, t)
		g.Nodes.Name = append(g.Nodes.Name, str(nd.Name))
		g.Nodes.ID.Append(uint64(2*i + 1))
		g.Nodes.Size.Append(nd.Size)
	}
	if err := g.Validate(); err != nil {
		panic(err)
	}
	return g
}

// Obj is shorthand for an object node.
func Obj(name string, size uint64) Node { return Node{Type: "object", Name: name, Size: size} }

// Prop is shorthand for a property edge.
func Prop(from, to int32, name string) Edge {
	return Edge{From: from, To: to, Type: PropertyEdge, Name: name}
}

// LoadFixture reads the bundled V8 snapshot testdata/name.heapsnapshot.gz.
func LoadFixture(t testing.TB, name string) *model.Graph {
	return ReadFixture(t, name+".heapsnapshot.gz")
}

// ReadFixture reads the bundled V8 dump testdata/name.
func ReadFixture(t testing.TB, name string) *model.Graph {
	t.Helper()
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), name), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// analyzed caches one Analysis per fixture: the inspection tests read
// several views of the same snapshots.
var analyzed sync.Map

// AnalyzeFixture analyses the bundled V8 snapshot
// testdata/name.heapsnapshot.gz, once per test binary.
func AnalyzeFixture(t *testing.T, name string) *analysis.Analysis {
	t.Helper()
	if a, ok := analyzed.Load(name); ok {
		return a.(*analysis.Analysis)
	}
	a, err := analysis.Analyze(LoadFixture(t, name), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	analyzed.Store(name, a)
	return a
}

// AnalyzeDump analyses a dump of any runtime under testdata (path relative
// to it), cached like AnalyzeFixture.
func AnalyzeDump(t *testing.T, rel string) *analysis.Analysis {
	t.Helper()
	if a, ok := analyzed.Load(rel); ok {
		return a.(*analysis.Analysis)
	}
	path := filepath.Join(testfixtures.Dir(), rel)
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	var g *model.Graph
	var err error
	switch {
	case strings.Contains(rel, ".hprof"):
		g, err = hprof.ReadFile(path, hprof.ReadOptions{})
	case strings.HasSuffix(rel, ".fxsnapshot"):
		g, err = spidermonkey.ReadFile(path, spidermonkey.ReadOptions{})
	default:
		g, err = v8.ReadFile(path, v8.ReadOptions{})
	}
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	analyzed.Store(rel, a)
	return a
}

// BenchSnapshot is the snapshot the benchmarks read, named by
// HEAPX_BENCH_SNAPSHOT; without it the benchmark is skipped.
func BenchSnapshot(b *testing.B) string {
	path := os.Getenv("HEAPX_BENCH_SNAPSHOT")
	if path == "" {
		b.Skip("set HEAPX_BENCH_SNAPSHOT to a .heapsnapshot file")
	}
	return path
}

// PeakRSS returns the process's peak resident set size in MB (VmHWM), or
// -1 where /proc is not available.
func PeakRSS() float64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}

// LoadBench reads BenchSnapshot.
func LoadBench(b *testing.B) *model.Graph {
	g, err := v8.ReadFile(BenchSnapshot(b), v8.ReadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return g
}
