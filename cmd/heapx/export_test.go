package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/formats/parquet"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// exportInputs are dumps of every runtime for the export tests.
func exportInputs(t *testing.T) []string {
	t.Helper()
	var in []string
	for _, p := range []string{"node-basic.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-trace.heapsnapshot.gz",
		"hprof/java-leakdemo-small.hprof.gz", "spidermonkey/ff-small-page.fxsnapshot"} {
		in = append(in, filepath.Join("..", "..", "testdata", p))
	}
	return in
}

var partitionLine = regexp.MustCompile(`wrote (\S+/dump=([0-9a-f]{16})): [0-9,]+ nodes from (\S+)`)

// TestExportParquet exports dumps of three runtimes with labels, reads
// each partition back as heapx summary does, and exports again: nothing
// is written twice.
func TestExportParquet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	in := exportInputs(t)
	out := ok(t, append([]string{"export", "--parquet", dir, "--label", "service=api", "--label", "release=42", "--jobs", "2"}, in...)...)
	m := partitionLine.FindAllStringSubmatch(out, -1)
	if len(m) != len(in) || !strings.Contains(out, "exported 5 of 5 dumps (0 skipped, 0 failed)") {
		t.Fatalf("export printed:\n%s", out)
	}
	for _, w := range m {
		part, id, src := w[1], w[2], w[3]
		want, _, err := parquet.ContentID(src)
		if err != nil || want != id {
			t.Errorf("%s: dump id %s, want %s (%v)", src, id, want, err)
		}
		// Every view reads the partition as it reads the dump.
		if a, b := ok(t, "summary", src), ok(t, "summary", part); a != b {
			t.Errorf("summary of %s differs from that of %s:\n%s\n---\n%s", part, src, a, b)
		}
		var res model.Results
		_, row, err := parquet.ReadDump(part, parquet.ReadOptions{Results: &res})
		if err != nil {
			t.Fatal(err)
		}
		if abs, _ := filepath.Abs(src); row.File != abs || len(row.Labels) != 2 || row.Labels[0] != (parquet.Label{Key: "service", Value: "api"}) ||
			row.Labels[1] != (parquet.Label{Key: "release", Value: "42"}) || res.Policy == "" {
			t.Errorf("%s: dumps row file %s labels %v policy %q", part, row.File, row.Labels, res.Policy)
		}
		// HPROF and Firefox record when they were taken; V8 does not.
		if fromDump := !strings.Contains(src, ".heapsnapshot"); fromDump != (row.CaptureTimeFrom == "dump") {
			t.Errorf("%s: capture time from %s", src, row.CaptureTimeFrom)
		}
	}
	// The directory is not one dump: the error says what to pass.
	if r := heapx(t, "summary", dir); r.code == 0 || !strings.Contains(r.stderr, "a Parquet directory of 5 dumps (heapx export), not one dump: pass one partition, such as "+dir+"/dump=") {
		t.Errorf("summary DIR: exit %d, %s", r.code, r.stderr)
	}
	// Incremental: the same dumps again, and one twice, are skipped.
	out = ok(t, append([]string{"export", "--parquet", dir, in[0]}, in...)...)
	if !strings.Contains(out, "exported 0 of 6 dumps (6 skipped, 0 failed)") || strings.Contains(out, "wrote") {
		t.Fatalf("second export printed:\n%s", out)
	}
	parts, err := parquet.Scan(dir)
	if err != nil || len(parts) != len(in) {
		t.Fatalf("Scan: %d partitions, %v", len(parts), err)
	}
}

// TestConvertToParquet: convert --to parquet writes one partition, the
// same export writes.
func TestConvertToParquet(t *testing.T) {
	dir := t.TempDir()
	src := "../../testdata/node-leak-1.heapsnapshot.gz"
	out := ok(t, "convert", src, dir, "--to", "parquet")
	m := partitionLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("convert printed:\n%s", out)
	}
	if a, b := ok(t, "suspects", src), ok(t, "suspects", m[1]); a != b {
		t.Errorf("suspects of the partition differ:\n%s\n---\n%s", a, b)
	}
}

// TestExportBadInput: what export and the readers say for bad input,
// with a non-zero exit and nothing half written.
func TestExportBadInput(t *testing.T) {
	dir := t.TempDir()
	src := "../../testdata/node-basic.heapsnapshot.gz"
	out := ok(t, "export", "--parquet", dir, src)
	part := partitionLine.FindStringSubmatch(out)[1]

	// A dump that is not one: the others are exported, the run fails.
	notDump := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(notDump, []byte("hello\n"), 0o644)
	r := heapx(t, "export", "--parquet", dir, notDump, "../../testdata/node-leak-1.heapsnapshot.gz")
	if r.code == 0 || !strings.Contains(r.stderr, "notes.txt: not a heap dump") || !strings.Contains(r.stdout, "exported 1 of 2 dumps (0 skipped, 1 failed)") {
		t.Errorf("export with a bad dump: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Bad labels.
	if r := heapx(t, "export", "--parquet", dir, "--label", "service", src); r.code == 0 || !strings.Contains(r.stderr, "want KEY=VALUE") {
		t.Errorf("--label service: exit %d, %s", r.code, r.stderr)
	}

	// A corrupt objects table: the partition is refused by name.
	objects := parquet.TableFile(part, parquet.TableObjects)
	data, _ := os.ReadFile(objects)
	os.WriteFile(objects, data[:len(data)/2], 0o644)
	r = heapx(t, "summary", part)
	if r.code == 0 || !strings.Contains(r.stderr, objects) || !strings.Contains(r.stderr, `does not end with the Parquet magic "PAR1"`) {
		t.Errorf("summary of a corrupt partition: exit %d, %s", r.code, r.stderr)
	}
	os.WriteFile(objects, data, 0o644)

	// A partition of another version: export refuses the directory.
	other := filepath.Join(dir, "dump=ffffffffffffffff")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	dumps, _ := os.ReadFile(parquet.TableFile(part, parquet.TableDumps))
	os.WriteFile(parquet.TableFile(other, parquet.TableDumps), dumps, 0o644)
	r = heapx(t, "export", "--parquet", dir, src)
	if r.code == 0 || !strings.Contains(r.stderr, "dump=ffffffffffffffff: dumps.parquet is of dump") {
		t.Errorf("export into a directory with a foreign partition: exit %d, %s", r.code, r.stderr)
	}
}

// TestExportInterrupted stops an export while it writes a partition:
// with SIGINT it removes the partition being written and exits 130, with
// SIGKILL (nothing can clean up) it leaves it in a hidden temporary
// directory. Either way every partition left is complete, and the next
// export removes what was left and writes the rest.
func TestExportInterrupted(t *testing.T) {
	var in []string
	for _, p := range []string{"node-basic", "node-leak-1", "node-leak-2", "node-leak-3", "node-trace", "node-internals",
		"node-list-20k-1-baseline", "node-list-20k-2-target", "node-list-20k-3-final", "node-sites"} {
		in = append(in, filepath.Join("..", "..", "testdata", p+".heapsnapshot.gz"))
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fleet")
			cmd := heapxCommand(t, append([]string{"export", "--parquet", dir, "--jobs", "1"}, in...)...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Stop it once a partition is complete and the next is being written.
			deadline := time.Now().Add(2 * time.Minute)
			stopped := false
			for time.Now().Before(deadline) && !stopped {
				ents, _ := os.ReadDir(dir)
				var done, writing bool
				for _, e := range ents {
					done = done || strings.HasPrefix(e.Name(), "dump=")
					writing = writing || strings.HasPrefix(e.Name(), ".tmp-")
				}
				if done && writing {
					cmd.Process.Signal(sig)
					stopped = true
				}
				time.Sleep(time.Millisecond)
			}
			err := cmd.Wait()
			if !stopped {
				t.Fatal("the export never wrote a partition while another was pending")
			}
			if code := cmd.ProcessState.ExitCode(); sig == syscall.SIGINT && code != 130 {
				t.Fatalf("after SIGINT: exit %d (%v), want 130", code, err)
			}
			ents, _ := os.ReadDir(dir)
			var complete, temps int
			for _, e := range ents {
				switch {
				case strings.HasPrefix(e.Name(), "dump="):
					complete++
					if _, _, err := parquet.ReadDump(filepath.Join(dir, e.Name()), parquet.ReadOptions{}); err != nil {
						t.Errorf("partition left by the stopped export: %v", err)
					}
				case strings.HasPrefix(e.Name(), ".tmp-"):
					temps++
				}
			}
			if complete == 0 || complete == len(in) || (sig == syscall.SIGKILL) != (temps > 0) {
				t.Fatalf("after %v: %d partitions, %d temporary directories", sig, complete, temps)
			}
			out := ok(t, append([]string{"export", "--parquet", dir}, in...)...)
			if want := "exported " + strconv.Itoa(len(in)-complete) + " of " + strconv.Itoa(len(in)) + " dumps (" + strconv.Itoa(complete) + " skipped, 0 failed)"; !strings.Contains(out, want) {
				t.Fatalf("export after the stop printed:\n%s\nwant %q", out, want)
			}
			ents, _ = os.ReadDir(dir)
			if len(ents) != len(in) {
				t.Errorf("%d entries in the directory, want %d partitions and nothing else", len(ents), len(in))
			}
		})
	}
}

// TestExportSuspectsAndSites checks the suspects table against heapx
// suspects --json, and objects.site against the allocation stacks heapx
// shows, on dumps that have them.
func TestExportSuspectsAndSites(t *testing.T) {
	dir := t.TempDir()
	leak, trace := "../../testdata/node-leak-3.heapsnapshot.gz", "../../testdata/node-trace.heapsnapshot.gz"
	out := ok(t, "export", "--parquet", dir, leak, trace)
	parts := map[string]string{}
	for _, m := range partitionLine.FindAllStringSubmatch(out, -1) {
		parts[m[3]] = m[1]
	}

	var js struct {
		Sections []struct {
			Rows []struct {
				Rank          int     `json:"rank"`
				Kind          string  `json:"kind"`
				Holder        string  `json:"holder"`
				Retained      int64   `json:"retained_size"`
				Percent       float64 `json:"retained_percent"`
				Point         string  `json:"point"`
				HeldBy        string  `json:"held_by"`
				Class         string  `json:"class"`
				Count         int64   `json:"count"`
				ClassRetained int64   `json:"class_retained"`
			} `json:"rows"`
		} `json:"sections"`
	}
	okJSON(t, &js, "suspects", "--json", "--limit", "0", leak)
	want := js.Sections[0].Rows
	got, err := parquet.ReadTable[parquet.SuspectRow](parts[leak], parquet.TableSuspects, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d suspects in the table, heapx suspects finds %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if int(g.Rank) != w.Rank || g.Kind != w.Kind || g.Holder != w.Holder || g.RetainedSize != w.Retained || g.Point != w.Point ||
			g.HeldBy != w.HeldBy || g.Class != w.Class || g.Count != w.Count || g.ClassRetainedSize != w.ClassRetained ||
			int(g.Share*1e6+0.5) != int(w.Percent*1e4+0.5) || !strings.Contains(g.Holder, "@"+strconv.FormatInt(g.HolderID, 10)) {
			t.Errorf("suspect %d: table %+v\nheapx suspects %+v", i+1, g, w)
		}
	}

	// objects.site is the allocation stack's first frame.
	d, err := hx.Open(trace, hx.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	objects, err := parquet.ReadTable[parquet.ObjectRow](parts[trace], parquet.TableObjects, true)
	if err != nil {
		t.Fatal(err)
	}
	var with int
	for v, o := range objects {
		stack := alloc.AllocationStack(a, int32(v))
		switch {
		case len(stack) == 0 && o.Site != nil:
			t.Fatalf("node %d has no allocation stack, but site %q", o.NodeID, *o.Site)
		case len(stack) > 0 && (o.Site == nil || *o.Site != query.FrameText(stack[0])):
			t.Fatalf("node %d: site %v, want %q", o.NodeID, o.Site, query.FrameText(stack[0]))
		case len(stack) > 0:
			with++
		}
	}
	if with < 1000 {
		t.Errorf("%d objects with a site", with)
	}
}

// TestExportLeaks checks export --leaks: the leaks table of FINAL's
// partition holds what heapx leaks -n 0 finds in the same three dumps,
// and reads back through the package's reader; the other partitions
// have none, a series without leaks has an empty table, and FINAL already
// in DIR is refused (a partition is never rewritten).
func TestExportLeaks(t *testing.T) {
	for _, series := range [][]string{
		{"../../testdata/node-leak-1.heapsnapshot.gz", "../../testdata/node-leak-2.heapsnapshot.gz", "../../testdata/node-leak-3.heapsnapshot.gz"},
		{"../../testdata/leaks/map-closures-node22-1.heapsnapshot.gz", "../../testdata/leaks/map-closures-node22-2.heapsnapshot.gz",
			"../../testdata/leaks/map-closures-node22-3.heapsnapshot.gz"},
	} {
		dir := t.TempDir()
		out := ok(t, append([]string{"export", "--parquet", dir, "--leaks"}, series...)...)
		m := partitionLine.FindAllStringSubmatch(out, -1)
		if len(m) != 3 {
			t.Fatalf("export --leaks printed:\n%s", out)
		}
		for _, w := range m[:2] {
			if _, err := os.Stat(parquet.TableFile(w[1], parquet.TableLeaks)); err == nil {
				t.Errorf("%s, not FINAL, has a leaks table", w[1])
			}
		}
		got, err := parquet.ReadTable[parquet.LeakRow](m[2][1], parquet.TableLeaks, true)
		if err != nil {
			t.Fatal(err)
		}

		var js struct {
			Sections []struct {
				Rows []struct {
					Rank     int    `json:"rank"`
					Count    int64  `json:"count"`
					Retained int64  `json:"retained_size"`
					Classes  string `json:"classes"`
					Example  string `json:"example"`
					Edge     string `json:"edge"`
					Object   string `json:"object"`
				} `json:"rows"`
			} `json:"sections"`
		}
		okJSON(t, &js, append([]string{"leaks", "--json", "-n", "0"}, series...)...)
		want := js.Sections[0].Rows
		if len(want) == 0 || len(got) != len(want) || len(js.Sections) != len(want)+1 {
			t.Fatalf("%s: %d leaks in the table, heapx leaks finds %d", series[2], len(got), len(want))
		}
		for i, w := range want {
			g := got[i]
			path := ""
			for k, r := range js.Sections[i+1].Rows {
				if k > 0 {
					path += " → " + strings.TrimPrefix(r.Edge+" ", " ")
				}
				path += r.Object
			}
			if g.DumpID != m[2][2] || g.BaselineDumpID != m[0][2] || g.TargetDumpID != m[1][2] || int(g.Rank) != w.Rank ||
				g.Objects != w.Count || g.Count < 1 || g.Count > g.Objects || g.RetainedSize != w.Retained ||
				!strings.HasSuffix(w.Example, " @"+strconv.FormatInt(g.RepresentativeID, 10)) ||
				!strings.Contains(w.Classes, g.Class+" ") || g.Path != path || g.Site != nil {
				t.Errorf("%s: leak %d: table %+v\nheapx leaks %+v\npath %s", series[2], i+1, g, w, path)
			}
		}

		// FINAL is in DIR now: its partition cannot get another series' leaks.
		if r := heapx(t, append([]string{"export", "--parquet", dir, "--leaks"}, series...)...); r.code == 0 ||
			!strings.Contains(r.stderr, "its partition dump="+m[2][2]+" is in "+dir+" already") {
			t.Errorf("export --leaks again: exit %d, %s", r.code, r.stderr)
		}
	}

	// Nothing allocated between BASELINE and TARGET (the same heap,
	// gunzipped): the table is there, with no rows.
	dir := t.TempDir()
	plain := filepath.Join(dir, "node-leak-2.heapsnapshot")
	gunzip(t, "../../testdata/node-leak-2.heapsnapshot.gz", plain)
	parts := filepath.Join(dir, "parts")
	out := ok(t, "export", "--parquet", parts, "--leaks", "../../testdata/node-leak-2.heapsnapshot.gz", plain, "../../testdata/node-leak-3.heapsnapshot.gz")
	m := partitionLine.FindAllStringSubmatch(out, -1)
	if len(m) != 3 {
		t.Fatalf("export --leaks printed:\n%s", out)
	}
	if rows, err := parquet.ReadTable[parquet.LeakRow](m[2][1], parquet.TableLeaks, true); err != nil || len(rows) != 0 {
		t.Errorf("leaks of a series without: %v rows, %v", rows, err)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--leaks", "../../testdata/node-leak-1.heapsnapshot.gz", "../../testdata/node-leak-2.heapsnapshot.gz"}, "export --leaks needs three dumps"},
		{[]string{"--leaks", "../../testdata/node-leak-1.heapsnapshot.gz", "../../testdata/node-leak-2.heapsnapshot.gz",
			"../../testdata/node-leak-1.heapsnapshot.gz"}, "the same dump as BASELINE or TARGET"},
		{[]string{"--leaks", "../../testdata/node-basic.heapsnapshot.gz", "../../testdata/node-leak-2.heapsnapshot.gz",
			"../../testdata/node-leak-3.heapsnapshot.gz"}, "node-leak-3.heapsnapshot.gz: the series' objects cannot be matched by id"},
		{[]string{"--leaks", "../../go.mod", "../../testdata/node-leak-2.heapsnapshot.gz",
			"../../testdata/node-leak-3.heapsnapshot.gz"}, "node-leak-3.heapsnapshot.gz: not exported: the leak series stopped at ../../go.mod"},
	} {
		if r := heapx(t, append([]string{"export", "--parquet", t.TempDir()}, c.args...)...); r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("export %v: exit %d, %s", c.args, r.code, r.stderr)
		}
	}
}

// gunzip writes the decompressed content of the gzip file src to dst.
func gunzip(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
