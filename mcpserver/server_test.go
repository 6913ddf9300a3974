package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/mcpserver"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/report"
	"github.com/heapx/heapx/session"
	"github.com/heapx/heapx/sqlquery"
)

func fixture(rel string) string { return filepath.Join(testfixtures.Dir(), rel) }

// inputs caches the dumps the tests share (heapx.Open), so that each is
// read and analysed once.
var inputs sync.Map

func input(t *testing.T, path string) *heapx.Dump {
	t.Helper()
	d, err := cached(path, heapx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// cached opens the dump at path, or returns it when it was opened.
func cached(path string, opts heapx.Options) (*heapx.Dump, error) {
	if d, ok := inputs.Load(path); ok {
		return d.(*heapx.Dump), nil
	}
	d, err := heapx.Open(path, opts)
	if err != nil {
		return nil, err
	}
	inputs.Store(path, d)
	return d, nil
}

// cachedOpen opens sessions on the cached dumps, as Options.Open, with
// the SQL cache in a temporary directory; an unreadable file fails as
// heapx.Open says.
func cachedOpen(t *testing.T) func(file string, baselines []string, dump heapx.Options) (*session.Session, error) {
	dir := t.TempDir()
	return func(file string, baselines []string, dump heapx.Options) (*session.Session, error) {
		var ds []*heapx.Dump
		for _, p := range append([]string{file}, baselines...) {
			d, err := cached(p, dump)
			if err != nil {
				return nil, err
			}
			ds = append(ds, d)
		}
		return session.New(ds[0], ds[1:], session.Options{SQLCache: sqlquery.Choice{Path: dir}, OpenSeries: mcpserver.OpenSeries})
	}
}

// connect serves srv to an in-memory client of the SDK's and returns the
// client's session.
func connect(t *testing.T, srv *mcpserver.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "heapx-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		srv.Close()
	})
	return cs
}

// callRaw calls a tool and returns its text and whether it is an error.
func callRaw(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error %v", name, args, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s %v: %d contents, want 1", name, args, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s %v: content %T", name, args, res.Content[0])
	}
	return text.Text, res.IsError
}

// call calls a tool that must answer, and decodes its answer into out.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	text, isErr := callRaw(t, cs, name, args)
	if isErr {
		t.Fatalf("%s %v: tool error %s", name, args, text)
	}
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s %v: %v in %s", name, args, err, text)
	}
}

// callErr calls a tool that must fail, and returns its message.
func callErr(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	text, isErr := callRaw(t, cs, name, args)
	if !isErr {
		t.Fatalf("%s %v answered, want an error: %s", name, args, text)
	}
	return text
}

// page is a page answer's paging fields.
type page struct {
	Offset     int    `json:"offset"`
	Total      int    `json:"total"`
	Matched    int    `json:"matched"`
	NextCursor string `json:"next_cursor"`
}

type classPage struct {
	page
	ClassCount int                  `json:"class_count"`
	Classes    []session.ClassRow   `json:"classes"`
	Allocated  *query.AllocatedJSON `json:"allocated"`
}

type objectPage struct {
	page
	Class   session.ClassRow `json:"class"`
	Objects []query.NodeJSON `json:"objects"`
}

// pathText writes a path as DevTools' retainers do, root first:
// a line per step, "edge constructor name @id" (".bus EventEmitter
// EventEmitter @51427").
func pathText(p session.PathJSON) string {
	var b strings.Builder
	for _, st := range p.Steps {
		fmt.Fprintf(&b, "%s %s %s @%d\n", st.Edge, st.To.Constructor, st.To.Name, st.To.ID)
	}
	return b.String()
}

func TestToolsList(t *testing.T) {
	cs := connect(t, mcpserver.New(mcpserver.Options{}))
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if len(tool.Description) < 40 {
			t.Errorf("%s: description %q does not say what it answers", tool.Name, tool.Description)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s is not marked read-only", tool.Name)
		}
		schema, _ := tool.InputSchema.(map[string]any)
		if schema["type"] != "object" {
			t.Errorf("%s: input schema %v", tool.Name, tool.InputSchema)
		}
		if props, _ := schema["properties"].(map[string]any); props != nil {
			for p, v := range props {
				if d, _ := v.(map[string]any)["description"].(string); d == "" {
					t.Errorf("%s: argument %s has no description", tool.Name, p)
				}
			}
		}
	}
	want := []string{"close", "diff", "dumps", "flame", "inspect", "instances", "leaks", "new_objects", "open", "overview", "paths",
		"queries", "query", "references", "retainers", "sql", "summary", "suspects", "top"}
	slices.Sort(names)
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
	// Before open, a question says what to do.
	if msg := callErr(t, cs, "summary", nil); !strings.Contains(msg, "no dump is open: call open") {
		t.Errorf("summary before open: %q", msg)
	}
}

// TestLeakSeries follows the leak of the bundled Node series as an agent
// does: open the series, find LeakedItem in the summary, page through
// its instances with cursors, see what keeps one alive (bus._events
// holds onWork, whose closure retains the array of LeakedItems), then
// the leaks, the comparison, SQL and the object inspector.
func TestLeakSeries(t *testing.T) {
	srv := mcpserver.New(mcpserver.Options{Open: cachedOpen(t)})
	cs := connect(t, srv)
	final, base, target := fixture("node-leak-3.heapsnapshot.gz"), fixture("node-leak-1.heapsnapshot.gz"), fixture("node-leak-2.heapsnapshot.gz")

	var opened struct {
		Dump string `json:"dump"`
		session.InfoJSON
		Queries []string `json:"queries"`
	}
	call(t, cs, "open", map[string]any{"file": final, "baselines": []string{base, target}}, &opened)
	info, _ := input(t, final).Analysis()
	if opened.Dump != "d1" || opened.Runtime != "v8" || opened.IDs != "counted" || opened.Inputs[0].Nodes != info.Graph.NumNodes() ||
		opened.TotalSize != info.TotalSize() || len(opened.Baselines) != 2 || !slices.Contains(opened.Queries, "merged-paths") {
		t.Errorf("open: dump %q runtime %q ids %q nodes %d total %d baselines %v queries %v", opened.Dump, opened.Runtime, opened.IDs,
			opened.Inputs[0].Nodes, opened.TotalSize, opened.Baselines, opened.Queries)
	}
	// Opening it again is free and gives the same dump.
	var again mcpserver.DumpJSON
	call(t, cs, "open", map[string]any{"file": final, "baselines": []string{base, target}}, &again)
	if again.Dump != "d1" {
		t.Errorf("the series opened again is %q, want d1", again.Dump)
	}

	// Summary: LeakedItem, 1,500 of them.
	var classes classPage
	call(t, cs, "summary", map[string]any{"filter": "leakeditem"}, &classes)
	if len(classes.Classes) != 1 || classes.Classes[0].Constructor != "LeakedItem" || classes.Classes[0].Count != 1500 || classes.NextCursor != "" {
		t.Fatalf("summary of LeakedItem: %+v", classes)
	}
	leaked := classes.Classes[0]

	// The objects allocated between the two baselines (DevTools' filter):
	// 500 of the 1,500, with open's key for it.
	keys := []string{}
	for _, f := range opened.AllocationFilters {
		keys = append(keys, f.Key)
	}
	var between classPage
	call(t, cs, "summary", map[string]any{"filter": "leakeditem", "allocated": "between:1:2"}, &between)
	if !slices.Equal(keys, []string{"before:1", "between:1:2", "between:2:0"}) || len(between.Classes) != 1 || between.Classes[0].Count != 500 ||
		between.Allocated == nil || between.Allocated.Count != 3004 {
		t.Errorf("filters %v; summary between the baselines: %+v", keys, between)
	}
	var kept objectPage
	call(t, cs, "instances", map[string]any{"class": leaked.Index, "allocated": "between:1:2", "limit": 10}, &kept)
	if kept.Total != 500 || kept.Class.Count != 500 {
		t.Errorf("instances between the baselines: total %d, class %+v", kept.Total, kept.Class)
	}

	// Its instances, 50 a page, followed by cursor: 1,500 distinct
	// objects, largest first, the last page without a cursor.
	var first objectPage
	call(t, cs, "instances", map[string]any{"class": leaked.Index, "limit": 50}, &first)
	if first.Total != 1500 || len(first.Objects) != 50 || first.NextCursor == "" || first.Class.Constructor != "LeakedItem" {
		t.Fatalf("first page of instances: total %d, %d objects, cursor %q", first.Total, len(first.Objects), first.NextCursor)
	}
	seen := map[uint64]bool{}
	p, pages := first, 1
	for {
		for i, o := range p.Objects {
			if seen[o.ID] || o.Constructor != "LeakedItem" {
				t.Fatalf("page %d object %d: %+v (seen before: %v)", pages, i, o, seen[o.ID])
			}
			seen[o.ID] = true
		}
		if p.NextCursor == "" {
			break
		}
		cursor := p.NextCursor
		p = objectPage{}
		call(t, cs, "instances", map[string]any{"cursor": cursor}, &p)
		pages++
		if p.Offset != (pages-1)*50 {
			t.Fatalf("page %d at offset %d", pages, p.Offset)
		}
	}
	if len(seen) != 1500 || pages != 30 {
		t.Errorf("the cursors went through %d objects in %d pages, want 1500 in 30", len(seen), pages)
	}
	if msg := callErr(t, cs, "instances", map[string]any{"cursor": "not a cursor"}); !strings.Contains(msg, "cursor") {
		t.Errorf("a bad cursor: %q", msg)
	}

	// What keeps the largest one alive.
	id := fmt.Sprint(first.Objects[0].ID)
	var paths session.PathsJSON
	call(t, cs, "paths", map[string]any{"id": "@" + id, "k": 2}, &paths)
	if len(paths.Paths) != 2 || paths.Target.Constructor != "LeakedItem" {
		t.Fatalf("paths to @%s: %d paths to %+v", id, len(paths.Paths), paths.Target)
	}
	leakPath := regexp.MustCompile(`(?s)\.bus EventEmitter .*\._events .*\.work Function onWork @.*->retained Array .*LeakedItem @` + id)
	if got := pathText(paths.Paths[0]); !leakPath.MatchString(got) {
		t.Errorf("the first path to @%s does not reach onWork through bus._events:\n%s", id, got)
	}
	// Ignoring the array on the path leaves no path through it.
	var array string
	for _, st := range paths.Paths[0].Steps {
		if st.Edge == "->retained" {
			array = fmt.Sprint(st.To.ID)
		}
	}
	var ignored session.PathsJSON
	call(t, cs, "paths", map[string]any{"id": id, "ignore": []string{array}}, &ignored)
	if len(ignored.Ignored) != 1 || fmt.Sprint(ignored.Ignored[0].ID) != array {
		t.Errorf("ignored %+v, want @%s", ignored.Ignored, array)
	}
	for _, p := range ignored.Paths {
		if strings.Contains(pathText(p), " @"+array+"\n") {
			t.Errorf("a path goes through the ignored array:\n%s", pathText(p))
		}
	}

	// Without weak references (paths --no-weak): every path goes through
	// the runtime's objects (the bus is an EventEmitter), so the path is
	// the one shown, and through_runtime says so.
	var noWeak session.PathsJSON
	call(t, cs, "paths", map[string]any{"id": id, "k": 1, "no_weak": true}, &noWeak)
	if !noWeak.NoWeak || !noWeak.ThroughRuntime || len(noWeak.Paths) != 1 || pathText(noWeak.Paths[0]) != pathText(paths.Paths[0]) {
		t.Errorf("no_weak paths %+v", noWeak)
	}

	// The flame graph from the bus's listener context's array: the
	// LeakedItem box holds all 1,500, as the paths found them.
	var flame session.FlameJSON
	call(t, cs, "flame", map[string]any{"id": array, "depth": 1}, &flame)
	if b := flame.Box; len(b.Children) == 0 || b.Children[0].Class != "LeakedItem" || b.Children[0].Count != 1500 ||
		b.Children[0].RetainedSize != 431280 || flame.Depth != 1 || flame.MinShare != 0.02 {
		t.Errorf("the flame graph from the array: %+v", flame)
	}

	// The object inspector: the array that holds them.
	var obj session.ObjectJSON
	call(t, cs, "inspect", map[string]any{"id": array}, &obj)
	if obj.Object.Constructor != "Array" || obj.References < 1500 || obj.Class == nil || obj.Class.Constructor != "Array" || len(obj.Dominators) == 0 {
		t.Errorf("inspect @%s: %+v", array, obj)
	}
	var refs struct {
		page
		Edges []session.EdgeJSON `json:"edges"`
	}
	call(t, cs, "references", map[string]any{"id": array, "limit": 10}, &refs)
	if refs.Total != obj.References || len(refs.Edges) != 10 || refs.NextCursor == "" {
		t.Errorf("references of @%s: %d of %d, cursor %q", array, len(refs.Edges), refs.Total, refs.NextCursor)
	}
	var rets struct {
		page
		Edges []session.EdgeJSON `json:"edges"`
	}
	call(t, cs, "retainers", map[string]any{"id": id}, &rets)
	if rets.Total == 0 || rets.Edges[0].From == nil {
		t.Errorf("retainers of @%s: %+v", id, rets)
	}

	// The leaks of the series: LeakedItem, held by onWork's closure.
	text, isErr := callRaw(t, cs, "leaks", nil)
	if isErr || !strings.Contains(text, "LeakedItem") || !strings.Contains(text, "onWork") {
		t.Errorf("leaks: %s", text)
	}

	// The comparison: 500 new LeakedItems, which new_objects lists.
	var diff struct {
		page
		Matching string            `json:"matching"`
		Classes  []session.DiffRow `json:"classes"`
	}
	call(t, cs, "diff", map[string]any{"filter": "LeakedItem"}, &diff)
	if diff.Matching != "id" || len(diff.Classes) != 1 || diff.Classes[0].New != 500 || diff.Classes[0].TargetCount != 1500 {
		t.Fatalf("diff of LeakedItem: %+v", diff)
	}
	var fresh objectPage
	call(t, cs, "new_objects", map[string]any{"row": diff.Classes[0].Index, "limit": 50}, &fresh)
	if fresh.Total != 500 || len(fresh.Objects) != 50 || fresh.NextCursor == "" {
		t.Errorf("new LeakedItems: %d of %d", len(fresh.Objects), fresh.Total)
	}

	// SQL over the dump's .db form.
	var sql session.SQLJSON
	call(t, cs, "sql", map[string]any{"query": "SELECT name, count(*) AS n FROM nodes_named WHERE name = 'LeakedItem' AND category = 'object' GROUP BY name"}, &sql)
	if string(sql.Rows) != `[{"name":"LeakedItem","n":1500}]` || !slices.Equal(sql.Columns, []string{"name", "n"}) {
		t.Errorf("SQL: columns %v rows %s", sql.Columns, sql.Rows)
	}
	if msg := callErr(t, cs, "sql", map[string]any{"query": "CREATE TABLE x(a)"}); !strings.Contains(msg, "read-only") {
		t.Errorf("a write: %q", msg)
	}

	// A query of the registry by name, with arguments: the tree of the
	// paths of every LeakedItem goes through onWork.
	var merged map[string]any
	call(t, cs, "query", map[string]any{"name": "merged-paths", "args": map[string]any{"class": "LeakedItem", "limit": 20}}, &merged)
	if b, _ := json.Marshal(merged); !strings.Contains(string(b), "onWork") || merged["query"] != "merged-paths" {
		t.Errorf("merged-paths of LeakedItem: %.500s", b)
	}
	var generic struct {
		Query    string `json:"query"`
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	call(t, cs, "query", map[string]any{"name": "top", "args": map[string]any{"limit": 3}, "form": "generic"}, &generic)
	if generic.Query != "top" || len(generic.Sections) != 1 || len(generic.Sections[0].Rows) != 3 {
		t.Errorf("top in its generic form: %+v", generic)
	}

	// The overview, one part of it.
	var doc report.Doc
	call(t, cs, "overview", nil, &doc)
	if len(doc.Parts) < 3 || doc.LeakedSize == 0 {
		t.Fatalf("overview: %d parts, leaked %d", len(doc.Parts), doc.LeakedSize)
	}
	var one report.Doc
	call(t, cs, "overview", map[string]any{"parts": []string{doc.Parts[1].Key}}, &one)
	if len(one.Parts) != 1 || one.Parts[0].Key != doc.Parts[1].Key || one.LeakedSize != doc.LeakedSize {
		t.Errorf("overview of part %s: %d parts", doc.Parts[1].Key, len(one.Parts))
	}

	// Mistakes get a message, and the server goes on answering.
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"inspect", map[string]any{"id": "@999999999"}, "no object with id @999999999"},
		{"inspect", map[string]any{"id": "LeakedItem"}, "LeakedItem"},
		{"paths", map[string]any{"id": id, "k": 50}, "1 to 20"},
		{"flame", map[string]any{"depth": 13}, "depth=13: give 1 to 12 levels"},
		{"instances", map[string]any{"class": 99999}, "no class with index 99999"},
		{"summary", map[string]any{"sort": "size"}, `cannot sort classes by "size"`},
		{"query", map[string]any{"name": "nope"}, `no query named "nope"`},
		{"query", map[string]any{"name": "top", "args": map[string]any{"limit": "many"}}, `limit="many" is not a valid int`},
		{"query", map[string]any{"name": "top", "args": map[string]any{"colour": "red"}}, `top has no argument "colour"`},
		{"query", map[string]any{"name": "merged-paths"}, "needs --class"},
		{"sql", map[string]any{"query": "SELEKT 1"}, "syntax error"},
		{"overview", map[string]any{"parts": []string{"nope"}}, "no part nope"},
		{"summary", map[string]any{"dump": "d7"}, `no dump "d7" is open; open are d1`},
		{"open", map[string]any{"file": filepath.Join(t.TempDir(), "missing.heapsnapshot")}, "missing.heapsnapshot"},
		{"summary", map[string]any{"limit": -1}, "limit must be 0 or more"},
		{"summary", map[string]any{"bogus": 1}, "bogus"},
		{"instances", nil, "instances needs class"},
		{"retainers", map[string]any{"limit": 5}, "retainers needs id"},
	} {
		if msg := callErr(t, cs, c.tool, c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%s %v: %q, want it to say %q", c.tool, c.args, msg, c.want)
		}
	}
	var still classPage
	call(t, cs, "summary", map[string]any{"dump": "d1", "limit": 1}, &still)
	if len(still.Classes) != 1 {
		t.Errorf("after the mistakes, summary answers %+v", still)
	}
}

// TestPagingCovers: the summary's pages, followed by cursor, are the
// whole list in the order of one large page, the filter and order kept
// by the cursor.
func TestPagingCovers(t *testing.T) {
	cs := connect(t, mcpserver.New(mcpserver.Options{Open: cachedOpen(t)}))
	call(t, cs, "open", map[string]any{"file": fixture("node-leak-3.heapsnapshot.gz")}, &struct{}{})
	var all classPage
	args := map[string]any{"sort": "count", "desc": true, "filter": "e"}
	args["limit"] = 1000
	call(t, cs, "summary", args, &all)
	if all.NextCursor != "" || len(all.Classes) != all.Matched || all.Matched < 30 {
		t.Fatalf("one page: %d of %d, cursor %q", len(all.Classes), all.Matched, all.NextCursor)
	}
	args["limit"] = 7
	var got []session.ClassRow
	var p classPage
	call(t, cs, "summary", args, &p)
	for {
		got = append(got, p.Classes...)
		if p.NextCursor == "" {
			break
		}
		cursor := p.NextCursor
		p = classPage{}
		call(t, cs, "summary", map[string]any{"cursor": cursor}, &p)
	}
	if !slices.EqualFunc(got, all.Classes, func(a, b session.ClassRow) bool { return a.Index == b.Index }) {
		t.Errorf("the pages give %d classes, not the %d of one page in its order", len(got), len(all.Classes))
	}
	for i := 1; i < len(got); i++ {
		if got[i].Count > got[i-1].Count || !strings.Contains(strings.ToLower(got[i].Constructor), "e") {
			t.Fatalf("row %d: %+v after %+v: not filtered or not by count, descending", i, got[i], got[i-1])
		}
	}
	// Without a limit, a page is small.
	var small classPage
	call(t, cs, "summary", nil, &small)
	if len(small.Classes) != mcpserver.DefaultPage || small.NextCursor == "" || small.ClassCount <= mcpserver.DefaultPage {
		t.Errorf("a page without limit: %d of %d classes, cursor %q", len(small.Classes), small.ClassCount, small.NextCursor)
	}
	// A series question on one snapshot says how to open a series.
	if msg := callErr(t, cs, "leaks", nil); !strings.Contains(msg, "leaks needs 3 snapshots and the session has 1: call open with file and baselines") {
		t.Errorf("leaks of one snapshot: %q", msg)
	}
	if msg := callErr(t, cs, "diff", nil); !strings.Contains(msg, "no baseline to compare with: call open") {
		t.Errorf("diff of one snapshot: %q", msg)
	}
}

// TestFirefox: a Firefox snapshot, opened as heapx mcp opens dumps by
// default (session.Open); its ids are addresses, given in hex.
func TestFirefox(t *testing.T) {
	srv := mcpserver.New(mcpserver.Options{})
	cs := connect(t, srv)
	var opened struct {
		Dump    string `json:"dump"`
		Runtime string `json:"runtime"`
		IDs     string `json:"ids"`
		Words   session.Words
	}
	call(t, cs, "open", map[string]any{"file": fixture("spidermonkey/ff-small-page.fxsnapshot")}, &opened)
	if opened.Runtime != "spidermonkey" || opened.IDs != "address" || opened.Words.Class != "Class" {
		t.Errorf("open: %+v", opened)
	}
	var obj session.ObjectJSON
	call(t, cs, "inspect", map[string]any{"id": "0x19913e224178"}, &obj)
	if obj.Object.Constructor != "Map" || obj.Object.ID != 0x19913e224178 || obj.Object.RetainedSize < obj.Object.ShallowSize {
		t.Errorf("inspect 0x19913e224178: %+v", obj.Object)
	}
	var paths session.PathsJSON
	call(t, cs, "paths", map[string]any{"id": "0x19913e224178", "k": 1}, &paths)
	if len(paths.Paths) != 1 || !regexp.MustCompile(`(?s)Window .*\.customers Map Map @`+fmt.Sprint(uint64(0x19913e224178))).MatchString(pathText(paths.Paths[0])) {
		t.Errorf("the path to the customers Map:\n%s", pathText(paths.Paths[0]))
	}
	var classes classPage
	call(t, cs, "summary", map[string]any{"filter": "Map", "sort": "count", "desc": true, "limit": 3}, &classes)
	if len(classes.Classes) == 0 || !strings.Contains(classes.Classes[0].Constructor, "Map") {
		t.Errorf("summary of Map: %+v", classes)
	}
	var dumps struct {
		Dumps []mcpserver.DumpJSON `json:"dumps"`
	}
	call(t, cs, "dumps", nil, &dumps)
	if len(dumps.Dumps) != 1 || dumps.Dumps[0].Dump != "d1" || dumps.Dumps[0].Runtime != "spidermonkey" {
		t.Errorf("dumps: %+v", dumps)
	}
	var closed mcpserver.DumpJSON
	call(t, cs, "close", map[string]any{"dump": "d1"}, &closed)
	if closed.Dump != "d1" {
		t.Errorf("closed %+v", closed)
	}
	if msg := callErr(t, cs, "inspect", map[string]any{"id": "0x19913e224178"}); !strings.Contains(msg, "no dump is open") {
		t.Errorf("after close: %q", msg)
	}
}

// TestHPROF: a Java series: hex ids, classes by their Java names, and a
// comparison by class counts, whose objects cannot be told new.
func TestHPROF(t *testing.T) {
	cs := connect(t, mcpserver.New(mcpserver.Options{Open: cachedOpen(t)}))
	call(t, cs, "open", map[string]any{"file": fixture("hprof/java-ticketleak-3.hprof.gz"),
		"baselines": []string{fixture("hprof/java-ticketleak-1.hprof.gz"), fixture("hprof/java-ticketleak-2.hprof.gz")}}, &struct{}{})
	var classes classPage
	call(t, cs, "summary", map[string]any{"filter": "TicketLeak$Ticket"}, &classes)
	// The instances, and the class object ("class TicketLeak$Ticket").
	if len(classes.Classes) != 2 || classes.Classes[0].Constructor != "TicketLeak$Ticket" || classes.Classes[0].Count != 6000 {
		t.Fatalf("summary of TicketLeak$Ticket: %+v", classes)
	}
	var inst objectPage
	call(t, cs, "instances", map[string]any{"class": classes.Classes[0].Index, "limit": 1}, &inst)
	if inst.Total != classes.Classes[0].Count || len(inst.Objects) != 1 {
		t.Fatalf("instances: %+v", inst)
	}
	hex := fmt.Sprintf("0x%x", inst.Objects[0].ID)
	var paths session.PathsJSON
	call(t, cs, "paths", map[string]any{"id": hex, "k": 1}, &paths)
	want := regexp.MustCompile(`(?s)\.appClass .*\.OPEN java\.util\.ArrayList.*\.elementData .*TicketLeak\$Ticket @` + fmt.Sprint(inst.Objects[0].ID))
	if len(paths.Paths) != 1 || !want.MatchString(pathText(paths.Paths[0])) {
		t.Errorf("the path to Ticket %s:\n%+v", hex, paths.Paths)
	}
	var obj session.ObjectJSON
	call(t, cs, "inspect", map[string]any{"id": "0xfc015ef8"}, &obj)
	if obj.Object.ID != 0xfc015ef8 || !strings.Contains(obj.Object.Name, "TicketLeak") {
		t.Errorf("inspect 0xfc015ef8: %+v", obj.Object)
	}
	var diff struct {
		Matching string            `json:"matching"`
		Classes  []session.DiffRow `json:"classes"`
	}
	call(t, cs, "diff", map[string]any{"filter": "TicketLeak$Ticket"}, &diff)
	if diff.Matching != "class" || len(diff.Classes) != 1 || diff.Classes[0].Delta != 2000 {
		t.Fatalf("diff of Ticket: %+v", diff)
	}
	if msg := callErr(t, cs, "new_objects", map[string]any{"row": diff.Classes[0].Index}); !strings.Contains(msg, "not matched by id") {
		t.Errorf("new objects of a Java series: %q", msg)
	}
	if msg := callErr(t, cs, "inspect", map[string]any{"id": "0xdeadbeef"}); !strings.Contains(msg, "no object with id @0xdeadbeef") {
		t.Errorf("a bad Java id: %q", msg)
	}
}

// TestJavaThreads: an agent asks a Java dump for its threads, as heapx
// threads --json answers (the thread keeping the most alive first, its
// frames at their lines, what their locals hold with retained sizes), and
// for its class loaders.
func TestJavaThreads(t *testing.T) {
	cs := connect(t, mcpserver.New(mcpserver.Options{Open: cachedOpen(t)}))
	call(t, cs, "open", map[string]any{"file": fixture("hprof/java-threads.hprof.gz")}, &struct{}{})
	var threads query.ThreadsJSON
	call(t, cs, "query", map[string]any{"name": "threads", "args": map[string]any{"limit": 3}}, &threads)
	var holder *query.ThreadJSON
	for i := range threads.Threads {
		if threads.Threads[i].Name == "holder" {
			holder = &threads.Threads[i]
		}
	}
	if len(threads.Threads) != 3 || threads.Threads[0].Name != "nested" || holder == nil || len(holder.Frames) < 2 {
		t.Fatalf("threads: %+v", threads.Threads)
	}
	f := holder.Frames[1]
	if f.Function != "ThreadsDemo.hold" || f.Line != 41 || len(f.Values) != 1 || f.Values[0].Class != "java.util.ArrayList" ||
		f.Values[0].RetainedSize == nil || *f.Values[0].RetainedSize != 20040 {
		t.Errorf("holder's frame 1: %+v", f)
	}
	var loaders map[string]any
	call(t, cs, "query", map[string]any{"name": "class-loaders"}, &loaders)
	if b, _ := json.Marshal(loaders); !strings.Contains(string(b), `java.net.URLClassLoader \"widgets\"`) || !strings.Contains(string(b), `\"plugins-1\"`) {
		t.Errorf("class-loaders: %s", b)
	}
}

// TestOpenFailures: a file that is not a dump, and one that is cut
// short, are errors that name the file; the server opens the next.
func TestOpenFailures(t *testing.T) {
	cs := connect(t, mcpserver.New(mcpserver.Options{}))
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.heapsnapshot")
	if err := os.WriteFile(junk, []byte(`{"snapshot": {"meta": `), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := callErr(t, cs, "open", map[string]any{"file": junk}); !strings.Contains(msg, junk) {
		t.Errorf("open of a cut file: %q does not name it", msg)
	}
	if msg := callErr(t, cs, "open", map[string]any{}); !strings.Contains(msg, "file") {
		t.Errorf("open without a file: %q", msg)
	}
	var d mcpserver.DumpJSON
	call(t, cs, "open", map[string]any{"file": fixture("hprof/java-leakdemo-small.hprof.gz")}, &d)
	if d.Dump != "d2" || d.Runtime != "hprof" { // d1 was the cut file; ids are not reused
		t.Errorf("open after failures: %+v", d)
	}
}

// TestOpenPanics: a failure of heapx itself while opening is the open's
// error, not the end of the server; the dump can be opened again.
func TestOpenPanics(t *testing.T) {
	fail := true
	open := cachedOpen(t)
	var log strings.Builder
	cs := connect(t, mcpserver.New(mcpserver.Options{Log: &log, Open: func(file string, baselines []string, dump heapx.Options) (*session.Session, error) {
		if fail {
			panic("index out of range [7] with length 7")
		}
		return open(file, baselines, dump)
	}}))
	file := fixture("node-leak-1.heapsnapshot.gz")
	if msg := callErr(t, cs, "open", map[string]any{"file": file}); !strings.Contains(msg, "heapx failed to open "+file) || !strings.Contains(msg, "index out of range") {
		t.Errorf("open that panics: %q", msg)
	}
	if !strings.Contains(log.String(), "goroutine") {
		t.Errorf("the panic's stack is not logged: %q", log.String())
	}
	fail = false
	var d mcpserver.DumpJSON
	call(t, cs, "open", map[string]any{"file": file}, &d)
	if d.Dump != "d2" || d.Runtime != "v8" || d.TotalSize == 0 {
		t.Errorf("open after the panic: %+v", d)
	}
}
