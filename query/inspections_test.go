package query_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/query"
)

// snapshots caches one analysed fixture per name: every test here reads
// the same two dumps.
var snapshots sync.Map

// fixture is the analysed V8 fixture testdata/NAME.heapsnapshot.gz.
func fixture(t *testing.T, name string) query.Snapshot {
	t.Helper()
	return otherFixture(t, name+".heapsnapshot.gz")
}

// otherFixture analyses a dump of testdata/ in any format (the path
// relative to testdata/), cached like fixture.
func otherFixture(t *testing.T, rel string) query.Snapshot {
	t.Helper()
	if sn, ok := snapshots.Load(rel); ok {
		return sn.(query.Snapshot)
	}
	path := filepath.Join(testfixtures.Dir(), rel)
	g, _, err := formats.Open(path, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sn := query.Snapshot{Path: path, Analysis: a}
	snapshots.Store(rel, sn)
	return sn
}

// run executes the registered query name on one fixture and checks the
// result's form (checkResult).
func run(t *testing.T, name, file string, values map[string]any) *query.Result {
	t.Helper()
	q := query.Lookup(name)
	if q == nil {
		t.Fatalf("query %q not registered", name)
	}
	r, err := q.Exec(&query.Context{Snapshots: []query.Snapshot{fixture(t, file)}, Values: values})
	if err != nil {
		t.Fatalf("%s on %s: %v", name, file, err)
	}
	checkResult(t, r)
	return r
}

// checkResult checks what every front end relies on: each row has one
// value per column, of the Go type its Kind names; charts name columns of
// their section; every value encodes as JSON.
func checkResult(t *testing.T, r *query.Result) {
	t.Helper()
	checkRow := func(where string, cols []query.Column, vals []any) {
		if len(vals) != len(cols) {
			t.Errorf("%s: %d values for %d columns", where, len(vals), len(cols))
			return
		}
		for i, c := range cols {
			if vals[i] == nil {
				continue // a cell with no value
			}
			var ok bool
			switch c.Kind {
			case query.Text:
				_, ok = vals[i].(string)
			case query.Count:
				_, ok = vals[i].(int)
			case query.Bytes, query.ID:
				_, ok = vals[i].(uint64)
			case query.Percent:
				_, ok = vals[i].(float64)
			case query.Distance:
				_, ok = vals[i].(int32)
			default:
				ok = true
			}
			if !ok {
				t.Errorf("%s: column %s (%s) holds %T", where, c.Key, c.Kind, vals[i])
			}
		}
	}
	var walk func(where string, cols []query.Column, nodes []*query.TreeNode)
	walk = func(where string, cols []query.Column, nodes []*query.TreeNode) {
		for _, n := range nodes {
			checkRow(where, cols, n.Values)
			walk(where, cols, n.Children)
		}
	}
	for i, s := range r.Sections {
		where := fmt.Sprintf("%s section %d", r.Query, i)
		var cols []query.Column
		switch {
		case s.Table != nil:
			cols = s.Table.Columns
			for _, row := range s.Table.Rows {
				checkRow(where, cols, row)
			}
		case s.Tree != nil:
			cols = s.Tree.Columns
			walk(where, cols, s.Tree.Roots)
		}
		if s.Chart != nil && (column(cols, s.Chart.Label) < 0 || column(cols, s.Chart.Value) < 0) {
			t.Errorf("%s: chart %+v names no column", where, *s.Chart)
		}
	}
	if _, err := json.Marshal(r.Sections); err != nil {
		t.Errorf("%s: %v", r.Query, err)
	}
}

// column is the index of the column keyed key, or -1.
func column(cols []query.Column, key string) int {
	for i, c := range cols {
		if c.Key == key {
			return i
		}
	}
	return -1
}

// rows returns section i's table rows as maps keyed by column key.
func rows(t *testing.T, r *query.Result, i int) []map[string]any {
	t.Helper()
	if i >= len(r.Sections) || r.Sections[i].Table == nil {
		t.Fatalf("%s: no table in section %d", r.Query, i)
	}
	tb := r.Sections[i].Table
	out := make([]map[string]any, len(tb.Rows))
	for k, row := range tb.Rows {
		out[k] = map[string]any{}
		for j, c := range tb.Columns {
			out[k][c.Key] = row[j]
		}
	}
	return out
}

// chromium-small-page builds 30000 OrderLine whose sku is one of 50 texts
// "SKU-n": 600 flat 20-byte copies each, 11980 bytes wasted per text; they
// lead the list. The notes total all 1045 duplicated texts, not the rows.
func TestDuplicatesQuery(t *testing.T) {
	r := run(t, "duplicates", "chromium-small-page", map[string]any{"limit": 3})
	rs := rows(t, r, 0)
	if len(rs) != 3 {
		t.Fatalf("%d rows, want 3", len(rs))
	}
	for _, row := range rs {
		if !strings.HasPrefix(row["text"].(string), "SKU-") || row["count"] != 600 || row["size"] != uint64(20) ||
			row["wasted"] != uint64(11980) || row["total"] != uint64(12000) {
			t.Errorf("row %v", row)
		}
	}
	if c := r.Sections[0].Chart; c == nil || *c != (query.Chart{Label: "text", Value: "wasted"}) {
		t.Errorf("chart %v", c)
	}
	if n := r.Sections[0].Notes; len(n) != 1 || n[0] != "3 of 1,045 texts shown (-n 0 shows all)." {
		t.Errorf("section notes %q", n)
	}
	if len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "1,045 texts held by 32,192 string objects") {
		t.Errorf("notes %q", r.Notes)
	}
	all, err := query.DuplicatesResult(fixture(t, "chromium-small-page"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(all.Sections[0].Table.Rows); n != 1045 || all.Sections[0].Notes != nil {
		t.Errorf("limit 0: %d rows, notes %q", n, all.Sections[0].Notes)
	}
}

// The page keeps 10 detached <div class="detached-root-K"> in
// window.detachedTrees, 51 elements and 9480 bytes each: one table row per
// tree, held by the array's element K, and one path for all ten, its last
// edge the index range [0…9].
func TestDetachedQuery(t *testing.T) {
	r := run(t, "detached", "chromium-small-page", nil)
	rs := rows(t, r, 0)
	if len(rs) != 10 || len(r.Sections) != 2 {
		t.Fatalf("%d trees, %d sections; want 10 and 2", len(rs), len(r.Sections))
	}
	for k, row := range rs {
		root := fmt.Sprintf(`Detached <div class="detached-root-%d"> @`, k)
		if !strings.HasPrefix(row["root"].(string), root) || row["elements"] != 51 || row["nodes"] != 103 ||
			row["retained_size"] != uint64(9480) || !strings.HasSuffix(row["held_by"].(string), fmt.Sprintf(" [%d]", k)) {
			t.Errorf("tree %d: %v", k, row)
		}
	}
	sec := r.Sections[1]
	if want := `Trees 1-10: 10 trees like Detached <div class="detached-root-0">, retaining 94.8 kB`; sec.Heading != want {
		t.Errorf("path heading %q, want %q", sec.Heading, want)
	}
	path := rows(t, r, 1)
	last := path[len(path)-1]
	if last["object"] != rs[0]["root"] || last["edge"] != "[0…9]" || path[len(path)-2]["edge"] != ".detachedTrees" {
		t.Errorf("path ends %v after %v", last, path[len(path)-2])
	}
	if len(sec.Notes) != 1 || !strings.Contains(sec.Notes[0], "differ only in the index at [0…9]; the objects shown are tree 1's") {
		t.Errorf("path notes %q", sec.Notes)
	}
	if len(r.Notes) != 2 || r.Notes[0] != "The 10 trees hold 510 detached elements (1,030 nodes with their text and data) and retain 94.8 kB." ||
		!strings.HasPrefix(r.Notes[1], "Elements are counted as DevTools counts them") {
		t.Errorf("notes %q", r.Notes)
	}
	cut, err := query.DetachedResult(fixture(t, "chromium-small-page"), 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cut.Sections[0].Table.Rows); n != 2 || len(cut.Sections) != 2 || !strings.Contains(strings.Join(cut.Notes, " "), "There are 10 trees in all: -n 0 shows all.") {
		t.Errorf("limit 2: %d rows, %d sections, notes %q", n, len(cut.Sections), cut.Notes)
	}
}

// Node.js has no DOM: the detached query says so rather than "none
// found", and counts the 19 binding-object nodes V8 marks detached, which
// --internals lists (8 trees). Without the detachedness column the
// answer is the same.
func TestDetachedQueryWithoutDOM(t *testing.T) {
	r := run(t, "detached", "node-leak-3", nil)
	if len(r.Sections) != 0 || len(r.Notes) != 2 || !strings.HasPrefix(r.Notes[0], "This heap has no DOM") ||
		!strings.HasPrefix(r.Notes[1], "V8 marks 19 of Node.js's own objects detached") {
		t.Errorf("node-leak-3: %d sections, notes %q", len(r.Sections), r.Notes)
	}
	r = run(t, "detached", "node-leak-3", map[string]any{"internals": true})
	if rs := rows(t, r, 0); len(rs) != 8 || !strings.HasPrefix(rs[0]["root"].(string), "Detached Node / BindingData @") {
		t.Errorf("node-leak-3 --internals: %v", rs)
	}
	g, err := v8.ReadFile(filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Detachedness = nil
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err = query.DetachedResult(query.Snapshot{Path: "node-basic", Analysis: a}, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sections) != 0 || len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "This heap has no DOM") {
		t.Errorf("node-basic without detachedness: %d sections, notes %q", len(r.Sections), r.Notes)
	}
}

// A JVM's most duplicated strings include "" and " ", which the table
// quotes so they show.
func TestDuplicatesQueryJava(t *testing.T) {
	r, err := query.DuplicatesResult(otherFixture(t, "hprof/java-jshell-agent.hprof.gz"), 0)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]int{}
	for _, row := range rows(t, r, 0) {
		found[row["text"].(string)] = row["count"].(int)
	}
	if found[`""`] != 6 || found[`" "`] != 5 || found["invokeStatic"] != 12 {
		t.Errorf(`"" x%d, " " x%d, invokeStatic x%d; want 6, 5, 12`, found[`""`], found[`" "`], found["invokeStatic"])
	}
}

// Firefox's dumps: no string contents, so duplicates says so and lists
// nothing; the detached trees are found by the DOM's child edges, and
// the page's 10 div trees share one path through .objectElements[0…9].
func TestInspectionsFirefox(t *testing.T) {
	sn := otherFixture(t, "spidermonkey/ff-small-page.fxsnapshot")
	r, err := query.DuplicatesResult(sn, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sections) != 0 || len(r.Notes) != 1 || !strings.HasPrefix(r.Notes[0], "This dump does not record string contents") {
		t.Errorf("duplicates: %d sections, notes %q", len(r.Sections), r.Notes)
	}
	r, err = query.DetachedResult(sn, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, r)
	if rs := rows(t, r, 0); len(rs) != 10 || rs[0]["elements"] != 51 || rs[0]["nodes"] != 101 || len(r.Sections) != 2 {
		t.Fatalf("detached: %d sections, rows %v", len(r.Sections), rs)
	}
	path := rows(t, r, 1)
	if e := path[len(path)-2]["edge"]; e != ".objectElements[0…9]" {
		t.Errorf("path edge %v, want .objectElements[0…9]", e)
	}
	if !strings.Contains(strings.Join(r.Notes, " "), "no document reaches through child-node edges") {
		t.Errorf("notes %q", r.Notes)
	}
}

// node-leak-3's onWork listener captures `retained`, the leaking Array
// @80593 (447536 bytes) in a context of 454808 bytes.
func TestClosuresQuery(t *testing.T) {
	rs := rows(t, run(t, "closures", "node-leak-3", map[string]any{"limit": 1}), 0)
	want := map[string]any{"function": "onWork", "count": 1, "contexts": 1, "context_retained": uint64(454808),
		"variables": "retained", "largest": "retained = Array @80593", "largest_retained": uint64(447536)}
	if len(rs) != 1 {
		t.Fatalf("%d rows", len(rs))
	}
	for k, v := range want {
		if rs[0][k] != v {
			t.Errorf("%s = %v, want %v", k, rs[0][k], v)
		}
	}
}

// window.customers, a Map of 2000 Customer retaining 2881812 bytes, is the
// page's largest collection; node-leak-3's leaking Array of 1500 is second
// after a 2048-element internal array.
func TestCollectionsQuery(t *testing.T) {
	rs := rows(t, run(t, "collections", "chromium-small-page", map[string]any{"limit": 1}), 0)
	if len(rs) != 1 || !strings.HasPrefix(rs[0]["object"].(string), "Map @") || rs[0]["elements"] != 2000 || rs[0]["retained_size"] != uint64(2881812) {
		t.Errorf("chromium %v", rs)
	}
	rs = rows(t, run(t, "collections", "node-leak-3", map[string]any{"limit": 2}), 0)
	if len(rs) != 2 || rs[1]["object"] != "Array @80593" || rs[1]["elements"] != 1500 || rs[1]["retained_size"] != uint64(447536) {
		t.Errorf("node-leak-3 %v", rs)
	}
}

// The page's shapes (see analysis' TestInspectObjectShapes): the 12003
// Arrays count once per outermost Array, 2926664 bytes, less than the
// heap.
func TestShapesQuery(t *testing.T) {
	want := map[string][3]uint64{
		"Array {}":                            {12003, 192048, 2926664},
		"Customer {id, name, orders, tags}":   {2000, 56000, 2852000},
		"Order {amount, customer, id, lines}": {10000, 280000, 2400000},
		"OrderLine {qty, sku}":                {30000, 600000, 1200000},
	}
	for _, row := range rows(t, run(t, "shapes", "chromium-small-page", map[string]any{"limit": 0}), 0) {
		w, ok := want[row["shape"].(string)]
		if !ok {
			continue
		}
		delete(want, row["shape"].(string))
		if row["count"] != int(w[0]) || row["shallow_size"] != w[1] || row["retained_size"] != w[2] {
			t.Errorf("%v, want count, shallow, retained %v", row, w)
		}
	}
	for s := range want {
		t.Errorf("shape %s not listed", s)
	}
}

// The page's globals, largest first; node-leak-3's only one is bus.
func TestGlobalsQuery(t *testing.T) {
	var got []string
	for _, row := range rows(t, run(t, "globals", "chromium-small-page", nil), 0) {
		got = append(got, fmt.Sprintf("%s %s %d", row["name"], row["constructor"], row["retained_size"]))
	}
	want := "customers Map 2881812, leakyCache Object 231056, buffers Array 229688, detachedTrees Array 94892, handlers Array 18084, __ready true 0"
	if strings.Join(got, ", ") != want {
		t.Errorf("globals\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
	rs := rows(t, run(t, "globals", "node-leak-3", nil), 0)
	if len(rs) != 1 || rs[0]["name"] != "bus" || rs[0]["object"] != "EventEmitter @51427" || rs[0]["retained_size"] != uint64(467896) {
		t.Errorf("node-leak-3 %v", rs)
	}
}

// Every LeakedItem of node-leak-3 is reached the same way: root -> global
// .bus -> ._events -> .work -> {context} -> ->retained -> [i], so the tree
// is one chain of 8 nodes carrying all 1500 (431280 bytes), ending in
// LeakedItem.
func TestMergedPathsQuery(t *testing.T) {
	r := run(t, "merged-paths", "node-leak-3", map[string]any{"class": "LeakedItem"})
	tree := r.Sections[0].Tree
	if tree == nil || len(tree.Roots) != 1 {
		t.Fatalf("sections %+v", r.Sections)
	}
	var chain []string
	n := tree.Roots[0]
	for {
		v := n.Values
		chain = append(chain, v[0].(string)+" "+v[1].(string))
		if v[2] != 1500 || v[3] != uint64(431280) {
			t.Errorf("%v: want 1500 objects retaining 431280", v)
		}
		if len(n.Children) != 1 {
			if len(n.Children) != 0 || v[4] != 1500 {
				t.Errorf("chain breaks at %v with %d children", v, len(n.Children))
			}
			break
		}
		n = n.Children[0]
	}
	want := " (synthetic)|.2 global|.bus EventEmitter|._events Object|.work Function|{context} system / Context|->retained Array|elements of retained (Array) LeakedItem"
	if strings.Join(chain, "|") != want {
		t.Errorf("chain\n got %s\nwant %s", strings.Join(chain, "|"), want)
	}
	if len(r.Header) != 1 || !strings.Contains(r.Header[0], "1,500 instances of LeakedItem") {
		t.Errorf("header %q", r.Header)
	}

	// -n never cuts the tree above the array that holds the items: the
	// whole chain is shown with -n 3.
	cut := run(t, "merged-paths", "node-leak-3", map[string]any{"class": "LeakedItem", "limit": 3})
	depth := 0
	for n := cut.Sections[0].Tree.Roots[0]; len(n.Children) > 0; n = n.Children[0] {
		depth++
	}
	if depth != 7 || len(cut.Sections[0].Notes) != 0 {
		t.Errorf("-n 3: a chain of %d hops, notes %q", depth, cut.Sections[0].Notes)
	}

	q := query.Lookup("merged-paths")
	sn := []query.Snapshot{fixture(t, "node-leak-3")}
	if _, err := q.Exec(&query.Context{Snapshots: sn, Values: map[string]any{"class": "NoSuchClass"}}); err == nil ||
		!strings.Contains(err.Error(), `no class named "NoSuchClass"`) {
		t.Errorf("unknown class: %v", err)
	}
	if _, err := q.Exec(&query.Context{Snapshots: sn}); err == nil || !strings.Contains(err.Error(), "needs --class") {
		t.Errorf("no --class: %v", err)
	}
}

// node-leak-3: the root's largest dominator child is global (3079371
// bytes); the leaking Array @80593 dominates its 1500 LeakedItem (84000
// bytes shallow, 431280 retained).
func TestDominatorsQuery(t *testing.T) {
	rs := rows(t, run(t, "dominators", "node-leak-3", map[string]any{"limit": 2}), 0)
	if len(rs) != 2 || rs[0]["object"] != "global @6049" || rs[0]["retained_size"] != uint64(3079371) {
		t.Errorf("root's children %v", rs)
	}
	r := run(t, "dominators", "node-leak-3", map[string]any{"id": "@80593", "by-class": true})
	rs = rows(t, r, 0)
	if rs[0]["constructor"] != "LeakedItem" || rs[0]["count"] != 1500 || rs[0]["shallow_size"] != uint64(84000) ||
		rs[0]["retained_size"] != uint64(431280) {
		t.Errorf("array's children by class %v", rs[0])
	}
	if len(r.Header) != 1 || !strings.HasPrefix(r.Header[0], "Children of Array @80593 ") {
		t.Errorf("header %q", r.Header)
	}
	var sum uint64
	for _, row := range rs {
		sum += row["retained_size"].(uint64)
	}
	a := fixture(t, "node-leak-3").Analysis
	arr, _ := a.NodeByID(80593)
	if sum+a.Self.At(int(arr)) != a.Dominators.Retained[arr] {
		t.Errorf("classes retain %d + self %d, want the array's %d", sum, a.Self.At(int(arr)), a.Dominators.Retained[arr])
	}

	q := query.Lookup("dominators")
	sn := []query.Snapshot{fixture(t, "node-leak-3")}
	for _, v := range []map[string]any{{"id": "999999999"}, {"id": "x"}, {"limit": -1}} {
		if _, err := q.Exec(&query.Context{Snapshots: sn, Values: v}); err == nil {
			t.Errorf("%v: no error", v)
		}
	}
}

// Every inspection is registered in its group and rejects a negative -n.
func TestInspectionsRegistered(t *testing.T) {
	sn := []query.Snapshot{fixture(t, "node-leak-3")}
	for _, name := range []string{"duplicates", "detached", "closures", "collections", "shapes", "globals", "merged-paths", "dominators"} {
		q := query.Lookup(name)
		if q == nil || q.Group != query.GroupInspections || q.Help == "" {
			t.Errorf("%s: %+v", name, q)
			continue
		}
		_, err := q.Exec(&query.Context{Snapshots: sn, Values: map[string]any{"limit": -1, "class": "LeakedItem"}})
		if err == nil || !strings.Contains(err.Error(), "-n must be 0 or more") {
			t.Errorf("%s -n -1: %v", name, err)
		}
	}
}
