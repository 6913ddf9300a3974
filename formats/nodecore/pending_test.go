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
			c := coretest.MakeOf(t, major, coretest.Script("core-promises.js"))
			var report struct {
				Classes          map[string]int `json:"classes"`
				QueuedMicrotasks int            `json:"queued_microtasks"`
			}
			if err := json.Unmarshal(c.Report, &report); err != nil || len(report.Classes) == 0 {
				t.Fatalf("the program's report %s: %v", c.Report, err)
			}
			g, err := ReadFile(c.Core, ReadOptions{Binary: c.Binary})
			if err != nil {
				t.Fatal(err)
			}
			sg, _, err := formats.Open(c.Snapshot, formats.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			core, a := classTotals(t, g)
			snap, _ := classTotals(t, sg)
			for class, n := range report.Classes {
				cc, sc := core[class], snap[class]
				t.Logf("%s: core %d instances, retained %d; snapshot %d, retained %d", class, cc.count, cc.retained, sc.count, sc.retained)
				if cc.count != n || sc.count != n {
					t.Errorf("%s: %d in the core, %d in the snapshot, want %d", class, cc.count, sc.count, n)
				}
				if d := math.Abs(float64(cc.retained)-float64(sc.retained)) / float64(sc.retained); d > 0.02 {
					t.Errorf("%s: retained %d in the core, %d in the snapshot (%.1f%% apart)", class, cc.retained, sc.retained, 100*d)
				}
			}
			checkAllClasses(t, core, snap, nativeClasses(sg))
			checkPendingRoots(t, g, a, report.Classes, report.QueuedMicrotasks)
		})
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
