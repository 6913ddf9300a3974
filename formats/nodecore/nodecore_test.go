package nodecore

import (
	"fmt"
	"math"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/model"
)

// classesOf returns, per class DevTools would show, the instance count and
// retained size (analysis.Summary) of g.
func classesOf(t *testing.T, g *model.Graph) map[string]analysis.ClassSummary {
	t.Helper()
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]analysis.ClassSummary{}
	for _, c := range a.Summary() {
		out[c.Name] = c
	}
	return out
}

// describe renders a property value for messages and comparisons: a Smi
// as its number, a string as its text, a heap number as its value, an
// object as "<Class>".
func describe(t *testing.T, p *Process, g *model.Graph, byAddr map[uint64]int32, v uint64) string {
	h := p.Heap
	if h.IsSmi(v) {
		return fmt.Sprint(h.SmiValue(v))
	}
	if !h.IsHeapObject(v) {
		return fmt.Sprintf("0x%x", v)
	}
	a := h.Untag(v)
	ty, err := h.InstanceType(a)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case h.IsString(ty):
		s, _, err := h.String(a, -1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	case h.TypeName(ty) == "HEAP_NUMBER_TYPE":
		f, err := h.Number(a)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(f)
	}
	if n, ok := byAddr[a]; ok {
		return "<" + g.NodeName(n) + ">"
	}
	return "<" + h.TypeName(ty) + ">"
}

// TestKnownState reads core-state.js's core under each major of the run
// and checks what the program says it holds: exactly N Tickets with their
// id, name, price and owner, the closures' captured variables, one string
// of every representation decoded, and the user classes' counts and
// retained sizes against the heap snapshot the program wrote at the same
// state.
func TestKnownState(t *testing.T) {
	for _, major := range coretest.Majors(t) {
		t.Run("node"+coretest.Pinned[major], func(t *testing.T) {
			c := coretest.Shared(t, major)
			p, err := Open(c.Core, c.Binary)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if p.NodeMajor != major {
				t.Errorf("NodeMajor %d, want %d (%s)", p.NodeMajor, major, p.RuntimeName())
			}
			g, err := p.Graph(nil)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := DropGarbage(g); n == 0 {
				t.Error("no garbage in a core of a process that allocated and dropped objects")
			}
			byAddr := make(map[uint64]int32, g.NumNodes())
			for i, id := range g.Nodes.ID.Slice() {
				byAddr[id] = int32(i)
			}
			ex := c.Expect
			checkTickets(t, p, g, byAddr, ex)
			checkCounters(t, p, g, byAddr, ex)
			checkStrings(t, p, g, ex)
			checkAgainstSnapshot(t, g, c, ex)
		})
	}
}

func checkTickets(t *testing.T, p *Process, g *model.Graph, byAddr map[uint64]int32, ex coretest.Expect) {
	seen := map[int]bool{}
	for i := range g.NumNodes() {
		n := int32(i)
		if g.NodeType(n).Name != "object" || g.NodeName(n) != ex.Tickets.Class {
			continue
		}
		props, err := p.Heap.Properties(g.NodeID(n))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, pr := range props {
			got[pr.Name] = describe(t, p, g, byAddr, pr.Value)
		}
		var id int
		if _, err := fmt.Sscan(got["id"], &id); err != nil || id < 0 || id >= ex.Tickets.Count || seen[id] {
			t.Errorf("Ticket at 0x%x: id %q is not a new one of 0..%d", g.NodeID(n), got["id"], ex.Tickets.Count-1)
			continue
		}
		seen[id] = true
		owner := ex.Tickets.Owners[id%len(ex.Tickets.Owners)]
		want := map[string]string{"id": fmt.Sprint(id), "name": fmt.Sprintf("ticket-%d", id),
			"price": fmt.Sprint(float64(id) + 0.25), "owner": "<" + ex.Tickets.OwnerClass + ">"}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("Ticket %d: %s = %q, want %q", id, k, got[k], v)
			}
		}
		ov := props[len(props)-1].Value
		oprops, err := p.Heap.Properties(p.Heap.Untag(ov))
		if err != nil || len(oprops) != 1 || describe(t, p, g, byAddr, oprops[0].Value) != owner {
			t.Errorf("Ticket %d: owner's properties %v (%v), want name %q", id, oprops, err, owner)
		}
	}
	if len(seen) != ex.Tickets.Count {
		t.Errorf("%d Tickets, want exactly %d", len(seen), ex.Tickets.Count)
	}
}

func checkCounters(t *testing.T, p *Process, g *model.Graph, byAddr map[uint64]int32, ex coretest.Expect) {
	found := map[string]bool{}
	for i := range g.NumNodes() {
		n := int32(i)
		if g.NodeType(n).Name != "closure" || g.NodeName(n) != ex.Counters[0].Function {
			continue
		}
		vars, err := p.Heap.Variables(g.NodeID(n))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, v := range vars {
			got[v.Name] = describe(t, p, g, byAddr, v.Value)
		}
		for _, want := range ex.Counters {
			if got["label"] == want.Label {
				found[want.Label] = true
				if got["count"] != fmt.Sprint(want.Count) {
					t.Errorf("counter %s: count %q, want %d (variables %v)", want.Label, got["count"], want.Count, got)
				}
			}
		}
	}
	for _, want := range ex.Counters {
		if !found[want.Label] {
			t.Errorf("no %s closure capturing label %q", want.Function, want.Label)
		}
	}
}

func checkStrings(t *testing.T, p *Process, g *model.Graph, ex coretest.Expect) {
	h := p.Heap
	want := map[string]string{"seq": ex.Strings.SeqOneByte, "seq2": ex.Strings.SeqTwoByte, "cons": ex.Strings.Cons,
		"sliced": ex.Strings.Sliced}
	found := map[string]bool{}
	external := false
	for i := range g.NumNodes() {
		a := g.NodeID(int32(i))
		if a%2 == 1 {
			continue // synthetic
		}
		ty, err := h.InstanceType(a)
		if err != nil || !h.IsString(ty) {
			continue
		}
		rep := h.StringRepresentation(ty)
		if rep == "external" {
			s, _, err := h.String(a, len(ex.Strings.ExternalPrefix))
			if err == nil && s == ex.Strings.ExternalPrefix {
				if n, _ := h.StringLength(a); n == ex.Strings.ExternalLength {
					external = true
				}
			}
			continue
		}
		s, _, err := h.String(a, -1)
		if err != nil {
			t.Errorf("string at 0x%x (%s): %v", a, rep, err)
			continue
		}
		key := rep
		if rep == "seq" && !h.StringOneByte(ty) {
			key = "seq2"
		}
		if want[key] == s {
			found[key] = true
		}
	}
	for k, v := range want {
		if !found[k] {
			t.Errorf("no %s string %q decoded", k, v)
		}
	}
	if !external {
		t.Errorf("no external string of %d characters starting %q", ex.Strings.ExternalLength, ex.Strings.ExternalPrefix)
	}
}

// checkAgainstSnapshot compares the program's classes with the snapshot it
// wrote at the same state: the same counts, and retained sizes within 10%
// (docs/nodecore.md says where the rules differ).
func checkAgainstSnapshot(t *testing.T, g *model.Graph, c *coretest.Core, ex coretest.Expect) {
	if c.Snapshot == "" {
		t.Fatal("the program wrote no snapshot")
	}
	sg, _, err := formats.Open(c.Snapshot, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	core, snap := classesOf(t, g), classesOf(t, sg)
	for _, class := range []string{ex.Tickets.Class, ex.Tickets.OwnerClass} {
		cc, sc := core[class], snap[class]
		if cc.Count != sc.Count {
			t.Errorf("%s: %d in the core, %d in the snapshot", class, cc.Count, sc.Count)
		}
		if d := math.Abs(float64(cc.Retained)-float64(sc.Retained)) / float64(sc.Retained); d > 0.10 {
			t.Errorf("%s: retained %d in the core, %d in the snapshot (%.0f%% apart)", class, cc.Retained, sc.Retained, 100*d)
		}
		t.Logf("%s: core %d instances, retained %d; snapshot %d, retained %d", class, cc.Count, cc.Retained, sc.Count, sc.Retained)
	}
}

// BenchmarkReadCore reads core-state.js's core (Node 20 unless
// HEAPX_CORE_NODE names another) into a graph, garbage dropped.
func BenchmarkReadCore(b *testing.B) {
	c := coretest.Shared(b, coretest.Majors(b)[0])
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadFile(c.Core, ReadOptions{Binary: c.Binary}); err != nil {
			b.Fatal(err)
		}
	}
}
