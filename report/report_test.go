package report_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/all"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// input reads and analyses one dump of testdata/ (path relative to it).
func input(t *testing.T, rel string) report.Input {
	t.Helper()
	path := filepath.Join(testfixtures.Dir(), rel)
	g, f, err := formats.Open(path, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := analysis.Analyze(g, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return report.Input{Path: path, Format: f.Name, A: a}
}

// build reports on one dump of testdata/.
func build(t *testing.T, rel string) *report.Report {
	t.Helper()
	r, err := report.Build(input(t, rel), nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// part returns the report's part keyed key, or nil.
func part(r *report.Report, key string) *query.Result {
	for _, p := range r.Parts {
		if p.Key == key {
			return p.Result
		}
	}
	return nil
}

// The report says only what the dump can tell: no Detached DOM part for a
// Node.js or Java heap (no DOM; Node's binding objects V8 marks detached
// are not DOM), one line instead of an empty duplicates table for Firefox
// (no string contents), and Firefox's detached <section> trees, held in
// one array, under one path with the index range.
func TestReportPartsThatApply(t *testing.T) {
	for _, rel := range []string{"node-leak-3.heapsnapshot.gz", "hprof/java-leakdemo-small.hprof.gz"} {
		r := build(t, rel)
		if p := part(r, "detached"); p != nil {
			t.Errorf("%s: a Detached DOM part: %+v", rel, p)
		}
		if p := part(r, "duplicates"); p == nil || len(p.Sections) != 1 || len(p.Sections[0].Table.Rows) == 0 {
			t.Errorf("%s: duplicates %+v", rel, p)
		}
	}
	r := build(t, "spidermonkey/ff-medium-page.fxsnapshot")
	dup := part(r, "duplicates")
	if dup == nil || len(dup.Sections) != 0 || len(dup.Notes) != 1 || !strings.Contains(dup.Notes[0], "does not record string contents") {
		t.Errorf("Firefox duplicates: %+v", dup)
	}
	det := part(r, "detached")
	if det == nil || len(det.Sections) != 2 || len(det.Sections[0].Table.Rows) != 15 {
		t.Fatalf("Firefox detached: %+v", det)
	}
	if h := det.Sections[1].Heading; h != "Trees 1-15: 15 trees like SECTION, retaining 940 kB" {
		t.Errorf("Firefox detached path heading %q", h)
	}
	var html bytes.Buffer
	if err := r.Write(&html, render.HTML); err != nil {
		t.Fatal(err)
	}
	page := html.String()
	for _, want := range []string{"does not record string contents", ".objectElements[0…14]", "Trees 1-15"} {
		if !strings.Contains(page, want) {
			t.Errorf("Firefox HTML report lacks %q", want)
		}
	}
}

// The report's comparison leaves out classes whose objects were only
// replaced: on the bundled leak series, Node's embedder objects (new ids
// in every snapshot: "Node / IsolateData" 1 new, 1 deleted) filled half
// its rows. heapx diff keeps DevTools' full view.
func TestReportComparisonShowsChanges(t *testing.T) {
	base, target := input(t, "node-leak-2.heapsnapshot.gz"), input(t, "node-leak-3.heapsnapshot.gz")
	r, err := report.Build(target, []report.Input{base}, report.Options{Rows: 100})
	if err != nil {
		t.Fatal(err)
	}
	p := part(r, "diff")
	if p == nil {
		t.Fatal("no comparison")
	}
	classes := map[string]bool{}
	for _, row := range p.Sections[0].Table.Rows {
		classes[row[0].(string)] = true
		if row[3].(int) == 0 && row[6].(int64) == 0 {
			t.Errorf("unchanged class shown: %v", row)
		}
	}
	if !classes["LeakedItem"] || classes["Node / IsolateData"] || !strings.Contains(strings.Join(p.Notes, " "), "only replaced") {
		t.Errorf("comparison rows %v, notes %q", classes, p.Notes)
	}
	full, err := query.DiffResult(query.Snapshot{Path: base.Path, Analysis: base.A}, query.Snapshot{Path: target.Path, Analysis: target.A}, 100, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(full.Sections[0].Table.Rows); n != 34 {
		t.Errorf("heapx diff: %d classes, want DevTools' 34", n)
	}
}

// --fail-over without baselines compares the largest suspect's size: for
// objects several structures share (jshell's 50,000 Points, held by pts
// and byDist), what they retain, not what the first structure retains
// without them.
func TestReportLeakedSizeSharedSuspect(t *testing.T) {
	r := build(t, "hprof/java-jshell-agent.hprof.gz")
	if r.LeakedSize != 1_200_000 {
		t.Errorf("leaked size %d (%s), want the 50,000 Points' 1.2 MB", r.LeakedSize, r.LeakedSizeBasis)
	}
}

// devtoolsGolden is the part of testdata/golden/NAME.devtools.json (what
// Chrome DevTools' own snapshot worker computed) the report tests compare.
type devtoolsGolden struct {
	NodeCount    int    `json:"node_count"`
	EdgeCount    int    `json:"edge_count"`
	TotalSize    uint64 `json:"total_size_devtools"`
	Constructors []struct {
		Name     string `json:"name"`
		Count    int64  `json:"count"`
		Self     int64  `json:"self_size"`
		Retained int64  `json:"retained_size"`
		Distance int64  `json:"distance"`
	} `json:"top_constructors_by_retained_size"`
}

func readGolden(t *testing.T, name string) *devtoolsGolden {
	t.Helper()
	var g devtoolsGolden
	readJSON(t, filepath.Join(testfixtures.Dir(), "golden", name), &g)
	if g.NodeCount == 0 || len(g.Constructors) == 0 {
		t.Fatalf("%s: no counts or classes", name)
	}
	return &g
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// num is a numeric table cell as an int64 (tables hold int, int32,
// int64 or uint64 by column kind).
func num(t *testing.T, v any) int64 {
	t.Helper()
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	}
	t.Fatalf("%v (%T) is not an integer", v, v)
	return 0
}

// column returns the index of the column keyed key in tab.
func column(t *testing.T, tab *query.Table, key string) int {
	t.Helper()
	for i, c := range tab.Columns {
		if c.Key == key {
			return i
		}
	}
	t.Fatalf("no column %q", key)
	return -1
}

func keys(r *report.Report) string {
	var ks []string
	for _, p := range r.Parts {
		ks = append(ks, p.Key)
	}
	return strings.Join(ks, " ")
}

// checkOverview compares the overview with DevTools' counts and total.
func checkOverview(t *testing.T, r *report.Report, want *devtoolsGolden) {
	t.Helper()
	got := map[string]string{}
	for _, kv := range r.Overview {
		got[kv[0]] = kv[1]
	}
	for k, v := range map[string]string{
		"File":                 r.File.Path,
		"Format":               "v8",
		"Objects":              humanize.Thousands(uint64(want.NodeCount)),
		"References":           humanize.Thousands(uint64(want.EdgeCount)),
		"Total size":           humanize.Size(want.TotalSize) + " (" + humanize.Thousands(want.TotalSize) + " bytes)",
		"Retained-size policy": "devtools",
	} {
		if got[k] != v {
			t.Errorf("overview %s = %q, want %q", k, got[k], v)
		}
	}
}

// checkClasses compares the "Top classes" part with DevTools' Summary:
// every row is one of DevTools' 50 largest classes with its count,
// distance, shallow and retained size, largest first.
func checkClasses(t *testing.T, r *report.Report, want *devtoolsGolden) {
	t.Helper()
	p := part(r, "classes")
	if p == nil || len(p.Sections) != 1 {
		t.Fatalf("classes part %+v", p)
	}
	tab := p.Sections[0].Table
	if len(tab.Rows) != 15 {
		t.Errorf("%d classes, want the 15 rows a report shows", len(tab.Rows))
	}
	name, count, dist := column(t, tab, "constructor"), column(t, tab, "count"), column(t, tab, "distance")
	self, ret := column(t, tab, "shallow_size"), column(t, tab, "retained_size")
	for i, row := range tab.Rows {
		if i > 0 && num(t, row[ret]) > num(t, tab.Rows[i-1][ret]) {
			t.Errorf("row %d retains more than row %d", i+1, i)
		}
		found := false
		for _, w := range want.Constructors {
			if w.Name == row[name] && w.Retained == num(t, row[ret]) {
				found = true
				if got := [3]int64{num(t, row[count]), num(t, row[dist]), num(t, row[self])}; got != [3]int64{w.Count, w.Distance, w.Self} {
					t.Errorf("class %s: count, distance, shallow size %v; DevTools %d, %d, %d", w.Name, got, w.Count, w.Distance, w.Self)
				}
			}
		}
		if !found {
			t.Errorf("row %d %v is none of DevTools' 50 largest classes", i+1, row)
		}
	}
}

// TestReportOneDump checks the report on one snapshot, Node's and
// Chrome's, against what DevTools computed for the same files: the
// parts and their order, the overview, the classes, and the gate's
// number, the largest suspect's retained size; then the JSON form and
// the HTML page carry the same.
func TestReportOneDump(t *testing.T) {
	for _, c := range []struct {
		name, parts string
		suspect     string // the first suspect's class
		count       int64
	}{
		// The leak: 1,500 LeakedItem in the array a listener's closure
		// holds (testdata/gen/make-fixtures.js).
		{"node-leak-3", "suspects classes duplicates", "LeakedItem", 1500},
		// A page with detached DOM: the report says so.
		{"chromium-small-page", "suspects classes duplicates detached", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want := readGolden(t, c.name+".devtools.json")
			r := build(t, c.name+".heapsnapshot.gz")
			if got := keys(r); got != c.parts {
				t.Errorf("parts %q, want %q", got, c.parts)
			}
			checkOverview(t, r, want)
			checkClasses(t, r, want)
			if len(r.Warnings) != 0 || len(r.Failures) != 0 || r.Growth != 0 || len(r.Baselines) != 0 {
				t.Errorf("warnings %v, failures %v, growth %v", r.Warnings, r.Failures, r.Growth)
			}
			sus := part(r, "suspects").Sections[0].Table
			if len(sus.Rows) == 0 {
				t.Fatal("no suspect")
			}
			first := sus.Rows[0]
			if r.LeakedSize != uint64(num(t, first[column(t, sus, "retained_size")])) || r.LeakedSizeBasis != "retained size of the largest leak suspect" {
				t.Errorf("leaked size %d (%s), the largest suspect retains %v", r.LeakedSize, r.LeakedSizeBasis, first)
			}
			if c.suspect != "" {
				// DevTools' retained size of the class is what the suspect's
				// instances retain.
				var class int64
				for _, w := range want.Constructors {
					if w.Name == c.suspect {
						class = w.Retained
					}
				}
				if first[column(t, sus, "class")] != c.suspect || num(t, first[column(t, sus, "count")]) != c.count || num(t, first[column(t, sus, "class_retained")]) != class {
					t.Errorf("first suspect %v, want %d %s retaining DevTools' %d", first, c.count, c.suspect, class)
				}
			}
			checkDoc(t, r)
			checkHTML(t, r)
		})
	}
}

// TestReportFlameGraph checks the page's flame graph on the leak: a view
// per box, the root's shown unless another is the address's target,
// each box a link to its view, each view as wide as its top box with the
// boxes under a box no wider than it; LeakedItem's box holds the 1,500
// items with the dominator tree's 431,280 bytes and names the largest.
func TestReportFlameGraph(t *testing.T) {
	r := build(t, "node-leak-3.heapsnapshot.gz")
	var buf bytes.Buffer
	if err := r.Write(&buf, render.HTML); err != nil {
		t.Fatal(err)
	}
	doc := parseHTML(t, buf.String())
	var section *element
	for _, s := range doc.find("section", "part") {
		if s.attr["id"] == "flame" {
			section = s
		}
	}
	if section == nil {
		t.Fatal("no flame graph section")
	}
	views := section.find("div", "flame-view")
	ids := map[string]*element{}
	for _, v := range views {
		ids[v.attr["id"]] = v
	}
	if len(views) < 10 || views[0].attr["class"] != "flame-view root" || views[0].attr["id"] != "flame-r" {
		t.Fatalf("%d views, the first %v", len(views), views[0].attr)
	}
	var leak *element
	for _, v := range views {
		links := v.find("a", "")
		rects := v.find("rect", "")
		if len(rects) == 0 || rects[0].attr["width"] != "1000.00" {
			t.Errorf("view %s: its top box is not the drawing's width: %v", v.attr["id"], rects)
		}
		for _, a := range links {
			if ids[strings.TrimPrefix(a.attr["href"], "#")] == nil {
				t.Errorf("view %s links to %s, which is no view", v.attr["id"], a.attr["href"])
			}
		}
		if notes := v.find("p", "note"); len(notes) == 2 && strings.HasPrefix(notes[1].text, "LeakedItem: ") {
			leak = v
		}
	}
	if leak == nil {
		t.Fatal("no view of LeakedItem")
	}
	if got := leak.find("p", "note")[1].text; !strings.HasPrefix(got, "LeakedItem: 1,500 objects retaining 431 kB; the largest, LeakedItem @") {
		t.Errorf("LeakedItem's view says %q", got)
	}
	if got := leak.find("p", "note")[0].text; got != "(root) › global › EventEmitter › Object › Function › system / Context › Array › LeakedItem" {
		t.Errorf("LeakedItem's path %q", got)
	}
}

// TestReportLeakSeries checks the report on the leak series, newest
// first as a user gives it (node-leak-3 node-leak-1 node-leak-2): memlab's
// leak detection leads and finds memlab's cluster, the comparison and
// the growth have DevTools' counts of each snapshot, and the gates use
// the leaks' size and DevTools' totals.
func TestReportLeakSeries(t *testing.T) {
	var goldens []*devtoolsGolden
	var in []report.Input
	for _, n := range []string{"1", "2", "3"} {
		goldens = append(goldens, readGolden(t, "node-leak-"+n+".devtools.json"))
		in = append(in, input(t, "node-leak-"+n+".heapsnapshot.gz"))
	}
	r, err := report.Build(in[2], in[:2], report.Options{FailOver: 100_000, FailGrowth: 5})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keys(r), "leaks suspects diff growth classes duplicates"; got != want {
		t.Errorf("parts %q, want %q", got, want)
	}
	checkOverview(t, r, goldens[2])
	checkClasses(t, r, goldens[2])
	if len(r.Warnings) != 0 {
		t.Errorf("warnings on one process's series: %v", r.Warnings)
	}

	// memlab find-leaks on the same three files (its golden's first
	// cluster): the LeakedItem and their arrays, with memlab's retained
	// size. The gate adds every cluster the table lists.
	var memlab struct {
		Clusters []struct {
			Retained int64 `json:"retained_size"`
		} `json:"clusters"`
	}
	readJSON(t, filepath.Join(testfixtures.Dir(), "golden", "node-leak.memlab-leaks.json"), &memlab)
	leaks := part(r, "leaks").Sections[0].Table
	ret := column(t, leaks, "retained_size")
	var sum int64
	for _, row := range leaks.Rows {
		sum += num(t, row[ret])
	}
	if len(leaks.Rows) == 0 || num(t, leaks.Rows[0][ret]) != memlab.Clusters[0].Retained || !strings.Contains(fmt.Sprint(leaks.Rows[0][column(t, leaks, "classes")]), "LeakedItem 500") {
		t.Errorf("first leak %v, want memlab's cluster of 500 LeakedItem retaining %d", leaks.Rows, memlab.Clusters[0].Retained)
	}
	if r.LeakedSize != uint64(sum) || r.LeakedSizeBasis != "retained size of the leaks found from the baselines" {
		t.Errorf("leaked size %d (%s), the leaks retain %d", r.LeakedSize, r.LeakedSizeBasis, sum)
	}

	// The comparison with node-leak-2 and the growth over the three:
	// every class among DevTools' 50 largest of each snapshot has
	// DevTools' counts.
	counts := func(g *devtoolsGolden) map[string]int64 {
		m := map[string]int64{}
		for _, c := range g.Constructors {
			m[c.Name] += c.Count
		}
		return m
	}
	c1, c2, c3 := counts(goldens[0]), counts(goldens[1]), counts(goldens[2])
	diff := part(r, "diff").Sections[0].Table
	name, base, target, delta := column(t, diff, "constructor"), column(t, diff, "base_count"), column(t, diff, "target_count"), column(t, diff, "delta")
	compared := 0
	for _, row := range diff.Rows {
		n := row[name].(string)
		if num(t, row[target])-num(t, row[base]) != num(t, row[delta]) {
			t.Errorf("diff %s: %v", n, row)
		}
		if b, ok := c2[n]; ok {
			if c, ok := c3[n]; ok {
				compared++
				if num(t, row[base]) != b || num(t, row[target]) != c {
					t.Errorf("diff %s: %d -> %d, DevTools %d -> %d", n, num(t, row[base]), num(t, row[target]), b, c)
				}
			}
		}
	}
	if compared == 0 {
		t.Error("no class of the comparison is among DevTools' largest")
	}
	growth := part(r, "growth").Sections[0].Table
	name, first, last := column(t, growth, "constructor"), column(t, growth, "first_count"), column(t, growth, "last_count")
	leaked := false
	for _, row := range growth.Rows {
		n := row[name].(string)
		a, b, c := c1[n], c2[n], c3[n]
		if a == 0 || c == 0 {
			continue
		}
		if num(t, row[first]) != a || num(t, row[last]) != c || !(a < b && b < c) {
			t.Errorf("growth %s: %v, DevTools %d, %d, %d", n, row, a, b, c)
		}
		if series := row[column(t, growth, "series")]; n == "LeakedItem" {
			leaked = series == "500 → 1,000 → 1,500"
		}
	}
	if !leaked {
		t.Errorf("growth does not show LeakedItem 500 → 1,000 → 1,500: %v", growth.Rows)
	}

	// Both gates fail: the leaks retain 144 kB (over 100 kB) and the heap
	// grew 9.1% by DevTools' totals (over 5%).
	wantGrowth := 100 * (float64(goldens[2].TotalSize) - float64(goldens[0].TotalSize)) / float64(goldens[0].TotalSize)
	if r.Growth != wantGrowth || len(r.Failures) != 2 || !strings.Contains(r.Failures[0], "over the leaked-size limit 100 kB") ||
		!strings.Contains(r.Failures[1], "the heap grew 9.1% since "+in[0].Path) {
		t.Errorf("growth %v (want %v), failures %q", r.Growth, wantGrowth, r.Failures)
	}
	checkDoc(t, r)
	checkHTML(t, r)
}

// checkDoc checks the JSON form holds what the report does.
func checkDoc(t *testing.T, r *report.Report) {
	t.Helper()
	b, err := json.Marshal(r.Doc())
	if err != nil {
		t.Fatal(err)
	}
	var d report.Doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	g := r.File.A.Graph
	if d.SchemaVersion != report.SchemaVersion || d.File != r.File.Path || len(d.Baselines) != len(r.Baselines) ||
		d.Nodes != g.NumNodes() || d.Edges != g.NumEdges() || d.TotalSize != r.File.A.TotalSize() ||
		d.LeakedSize != r.LeakedSize || d.GrowthPercent != r.Growth || len(d.Failures) != len(r.Failures) || len(d.Parts) != len(r.Parts) {
		t.Fatalf("JSON form %+v", d)
	}
	for i, p := range d.Parts {
		want := r.Parts[i]
		if p.Key != want.Key || p.Title != want.Title || len(p.Result.Sections) != len(want.Result.Sections) {
			t.Errorf("JSON part %d: %s %q with %d sections, want %s %q with %d", i, p.Key, p.Title, len(p.Result.Sections), want.Key, want.Title, len(want.Result.Sections))
			continue
		}
		for j, s := range p.Result.Sections {
			if tab := want.Result.Sections[j].Table; tab != nil && len(s.Rows) != len(tab.Rows) {
				t.Errorf("JSON part %s section %d: %d rows, want %d", p.Key, j, len(s.Rows), len(tab.Rows))
			}
		}
	}
}

// element is an element of a parsed HTML page.
type element struct {
	tag   string
	attr  map[string]string
	kids  []*element
	text  string // all the text inside, as a browser's textContent
	owner *element
}

// find returns the elements under e (e included) with tag and, when class
// is not empty, that class, in document order.
func (e *element) find(tag, class string) []*element {
	var out []*element
	if e.tag == tag && (class == "" || slices.Contains(strings.Fields(e.attr["class"]), class)) {
		out = append(out, e)
	}
	for _, k := range e.kids {
		out = append(out, k.find(tag, class)...)
	}
	return out
}

// children returns e's child elements with tag.
func (e *element) children(tag string) []*element {
	var out []*element
	for _, k := range e.kids {
		if k.tag == tag {
			out = append(out, k)
		}
	}
	return out
}

// parseHTML parses the report page into elements, failing on an end tag
// that closes another element than the last one opened, or one left open
// (encoding/xml's raw tokens: HTML's void elements aside, the page is
// well-formed XML).
func parseHTML(t *testing.T, page string) *element {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false // HTML's entities and <!DOCTYPE html>
	d.Entity = xml.HTMLEntity
	doc := &element{tag: "#document"}
	open := doc
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("HTML at byte %d: %v", d.InputOffset(), err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			e := &element{tag: tk.Name.Local, attr: map[string]string{}, owner: open}
			for _, a := range tk.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			open.kids = append(open.kids, e)
			if e.tag != "meta" { // void
				open = e
			}
		case xml.EndElement:
			if tk.Name.Local != open.tag {
				t.Fatalf("HTML at byte %d: </%s> closes <%s>", d.InputOffset(), tk.Name.Local, open.tag)
			}
			open = open.owner
		case xml.CharData:
			for e := open; e != nil; e = e.owner {
				e.text += string(tk)
			}
		}
	}
	if open != doc {
		t.Fatalf("HTML: <%s> is not closed", open.tag)
	}
	return doc
}

// checkHTML checks the page's structure against the report: the title
// and header name the files, the overview lists its facts, each part is a
// section with its id and title, and each table has a header cell per
// column, a row per result row with a cell per column, and the result's
// values as a person reads them.
func checkHTML(t *testing.T, r *report.Report) {
	t.Helper()
	var buf bytes.Buffer
	if err := r.Write(&buf, render.HTML); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script", "src=", "@import", "url(", "ZgotmplZ"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page has %q: it must be self-contained", bad)
		}
	}
	// Links only within the page: the flame graph's views.
	if n, local := strings.Count(page, "href="), strings.Count(page, `href="#flame-r`); n != local {
		t.Errorf("the page has %d links, %d to its own flame graph: it must be self-contained", n, local)
	}
	doc := parseHTML(t, page)
	if ts := doc.find("head", "")[0].children("title"); len(ts) != 1 || ts[0].text != "heapx report: "+r.File.Path {
		t.Errorf("title %v", ts)
	}
	header := r.File.Path
	if len(r.Baselines) > 0 {
		var bs []string
		for _, b := range r.Baselines {
			bs = append(bs, b.Path)
		}
		header += " compared with " + strings.Join(bs, ", ")
	}
	if ps := doc.find("header", "")[0].children("p"); len(ps) != 1 || ps[0].text != header {
		t.Errorf("header %v, want %q", ps, header)
	}

	// The warnings lead, the failed gates follow the overview, then the
	// parts.
	sections := doc.find("main", "")[0].children("section")
	var says []string
	if len(r.Warnings) > 0 {
		says = append(says, "Warnings")
	}
	says = append(says, "Overview")
	if len(r.Failures) > 0 {
		says = append(says, "Gates failed")
	}
	for _, p := range r.Parts {
		says = append(says, p.Title)
	}
	if r.File.A != nil {
		says = append(says, "Flame graph of retained size")
	}
	if len(sections) != len(says) {
		t.Fatalf("%d sections, want %d: %q", len(sections), len(says), says)
	}
	for i, s := range sections {
		if h := s.children("h2"); len(h) != 1 || h[0].text != says[i] {
			t.Errorf("section %d: heading %v, want %q", i+1, h, says[i])
		}
	}
	over := sections[slices.Index(says, "Overview")]
	if len(r.Failures) > 0 {
		ps := sections[slices.Index(says, "Gates failed")].children("p")
		if len(ps) != len(r.Failures) {
			t.Fatalf("%d failed gates shown, want %d", len(ps), len(r.Failures))
		}
		for i, f := range r.Failures {
			if ps[i].text != f {
				t.Errorf("failed gate %q, want %q", ps[i].text, f)
			}
		}
	}
	dts, dds := over.find("dt", ""), over.find("dd", "")
	if len(dts) != len(r.Overview) || len(dds) != len(r.Overview) {
		t.Fatalf("overview: %d terms, %d values, want %d", len(dts), len(dds), len(r.Overview))
	}
	for i, kv := range r.Overview {
		if dts[i].text != kv[0] || dds[i].text != kv[1] {
			t.Errorf("overview %d: %q %q, want %q %q", i, dts[i].text, dds[i].text, kv[0], kv[1])
		}
	}
	firstPart := slices.Index(says, "Overview") + 1
	if len(r.Failures) > 0 {
		firstPart++
	}
	for i, p := range r.Parts {
		s := sections[firstPart+i]
		if s.attr["id"] != p.Key || s.attr["class"] != "part" {
			t.Errorf("part %d: id %q class %q, want %q", i+1, s.attr["id"], s.attr["class"], p.Key)
			continue
		}
		// The notes, each a paragraph: the result's header, each
		// section's (after its table, or instead of an empty one), the
		// result's own.
		notes := append([]string{}, p.Result.Header...)
		var tabs []*query.Table
		for _, sec := range p.Result.Sections {
			if sec.Table != nil && len(sec.Table.Rows) > 0 {
				tabs = append(tabs, sec.Table)
			} else if sec.Tree == nil {
				notes = append(notes, "Nothing to show.")
			}
			notes = append(notes, sec.Notes...)
		}
		notes = append(notes, p.Result.Notes...)
		var got []string
		for _, e := range s.find("p", "note") {
			got = append(got, e.text)
		}
		if !slices.Equal(got, notes) {
			t.Errorf("%s: notes %q, want %q", p.Key, got, notes)
		}
		tables := s.children("table")
		if len(tables) != len(tabs) {
			t.Errorf("%s: %d tables, want %d", p.Key, len(tables), len(tabs))
			continue
		}
		for k, tab := range tabs {
			checkTable(t, p.Key, tables[k], tab)
		}
		if p.Key == "classes" {
			// The chart draws a bar per class, each titled with the
			// class's retained size.
			tab := tabs[0]
			rects := s.find("rect", "b")
			name, ret := column(t, tab, "constructor"), column(t, tab, "retained_size")
			if len(rects) != len(tab.Rows) {
				t.Fatalf("classes chart: %d bars for %d classes", len(rects), len(tab.Rows))
			}
			for j, row := range tab.Rows {
				want := query.Shorten(row[name].(string), 40) + ": " + query.FormatValue(query.Bytes, row[ret])
				if rects[j].text != want {
					t.Errorf("classes chart bar %d: %q, want %q", j+1, rects[j].text, want)
				}
			}
		}
	}
}

// checkTable compares an HTML table with the result's table.
func checkTable(t *testing.T, key string, table *element, tab *query.Table) {
	t.Helper()
	shown := render.ShownColumns(tab)
	ths := table.find("th", "")
	if len(ths) != len(shown) {
		t.Fatalf("%s: %d header cells for %d columns", key, len(ths), len(shown))
	}
	for j, i := range shown {
		c := tab.Columns[i]
		numeric := c.Kind != query.Text
		if ths[j].text != c.Title || (ths[j].attr["class"] == "n") != numeric {
			t.Errorf("%s: header %d %q class %q, want %q numeric %v", key, j, ths[j].text, ths[j].attr["class"], c.Title, numeric)
		}
	}
	trs := table.children("tbody")[0].children("tr")
	if len(trs) != len(tab.Rows) {
		t.Fatalf("%s: %d rows, want %d", key, len(trs), len(tab.Rows))
	}
	for r, tr := range trs {
		tds := tr.children("td")
		if len(tds) != len(shown) {
			t.Fatalf("%s row %d: %d cells for %d columns", key, r+1, len(tds), len(shown))
		}
		for j, i := range shown {
			if want := query.FormatValue(tab.Columns[i].Kind, tab.Rows[r][i]); tds[j].text != want {
				t.Errorf("%s row %d column %s: %q, want %q", key, r+1, tab.Columns[i].Key, tds[j].text, want)
			}
		}
	}
}

// A growth limit without a baseline is refused in the library's own
// terms (ErrNoBaseline); heapx report says which flag wants what.
func TestGrowthLimitNeedsBaseline(t *testing.T) {
	_, err := report.Build(leakInput(t, "3"), nil, report.Options{FailGrowth: 5})
	if !errors.Is(err, report.ErrNoBaseline) || strings.Contains(err.Error(), "--") {
		t.Fatalf("err %v, want ErrNoBaseline without a flag name", err)
	}
}

// The leak count limit fails a report whose leaks (memlab's clusters, the
// rows of the leaks table) reach it, and not one they stay under; it
// needs the two baselines memlab's detection does.
func TestLeakCountLimit(t *testing.T) {
	one, two, three := leakInput(t, "1"), leakInput(t, "2"), leakInput(t, "3")
	r, err := report.Build(three, []report.Input{one, two}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rows := len(part(r, "leaks").Sections[0].Table.Rows); r.Leaks < 1 || r.Leaks != rows || len(r.Failures) != 0 {
		t.Fatalf("%d leaks, %d rows in the leaks table, failures %q", r.Leaks, rows, r.Failures)
	}
	at, err := report.Build(three, []report.Input{one, two}, report.Options{FailLeaks: r.Leaks, FailLeaksName: "--fail-leaks"})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d leak(s) found, at or over the --fail-leaks limit %d", r.Leaks, r.Leaks)
	if len(at.Failures) != 1 || at.Failures[0] != want {
		t.Errorf("failures %q, want %q", at.Failures, want)
	}
	under, err := report.Build(three, []report.Input{one, two}, report.Options{FailLeaks: r.Leaks + 1})
	if err != nil || len(under.Failures) != 0 {
		t.Errorf("under the limit: failures %q, %v", under.Failures, err)
	}
	if _, err := report.Build(three, []report.Input{two}, report.Options{FailLeaks: 1}); !errors.Is(err, report.ErrNoLeakBaselines) {
		t.Errorf("one baseline: %v, want ErrNoLeakBaselines", err)
	}
}
