package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapx/heapx/formats/sourcemap"
)

// These tests check source maps as a user meets them: the ledger app of
// testdata/sourcemaps (classes LedgerRow and Ledger, closures onChange
// over each row) bundled and minified by esbuild with a map, run under
// Node (a heap snapshot, and heapx trace) and in a Chromium page
// captured with heapx capture --inspect. Every location and name heapx
// prints is the app's own, not the bundle's. esbuild is installed with
// npm at test time: the test skips where npm is missing, but fails under
// CI=true (.ci/run installs Node and npm).

// sourceApp is the ledger app's sources.
var sourceApp, _ = filepath.Abs("../../testdata/sourcemaps")

// bundleApp copies the app to a new directory, bundles it with esbuild
// (minified, with a map, as dist/bundle.js and dist/bundle.js.map) and
// returns the directory.
func bundleApp(t *testing.T) string {
	t.Helper()
	npm := needTool(t, "npm")
	needNode(t)
	dir := t.TempDir()
	for _, f := range []string{"app/ledger.js", "app/listeners.js", "app/main.js", "page.html", "snapshot.js"} {
		b, err := os.ReadFile(filepath.Join(sourceApp, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tools := filepath.Join(t.TempDir(), "tools")
	install := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", tools, "esbuild@0.28.2")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install esbuild: %v\n%s", err, out)
	}
	build := exec.Command(filepath.Join(tools, "node_modules", ".bin", "esbuild"), "app/main.js", "--bundle", "--minify",
		"--sourcemap", "--format=iife", "--outfile=dist/bundle.js")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "dist", "bundle.js"))
	if bytes.Contains(b, []byte("LedgerRow")) || bytes.Contains(b, []byte("onChange")) {
		t.Fatalf("esbuild kept the names: the bundle is not minified\n%s", b)
	}
	return dir
}

// summaryClass is one class of heapx summary --json.
type summaryClass struct {
	Constructor string `json:"constructor"`
	Count       int    `json:"count"`
	Location    *struct {
		Script   string `json:"script"`
		Original *struct {
			Script string `json:"script"`
			Line   int    `json:"line"`
		} `json:"original"`
	} `json:"location"`
}

// classesOf returns heapx summary --json's classes of a snapshot, by
// name, with args (--no-source-maps).
func classesOf(t *testing.T, snap string, args ...string) map[string]summaryClass {
	t.Helper()
	var doc struct {
		Classes []summaryClass `json:"classes"`
	}
	okJSON(t, &doc, append([]string{"summary", "--json", "-n", "0", snap}, args...)...)
	out := map[string]summaryClass{}
	for _, c := range doc.Classes {
		out[c.Constructor] = c
	}
	return out
}

// checkMapped checks what heapx prints of a snapshot of the running
// bundle: classes and closures named and placed in the app's sources,
// paths through them named; and, with --no-source-maps, the bundle's.
// source(f) is what names the app's file f (a path, or a URL).
func checkMapped(t *testing.T, snap string, source func(string) string) {
	t.Helper()
	classes := classesOf(t, snap)
	row, found := classes["LedgerRow"]
	if !found || row.Count != 200 || row.Location == nil || row.Location.Original == nil ||
		row.Location.Original.Script != source("ledger.js") || row.Location.Original.Line != 4 {
		t.Errorf("class LedgerRow: %+v (found %v), want 200 defined at %s:4", row, found, source("ledger.js"))
	}
	if l, ok := classes["Ledger"]; !ok || l.Count != 1 || l.Location == nil || l.Location.Original == nil || l.Location.Original.Line != 17 {
		t.Errorf("class Ledger: %+v (found %v)", l, ok)
	}
	// Closures: the handlers and the functions that made them, each at
	// its definition in listeners.js.
	out := ok(t, "closures", "-n", "0", snap)
	for name, line := range map[string]string{"onChange": ":6:", "makeHandlers": ":3:", "keepForever": ":15:"} {
		re := regexp.MustCompile(`(?m)^` + name + `\s.*` + regexp.QuoteMeta(source("listeners.js")+line))
		if !re.MatchString(out) {
			t.Errorf("closures: no %s defined at %s%s:\n%s", name, source("listeners.js"), line, out)
		}
	}
	// A path to a row names the classes on it.
	var top struct {
		Nodes []struct {
			ID   uint64 `json:"id"`
			Name string `json:"name"`
		} `json:"nodes"`
	}
	okJSON(t, &top, "top", "--json", "-n", "0", snap)
	for _, n := range top.Nodes {
		if n.Name == "LedgerRow" {
			paths := ok(t, "paths", snap, "--id", jsonNumber(n.ID))
			if !strings.Contains(paths, "Ledger @") || !strings.Contains(paths, "LedgerRow @") {
				t.Errorf("paths to LedgerRow @%d do not name Ledger and LedgerRow:\n%s", n.ID, paths)
			}
			break
		}
	}
	// --no-source-maps shows the bundle as it is.
	raw := classesOf(t, snap, "--no-source-maps")
	if _, ok := raw["LedgerRow"]; ok {
		t.Error("--no-source-maps: LedgerRow is still named")
	}
	for name, c := range raw {
		if c.Count == 200 && c.Location != nil && c.Location.Original == nil && strings.HasSuffix(c.Location.Script, "bundle.js") {
			return
		} else if c.Count == 200 && c.Location != nil {
			t.Errorf("--no-source-maps: class %s is %+v", name, c)
		}
	}
	t.Errorf("--no-source-maps: no class of 200 objects defined in bundle.js")
}

func jsonNumber(id uint64) string {
	b, _ := json.Marshal(id)
	return string(b)
}

// TestSourceMapsNode runs the bundle under Node: its heap snapshot
// (map found by the bundle's sourceMappingURL comment, then by NAME.map
// beside a bundle without one) and its memory trace (heapx trace).
func TestSourceMapsNode(t *testing.T) {
	dir := bundleApp(t)
	bundle := filepath.Join(dir, "dist", "bundle.js")
	snap := filepath.Join(dir, "app.heapsnapshot")
	run := exec.Command("node", "snapshot.js", bundle, snap)
	run.Dir = dir
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	source := func(f string) string { return filepath.Join(dir, "app", f) }
	checkMapped(t, snap, source)

	// The map beside the bundle, named by no comment: found as NAME.map.
	b, _ := os.ReadFile(bundle)
	m, _ := os.ReadFile(bundle + ".map")
	os.WriteFile(bundle, b[:bytes.Index(b, []byte("//# sourceMappingURL"))], 0o644)
	if c := classesOf(t, snap)["LedgerRow"]; c.Count != 200 {
		t.Errorf("the map beside a bundle without its comment: LedgerRow %+v", c)
	}
	// A broken map: a warning, and the bundle's positions.
	os.WriteFile(bundle+".map", []byte(`{"version":3,"sources":[`), 0o644)
	r := heapx(t, "summary", "-n", "0", snap)
	if r.code != 0 || !strings.Contains(r.stderr, "heapx: warning: ") || !strings.Contains(r.stderr, "does not parse") || strings.Contains(r.stdout, "LedgerRow") {
		t.Errorf("a broken map: exit %d, stderr %q", r.code, r.stderr)
	}
	os.WriteFile(bundle, b, 0o644)
	os.WriteFile(bundle+".map", m, 0o644)

	// heapx trace: the sites of the rows and handlers, in the sources.
	trace := filepath.Join(dir, "app.hxtrace")
	if r := heapx(t, "trace", "-o", trace, "--", "node", bundle); r.code != 0 {
		t.Fatalf("heapx trace: exit %d, %s", r.code, r.stderr)
	}
	out := ok(t, "lifetimes", trace)
	for _, site := range []string{source("ledger.js") + ":23:19", source("listeners.js") + ":6:"} {
		if !strings.Contains(out, site) {
			t.Errorf("lifetimes: no site at %s:\n%s", site, out)
		}
	}
	if strings.Contains(out, "bundle.js:1:") && !strings.Contains(out, "bundle.js:1:2 ") {
		t.Errorf("lifetimes: a site left in the bundle:\n%s", out)
	}
	if raw := ok(t, "lifetimes", "--no-source-maps", trace); strings.Contains(raw, "ledger.js") {
		t.Errorf("lifetimes --no-source-maps maps:\n%s", raw)
	}
}

// TestSourceMapsChromium loads the bundle in a Chromium page served over
// HTTP, captures it with heapx capture --inspect, which saves the page's
// maps beside the snapshot, and reads the snapshot once the server is
// gone: the classes and closures are the app's, at its URLs.
func TestSourceMapsChromium(t *testing.T) {
	browser := needTool(t, "chromium")
	dir := bundleApp(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	profile := filepath.Join(t.TempDir(), "profile")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir="+profile, srv.URL+"/page.html")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logb bytes.Buffer
	cmd.Stderr = &logb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	var port string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil && bytes.Contains(b, []byte("\n")) {
			port = string(b[:bytes.IndexByte(b, '\n')])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium wrote no DevToolsActivePort:\n%s", logb.String())
		}
	}
	snap := filepath.Join(t.TempDir(), "page.heapsnapshot")
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		ok(t, "capture", "--inspect", "127.0.0.1:"+port, "--url", "page.html", "-o", snap)
		if c, found := classesOf(t, snap, "--no-source-maps")["Array"]; found && c.Count > 0 {
			if strings.Contains(ok(t, "closures", "-n", "0", "--no-source-maps", snap), "bundle.js") {
				break // the bundle has run
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no snapshot of the page with the bundle run within a minute")
		}
	}
	saved, err := sourcemap.ReadSaved(snap, func(uint32, string) bool { return true })
	if err != nil || len(saved) != 1 || saved[0].URL != srv.URL+"/dist/bundle.js" || len(saved[0].Map) == 0 || saved[0].Source == "" {
		t.Fatalf("saved maps: %v, %+v", err, saved)
	}
	srv.Close() // the maps must come from beside the snapshot
	checkMapped(t, snap, func(f string) string { return srv.URL + "/app/" + f })
}
