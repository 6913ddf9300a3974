package main

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// viewsGolden is the part of a DevTools golden file the summary, top and
// paths tests compare: DevTools' total, class count, its top 50 classes and
// its top 50 objects by retained size.
type viewsGolden struct {
	TotalSizeDevTools   uint64 `json:"total_size_devtools"`
	AggregateClassCount int    `json:"aggregate_class_count"`
	TopConstructors     []struct {
		Name         string `json:"name"`
		Key          string `json:"key"`
		Count        int    `json:"count"`
		SelfSize     uint64 `json:"self_size"`
		RetainedSize uint64 `json:"retained_size"`
		Distance     int32  `json:"distance"`
	} `json:"top_constructors_by_retained_size"`
	TopNodes []struct {
		ID           uint64 `json:"id"`
		Type         string `json:"type"`
		Name         string `json:"name"`
		ClassName    string `json:"class_name"`
		SelfSize     uint64 `json:"self_size"`
		RetainedSize uint64 `json:"retained_size"`
		Distance     int32  `json:"distance"`
		DominatorID  uint64 `json:"dominator_id"`
	} `json:"top_nodes_by_retained_size"`
}

func readViewsGolden(t *testing.T, name string) viewsGolden {
	t.Helper()
	b, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatal(err)
	}
	var g viewsGolden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", goldenPath(name), err)
	}
	return g
}

// decodeStrict parses out into v and fails on unknown fields, so the
// output stays the documented object.
func decodeStrict(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("output is not the documented JSON object: %v\n%.2000s", err, out)
	}
}

// TestSummaryMatchesDevTools compares `summary --json` with DevTools'
// Summary view: total size, number of classes, and count, distance,
// shallow and retained size of its 50 largest classes.
func TestSummaryMatchesDevTools(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			want := readViewsGolden(t, f.name)
			var s query.SummaryJSON
			decodeStrict(t, ok(t, "summary", "--json", "-n", "0", f.path), &s)
			if s.TotalSize != want.TotalSizeDevTools || s.ClassCount != want.AggregateClassCount || len(s.Classes) != s.ClassCount {
				t.Errorf("total size %d, %d classes (%d listed); DevTools: %d, %d",
					s.TotalSize, s.ClassCount, len(s.Classes), want.TotalSizeDevTools, want.AggregateClassCount)
			}
			byKey := map[string]query.ClassJSON{}
			for _, c := range s.Classes {
				byKey[c.Key] = c
			}
			for _, w := range want.TopConstructors {
				c, found := byKey[w.Key]
				if !found {
					t.Errorf("class %q missing", w.Key)
					continue
				}
				if c.Constructor != w.Name || c.Count != w.Count || c.ShallowSize != w.SelfSize || c.RetainedSize != w.RetainedSize || c.Distance != w.Distance {
					t.Errorf("class %q: got %+v, DevTools %+v", w.Key, c, w)
				}
			}
			// -n limits the rows, not the totals.
			var top3 query.SummaryJSON
			decodeStrict(t, ok(t, "summary", "--json", "-n", "3", f.path), &top3)
			if len(top3.Classes) != 3 || top3.ClassCount != s.ClassCount || top3.Classes[0] != s.Classes[0] {
				t.Errorf("-n 3: %d rows of %d classes", len(top3.Classes), top3.ClassCount)
			}
		})
	}
}

// TestTopMatchesDevTools compares `top --json` with the 50 objects DevTools
// ranks highest by retained size.
func TestTopMatchesDevTools(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			want := readViewsGolden(t, f.name)
			var top query.TopJSON
			decodeStrict(t, ok(t, "top", "--json", "-n", strconv.Itoa(len(want.TopNodes)), f.path), &top)
			if len(top.Nodes) != len(want.TopNodes) {
				t.Fatalf("%d nodes, want %d", len(top.Nodes), len(want.TopNodes))
			}
			byID := map[uint64]int{}
			for i, w := range want.TopNodes {
				byID[w.ID] = i
			}
			for i, n := range top.Nodes {
				// Equal retained sizes may be listed in another order, so
				// ranks are compared by size and rows by id.
				if n.RetainedSize != want.TopNodes[i].RetainedSize {
					t.Errorf("rank %d: retained size %d, DevTools %d", i+1, n.RetainedSize, want.TopNodes[i].RetainedSize)
				}
				j, found := byID[n.ID]
				if !found {
					continue
				}
				w := want.TopNodes[j]
				name := []rune(n.Name)
				if len(name) > 200 {
					name = name[:200] // the golden cuts names there
				}
				if n.Type != w.Type || string(name) != w.Name || n.Constructor != w.ClassName || n.ShallowSize != w.SelfSize ||
					n.Distance != w.Distance || n.DominatorID != w.DominatorID {
					t.Errorf("@%d: got %+v, DevTools %+v", n.ID, n, w)
				}
			}
		})
	}
}

// TestPaths checks that `paths` returns real paths: the first path to
// each of DevTools' top objects that a user root reaches is from a user
// root, at most 3 hops longer than DevTools' distance (a longer path
// through the program's code is preferred to one through the runtime's),
// starts at the root and ends at the object, and every step leads on
// from the one before.
func TestPaths(t *testing.T) {
	t.Parallel()
	f := fixture{"node-basic", "../../testdata/node-basic.heapsnapshot.gz"}
	want := readViewsGolden(t, f.name)
	checked := 0
	for _, w := range want.TopNodes {
		if w.Distance < 1 || w.Distance >= 100000000 || checked == 5 {
			continue
		}
		checked++
		var p query.PathsJSON
		decodeStrict(t, ok(t, "paths", "--json", "--id", strconv.FormatUint(w.ID, 10), "-n", "2", f.path), &p)
		if p.Target.ID != w.ID || p.Target.RetainedSize != w.RetainedSize || len(p.Paths) == 0 {
			t.Errorf("@%d: target %+v, %d paths", w.ID, p.Target, len(p.Paths))
			continue
		}
		first := p.Paths[0]
		if first.System || first.Distance < int64(w.Distance) || first.Distance > int64(w.Distance)+3 || len(first.Steps) != int(first.Distance) {
			t.Errorf("@%d: first path has %d steps, cost %d, system %v; DevTools distance %d",
				w.ID, len(first.Steps), first.Distance, first.System, w.Distance)
		}
		for _, path := range p.Paths {
			if path.Root.ID != 1 {
				t.Errorf("@%d: path starts at @%d, not the root @1", w.ID, path.Root.ID)
			}
			if last := path.Steps[len(path.Steps)-1]; last.To.ID != w.ID {
				t.Errorf("@%d: path ends at @%d", w.ID, last.To.ID)
			}
			for _, s := range path.Steps {
				if s.Edge == "" || s.EdgeType == "" || s.EdgeType == "weak" {
					t.Errorf("@%d: bad step %+v", w.ID, s)
				}
			}
		}
		if len(p.Paths) == 2 && p.Paths[1].Distance < first.Distance {
			t.Errorf("@%d: paths not shortest first: %d then %d", w.ID, first.Distance, p.Paths[1].Distance)
		}
	}
	if checked == 0 {
		t.Fatal("no user-reachable object among the golden's top nodes")
	}

	out := ok(t, "paths", "--id", "@"+strconv.FormatUint(want.TopNodes[0].ID, 10), f.path)
	if !strings.Contains(out, "Path 1: ") || !strings.Contains(out, "Retainer edge") {
		t.Errorf("paths text output:\n%s", out)
	}
	r := heapx(t, "paths", "--id", "999999999", f.path)
	if r.code != 1 || !strings.Contains(r.stderr, "no node with id @999999999") || !strings.Contains(r.stderr, f.path) {
		t.Errorf("unknown id: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestTables checks the text views: DevTools' column words, right-aligned
// numbers, human-readable sizes.
func TestTables(t *testing.T) {
	t.Parallel()
	path := "../../testdata/node-basic.heapsnapshot.gz"
	sum := ok(t, "summary", "-n", "5", path)
	lines := strings.Split(sum, "\n")
	if strings.Join(strings.Fields(lines[0]), " ") != "Constructor Count Distance Shallow size % Retained size %" {
		t.Errorf("summary header: %q", lines[0])
	}
	if !strings.HasPrefix(lines[1], "global") || !strings.HasSuffix(lines[1], "2.9 MB  84.7%") || len(lines[1]) != len(lines[0]) {
		t.Errorf("summary first row (numbers right-aligned under the header): %q", lines[1])
	}
	if !strings.Contains(sum, "5 of 178 classes; total size 3.4 MB (3,385,441 bytes)") {
		t.Errorf("summary footer:\n%s", sum)
	}
	top := ok(t, "top", "-n", "3", path)
	if !strings.HasPrefix(top, "Object") || !strings.Contains(top, "global @6049") || strings.Count(top, "\n") != 6 {
		t.Errorf("top output:\n%s", top)
	}
	for _, args := range [][]string{{"summary", "-n", "-1", path}, {"top", "-n", "-2", path}, {"paths", "--id", "1", "-n", "0", path}} {
		if r := heapx(t, args...); r.code != 1 || !strings.HasPrefix(r.stderr, "heapx: -n must be") {
			t.Errorf("heapx %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}
