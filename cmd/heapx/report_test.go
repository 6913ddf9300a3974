package main

import (
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// The leak fixtures: one Node process that leaks 500 LeakedItem per step
// through the closure of an EventEmitter listener (onWork captures the
// array `retained`), with a snapshot after each of three steps
// (testdata/gen/make-fixtures.js).
var leakSnaps = []string{"../../testdata/node-leak-3.heapsnapshot.gz", "../../testdata/node-leak-1.heapsnapshot.gz", "../../testdata/node-leak-2.heapsnapshot.gz"}

// reportPart returns the rows of the first section of a report part.
func reportPart(t *testing.T, d *report.Doc, key string) []map[string]any {
	t.Helper()
	for _, p := range d.Parts {
		if p.Key == key {
			if len(p.Result.Sections) == 0 {
				return nil
			}
			return p.Result.Sections[0].Rows
		}
	}
	t.Fatalf("report has no %q part", key)
	return nil
}

// TestReportFindsTheLeak runs the README's main command and checks that
// every part names the leak: the suspect is the 1,500 LeakedItem held by
// the listener's array, memlab's method finds the 500 allocated between
// the baselines with the path through onWork, and growth shows the class
// and the array growing 500 -> 1,000 -> 1,500.
func TestReportFindsTheLeak(t *testing.T) {
	t.Parallel()
	d := *reportJSON(t, leakSnaps...)
	if d.SchemaVersion != 1 || d.File != leakSnaps[0] || len(d.Baselines) != 2 || d.Format != "v8" || len(d.Failures) != 0 {
		t.Errorf("report header: %+v", d)
	}
	sus := reportPart(t, &d, "suspects")
	if len(sus) != 1 || sus[0]["class"] != "LeakedItem" || sus[0]["count"] != 1500.0 || sus[0]["holder"] != "EventEmitter @51427" {
		t.Errorf("suspects: %v", sus)
	}
	leaks := reportPart(t, &d, "leaks")
	if len(leaks) == 0 || !strings.Contains(leaks[0]["classes"].(string), "LeakedItem 500") {
		t.Errorf("leaks: %v", leaks)
	}
	for _, p := range d.Parts {
		if p.Key == "leaks" {
			path := p.Result.Sections[1].Rows
			var objs []string
			for _, r := range path {
				objs = append(objs, r["object"].(string))
			}
			if got := strings.Join(objs, " "); !strings.Contains(got, "EventEmitter @51427") || !strings.Contains(got, "onWork @74609") || !strings.Contains(got, "Array @80593") {
				t.Errorf("leak path %q does not go through the listener", got)
			}
		}
	}
	grew := false
	for _, r := range reportPart(t, &d, "growth") {
		if r["constructor"] == "LeakedItem" && r["series"] == "500 → 1,000 → 1,500" {
			grew = true
		}
	}
	if !grew {
		t.Errorf("growth does not show LeakedItem 500 → 1,000 → 1,500")
	}
	// The LeakedItem leak's 143,760 bytes and 256 of an object a stack
	// frame holds; the engine's own leaked maps are left out.
	if d.LeakedSize != 144016 {
		t.Errorf("leaked size %d, want 144016, the clusters' retained sizes (143760 of them the LeakedItem leak)", d.LeakedSize)
	}
}

// TestReportText checks the text form names the parts and the suspect,
// and has no Detached DOM part for a Node.js heap, which has no DOM.
func TestReportText(t *testing.T) {
	t.Parallel()
	out := ok(t, "report", leakSnaps[0])
	for _, want := range []string{"== heapx report", "== Leak suspects", "1,500 LeakedItem.", "== Top classes by retained size", "== Duplicate strings"} {
		if !strings.Contains(out, want) {
			t.Errorf("report text lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"== Detached DOM", "BindingData"} {
		if strings.Contains(out, bad) {
			t.Errorf("report text of a Node.js heap has %q", bad)
		}
	}
}

// TestReportGates checks --fail-over and --fail-growth: the report is still
// printed, and the exit code is 1 with the reason on stderr.
func TestReportGates(t *testing.T) {
	t.Parallel()
	r := heapx(t, append([]string{"report", "--fail-over", "100kB"}, leakSnaps...)...)
	if r.code != 1 || !strings.Contains(r.stderr, "over the --fail-over limit 100 kB") || !strings.Contains(r.stdout, "FAILED:") {
		t.Errorf("--fail-over 100kB: exit %d, stderr %q", r.code, r.stderr)
	}
	ok(t, append([]string{"report", "--fail-over", "1MB", "--fail-growth", "50"}, leakSnaps...)...)
	r = heapx(t, "report", "--fail-growth", "1", leakSnaps[0], leakSnaps[1])
	if r.code != 1 || !strings.Contains(r.stderr, "--fail-growth limit 1%") {
		t.Errorf("--fail-growth 1: exit %d, stderr %q", r.code, r.stderr)
	}
	r = heapx(t, "report", "--fail-growth", "1", leakSnaps[0])
	if r.code != 1 || !strings.Contains(r.stderr, "needs a BASELINE") {
		t.Errorf("--fail-growth without a baseline: exit %d, stderr %q", r.code, r.stderr)
	}
	r = heapx(t, "report", "--fail-over", "lots", leakSnaps[0])
	if r.code != 1 || !strings.Contains(r.stderr, "not a size") {
		t.Errorf("--fail-over lots: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestReportHTML checks the page is complete and self-contained: every
// part, a chart, and nothing loaded from elsewhere.
func TestReportHTML(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "r.html")
	ok(t, append([]string{"report", "--html", out}, leakSnaps...)...)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!DOCTYPE html>", "<svg class=\"chart\"", "LeakedItem", "id=\"suspects\"", "id=\"leaks\"", "id=\"growth\"", "id=\"classes\"", "</html>"} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=\"http", "href=\"http", "ZgotmplZ"} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML report contains %q", bad)
		}
	}
}

// reportJSON runs `heapx report --json` and decodes it.
func reportJSON(t *testing.T, args ...string) *report.Doc {
	t.Helper()
	var d report.Doc
	okJSON(t, &d, append([]string{"report", "--json"}, args...)...)
	return &d
}

// TestReportOtherRuntimes checks the report finds the known leaks of the
// corpus dumps of the other runtimes (../shared/corpus/MANIFEST.md):
// Firefox's page keeps 150,000 LeakyEvent (SpiderMonkey's class "Object")
// in window.eventLog, the field the suspect names; Chromium's page holds
// 10 detached div trees of 50 spans; the Java LeakDemo's static state (class LeakDemo) holds the 400
// sessions that own the 20,000 RequestRecord.
func TestReportOtherRuntimes(t *testing.T) {
	t.Parallel()
	ff := reportJSON(t, "../../testdata/spidermonkey/ff-medium-page.fxsnapshot")
	sus := reportPart(t, ff, "suspects")
	if len(sus) == 0 || sus[0]["class"] != "Object" || sus[0]["count"] != 150000.0 || sus[0]["held_by"] != "globalThis.eventLog" {
		t.Errorf("Firefox suspects: %v", sus)
	}
	ch := reportJSON(t, "../../testdata/chromium-small-page.heapsnapshot.gz")
	det := reportPart(t, ch, "detached")
	if len(det) != 10 {
		t.Errorf("Chromium: %d detached trees, want 10", len(det))
	}
	for _, r := range det {
		if r["elements"] != 51.0 || !strings.HasPrefix(r["root"].(string), `Detached <div class="detached-root-`) {
			t.Errorf("Chromium detached tree %v, want a detached-root div of 51 elements", r)
		}
	}
	java := reportJSON(t, "../../testdata/hprof/java-leakdemo-small.hprof.gz")
	sus = reportPart(t, java, "suspects")
	if len(sus) == 0 || sus[0]["holder"] != "class LeakDemo @0xff1000a8" || sus[0]["class"] != "LeakDemo$Session" || sus[0]["count"] != 400.0 {
		t.Errorf("Java suspects: %v", sus)
	}
	if java.Format != "hprof" || ff.Format != "spidermonkey" {
		t.Errorf("formats %q, %q", java.Format, ff.Format)
	}
}

// TestReportHTMLInChromium opens the HTML report in headless Chromium, as
// a person would, and checks what the browser made of it: the DOM it
// parsed holds the parts and the suspect, and the screenshot it drew is a
// page, not a blank. It skips where Chromium is not installed, and fails
// under CI (.ci/run installs Debian's package).
func TestReportHTMLInChromium(t *testing.T) {
	t.Parallel()
	browser := testfixtures.NeedTool(t, "chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	ok(t, append([]string{"report", "--html", page}, leakSnaps...)...)
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1280,1600"}
	dom, err := exec.Command(browser, append(args, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	for _, want := range []string{"Leak suspects", "1,500 LeakedItem.", "<svg class=\"chart\"", "Top classes by retained size"} {
		if !strings.Contains(string(dom), want) {
			t.Errorf("the page Chromium parsed lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "report.png")
	if out, err := exec.Command(browser, append(args, "--screenshot="+shot, "file://"+page)...).CombinedOutput(); err != nil {
		t.Fatalf("chromium --screenshot: %v\n%s", err, out)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// A rendered report has the dark header, white cards, grey table
	// headings and blue bars: many colours. A blank or error page has few.
	colours := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), 255}] = true
		}
	}
	if b.Dx() != 1280 || len(colours) < 50 {
		t.Errorf("screenshot %dx%d with %d colours: not a rendered report", b.Dx(), b.Dy(), len(colours))
	}
	header := img.At(20, 10)
	if r, g, bl, _ := header.RGBA(); r>>8 > 80 || bl>>8 < 60 || g>>8 > 80 {
		t.Errorf("the top of the page is %v, not the report's dark blue header", header)
	}
}

// TestInspectionsOtherRuntimes checks inspections on Firefox and Java
// dumps: the Firefox page's own globals (small.html sets exactly these five
// window properties) without the browser's; the closures' captured
// variables; no duplicate strings from a
// dump that records no string contents; and LeakDemo's leaking static
// list, the ArrayList of 6,667 AuditListener, as its largest collection.
func TestInspectionsOtherRuntimes(t *testing.T) {
	t.Parallel()
	doc := func(args ...string) render.Document {
		var d render.Document
		okJSON(t, &d, args...)
		return d
	}
	var names []string
	for _, r := range doc("globals", "--json", "../../testdata/spidermonkey/ff-small-page.fxsnapshot").Sections[0].Rows {
		names = append(names, r["name"].(string))
	}
	if got := strings.Join(names, " "); got != "customers buffers leakyCache detachedTrees handlers" {
		t.Errorf("Firefox globals %q", got)
	}
	if d := doc("duplicates", "--json", "../../testdata/spidermonkey/ff-small-page.fxsnapshot"); len(d.Sections) != 0 ||
		len(d.Notes) != 1 || !strings.HasPrefix(d.Notes[0], "This dump does not record string contents") {
		t.Errorf("Firefox duplicates: %+v", d)
	}
	// The page's 100 onThing closures each capture `captured` in a
	// LexicalEnvironment; the 101st environment is the script's own.
	cl := doc("closures", "--json", "-n", "1", "../../testdata/spidermonkey/ff-small-page.fxsnapshot").Sections[0].Rows
	if len(cl) != 1 || cl[0]["contexts"] != 101.0 || !strings.Contains(cl[0]["variables"].(string), "captured") {
		t.Errorf("Firefox closures: %v", cl)
	}
	r := doc("collections", "--json", "-n", "1", "../../testdata/hprof/java-leakdemo-small.hprof.gz").Sections[0].Rows
	if len(r) != 1 || r[0]["elements"] != 6667.0 || !strings.HasPrefix(r[0]["object"].(string), "java.util.ArrayList @") {
		t.Errorf("Java collections: %v", r)
	}
}
