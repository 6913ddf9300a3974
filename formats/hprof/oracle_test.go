package hprof

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
)

// dumps are the HPROF fixtures in testdata/hprof with their oracles.
var dumps = []struct {
	file, oracle string
}{
	{"java-leakdemo-small.hprof.gz", "java-leakdemo-small.hprof.oracle.txt"},
	{"java-leakdemo-small-gz.hprof.gz", "java-leakdemo-small-gz.hprof.gz.oracle.txt"},
	{"java-jshell-agent.hprof.gz", "java-jshell-agent.hprof.oracle.txt"},
}

func fixture(name string) string { return filepath.Join(testfixtures.Dir(), "hprof", name) }

// oracle is what VisualVM's heap library said about a dump
// (../shared/corpus/gen/java/oracle/HprofOracle.java).
type oracle struct {
	instances, bytes, gcRoots uint64
	histogram                 []oracleRow // count, shallow bytes, class
	retained                  []oracleRow // retained bytes (in a), count, class
	biggest                   []oracleBig
}

type oracleRow struct {
	a, b  uint64
	class string
}

type oracleBig struct {
	retained, shallow, id uint64
	class                 string
}

func readOracle(t *testing.T, name string) *oracle {
	t.Helper()
	f, err := os.Open(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := &oracle{}
	section := ""
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), map[bool]int{true: 16, false: 10}[strings.HasPrefix(s, "0x")], 64)
		if err != nil {
			t.Fatalf("%s: bad number %q", name, s)
		}
		return v
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "summary.totalLiveInstances: "):
			o.instances = num(fields[1])
		case strings.HasPrefix(line, "summary.totalLiveBytes: "):
			o.bytes = num(fields[1])
		case strings.HasPrefix(line, "gcRoots: "):
			o.gcRoots = num(fields[1])
		case strings.HasPrefix(line, "top classes by instance count"):
			section = "count"
		case strings.HasPrefix(line, "top classes by retained"):
			section = "retained"
		case strings.HasPrefix(line, "biggest objects"):
			section = "biggest"
		case !strings.HasPrefix(line, "  "):
			section = ""
		case section == "count":
			o.histogram = append(o.histogram, oracleRow{num(fields[0]), num(fields[1]), fields[2]})
		case section == "retained":
			o.retained = append(o.retained, oracleRow{num(fields[0]), num(fields[1]), fields[2]})
		case section == "biggest":
			o.biggest = append(o.biggest, oracleBig{num(fields[0]), num(fields[1]), num(fields[2]), fields[3]})
		}
	}
	if o.instances == 0 || len(o.histogram) == 0 || len(o.biggest) == 0 {
		t.Fatalf("%s: oracle incomplete", name)
	}
	return o
}

// open reads a fixture through the registry, as the command does.
func open(t testing.TB, name string) *model.Graph {
	t.Helper()
	g, f, err := formats.Open(fixture(name), formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name != "hprof" {
		t.Fatalf("%s detected as %s", name, f.Name)
	}
	if err := g.Validate(); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestOracle checks every dump against VisualVM's numbers: object and GC
// root counts and the class histogram must be equal; retained sizes are
// compared on the graph as VisualVM sees it (visualVMView), where most
// rows match to the byte, and the rest must stay close.
func TestOracle(t *testing.T) {
	for _, d := range dumps {
		t.Run(d.file, func(t *testing.T) {
			o := readOracle(t, d.oracle)
			g := open(t, d.file)
			if got := uint64(len(g.GCRoots)); got != o.gcRoots {
				t.Errorf("GC roots: %d, oracle %d", got, o.gcRoots)
			}
			cls := analysis.ClassifyNodes(g, nil)
			type row struct{ count, size uint64 }
			hist := map[string]row{}
			var objects, bytes uint64
			for i := range g.Nodes.ID.Len() {
				if t := g.Nodes.Type[i]; t == ntRoot || t == ntClass {
					continue // VisualVM counts class objects in no row
				}
				r := hist[cls.Name(int32(i))]
				r.count++
				r.size += g.Nodes.Size.At(i)
				hist[cls.Name(int32(i))] = r
				objects++
				bytes += g.Nodes.Size.At(i)
			}
			if objects != o.instances || bytes != o.bytes {
				t.Errorf("objects %d of %d bytes, oracle %d of %d", objects, bytes, o.instances, o.bytes)
			}
			for _, r := range o.histogram {
				if got := hist[r.class]; got != (row{r.a, r.b}) {
					t.Errorf("histogram %s: %d instances, %d bytes; oracle %d, %d", r.class, got.count, got.size, r.a, r.b)
				}
			}
			if strings.HasPrefix(d.file, "java-leakdemo") {
				// The program's own ground truth (MANIFEST section 2).
				for name, want := range map[string]uint64{"LeakDemo$Session": 400, "LeakDemo$RequestRecord": 20000, "LeakDemo$AuditListener": 6667} {
					if got := hist[name].count; got != want {
						t.Errorf("%s: %d instances, want %d", name, got, want)
					}
				}
			}
			checkRetained(t, d.file, o, g)
			// On the model itself, with "<class>" edges and class sizes,
			// the application's own classes still retain what VisualVM
			// says.
			a, err := analysis.Analyze(g, analysis.Options{})
			if err != nil {
				t.Fatal(err)
			}
			own := map[string]uint64{}
			for _, r := range a.Summary() {
				own[r.Name] = r.Retained
			}
			for _, r := range o.retained {
				if strings.HasPrefix(r.class, "LeakDemo") || strings.HasPrefix(r.class, "REPL.") || r.class == "java.util.TreeMap$Entry" {
					if own[r.class] != r.a {
						t.Errorf("model: retained by class %s: %d, oracle %d", r.class, own[r.class], r.a)
					}
				}
			}
		})
	}
}

// exactRetained is how many of the oracle's 25 retained-by-class rows and
// 15 biggest objects the VisualVM view matches to the byte.
var exactRetained = map[string][2]int{
	"java-leakdemo-small.hprof.gz":    {21, 14},
	"java-leakdemo-small-gz.hprof.gz": {21, 14},
	"java-jshell-agent.hprof.gz":      {11, 13},
}

func checkRetained(t *testing.T, file string, o *oracle, g *model.Graph) {
	a, err := analysis.Analyze(visualVMView(g), analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]analysis.ClassSummary{}
	for _, r := range a.Summary() {
		rows[r.Name] = r
	}
	// close: within 5% or 16 KB; what is left is VisualVM's own dominator
	// approximation for objects with several retainers (see the package
	// doc).
	close := func(got, want uint64) bool {
		d := max(got, want) - min(got, want)
		return d*20 <= want || d <= 16<<10
	}
	exactRows, exactBig := 0, 0
	for _, r := range o.retained {
		got := rows[r.class].Retained
		if got == r.a {
			exactRows++
		} else {
			t.Logf("retained by class %s: %d, oracle %d", r.class, got, r.a)
		}
		if !close(got, r.a) {
			t.Errorf("retained by class %s: %d, oracle %d", r.class, got, r.a)
		}
	}
	for _, b := range o.biggest {
		i, ok := a.NodeByID(b.id)
		if !ok {
			t.Errorf("biggest object 0x%x not in the graph", b.id)
			continue
		}
		if got := g.NodeSize(i); got != b.shallow {
			t.Errorf("object 0x%x: shallow size %d, oracle %d", b.id, got, b.shallow)
		}
		got := a.Dominators.Retained[i]
		if got == b.retained {
			exactBig++
		} else {
			t.Logf("retained size of 0x%x (%s): %d, oracle %d", b.id, g.NodeName(i), got, b.retained)
		}
		if !close(got, b.retained) {
			t.Errorf("retained size of 0x%x (%s): %d, oracle %d", b.id, g.NodeName(i), got, b.retained)
		}
	}
	if want := exactRetained[file]; exactRows < want[0] || exactBig < want[1] {
		t.Errorf("exact matches: %d retained-by-class rows, %d biggest objects; want at least %v", exactRows, exactBig, want)
	}
}

// visualVMView returns a copy of g as VisualVM's heap library sees it for
// retained sizes: no "<class>" and "<super>" edges (its references are
// fields, array elements, statics and the class loader), class objects
// with no size of their own (its retained-size loop visits only instance
// and array records), and objects no strong path reaches with no size
// either (it only sizes objects that have a nearest GC root, and its GC
// root search does not follow Reference.referent).
func visualVMView(g *model.Graph) *model.Graph {
	h := *g
	h.Nodes.FirstEdge = make([]uint32, len(g.Nodes.FirstEdge))
	h.Edges = model.Edges{}
	n := g.NumNodes()
	for i := 0; i < n; i++ {
		h.Nodes.FirstEdge[i] = uint32(len(h.Edges.To))
		start, end := g.EdgeRange(int32(i))
		for e := start; e < end; e++ {
			if g.Edges.Type[e] == etInternal && g.EdgeName(e) != "<classloader>" {
				continue
			}
			h.Edges.Type = append(h.Edges.Type, g.Edges.Type[e])
			h.Edges.Name = append(h.Edges.Name, g.Edges.Name[e])
			h.Edges.To = append(h.Edges.To, g.Edges.To[e])
		}
	}
	h.Nodes.FirstEdge[n] = uint32(len(h.Edges.To))
	reached := make([]bool, n)
	stack := []int32{h.Root}
	reached[h.Root] = true
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		start, end := h.EdgeRange(v)
		for e := start; e < end; e++ {
			if to := h.Edges.To[e]; h.EdgeTypes[h.Edges.Type[e]].Strength != model.Weak && !reached[to] {
				reached[to] = true
				stack = append(stack, to)
			}
		}
	}
	h.Nodes.Size = model.MakeUint64s(n)
	for i := range h.Nodes.Size.Len() {
		if reached[i] && g.Nodes.Type[i] != ntClass {
			h.Nodes.Size.Set(i, g.Nodes.Size.At(i))
		}
	}
	return &h
}
