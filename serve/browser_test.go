package serve_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
	p.waitFor("the SQL result", `document.querySelector('table.sql-result')`)
	if got := p.text("table.sql-result tbody"); got != "LeakedItem1500" {
		t.Errorf("the SQL result is %q, want LeakedItem 1500", got)
	}
	p.screenshot(dir, "4-sql.png")
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
