package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
)

// The names of hostileDump: what a page would run or draw were they
// written into it as markup.
const (
	hostileName     = `<img src=x onerror=alert(1)>`
	hostileProperty = `"><script>window.heapxEvil=1</script>`
	hostileString   = `<svg onload=alert(2)>`
)

// hostileDump writes a V8 snapshot whose global holds an object named
// hostileName (of class "<img>") through property "evil", and that object a string named
// hostileString through property hostileProperty.
func hostileDump(t testing.TB) string {
	t.Helper()
	strs := []string{"", "global", "evil", hostileName, hostileProperty, hostileString, "x"}
	// A struct, not a map: V8 snapshots start with "snapshot", which is
	// how the format is recognised.
	doc := struct {
		Snapshot any      `json:"snapshot"`
		Nodes    []int    `json:"nodes"`
		Edges    []int    `json:"edges"`
		Strings  []string `json:"strings"`
	}{
		Snapshot: map[string]any{
			"meta": map[string]any{
				"node_fields": []string{"type", "name", "id", "self_size", "edge_count"},
				"node_types":  []any{[]string{"synthetic", "object", "string"}, "string", "number", "number", "number"},
				"edge_fields": []string{"type", "name_or_index", "to_node"},
				"edge_types":  []any{[]string{"property", "shortcut"}, "string_or_number", "node"},
			},
			"node_count": 4, "edge_count": 4,
		},
		// root -shortcut "global"-> global -evil-> <img...> -"><script>...-> string, and -x-> the same string.
		Nodes:   []int{0, 0, 1, 0, 1, 1, 1, 3, 100, 1, 1, 3, 5, 56, 2, 2, 5, 7, 40, 0},
		Edges:   []int{1, 1, 5, 0, 2, 10, 0, 4, 15, 0, 6, 15},
		Strings: strs,
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.heapsnapshot")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// apiGet fetches path from the server at url and decodes its JSON into
// out, returning the status.
func apiGet(t *testing.T, url, path string, out any) int {
	t.Helper()
	res, err := http.Get(url + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q, want application/json", path, ct)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return res.StatusCode
}

type apiError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// TestAPIPaging: lists come a page at a time, the page size is clamped,
// pages add up to the whole list, and the Summary's numbers are heapx
// summary's.
func TestAPIPaging(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	var page session.ClassPage
	if st := apiGet(t, url, "/api/v1/classes?filter=leakeditem", &page); st != 200 || page.Matched != 1 || len(page.Classes) != 1 {
		t.Fatalf("filter: status %d, %+v", st, page)
	}
	c := page.Classes[0]
	if c.Constructor != "LeakedItem" || c.Count != 1500 || c.ShallowSize != 84000 || c.RetainedSize != 431280 || c.Distance != 7 {
		t.Errorf("LeakedItem's row is %+v; heapx summary says count 1,500, shallow 84,000, retained 431,280, distance 7", c)
	}
	// All 1,500 instances in pages of at most MaxPage, none twice,
	// largest retained size first.
	seen := map[uint64]bool{}
	var last uint64 = 1 << 62
	for off := 0; off < 1500; {
		var ip session.InstancePage
		if st := apiGet(t, url, fmt.Sprintf("/api/v1/classes/%d/instances?offset=%d&limit=100000", c.Index, off), &ip); st != 200 {
			t.Fatalf("instances: status %d", st)
		}
		if len(ip.Objects) != min(session.MaxPage, 1500-off) || ip.Total != 1500 || ip.Offset != off {
			t.Fatalf("page at %d: %d objects of %d at %d; want a page clamped to %d", off, len(ip.Objects), ip.Total, ip.Offset, session.MaxPage)
		}
		for _, o := range ip.Objects {
			if seen[o.ID] || o.RetainedSize > last || o.Constructor != "LeakedItem" {
				t.Fatalf("object %+v out of order or seen twice", o)
			}
			seen[o.ID], last = true, o.RetainedSize
		}
		off += len(ip.Objects)
	}
	// Without a limit, DefaultPage; past the end, empty.
	var ip session.InstancePage
	apiGet(t, url, fmt.Sprintf("/api/v1/classes/%d/instances", c.Index), &ip)
	if len(ip.Objects) != session.DefaultPage {
		t.Errorf("default page: %d objects, want %d", len(ip.Objects), session.DefaultPage)
	}
	apiGet(t, url, fmt.Sprintf("/api/v1/classes/%d/instances?offset=5000", c.Index), &ip)
	if len(ip.Objects) != 0 || ip.Total != 1500 {
		t.Errorf("past the end: %d objects of %d", len(ip.Objects), ip.Total)
	}
	// Sorting.
	apiGet(t, url, "/api/v1/classes?sort=count&limit=3", &page)
	for i := 1; i < len(page.Classes); i++ {
		if page.Classes[i].Count > page.Classes[i-1].Count {
			t.Errorf("sort=count: %d after %d", page.Classes[i].Count, page.Classes[i-1].Count)
		}
	}
	apiGet(t, url, "/api/v1/classes?sort=constructor&order=asc&limit=2", &page)
	if len(page.Classes) != 2 || page.Classes[0].Constructor > page.Classes[1].Constructor || page.ClassCount != 176 {
		t.Errorf("sort=constructor: %+v", page)
	}
	// An object's retainers, paged: the LeakedItem's Array is its first.
	var ret session.EdgePage
	apiGet(t, url, "/api/v1/objects/@92189/retainers?limit=1", &ret)
	if ret.Total != 2 || len(ret.Edges) != 1 || ret.Edges[0].From.ID != 80593 || ret.Edges[0].Edge != "[510]" {
		t.Errorf("retainers of @92189: %+v", ret)
	}
	// The comparison's new LeakedItems.
	var diff session.DiffPage
	apiGet(t, url, "/api/v1/diff?filter=LeakedItem", &diff)
	if len(diff.Classes) != 1 || diff.Classes[0].New != 500 || diff.Matching != "id" {
		t.Fatalf("diff: %+v", diff)
	}
	var np session.NewObjectPage
	apiGet(t, url, fmt.Sprintf("/api/v1/diff/%d/new?limit=10", diff.Classes[0].Index), &np)
	if np.Total != 500 || len(np.Objects) != 10 {
		t.Errorf("new LeakedItems: %d of %d", len(np.Objects), np.Total)
	}
}

// TestAPIBaselineObjects: the Comparison's deleted objects are the
// baseline's, and they open as the file's objects do, with the baseline
// named by ?snapshot=: its details, references, retainers, paths and
// dominated objects are those of a session on the baseline alone.
func TestAPIBaselineObjects(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	// The baseline the comparison is with, alone.
	base := start(t, open(t, "node-leak-2.heapsnapshot.gz"), serve.Options{})

	// heapx diff node-leak-2 node-leak-3: 34 of the 34
	// "Node / std::basic_string" objects are deleted (and 34 new).
	var diff session.DiffPage
	apiGet(t, url, "/api/v1/diff?filter=std::basic_string", &diff)
	if len(diff.Classes) != 1 || diff.Classes[0].Deleted != 34 || diff.Matching != "id" {
		t.Fatalf("diff: %+v", diff)
	}
	row := diff.Classes[0]
	var del session.NewObjectPage
	apiGet(t, url, fmt.Sprintf("/api/v1/diff/%d/deleted?limit=100", row.Index), &del)
	if del.Total != 34 || len(del.Objects) != 34 || del.Snapshot != 2 {
		t.Fatalf("deleted: %d objects of %d, snapshot %d; want 34 of 34 in snapshot 2", len(del.Objects), del.Total, del.Snapshot)
	}
	var np session.NewObjectPage
	apiGet(t, url, fmt.Sprintf("/api/v1/diff/%d/new?limit=100", row.Index), &np)
	if np.Total != 34 || np.Snapshot != 0 {
		t.Errorf("new: %d objects, snapshot %d; want 34 in snapshot 0", np.Total, np.Snapshot)
	}
	newIDs := map[uint64]bool{}
	for _, o := range np.Objects {
		newIDs[o.ID] = true
	}
	for i, o := range del.Objects {
		if o.Constructor != "Node / std::basic_string" || newIDs[o.ID] {
			t.Errorf("deleted object %+v: of another class, or new as well", o)
		}
		if i > 0 && o.RetainedSize > del.Objects[i-1].RetainedSize {
			t.Errorf("deleted objects not largest first: %d after %d", o.RetainedSize, del.Objects[i-1].RetainedSize)
		}
	}

	// The largest deleted object is not in the file, and opens in the
	// baseline as in a session on the baseline alone.
	id := del.Objects[0].ID
	var e apiError
	if st := apiGet(t, url, fmt.Sprintf("/api/v1/objects/@%d", id), &e); st != 404 || !strings.Contains(e.Error, "node-leak-3") {
		t.Errorf("a deleted object in the file: %d %+v, want 404 naming the file", st, e)
	}
	same := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("%s in snapshot 2:\n%s\nthe baseline alone:\n%s", what, g, w)
		}
	}
	for _, c := range []struct {
		what, path string
		got, want  any
	}{
		{"object", "", &session.ObjectJSON{}, &session.ObjectJSON{}},
		{"references", "/references", &session.EdgePage{}, &session.EdgePage{}},
		{"retainers", "/retainers", &session.EdgePage{}, &session.EdgePage{}},
		{"paths", "/paths?k=3", &session.PathsJSON{}, &session.PathsJSON{}},
		{"dominated", "/children", &session.ChildPage{}, &session.ChildPage{}},
		{"dominated by class", "/children/classes", &session.ChildClassPage{}, &session.ChildClassPage{}},
	} {
		sep := "?"
		if strings.Contains(c.path, "?") {
			sep = "&"
		}
		if st := apiGet(t, url, fmt.Sprintf("/api/v1/objects/@%d%s%ssnapshot=2", id, c.path, sep), c.got); st != 200 {
			t.Fatalf("%s of deleted @%d in snapshot 2: %d", c.what, id, st)
		}
		apiGet(t, base, fmt.Sprintf("/api/v1/objects/@%d%s", id, c.path), c.want)
		same(c.what, c.got, c.want)
	}
	var obj session.ObjectJSON
	apiGet(t, url, fmt.Sprintf("/api/v1/objects/@%d?snapshot=2", id), &obj)
	if obj.Object.ID != id || obj.Retainers == 0 || obj.Object.Constructor != "Node / std::basic_string" {
		t.Errorf("deleted @%d in snapshot 2: %+v", id, obj)
	}
	var paths session.PathsJSON
	apiGet(t, url, fmt.Sprintf("/api/v1/objects/@%d/paths?snapshot=2", id), &paths)
	if len(paths.Paths) == 0 || !strings.HasSuffix(paths.File, "node-leak-2.heapsnapshot.gz") {
		t.Errorf("paths of deleted @%d in snapshot 2: %+v", id, paths)
	}
	// The oldest baseline is snapshot 1; there is no snapshot 3.
	var first session.ObjectJSON
	if st := apiGet(t, url, "/api/v1/objects/root?snapshot=1", &first); st != 200 || first.Object.ID != 1 {
		t.Errorf("the root of snapshot 1: %d %+v", st, first)
	}
	for _, c := range []struct {
		path   string
		status int
		says   string
	}{
		{"/api/v1/objects/root?snapshot=3", 404, "no snapshot 3: the session has 3"},
		{"/api/v1/objects/root/retainers?snapshot=-1", 404, "no snapshot -1"},
		{"/api/v1/objects/root/paths?snapshot=two", 400, "not an integer"},
		{"/api/v1/diff/99999/deleted", 404, "no class with index 99999"},
	} {
		var e apiError
		if st := apiGet(t, url, c.path, &e); st != c.status || !strings.Contains(e.Error, c.says) {
			t.Errorf("GET %s: %d %+v, want %d saying %q", c.path, st, e, c.status, c.says)
		}
	}
}

// TestAPIThreads: a Java dump's session says how many threads it records,
// and the threads query answers as heapx threads --json does (the stack
// JSON, the thread keeping the most alive first) or, with form=generic,
// as a tree the page draws.
func TestAPIThreads(t *testing.T) {
	s := open(t, "hprof/java-threads.hprof.gz")
	url := start(t, s, serve.Options{})
	var info session.InfoJSON
	if st := apiGet(t, url, "/api/v1/session", &info); st != 200 || info.Threads != 9 || info.Runtime != "hprof" {
		t.Fatalf("session: status %d, %d threads, runtime %q", st, info.Threads, info.Runtime)
	}
	var threads query.ThreadsJSON
	if st := apiGet(t, url, "/api/v1/queries/threads?limit=1", &threads); st != 200 || len(threads.Threads) != 1 {
		t.Fatalf("threads: status %d, %+v", st, threads)
	}
	if th := threads.Threads[0]; th.Name != "nested" || th.State != "TIMED_WAITING" || th.HeldSize == nil || *th.HeldSize < 100016 {
		t.Errorf("the thread keeping the most: %+v", th)
	}
	var doc struct {
		Sections []struct {
			Tree []struct {
				Thread   string `json:"thread"`
				Children []struct {
					Thread string `json:"thread"`
				} `json:"children"`
			} `json:"tree"`
		} `json:"sections"`
	}
	if st := apiGet(t, url, "/api/v1/queries/threads?form=generic", &doc); st != 200 || len(doc.Sections) != 1 || len(doc.Sections[0].Tree) != 9 {
		t.Fatalf("threads, generic: status %d, %+v", st, doc)
	}
	if top := doc.Sections[0].Tree[0]; !strings.HasPrefix(top.Thread, `thread 13 "nested" TIMED_WAITING: java.lang.Thread @0x`) ||
		len(top.Children) != 8 || top.Children[1].Thread != "#1 ThreadsDemo.inner" {
		t.Errorf("the first thread of the tree: %+v", top)
	}
}

// TestAPIErrors: what the dump does not have is a 404 JSON error, a
// request that is wrong a 400, never a 500.
func TestAPIErrors(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	cases := []struct {
		path   string
		status int
		says   string
	}{
		{"/api/v1/objects/123456789", 404, "no object with id @123456789"},
		{"/api/v1/objects/@0xffffffffff/retainers", 404, "no object with id"},
		{"/api/v1/objects/not-an-id", 400, "not a node id"},
		{"/api/v1/objects/92189/references?offset=-1", 400, "offset must be 0 or more"},
		{"/api/v1/objects/92189/references?limit=x", 400, "not an integer"},
		{"/api/v1/objects/92189/paths?k=1000", 400, "the number of paths must be 1 to 20"},
		{"/api/v1/objects/92189/paths?ignore=@1,nope", 400, "not a node id"},
		{"/api/v1/classes/999999/instances", 404, "no class with index 999999"},
		{"/api/v1/classes/x/instances", 404, "not an index"},
		{"/api/v1/classes?sort=colour", 400, "cannot sort classes by"},
		{"/api/v1/classes?order=up", 400, "order must be"},
		{"/api/v1/diff", 400, "no baseline to compare with"},
		{"/api/v1/diff/0/deleted", 400, "no baseline to compare with"},
		{"/api/v1/objects/root?snapshot=1", 404, "no snapshot 1: the session has 1, FILE (0), and no baseline"},
		{"/api/v1/queries/nope", 404, `no query named "nope"`},
		{"/api/v1/queries/summary?limit=many", 400, `limit="many" is not a valid int`},
		{"/api/v1/queries/summary?colour=red", 400, `summary has no argument "colour"`},
		{"/api/v1/queries/paths?id=12345678", 400, "no node with id @12345678"},
		{"/api/v1/queries/merged-paths?class=NoSuchClass", 400, `no class named "NoSuchClass"`},
		{"/api/v1/queries/leaks", 400, "leaks needs 3 snapshots"},
		{"/api/v1/queries/summary?form=xml", 400, "form must be"},
		{"/api/v1/nothing", 404, "no such API endpoint"},
	}
	for _, c := range cases {
		var e apiError
		if st := apiGet(t, url, c.path, &e); st != c.status || e.Status != c.status || !strings.Contains(e.Error, c.says) {
			t.Errorf("GET %s: %d %+v, want %d saying %q", c.path, st, e, c.status, c.says)
		}
	}
	// Methods, and SQL: read-only, JSON only, one statement.
	res, err := http.Post(url+"/api/v1/classes", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 {
		t.Errorf("POST /api/v1/classes: %d, want 405", res.StatusCode)
	}
	for _, c := range []struct {
		ctype, body, says string
	}{
		{"application/json", `{"query": "DELETE FROM node"}`, "read-only"},
		{"application/json", `{"query": "SELEC 1"}`, "syntax error"},
		{"application/json", `{"query": "SELECT 1; SELECT 2"}`, "give one SQL statement"},
		{"application/json", `{"query": "  ;  "}`, "no SQL statement"},
		{"application/json", `{"query": "SELECT 1", "limit": -1}`, "limit must be 0 or more"},
		{"application/json", `not json`, "the request is not"},
		{"text/plain", `{"query": "SELECT 1"}`, "Content-Type: application/json"},
		{"application/json", `{"query": "` + strings.Repeat("x", 70<<10) + `"}`, "longer than 64 kB"},
	} {
		res, err := http.Post(url+"/api/v1/sql", c.ctype, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var e apiError
		json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if res.StatusCode != 400 || !strings.Contains(e.Error, c.says) {
			t.Errorf("SQL %.40q: %d %q, want 400 saying %q", c.body, res.StatusCode, e.Error, c.says)
		}
	}
}

// TestAPISQL: the SQL console's rows are heapx sql --json's, cut at the
// limit asked for, and docs/sql.md's count of LeakedItems.
func TestAPISQL(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	post := func(body string) session.SQLJSON {
		res, err := http.Post(url+"/api/v1/sql", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out session.SQLJSON
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
			t.Fatalf("SQL %s: %d %v", body, res.StatusCode, err)
		}
		return out
	}
	r := post(`{"query": "SELECT name AS class, count(*) AS objects, name FROM nodes_named WHERE category = 'object' GROUP BY name ORDER BY objects DESC, class LIMIT 3"}`)
	want := `[{"class":"Array","objects":1629,"name":"Array"},{"class":"LeakedItem","objects":1500,"name":"LeakedItem"},{"class":"system / Context","objects":794,"name":"system / Context"}]`
	var got bytes.Buffer
	json.Compact(&got, r.Rows)
	var rows any
	if got.String() != want || r.Truncated || strings.Join(r.Columns, ",") != "class,objects,name" || strings.Join(r.Keys, ",") != "class,objects,name" {
		t.Errorf("rows %s, columns %v, keys %v, truncated %v; want %s", got.String(), r.Columns, r.Keys, r.Truncated, want)
	}
	r = post(`{"query": "SELECT identifier, name AS name, name FROM nodes_named", "limit": 2}`)
	json.Unmarshal(r.Rows, &rows)
	// SQLite names the second "name" name:1, as in heapx sql.
	if n := len(rows.([]any)); n != 2 || !r.Truncated || strings.Join(r.Keys, ",") != "identifier,name,name:1" {
		t.Errorf("limit 2: %d rows, truncated %v, keys %v", n, r.Truncated, r.Keys)
	}
	r = post(`{"query": "SELECT * FROM node", "limit": 100000}`)
	json.Unmarshal(r.Rows, &rows)
	if n := len(rows.([]any)); n != session.MaxSQLRows || !r.Truncated {
		t.Errorf("limit 100000: %d rows, want %d", n, session.MaxSQLRows)
	}
}

// TestAPIHostileNames: names from the dump come back exactly (as JSON
// strings) however they look, in the Summary, the references and the
// registry's results.
func TestAPIHostileNames(t *testing.T) {
	s := open(t, hostileDump(t))
	url := start(t, s, serve.Options{})
	var page session.ClassPage
	// DevTools names the class of an object named like an HTML element
	// by its tag, "<img>", as heapx does.
	apiGet(t, url, "/api/v1/classes?filter=%3Cimg", &page)
	if len(page.Classes) != 1 || page.Classes[0].Constructor != "<img>" {
		t.Fatalf("classes: %+v", page.Classes)
	}
	var ip session.InstancePage
	apiGet(t, url, fmt.Sprintf("/api/v1/classes/%d/instances", page.Classes[0].Index), &ip)
	if len(ip.Objects) != 1 || ip.Objects[0].Name != hostileName {
		t.Fatalf("instances: %+v", ip.Objects)
	}
	var refs session.EdgePage
	apiGet(t, url, fmt.Sprintf("/api/v1/objects/%d/references", ip.Objects[0].ID), &refs)
	if len(refs.Edges) != 2 || refs.Edges[0].EdgeName != hostileProperty || refs.Edges[0].To.Name != hostileString {
		t.Errorf("references: %+v", refs.Edges)
	}
	res, err := http.Get(url + "/api/v1/queries/top?form=generic")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if strings.Contains(string(body), "<img") || !strings.Contains(string(body), `\u003cimg src=x onerror=alert(1)\u003e`) {
		t.Errorf("the top query's JSON does not carry the class name escaped:\n%s", body)
	}
}

// TestServerSecurity: every answer carries the Content-Security-Policy;
// a Host other than the server's own is refused (DNS rebinding), so are
// requests other sites' pages make; with a token, nothing is answered
// without it, and the token in the address becomes a cookie.
func TestServerSecurity(t *testing.T) {
	s := open(t, "node-leak-3.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	do := func(method, u string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(method, u, nil)
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	res := do("GET", url+"/", nil)
	if csp := res.Header.Get("Content-Security-Policy"); res.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("GET /: %d, CSP %q", res.StatusCode, csp)
	}
	if res := do("GET", url+"/static/js/app.js", nil); res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("app.js: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res := do("GET", url+"/api/v1/session", map[string]string{"Host": "evil.example:80"}); res.StatusCode != 403 {
		t.Errorf("another Host: %d, want 403", res.StatusCode)
	}
	if res := do("GET", url+"/api/v1/session", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}); res.StatusCode != 403 {
		t.Errorf("a request from another site: %d, want 403", res.StatusCode)
	}
	if res := do("GET", url+"/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}); res.StatusCode != 200 {
		t.Errorf("a link from another site to the page: %d, want 200", res.StatusCode)
	}
	if res := do("GET", url+"/api/v1/session", map[string]string{"Sec-Fetch-Site": "same-origin"}); res.StatusCode != 200 {
		t.Errorf("the page's own request: %d, want 200", res.StatusCode)
	}

	tokenURL := start(t, s, serve.Options{Token: "s3cret"})
	if res := do("GET", tokenURL+"/api/v1/session", nil); res.StatusCode != 401 {
		t.Errorf("no token: %d, want 401", res.StatusCode)
	}
	if res := do("GET", tokenURL+"/api/v1/session", map[string]string{"Authorization": "Bearer wrong"}); res.StatusCode != 401 {
		t.Errorf("a wrong token: %d, want 401", res.StatusCode)
	}
	if res := do("GET", tokenURL+"/api/v1/session", map[string]string{"Authorization": "Bearer s3cret"}); res.StatusCode != 200 {
		t.Errorf("the token: %d, want 200", res.StatusCode)
	}
	res = do("GET", tokenURL+"/?token=s3cret", nil)
	var cookie *http.Cookie
	for _, c := range res.Cookies() {
		if c.Name == "heapx_token" {
			cookie = c
		}
	}
	if res.StatusCode != 303 || res.Header.Get("Location") != "/" || cookie == nil || cookie.Value != "s3cret" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
		t.Errorf("the token in the address: %d to %q, cookie %+v", res.StatusCode, res.Header.Get("Location"), cookie)
	}
	if res := do("GET", tokenURL+"/api/v1/session", map[string]string{"Cookie": "heapx_token=s3cret"}); res.StatusCode != 200 {
		t.Errorf("the cookie: %d, want 200", res.StatusCode)
	}
}
