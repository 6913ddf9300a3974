package nodecore

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/model"
)

// classTotal is one class name's instances and retained bytes, summed over
// the classes of that name (a snapshot keys classes by allocation site
// too, a core by name only).
type classTotal struct {
	count    int
	retained uint64
}

// classTotals returns the Summary of g by class name.
func classTotals(t *testing.T, g *model.Graph) (map[string]classTotal, *analysis.Analysis) {
	t.Helper()
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]classTotal{}
	for _, c := range a.Summary() {
		x := out[c.Name]
		x.count += c.Count
		x.retained += c.Retained
		out[c.Name] = x
	}
	return out, a
}

// nativeClasses are the classes a snapshot has only from Node's embedder
// graph (native nodes: "Node / ...", backing stores), which no core has.
func nativeClasses(g *model.Graph) map[string]bool {
	out := map[string]bool{}
	for i := range g.NumNodes() {
		if g.NodeType(int32(i)).Name == "native" {
			name := g.NodeName(int32(i))
			out[name] = true
			out["Detached "+name] = true
		}
	}
	return out
}

// TestPendingPromises reads a core of core-promises.js, whose requests
// await a promise that never settles, and compares it with the heap
// snapshot the program wrote just before it was cored:
//
//   - each of the program's classes (RequestContext and its Payload, held
//     by suspended async functions; RenderJob, by promise reactions'
//     closures; StreamState, by suspended generators; QueuedJob, by
//     microtasks still queued) has the program's count of instances in
//     both, and retained sizes within 2%;
//   - every JavaScript class (named by constructor, or a DevTools
//     interface "{a, b}") has counts within max(3, 2%): the rule for all
//     classes. Left out are the V8-internal categories ("(system)",
//     "(compiled code)", "(array)", "(object shape)"...: V8 files its
//     internal objects by rules the core reader follows only in part, and
//     some have no size a core can compute) and the native classes of
//     Node's embedder graph, which a core does not have;
//   - the queued microtasks hang from "(Microtask queue)", one edge each;
//     no object of the program's classes is held by "(Native roots)" (a
//     stale word of native memory pointing to one is a weak edge);
//     every RequestContext is dominated by a suspended async function
//     ("Generator"), as in the snapshot.
func TestPendingPromises(t *testing.T) {
	for _, major := range coretest.Majors(t) {
		t.Run("node"+coretest.Pinned[major], func(t *testing.T) {
			r := readBoth(t, major, "core-promises.js")
			r.checkProgramClasses(t, r.report.Classes)
			checkAllClasses(t, r.core, r.snap, nativeClasses(r.snapshot))
			checkPendingRoots(t, r.g, r.a, r.report.Classes, r.report.QueuedMicrotasks)
		})
	}
}

// TestStuckServer is TestPendingPromises's comparison on core-server.js,
// a program written after the rules: an HTTP server whose 300 handlers
// await a connection pool that never frees one, under real requests from
// the same process, and async generator pipelines stalled on the same
// pool. The program's classes (Session, Batch, Record) and Node's HTTP
// objects (IncomingMessage, ServerResponse, ClientRequest, their
// Sockets) have the same counts in the core and the snapshot, the
// program's retained sizes within 2%. Node's sockets retain less in a
// core (no embedder graph: their TCP wrap's C++ object is a native node
// of the snapshot), so their retained sizes are not compared.
func TestStuckServer(t *testing.T) {
	for _, major := range coretest.Majors(t) {
		t.Run("node"+coretest.Pinned[major], func(t *testing.T) {
			r := readBoth(t, major, "core-server.js")
			r.checkProgramClasses(t, r.report.Classes)
			// At least the program's count: stdout is a Socket too when
			// it is a pipe.
			for class, n := range r.report.HTTP {
				if c, s := r.core[class].count, r.snap[class].count; c != s || c < n {
					t.Errorf("%s: %d in the core, %d in the snapshot, want the same, at least %d", class, c, s, n)
				}
			}
		})
	}
}

// bothRead is a core of a program and the snapshot it wrote just before,
// read and summarised.
type bothRead struct {
	report struct {
		Classes          map[string]int `json:"classes"`
		HTTP             map[string]int `json:"http"`
		QueuedMicrotasks int            `json:"queued_microtasks"`
	}
	g, snapshot *model.Graph
	a           *analysis.Analysis
	core, snap  map[string]classTotal
}

// readBoth cores the program of testdata/gen under the major's node and
// reads the core and the snapshot.
func readBoth(t *testing.T, major int, program string) *bothRead {
	t.Helper()
	c := coretest.MakeOf(t, major, coretest.Script(program))
	r := &bothRead{}
	if err := json.Unmarshal(c.Report, &r.report); err != nil || len(r.report.Classes) == 0 {
		t.Fatalf("the program's report %s: %v", c.Report, err)
	}
	var err error
	if r.g, err = ReadFile(c.Core, ReadOptions{Binary: c.Binary}); err != nil {
		t.Fatal(err)
	}
	if r.snapshot, _, err = formats.Open(c.Snapshot, formats.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	r.core, r.a = classTotals(t, r.g)
	r.snap, _ = classTotals(t, r.snapshot)
	return r
}

// checkProgramClasses checks that each of the program's classes has its
// count of instances in the core and the snapshot, and retained sizes
// within 2% of each other.
func (r *bothRead) checkProgramClasses(t *testing.T, classes map[string]int) {
	t.Helper()
	for class, n := range classes {
		cc, sc := r.core[class], r.snap[class]
		t.Logf("%s: core %d instances, retained %d; snapshot %d, retained %d", class, cc.count, cc.retained, sc.count, sc.retained)
		if cc.count != n || sc.count != n {
			t.Errorf("%s: %d in the core, %d in the snapshot, want %d", class, cc.count, sc.count, n)
		}
		if d := math.Abs(float64(cc.retained)-float64(sc.retained)) / float64(sc.retained); d > 0.02 {
			t.Errorf("%s: retained %d in the core, %d in the snapshot (%.1f%% apart)", class, cc.retained, sc.retained, 100*d)
		}
	}
}

// checkAllClasses applies the rule for all classes (TestPendingPromises).
func checkAllClasses(t *testing.T, core, snap map[string]classTotal, native map[string]bool) {
	t.Helper()
	compared := 0
	for name := range union(core, snap) {
		if strings.HasPrefix(name, "(") || native[name] {
			continue
		}
		compared++
		a, b := core[name].count, snap[name].count
		if d := math.Abs(float64(a - b)); d > max(3, 0.02*float64(max(a, b))) {
			t.Errorf("class %q: %d in the core, %d in the snapshot", name, a, b)
		}
	}
	t.Logf("%d JavaScript classes compared", compared)
}

func union(a, b map[string]classTotal) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// checkPendingRoots checks the roots of the core's graph (see
// TestPendingPromises).
func checkPendingRoots(t *testing.T, g *model.Graph, a *analysis.Analysis, classes map[string]int, queued int) {
	t.Helper()
	byName := map[string]int32{}
	for i := range g.NumNodes() {
		if g.NodeType(int32(i)).Name == "synthetic" {
			byName[g.NodeName(int32(i))] = int32(i)
		}
	}
	// children are the nodes root holds by strong edges.
	children := func(root string) []int32 {
		n, ok := byName[root]
		if !ok {
			t.Fatalf("no %q node", root)
		}
		var out []int32
		s, e := g.EdgeRange(n)
		for j := s; j < e; j++ {
			if g.EdgeType(j).Strength != model.Weak {
				out = append(out, g.Edges.To[j])
			}
		}
		return out
	}
	jobs := 0
	for _, n := range children("(Microtask queue)") {
		if strings.HasPrefix(g.NodeName(n), "system / ") {
			jobs++
		}
	}
	if jobs != queued {
		t.Errorf("(Microtask queue) holds %d microtasks, want %d", jobs, queued)
	}
	if len(children("(Global handles)")) == 0 {
		t.Error("no global handles")
	}
	for _, n := range children("(Native roots)") {
		if _, ok := classes[g.NodeName(n)]; ok && g.NodeType(n).Name == "object" {
			t.Errorf("(Native roots) holds %s @0x%x", g.NodeName(n), g.NodeID(n))
		}
	}
	undominated := 0
	for i := range g.NumNodes() {
		if g.NodeName(int32(i)) != "RequestContext" || g.NodeType(int32(i)).Name != "object" {
			continue
		}
		found := false
		for _, d := range a.DominatorChain(int32(i)) {
			if g.NodeName(d) == "Generator" {
				found = true
				break
			}
		}
		if !found {
			undominated++
		}
	}
	if undominated > 0 {
		t.Errorf("%d RequestContexts are not dominated by a suspended async function", undominated)
	}
}
