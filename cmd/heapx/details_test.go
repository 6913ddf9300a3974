package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"encoding/csv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/heapx/heapx/internal/gz"
	"github.com/heapx/heapx/internal/testfixtures"
)

// `heapx list` lists every command, not only the registered analyses.
func TestListShowsEveryCommand(t *testing.T) {
	t.Parallel()
	list := ok(t, "list")
	rows := map[string]string{}
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			rows[f[1]] = f[0]
		}
	}
	for _, name := range []string{"report", "info", "convert", "sql", "serve", "mcp"} {
		if rows[name] != "commands" {
			t.Errorf("heapx list has no commands row for %s:\n%s", name, list)
		}
	}
	if rows["diff"] != "leaks" || rows["summary"] != "basic" {
		t.Errorf("heapx list lost the analyses:\n%s", list)
	}
	var js struct {
		Commands []struct{ Name, Usage, Title string } `json:"commands"`
		Queries  []struct{ Name string }               `json:"queries"`
	}
	okJSON(t, &js, "list", "--json")
	var names []string
	for _, c := range js.Commands {
		names = append(names, c.Name)
	}
	if strings.Join(names, " ") != "report capture convert export fleet info mcp serve sites sql stack trace" || js.Commands[0].Usage != "FILE [BASELINE...]" || len(js.Queries) < 10 {
		t.Errorf("list --json commands %v, %d queries", js.Commands, len(js.Queries))
	}
}

// `report --csv` has every part in the analyses' CSV form.
func TestReportCSV(t *testing.T) {
	t.Parallel()
	out := ok(t, "report", "--csv", leak3, leak1, leak2)
	cr := csv.NewReader(strings.NewReader(out))
	cr.FieldsPerRecord = -1 // a header row of keys starts each table
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	parts := map[string]int{}
	var header []string
	leakRow := false
	for _, r := range recs {
		if r[0] == "part" {
			header = r
			continue
		}
		parts[r[0]]++
		if r[0] == "overview" && r[2] == "nodes" && r[3] != "53155" {
			t.Errorf("overview nodes %q", r[3])
		}
		// The leak cluster's row: raw numbers under the column keys.
		if r[0] == "leaks" && len(header) > 4 && header[2] == "rank" && r[2] == "1" {
			leakRow = header[3] == "count" && r[3] == "1000" && header[4] == "retained_size" && r[4] == "143760"
		}
	}
	for _, p := range []string{"overview", "suspects", "leaks", "diff", "growth", "classes", "duplicates"} {
		if parts[p] == 0 {
			t.Errorf("report --csv has no %s rows", p)
		}
	}
	if parts["detached"] != 0 {
		t.Errorf("report --csv of a Node.js heap has %d detached DOM rows", parts["detached"])
	}
	if !leakRow || parts["warnings"] != 0 {
		t.Errorf("report --csv: leak row %v, warnings %d", leakRow, parts["warnings"])
	}
	if r := heapx(t, "report", "--csv", "--json", leak3); r.code != 1 || !strings.Contains(r.stderr, "--csv cannot be used with --json") {
		t.Errorf("--csv --json: exit %d, %q", r.code, r.stderr)
	}
}

// Chart hints follow the snake_case contract: "label" and "value".
func TestChartJSONKeys(t *testing.T) {
	t.Parallel()
	out := ok(t, "diff", "--json", leak1, leak2)
	if !strings.Contains(out, `"chart": {
        "label": "constructor",
        "value": "size_delta"
      }`) {
		t.Errorf("diff --json chart:\n%s", out[:min(len(out), 2000)])
	}
	if strings.Contains(ok(t, "report", "--json", leak3, leak1, leak2), `"Label"`) {
		t.Error(`report --json has a "Label" key`)
	}
}

// --class finds a class whatever the case, and says which names are close
// when none matches.
func TestClassNameMatching(t *testing.T) {
	t.Parallel()
	exact := ok(t, "merged-paths", "--class", "LeakedItem", "-n", "0", leak3)
	folded := ok(t, "merged-paths", "--class", "leakeditem", "-n", "0", leak3)
	if exact != folded || !strings.HasPrefix(folded, "Shortest retainer paths of the 1,500 instances of LeakedItem,") {
		t.Errorf("--class leakeditem:\n%s", folded)
	}
	for _, c := range []struct{ file, class, msg string }{
		{leak3, "LeakItem", `no class named "LeakItem"; did you mean "LeakedItem"?`},
		{javaA, "Session", `no class named "Session"; did you mean "LeakDemo$Session" or "class LeakDemo$Session"?`},
		{leak3, "Zzyzx", `no class named "Zzyzx" (the names are the summary's Constructor column)`},
	} {
		if r := heapx(t, "merged-paths", "--class", c.class, c.file); r.code != 1 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("--class %s: exit %d, %q, want %q", c.class, r.code, r.stderr, c.msg)
		}
	}
}

// The report's leak heading names the files, as `heapx leaks` does.
func TestLeaksHeadingNamesFiles(t *testing.T) {
	t.Parallel()
	for _, out := range []string{ok(t, "report", leak3, leak1, leak2), ok(t, "leaks", leak1, leak2, leak3)} {
		if !strings.Contains(out, "Leaks (objects allocated between node-leak-1.heapsnapshot.gz and node-leak-2.heapsnapshot.gz, alive in node-leak-3.heapsnapshot.gz)") ||
			strings.Contains(out, "BASELINE") {
			t.Errorf("leaks heading:\n%s", out[:min(len(out), 3000)])
		}
	}
}

// What people give heapx instead of a heap dump gets a hint of what it is
// and what to do, from its content (the names below hide the extension
// where the content alone must tell).
func TestNotADumpHints(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := testfixtures.Gunzip(t, basic)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	f, _ := zw.Create("node-basic.heapsnapshot")
	f.Write(raw)
	zw.Close()
	var tb bytes.Buffer
	tw := tar.NewWriter(&tb)
	tw.WriteHeader(&tar.Header{Name: "node-basic.heapsnapshot", Mode: 0o644, Size: int64(len(raw))})
	tw.Write(raw)
	tw.Close()
	var tgz bytes.Buffer
	gw := gz.NewWriter(&tgz)
	gw.Write(tb.Bytes())
	gw.Close()
	enc, _ := zstd.NewWriter(nil)
	cases := map[string]string{
		write("dump.zip", zb.Bytes()):                           "a zip archive, not a heap dump: unzip it and give heapx the dump inside",
		write("zipped-dump", zb.Bytes()):                        "a zip archive",
		write("dumps.tar.gz", tgz.Bytes()):                      "a tar archive, not a heap dump: extract it (tar xf) and give heapx the dump inside",
		write("dump.heapsnapshot.zst", enc.EncodeAll(raw, nil)): "zstd-compressed, which heapx does not read: decompress it first (zstd -d); heapx reads gzip-compressed dumps as they are",
	}
	for _, c := range []struct{ tool, flag, ext, msg string }{
		{"xz", "-c", ".xz", "xz-compressed, which heapx does not read: decompress it first (xz -d)"},
		{"bzip2", "-c", ".bz2", "bzip2-compressed, which heapx does not read: decompress it first (bunzip2)"},
	} {
		cmd := exec.Command(testfixtures.NeedTool(t, c.tool), c.flag)
		cmd.Stdin = bytes.NewReader(raw)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		cases[write("compressed-dump", out)] = c.msg
		cases[write("dump"+c.ext, out)] = c.msg
	}
	prof, err := os.ReadFile("../../testdata/node-small.heapprofile")
	if err != nil {
		t.Fatal(err)
	}
	cases["../../testdata/node-small.heapprofile"] = `a sampling heap profile (DevTools' "Allocation sampling", node --heap-prof), not a heap snapshot`
	cases[write("profile.json", prof)] = "a sampling heap profile"
	cases["../../testdata/node-small.cpuprofile"] = `a CPU profile (DevTools' JavaScript profiler, node --cpu-prof), not a heap dump; heapx reads heap snapshots: take one with "Heap snapshot" in DevTools' Memory panel, or v8.writeHeapSnapshot() in Node.js`
	for path, msg := range cases {
		r := heapx(t, "info", path)
		if r.code != 1 || r.stderr != "heapx: "+path+": "+msg && !strings.HasPrefix(r.stderr, "heapx: "+path+": "+msg) {
			t.Errorf("info %s: exit %d, %q, want %q", path, r.code, r.stderr, msg)
		}
	}
	// A heap dump in a file named like an archive is still read.
	if err := os.WriteFile(filepath.Join(dir, "real.zip"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	var info infoCounts
	okJSON(t, &info, "info", "--json", filepath.Join(dir, "real.zip"))
	if info.Format != "v8.heapsnapshot" {
		t.Errorf("real.zip read as %q", info.Format)
	}
}
