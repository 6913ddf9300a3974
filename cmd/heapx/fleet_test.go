package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"

	"github.com/heapx/heapx/formats/parquet"
)

// fleetDump is one dump of the fleet fixture (testdata/fleet, made by
// bench/gen-fleet.js): a pod of the service in one release, snapshotted
// three times as it serves requests. Release 41 leaks every Request in
// its listener's requestLog; release 42 keeps the last 50.
type fleetDump struct {
	path, release, pod, id string
	captured               time.Time
}

// fleetFixture reads testdata/fleet/fleet.jsonl, one line per pod.
func fleetFixture(t *testing.T) []fleetDump {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "fleet")
	f, err := os.Open(filepath.Join(dir, "fleet.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fleetDump
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var pod struct {
			Release, Pod string
			Files        []string
			CapturedMS   []int64 `json:"captured_ms"`
		}
		if err := json.Unmarshal(sc.Bytes(), &pod); err != nil {
			t.Fatal(err)
		}
		for i, name := range pod.Files {
			path := filepath.Join(dir, "release="+pod.Release, name)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			out = append(out, fleetDump{path: path, release: pod.Release, pod: pod.Pod, id: hex.EncodeToString(sum[:])[:16],
				captured: time.UnixMilli(pod.CapturedMS[i])})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) != 6 {
		t.Fatalf("the fleet fixture has %d dumps, want 6", len(out))
	}
	return out
}

var (
	fleetOnce sync.Once
	fleetDir  string
	fleetErr  error
)

// exportedFleet returns the Parquet directory of the fleet fixture, made
// once for every test as a user makes one: each pod's dumps exported
// with its labels. The copies get the capture times bench/gen-fleet.js
// recorded as their modification times (what export records for a V8
// snapshot), which a checkout does not keep.
func exportedFleet(t *testing.T) (string, []fleetDump) {
	t.Helper()
	dumps := fleetFixture(t)
	fleetOnce.Do(func() {
		fleetErr = fmt.Errorf("exporting the fleet fixture did not finish")
		dir := filepath.Join(sharedDir, "fleet")
		in := filepath.Join(sharedDir, "fleet-in")
		byPod := map[string][]string{}
		var pods []string
		for _, d := range dumps {
			b, err := os.ReadFile(d.path)
			if err != nil {
				fleetErr = err
				return
			}
			cp := filepath.Join(in, d.release, filepath.Base(d.path))
			if err := os.MkdirAll(filepath.Dir(cp), 0o755); err != nil {
				fleetErr = err
				return
			}
			if err := os.WriteFile(cp, b, 0o644); err != nil {
				fleetErr = err
				return
			}
			if err := os.Chtimes(cp, d.captured, d.captured); err != nil {
				fleetErr = err
				return
			}
			key := d.release + " " + d.pod
			if byPod[key] == nil {
				pods = append(pods, key)
			}
			byPod[key] = append(byPod[key], cp)
		}
		for _, key := range pods {
			release, pod, _ := strings.Cut(key, " ")
			args := append([]string{"export", "--parquet", dir, "--label", "service=api", "--label", "release=" + release,
				"--label", "pod=" + pod}, byPod[key]...)
			if r := heapx(t, args...); r.code != 0 {
				fleetErr = fmt.Errorf("heapx %v: exit %d, stderr:\n%s", args, r.code, r.stderr)
				return
			}
		}
		fleetDir, fleetErr = dir, nil
	})
	if fleetErr != nil {
		t.Fatal(fleetErr)
	}
	return fleetDir, dumps
}

// fleetJSON is heapx fleet --json: the generic document of a result,
// each row an object by column key.
type fleetJSON struct {
	Sections []struct {
		Heading string
		Rows    []map[string]any
	}
}

// table returns section i's rows.
func (f *fleetJSON) table(t *testing.T, i int) []map[string]any {
	t.Helper()
	if i >= len(f.Sections) {
		t.Fatalf("heapx fleet --json has %d sections, want at least %d", len(f.Sections), i+1)
	}
	return f.Sections[i].Rows
}

// TestFleetNamesLeakAndRelease exports a fleet with a known leak in one
// release and checks that heapx fleet names the class and the release:
// Request grows at every dump of release 41's pod and of no other series,
// and is the leak suspect of all three of its dumps and of none of
// release 42's. The dumps are listed by series in capture time order.
func TestFleetNamesLeakAndRelease(t *testing.T) {
	t.Parallel()
	dir, dumps := exportedFleet(t)
	var doc fleetJSON
	okJSON(t, &doc, "fleet", "--json", "-n", "0", dir)

	const leaky, fixed = "service=api release=41 pod=001", "service=api release=42 pod=001"
	growth := doc.table(t, 0)
	var request map[string]any
	for _, r := range growth {
		if r["class"] == "Request" {
			request = r
		}
	}
	if request == nil || request["series"].(float64) != 1 || request["where"] != leaky || request["count_growth"].(float64) != 3000 {
		t.Errorf("Request grows in %v, want in the one series %s by 3,000 instances (1,500 leaked per snapshot)", request, leaky)
	}

	sus := doc.table(t, 1)
	if len(sus) == 0 {
		t.Fatal("heapx fleet found no leak suspect")
	}
	top := sus[0]
	if top["class"] != "Request" || !strings.Contains(top["held_by"].(string), "requestLog") || top["dumps"].(float64) != 3 ||
		top["series"] != leaky+" 3/3" {
		t.Errorf("the first suspect is %v, want Request held by requestLog in the 3 dumps of %s", top, leaky)
	}
	for _, s := range sus {
		if strings.Contains(s["series"].(string), "release=42") {
			t.Errorf("a suspect of the fixed release: %v", s)
		}
	}

	var want []string
	for _, d := range dumps { // the fixture lists each pod's dumps in capture order
		want = append(want, d.id)
	}
	var got []string
	for _, r := range doc.table(t, 2) {
		got = append(got, r["dump_id"].(string))
		if s := r["suspects"].(float64); (s > 0) != strings.Contains(r["series"].(string), "release=41") {
			t.Errorf("dump %v of %v has %v suspects", r["dump_id"], r["series"], s)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("dumps in the order %v, want %v (by series, then capture time)", got, want)
	}

	// As a user reads it: the text names the class with the release.
	text := ok(t, "fleet", dir)
	named := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "Request ") {
			named++
			if !strings.Contains(line, "release=41") || strings.Contains(line, "42") {
				t.Errorf("the text names Request with %q, want release 41 alone", line)
			}
		}
	}
	if named != 2 || !strings.Contains(text, "requestLog (captured by onRequest at gen-fleet.") {
		t.Errorf("the text does not name Request as growing and as the suspect, in %s:\n%s", leaky, text)
	}

	// --by release pools the pods of a release; CSV has the raw numbers.
	csv := ok(t, "fleet", "--csv", "--by", "release", dir)
	if !strings.Contains(csv, ",Request,1,50,release=41,792000,3000\n") {
		t.Errorf("heapx fleet --csv --by release:\n%s", csv)
	}
}

// TestFleetBadInput checks that what is not a complete Parquet directory
// of one version is one clear error naming the file: a dump file, an
// empty directory, a damaged table, a partition of another version.
func TestFleetBadInput(t *testing.T) {
	t.Parallel()
	dir, _ := exportedFleet(t)
	parts, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, parts[0].Name())
	// copyPartition copies the first partition into a directory of its
	// own, to be damaged there.
	copyPartition := func(t *testing.T) (string, string) {
		t.Helper()
		d := t.TempDir()
		dst := filepath.Join(d, parts[0].Name())
		if err := os.Mkdir(dst, 0o755); err != nil {
			t.Fatal(err)
		}
		files, err := os.ReadDir(part)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(part, f.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dst, f.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d, dst
	}

	damaged, dpart := copyPartition(t)
	classes := parquet.TableFile(dpart, parquet.TableClasses)
	b, err := os.ReadFile(classes)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(b) / 3; i < len(b)-8; i++ { // keep the magic numbers, lose the footer
		b[i] = 0xa5
	}
	if err := os.WriteFile(classes, b, 0o644); err != nil {
		t.Fatal(err)
	}

	// A partition of version 2 beside one of version 1.
	mixed, mpart := copyPartition(t)
	v2 := filepath.Join(mixed, parquet.PartitionPrefix+"0123456789abcdef")
	if err := os.Mkdir(v2, 0o755); err != nil {
		t.Fatal(err)
	}
	writeDumpsVersion(t, mpart, v2, 2)

	empty := t.TempDir()
	cases := []struct {
		name, dir string
		want      []string
	}{
		{"a dump file", dumpsOf(t)[0], []string{"is not a directory", "heapx export --parquet"}},
		{"an empty directory", empty, []string{empty, "no dump=<id> directory", "heapx export --parquet"}},
		{"a damaged table", damaged, []string{classes}},
		{"two versions", mixed, []string{v2, "version 2", "version 1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := heapx(t, "fleet", c.dir)
			if r.code != 1 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "heapx: ") {
				t.Fatalf("heapx fleet %s: exit %d, stdout %q, stderr %q; want exit 1 and one heapx: line", c.dir, r.code, r.stdout, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("heapx fleet %s: %q does not say %q", c.dir, r.stderr, w)
				}
			}
		})
	}
}

// dumpsOf lists the fleet fixture's dump files.
func dumpsOf(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, d := range fleetFixture(t) {
		out = append(out, d.path)
	}
	return out
}

// writeDumpsVersion writes into partition directory to the dumps table of
// partition from, as of format version version and of the dump to names.
func writeDumpsVersion(t *testing.T, from, to string, version int32) {
	t.Helper()
	rows, err := pq.ReadFile[parquet.DumpRow](parquet.TableFile(from, parquet.TableDumps))
	if err != nil {
		t.Fatal(err)
	}
	rows[0].FormatVersion = version
	rows[0].DumpID = strings.TrimPrefix(filepath.Base(to), parquet.PartitionPrefix)
	if err := pq.WriteFile(parquet.TableFile(to, parquet.TableDumps), rows); err != nil {
		t.Fatal(err)
	}
}
