package serve_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/serve"
)

// TestBrowserLeakSeries does in real Chromium what a user does on the
// bundled leak series: lands on the overview, which names the leak
// (LeakedItem, through onWork's closure) without a click; opens Summary,
// expands LeakedItem, selects an instance and sees its retainer path
// reach onWork through bus._events; opens Comparison and expands the new
// LeakedItems; runs an SQL query. The screenshots are in the test's
// temporary directory, or in $HEAPX_SCREENSHOTS when set, to look at.
func TestBrowserLeakSeries(t *testing.T) {
	b := startBrowser(t)
	s := open(t, "node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	p := b.newPage()
	dir := screenshotDir(t)
	p.navigate(url + "/")

	// Overview: the leak is there on landing (0 clicks).
	p.waitFor("the overview's leaks", `document.querySelector('#part-leaks table')`)
	leaks := p.text("#part-leaks")
	for _, want := range []string{"LeakedItem 500", ".bus", "._events", "onWork", "->retained"} {
		if !strings.Contains(leaks, want) {
			t.Errorf("the overview's leaks do not show %q:\n%s", want, leaks)
		}
	}
	p.waitFor("the overview's charts", `document.querySelectorAll('svg.chart rect').length > 5`)
	t.Logf("screenshots in %s", dir)
	p.screenshot(dir, "1-overview.png")

	// Summary: expand LeakedItem, select its largest instance.
	p.click(`#nav a[data-view="summary"]`)
	p.waitFor("the classes", `document.querySelector('tr.class-row')`)
	p.run(`(() => { const i = document.querySelector('input.filter'); i.value = 'LeakedItem'; i.dispatchEvent(new Event('input')); })()`)
	p.waitFor("LeakedItem alone", `document.querySelectorAll('tr.class-row').length === 1 && document.querySelector('tr.class-row').dataset.name === 'LeakedItem'`)
	p.click(`tr.class-row[data-name="LeakedItem"] button.toggle`)
	p.waitFor("LeakedItem's instances", `document.querySelectorAll('tr.instance').length === 50`)
	if got := p.text("tr.more-row"); !strings.Contains(got, "of 1,450 more") {
		t.Errorf("the instances page says %q, want the next of 1,450 more", got)
	}
	p.click(`tr.instance button.select`)
	p.waitFor("the selected instance's paths", `document.querySelector('.selection .path-table')`)
	path := p.text(".selection .path")
	if !regexp.MustCompile(`(?s)\.bus.*EventEmitter.*\._events.*\.work.*onWork.*->retained.*LeakedItem`).MatchString(path) {
		t.Errorf("the first retainer path does not reach onWork through bus._events:\n%s", path)
	}
	// The retainers tree opens along that path, up to the root.
	p.waitFor("the retainers tree open up to global", `[...document.querySelectorAll('.retainers tr.on-path')].some(r => r.textContent.includes('.bus'))`)
	tree := p.text(".retainers")
	for _, want := range []string{"[", "Array", "retained", "onWork", "_events", "bus"} {
		if !strings.Contains(tree, want) {
			t.Errorf("the retainers tree does not show %q:\n%s", want, tree)
		}
	}
	var url2 string
	p.eval("location.hash", &url2)
	if !strings.Contains(url2, "sel=%40") || !strings.Contains(url2, "filter=LeakedItem") || !strings.Contains(url2, "open=") {
		t.Errorf("the address does not keep the view's state: %s", url2)
	}
	p.screenshot(dir, "2-summary.png")

	// A reload shows the same: filter, open class, selection.
	p.run("location.reload()")
	p.waitFor("the selection after a reload", `document.querySelector('.selection .path-table') && document.querySelectorAll('tr.instance').length === 50`)

	// Comparison: LeakedItem has 500 new objects, which open.
	p.click(`#nav a[data-view="comparison"]`)
	p.waitFor("the comparison", `document.querySelector('tr.class-row[data-name="LeakedItem"]')`)
	row := p.text(`tr.class-row[data-name="LeakedItem"]`)
	if !strings.Contains(row, "+500") || !strings.Contains(row, "1,500") {
		t.Errorf("the comparison's LeakedItem row is %q, want +500 new, 1,500 in the target", row)
	}
	p.click(`tr.class-row[data-name="LeakedItem"] button.toggle`)
	p.waitFor("the new LeakedItems", `document.querySelectorAll('tr.instance').length === 50`)
	if got := p.text("tr.more-row"); !strings.Contains(got, "of 450 more") {
		t.Errorf("the new objects' page says %q, want the next of 450 more", got)
	}
	p.screenshot(dir, "3-comparison.png")

	// The back button returns to the Summary as it was.
	p.run("history.back()")
	p.waitFor("the summary again", `document.querySelector('.view-summary') && document.querySelector('input.filter').value === 'LeakedItem'`)

	// SQL.
	p.click(`#nav a[data-view="sql"]`)
	p.waitFor("the SQL console", `document.querySelector('textarea.sql')`)
	p.run(`document.querySelector('textarea.sql').value = "SELECT name, count(*) AS n FROM nodes_named WHERE name = 'LeakedItem' AND category = 'object' GROUP BY name"`)
	p.click(`form.sql-form button[type=submit]`)
	p.waitUpTo(5*time.Minute, "the SQL result", `document.querySelector('table.sql-result')`)
	if got := p.text("table.sql-result tbody"); got != "LeakedItem1500" {
		t.Errorf("the SQL result is %q, want LeakedItem 1500", got)
	}
	p.screenshot(dir, "4-sql.png")

	// The inspector, reached from the box at the top: the Array that
	// holds the LeakedItems, its fields and what holds it.
	p.run(`(() => { document.getElementById('goto-id').value = '80593'; document.getElementById('goto').requestSubmit(); })()`)
	p.waitFor("the inspector", `document.querySelector('.view-object h2.object-title')`)
	if got := p.text(".view-object h2.object-title"); got != "Array @80593" {
		t.Errorf("the inspector's title is %q", got)
	}
	p.waitFor("the Array's fields", `document.querySelectorAll('.view-object tbody tr[data-id]').length === 50`)
	p.click(`.tabs button[data-tab="retainers"]`)
	p.waitFor("the Array's paths", `document.querySelector('.view-object .path-table')`)
	if got := p.text(".view-object .path"); !strings.Contains(got, "->retained") || !strings.Contains(got, "onWork") {
		t.Errorf("the Array's first path: %q", got)
	}
	p.screenshot(dir, "5-inspector.png")

	// A query of the registry drawn from its generic form: a tree.
	p.navigate(url + "/#/query/merged-paths?class=LeakedItem")
	p.waitFor("the merged paths", `document.querySelector('.view-query table.tree')`)
	var shown string
	p.eval(`document.querySelector('.view-query table.tree').innerText`, &shown)
	if !strings.Contains(shown, "onWork") || !strings.Contains(shown, "1,500") {
		t.Errorf("merged paths of LeakedItem show %q", shown)
	}
	p.screenshot(dir, "6-merged-paths.png")
	p.noProblems()
}

// screenshotDir is where a test saves its screenshots: the test's
// temporary directory, or $HEAPX_SCREENSHOTS to keep them.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("HEAPX_SCREENSHOTS"); d != "" {
		d = filepath.Join(d, t.Name())
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// explore is what a user does on one dump: land on the overview, open
// Summary, filter on class, expand it, select its first instance and see
// a retainer path that matches path; open Dominators and a query from
// the registry; run an SQL query that counts the objects.
func explore(t *testing.T, p *page, url, class string, path *regexp.Regexp, nodes int) string {
	dir := screenshotDir(t)
	p.navigate(url + "/")
	p.waitFor("the overview", `document.querySelector('.part table')`)
	p.waitFor("the overview's charts", `document.querySelectorAll('svg.chart rect').length > 5`)
	p.screenshot(dir, "1-overview.png")

	p.click(`#nav a[data-view="summary"]`)
	p.waitFor("the classes", `document.querySelector('tr.class-row')`)
	p.run(fmt.Sprintf(`(() => { const i = document.querySelector('input.filter'); i.value = %q; i.dispatchEvent(new Event('input')); })()`, class))
	row := fmt.Sprintf(`tr.class-row[data-name=%q]`, class)
	p.waitFor(class+" filtered", fmt.Sprintf(`document.querySelector('.toolbar .count').textContent.includes(' of ') && document.querySelector('%s')`, row))
	p.click(row + " button.toggle")
	p.waitFor(class+"'s instances", `document.querySelector('tr.instance')`)
	p.click(`tr.instance button.select`)
	p.waitFor("the selected instance's paths", `document.querySelector('.selection .path-table')`)
	if got := p.text(".selection .path"); !path.MatchString(got) {
		t.Errorf("the first retainer path does not match %s:\n%s", path, got)
	}
	p.waitFor("the retainers tree open up to the root", `[...document.querySelectorAll('.retainers tr.on-path')].some(r => r.dataset.id === document.querySelector('.selection .path-table a.obj .id').textContent)`)
	p.screenshot(dir, "2-summary.png")

	p.click(`#nav a[data-view="dominators"]`)
	p.waitFor("the dominator tree", `document.querySelector('.view-dominators tbody tr[data-id]')`)
	p.click(`.view-dominators tbody tr[data-id] button.toggle`)
	p.waitFor("a second level", `document.querySelectorAll('.view-dominators tbody tr[data-id]').length > 1`)
	p.click(`#group-class`)
	p.waitFor("the tree by class", `document.querySelector('.view-dominators tbody tr.group')`)
	p.screenshot(dir, "3-dominators.png")

	p.click(`#nav a[data-view="query/suspects"]`)
	p.waitFor("the suspects", `document.querySelector('.view-query .result table')`)

	p.click(`#nav a[data-view="sql"]`)
	p.waitFor("the SQL console", `document.querySelector('textarea.sql')`)
	p.run(`document.querySelector('textarea.sql').value = "SELECT count(*) AS n FROM node"`)
	p.click(`form.sql-form button[type=submit]`)
	p.waitUpTo(5*time.Minute, "the SQL result", `document.querySelector('table.sql-result')`)
	if got, want := p.text("table.sql-result tbody"), fmt.Sprint(nodes); got != want {
		t.Errorf("SELECT count(*) FROM node says %s, want %s", got, want)
	}
	p.screenshot(dir, "4-sql.png")
	return dir
}

// TestBrowserFirefox explores a Firefox page's snapshot, whose classes
// are JavaScript classes ("Class") and whose ids are addresses.
func TestBrowserFirefox(t *testing.T) {
	b := startBrowser(t)
	s := open(t, "spidermonkey/ff-small-page.fxsnapshot")
	url := start(t, s, serve.Options{})
	p := b.newPage()
	explore(t, p, url, "Map", regexp.MustCompile(`(?s)Window @0x[0-9a-f]+.*\.customers.*Map @0x19913e224178`), 155233)
	if got := p.text(`#nav a[data-view="comparison"]`); got != "" {
		t.Errorf("a single snapshot has a Comparison link: %q", got)
	}
	p.noProblems()
}

// TestBrowserHPROF explores a Java series: ids in hex, "Class" for the
// classes, and a comparison by class counts (Java's ids are addresses, so
// new objects cannot be told).
func TestBrowserHPROF(t *testing.T) {
	b := startBrowser(t)
	s := open(t, "hprof/java-ticketleak-3.hprof.gz", "hprof/java-ticketleak-1.hprof.gz", "hprof/java-ticketleak-2.hprof.gz")
	url := start(t, s, serve.Options{})
	p := b.newPage()
	dir := explore(t, p, url, "TicketLeak$Ticket", regexp.MustCompile(`(?s)\.appClass.*class TicketLeak @0xfc015ef8.*\.OPEN.*java\.util\.ArrayList.*\.elementData.*TicketLeak\$Ticket @0x`), 48565)
	if got := p.text(".view-sql h2"); got != "SQL" {
		t.Errorf("SQL view heading %q", got)
	}
	p.click(`#nav a[data-view="summary"]`)
	p.waitFor("the Summary's header", `document.querySelector('table.summary th')`)
	if got := p.text("table.summary th"); !strings.HasPrefix(got, "Class") {
		t.Errorf("the Summary's first column is %q, want Java's word, Class", got)
	}
	p.click(`#nav a[data-view="comparison"]`)
	p.waitFor("the comparison", `document.querySelector('tr.class-row[data-name="TicketLeak$Ticket"]')`)
	if got := p.text(`tr.class-row[data-name="TicketLeak$Ticket"]`); !strings.Contains(got, "+2,000") {
		t.Errorf("the comparison's Ticket row is %q, want +2,000", got)
	}
	if got := p.text(".view-comparison .note"); !strings.Contains(got, "cannot be matched by id") {
		t.Errorf("the comparison does not say objects are compared by class: %q", got)
	}
	p.screenshot(dir, "5-comparison.png")
	p.noProblems()
}

// TestBrowserHostileNames: class, property and string names from a dump
// are shown as text. The dump names an object <img src=x onerror=...> (of
// class <img>), a property "><script>... and a string <svg onload=...>; the page must show those characters, make no
// element of them, run nothing, and break no rule of its
// Content-Security-Policy.
func TestBrowserHostileNames(t *testing.T) {
	b := startBrowser(t)
	s := open(t, hostileDump(t))
	url := start(t, s, serve.Options{})
	p := b.newPage()
	dir := screenshotDir(t)
	p.navigate(url + "/#/summary?filter=img")
	p.waitFor("the hostile class", `document.querySelector('tr.class-row')`)
	var name string
	p.eval(`document.querySelector('tr.class-row').dataset.name + '|' + document.querySelector('tr.class-row .name').textContent`, &name)
	if name != "<img>|<img>" {
		t.Errorf("the class row shows %q, want <img> as text", name)
	}
	p.click(`tr.class-row button.toggle`)
	p.waitFor("its instance", `document.querySelector('tr.instance')`)
	p.eval(`document.querySelector('tr.instance .name').textContent`, &name)
	if name != hostileName {
		t.Errorf("the instance is named %q, want %q as text", name, hostileName)
	}
	p.click(`tr.instance button.toggle`)
	p.waitFor("its references", `[...document.querySelectorAll('.edge')].some(e => e.textContent.includes('<script>'))`)
	p.click(`tr.instance button.select`)
	p.waitFor("its paths", `document.querySelector('.selection .path-table')`)
	p.navigate(url + "/#/overview")
	p.waitFor("the overview", `document.querySelector('.part table')`)
	p.screenshot(dir, "hostile.png")
	var counts struct{ Img, Script, Evil int }
	p.eval(`({img: document.querySelectorAll('img').length, script: document.querySelectorAll('script:not([src])').length, evil: window.heapxEvil ? 1 : 0})`, &counts)
	if counts.Img != 0 || counts.Script != 0 || counts.Evil != 0 {
		t.Errorf("a name from the dump became markup: %+v", counts)
	}
	p.noProblems()
}

// TestBrowserTimeline: the timeline query drawn from its generic form has
// the bars of its buckets and the lines of its top sites over time, and
// breaks no rule of the page's Content-Security-Policy.
func TestBrowserTimeline(t *testing.T) {
	b := startBrowser(t)
	s := open(t, "node-timeline.heaptimeline.gz")
	url := start(t, s, serve.Options{})
	p := b.newPage()
	p.navigate(url + "/#/query/timeline")
	p.waitFor("the timeline's line chart", `document.querySelectorAll('.view-query svg.chart polyline').length === 6`)
	var legend string
	p.eval(`[...document.querySelectorAll('.view-query svg.chart polyline title')].map(t => t.textContent).join('|')`, &legend)
	if !strings.HasPrefix(legend, "All sites|TimelineItem (make-fixtures.js:172:16)|") {
		t.Errorf("the lines are %q", legend)
	}
	p.screenshot(screenshotDir(t), "timeline.png")
	p.noProblems()
}

// TestBrowserDeletedObject opens, from the Comparison, an object the
// last baseline has and the file does not: the inspector shows it as the
// baseline's (the address names the snapshot), with its retainers and
// paths in that baseline, and its links stay there.
func TestBrowserDeletedObject(t *testing.T) {
	b := startBrowser(t)
	s := open(t, "node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz")
	url := start(t, s, serve.Options{})
	p := b.newPage()
	dir := screenshotDir(t)
	p.navigate(url + "/#/comparison?filter=std::basic_string")
	p.waitFor("the row", `document.querySelectorAll('tr.class-row').length === 1`)
	p.click(`tr.class-row button.deleted`)
	p.waitFor("the deleted objects", `document.querySelectorAll('table.deleted-objects tbody tr').length === 34`)
	if got := p.text(".selection-box h3"); !strings.Contains(got, "in node-leak-2.heapsnapshot.gz, not in node-leak-3.heapsnapshot.gz") {
		t.Errorf("the deleted objects' heading: %q", got)
	}
	p.screenshot(dir, "1-deleted.png")
	p.click(`table.deleted-objects tbody tr a.obj`)
	p.waitFor("the inspector", `document.querySelector('.view-object h2.object-title')`)
	var hash string
	p.eval("location.hash", &hash)
	if !strings.Contains(hash, "snapshot=2") {
		t.Errorf("the inspector's address does not name the baseline: %s", hash)
	}
	if got := p.text(".view-object .facts-table"); !strings.Contains(got, "node-leak-2.heapsnapshot.gz (baseline 2)") || !strings.Contains(got, "Node / std::basic_string") {
		t.Errorf("the inspector's facts: %q", got)
	}
	p.click(`.tabs button[data-tab="retainers"]`)
	p.waitFor("its paths", `document.querySelector('.view-object .path-table')`)
	p.waitFor("its retainers", `document.querySelectorAll('.view-object .retainers tbody tr[data-id]').length > 0`)
	var links []string
	p.eval(`[...document.querySelectorAll('.view-object .retainers a.obj')].map(a => a.getAttribute('href'))`, &links)
	for _, l := range links {
		if !strings.HasSuffix(l, "?snapshot=2") {
			t.Errorf("a retainer's link leaves the baseline: %s", l)
		}
	}
	p.screenshot(dir, "2-inspector.png")
	p.noProblems()
}

// TestBrowserJavaThreads: a Java dump with threads features Threads and
// Class loaders. The Threads view draws each thread, its frames at their
// lines and what their locals hold (ThreadsDemo's hold() holds an
// ArrayList of 1,000 Item, 20.0 kB), and a held object opens in the
// inspector; Class loaders names the loader a static cache keeps.
func TestBrowserJavaThreads(t *testing.T) {
	b := startBrowser(t)
	s := open(t, "hprof/java-threads.hprof.gz")
	url := start(t, s, serve.Options{})
	p := b.newPage()
	dir := screenshotDir(t)
	p.navigate(url + "/")
	p.waitFor("the navigation", `document.querySelector('#nav a[data-view="query/threads"]')`)
	if got := p.text(`#nav a[data-view="query/class-loaders"]`); got != "Class loaders" {
		t.Errorf("the navigation's class-loader link is %q", got)
	}
	p.click(`#nav a[data-view="query/threads"]`)
	p.waitFor("the threads", `document.querySelector('.view-query table.tree')`)
	var shown string
	p.eval(`document.querySelector('.view-query table.tree').innerText`, &shown)
	if !regexp.MustCompile(`(?s)thread 12 "holder" TIMED_WAITING.*#1 ThreadsDemo\.hold\s+ThreadsDemo\.java:41.*local: java\.util\.ArrayList @0x[0-9a-f]+\s+24 B\s+20\.0 kB`).MatchString(shown) {
		t.Errorf("the threads view shows:\n%s", shown)
	}
	p.screenshot(dir, "1-threads.png")
	p.run(`[...document.querySelectorAll('.view-query table.tree a.id')].find(a => a.closest('td').textContent.includes('java.util.ArrayList')).click()`)
	p.waitFor("the inspector", `document.querySelector('.view-object h2.object-title')`)
	if got := p.text(".view-object h2.object-title"); !strings.HasPrefix(got, "java.util.ArrayList @0x") {
		t.Errorf("the inspector's title is %q", got)
	}
	p.click(`#nav a[data-view="query/class-loaders"]`)
	p.waitFor("the class loaders", `document.querySelector('.view-query .result table')`)
	if got := p.text(".view-query .result table tbody tr"); !strings.Contains(got, `java.net.URLClassLoader "widgets"`) || !strings.Contains(got, ".CACHE") {
		t.Errorf("the first class loader is %q", got)
	}
	p.screenshot(dir, "2-class-loaders.png")
	p.noProblems()
}
