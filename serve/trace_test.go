package serve_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
)

// handlerTrace is the memory trace of a handler run four times from the
// event loop that analysis/lifetime's tests write and describe: a cache
// entry kept and never used per call (a leak, at /app/handler.js:3:14),
// a table, a node and its range array made and dropped per call.
const handlerTrace = "../analysis/lifetime/testdata/handler.memtrace"

// openTrace serves a session on handlerTrace.
func openTrace(t *testing.T) string {
	t.Helper()
	s, err := session.OpenTrace(handlerTrace, session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return start(t, s, serve.Options{})
}

// TestAPITrace: a session on a memory trace lists the lifetime queries
// and only those, answers them with heapx lifetimes' numbers, the
// timeline as a line chart, and the report heapx report TRACE makes; a
// snapshot's views say the file is a trace.
func TestAPITrace(t *testing.T) {
	url := openTrace(t)
	var info struct {
		Runtime string `json:"runtime"`
		Trace   *struct {
			Events  int `json:"events"`
			Objects int `json:"objects"`
			Sites   int `json:"sites"`
			Idles   int `json:"idle_points"`
			End     int `json:"end_time"`
		} `json:"trace"`
		Queries []struct {
			Name     string `json:"name"`
			Group    string `json:"group"`
			Runnable bool   `json:"runnable"`
		} `json:"queries"`
	}
	if st := apiGet(t, url, "/api/v1/session", &info); st != http.StatusOK {
		t.Fatalf("GET session: %d", st)
	}
	if info.Runtime != "memtrace" || info.Trace == nil || *info.Trace != (struct {
		Events  int `json:"events"`
		Objects int `json:"objects"`
		Sites   int `json:"sites"`
		Idles   int `json:"idle_points"`
		End     int `json:"end_time"`
	}{75, 18, 6, 5, 51}) {
		t.Errorf("the session: runtime %q, trace %+v; want memtrace, 75 events, 18 objects, 6 sites, 5 idle points, end 51", info.Runtime, info.Trace)
	}
	var names []string
	for _, q := range info.Queries {
		if q.Group != "lifetimes" || !q.Runnable {
			t.Errorf("query %s (group %s, runnable %v) listed for a trace", q.Name, q.Group, q.Runnable)
		}
		names = append(names, q.Name)
	}
	for _, want := range []string{"lifetimes", "stale-sites", "trace-leaks", "churn", "unused", "non-escaping", "inlining",
		"lifetime-timeline", "call-tree", "access-paths", "object-lifetimes"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("the trace's queries %v lack %s", names, want)
		}
	}

	// The numbers heapx stale-sites prints (cmd/heapx's TestLifetimeQueries).
	var stale struct {
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	if st := apiGet(t, url, "/api/v1/queries/stale-sites", &stale); st != http.StatusOK || len(stale.Sections) != 1 || len(stale.Sections[0].Rows) == 0 {
		t.Fatalf("stale-sites: %d %+v", st, stale)
	}
	r := stale.Sections[0].Rows[0]
	if r["site"] != "/app/handler.js:3:14" || r["count"] != 4.0 || r["staleness"] != 102.0 || r["peak_stale"] != 4.0 || r["alive_at_end"] != 4.0 {
		t.Errorf("stale-sites' first row: %v", r)
	}
	// The leak is marked in the Problems column the page shows, and
	// said in the header.
	var lt struct {
		Header   []string `json:"header"`
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	apiGet(t, url, "/api/v1/queries/lifetimes", &lt)
	if len(lt.Sections) == 0 || len(lt.Sections[0].Rows) == 0 || lt.Sections[0].Rows[0]["problems"] != "leak, unused" ||
		!strings.Contains(strings.Join(lt.Header, "\n"), "Leak found: /app/handler.js:3:14") {
		t.Errorf("lifetimes: %+v", lt)
	}
	var churn struct {
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	apiGet(t, url, "/api/v1/queries/churn?one=true", &churn)
	if len(churn.Sections) != 1 || len(churn.Sections[0].Rows) != 3 || churn.Sections[0].Rows[0]["site"] != "/app/handler.js:4:17" ||
		churn.Sections[0].Rows[0]["mean_lifetime"] != 7.0 || churn.Sections[0].Rows[0]["one_alive_at_a_time"] != "yes" {
		t.Errorf("churn --one: %+v", churn)
	}

	// The timeline in the generic form the page draws: a line chart over
	// time, of all live objects, the stale ones and the top sites' stale.
	var tl struct {
		Sections []struct {
			Columns []struct {
				Key   string `json:"key"`
				Title string `json:"title"`
			} `json:"columns"`
			Rows  []map[string]any `json:"rows"`
			Chart *struct {
				Kind  string `json:"kind"`
				Label string `json:"label"`
				Value string `json:"value"`
			} `json:"chart"`
		} `json:"sections"`
	}
	if st := apiGet(t, url, "/api/v1/queries/lifetime-timeline?form=generic&sites=1", &tl); st != http.StatusOK || len(tl.Sections) != 1 {
		t.Fatalf("lifetime-timeline: %d %+v", st, tl)
	}
	sec := tl.Sections[0]
	if sec.Chart == nil || sec.Chart.Kind != "line" || sec.Chart.Label != "time" || sec.Chart.Value != "alive" {
		t.Errorf("the timeline's chart: %+v", sec.Chart)
	}
	if len(sec.Columns) != 4 || sec.Columns[3].Title != "Stale at /app/handler.js:3:14" || len(sec.Rows) < 2 {
		t.Errorf("the timeline: columns %+v, %d rows", sec.Columns, len(sec.Rows))
	}
	// At the end, the four kept cache entries are alive and stale.
	if last := sec.Rows[len(sec.Rows)-1]; last["time"] != 51.0 || last["stale_site_1"] != 4.0 {
		t.Errorf("the timeline's last row: %v", last)
	}

	var rep struct {
		Format string `json:"format"`
		Parts  []struct {
			Key string `json:"key"`
		} `json:"parts"`
	}
	apiGet(t, url, "/api/v1/report", &rep)
	if rep.Format != "memtrace" || len(rep.Parts) != 7 || rep.Parts[1].Key != "trace_leaks" {
		t.Errorf("the report: %+v", rep)
	}

	for _, path := range []string{"/api/v1/classes", "/api/v1/objects/1", "/api/v1/classes/0/instances", "/api/v1/diff", "/api/v1/queries/summary"} {
		var e apiError
		if st := apiGet(t, url, path, &e); st != http.StatusNotFound || !strings.Contains(e.Error, "memory trace") {
			t.Errorf("GET %s on a trace: %d %q, want 404 saying it is a memory trace", path, st, e.Error)
		}
	}
}

// TestBrowserTrace: the page on a trace has the lifetime analyses in
// its navigation and no snapshot views, its overview is heapx report
// TRACE's, and the timeline is drawn by the line chart.
func TestBrowserTrace(t *testing.T) {
	b := startBrowser(t)
	url := openTrace(t)
	p := b.newPage()
	p.navigate(url + "/")
	p.waitFor("the trace's overview", `document.querySelector('#part-trace_leaks table')`)
	if got := p.text(".facts-table"); !strings.Contains(got, "memtrace (heapx trace)") || !strings.Contains(got, "Idle points5") {
		t.Errorf("the overview's facts: %q", got)
	}
	if got := p.text("#part-trace_leaks"); !strings.Contains(got, "/app/handler.js:3:14") {
		t.Errorf("the overview's leaks: %q", got)
	}
	var nav string
	p.eval(`[...document.querySelectorAll('#nav a')].map(a => a.dataset.view).join(' ')`, &nav)
	if nav != "overview query/lifetimes query/trace-leaks query/stale-sites query/lifetime-timeline" {
		t.Errorf("the navigation of a trace: %q", nav)
	}
	p.click(`#nav a[data-view="query/lifetime-timeline"]`)
	// Alive, stale, and the stale of the three sites of most drag.
	p.waitFor("the timeline's line chart", `document.querySelectorAll('.view-query svg.chart polyline').length === 5`)
	var legend string
	p.eval(`[...document.querySelectorAll('.view-query svg.chart polyline title')].map(t => t.textContent).join('|')`, &legend)
	if !strings.HasPrefix(legend, "Alive|Stale|Stale at /app/handler.js:3:14|") {
		t.Errorf("the lines are %q", legend)
	}
	p.screenshot(screenshotDir(t), "trace-timeline.png")
	p.noProblems()
}
