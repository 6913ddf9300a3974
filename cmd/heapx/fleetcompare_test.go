package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// cohortPod is one pod of the cohort fleet, as bench/gen-cohorts.js
// reports it: its snapshots and what it holds in each.
type cohortPod struct {
	Release, Pod string
	Files        []string
	Audit        int // AuditRecord objects kept
	Replay       int // ReplayEntry objects kept
}

var (
	cohortOnce  sync.Once
	cohortDir   string
	cohortPods  []cohortPod
	cohortDumps []fleetDump
	cohortErr   error
)

// cohortFleet makes, once for every test, the fleet of issue 31's
// question with bench/gen-cohorts.js: one service in releases 1 and 2,
// four pods each (each a Node process of its own), two snapshots a pod,
// 16 dumps in all; release 1 keeps 700 AuditRecord, release 2 100, and
// pod 002 of release 1 alone keeps 1,500 ReplayEntry. Each pod's dumps
// are exported with --label service=api --label release=R --label
// pod=P, as a user labels a fleet.
func cohortFleet(t *testing.T) (string, []cohortPod, []fleetDump) {
	t.Helper()
	node := testfixtures.NeedTool(t, "node")
	cohortOnce.Do(func() {
		cohortErr = errors.New("making the cohort fleet did not finish")
		in := filepath.Join(sharedDir, "cohorts-in")
		cmd := exec.Command(node, filepath.Join("..", "..", "bench", "gen-cohorts.js"), in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			cohortErr = fmt.Errorf("bench/gen-cohorts.js: %v\n%s", err, stderr.String())
			return
		}
		var pods []cohortPod
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			var p cohortPod
			if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
				cohortErr = fmt.Errorf("bench/gen-cohorts.js printed %q: %v", sc.Text(), err)
				return
			}
			pods = append(pods, p)
		}
		dir := filepath.Join(sharedDir, "cohorts")
		var dumps []fleetDump
		for _, p := range pods {
			args := []string{"export", "--parquet", dir, "--label", "service=api", "--label", "release=" + p.Release,
				"--label", "pod=" + p.Pod}
			for _, f := range p.Files {
				path := filepath.Join(in, "release="+p.Release, f)
				args = append(args, path)
				dumps = append(dumps, fleetDump{path: path, release: p.Release, pod: p.Pod})
			}
			if r := heapx(t, args...); r.code != 0 {
				cohortErr = fmt.Errorf("heapx %v: exit %d, stderr:\n%s", args, r.code, r.stderr)
				return
			}
		}
		cohortDir, cohortPods, cohortDumps, cohortErr = dir, pods, dumps, nil
	})
	if cohortErr != nil {
		t.Fatal(cohortErr)
	}
	if len(cohortDumps) != 16 {
		t.Fatalf("the cohort fleet has %d dumps, want 16", len(cohortDumps))
	}
	return cohortDir, cohortPods, cohortDumps
}

// meanPerDump is the mean over release's dumps of what of says each of
// its pods holds.
func meanPerDump(pods []cohortPod, release string, of func(cohortPod) int) float64 {
	var sum, dumps int
	for _, p := range pods {
		if p.Release == release {
			sum += of(p) * len(p.Files)
			dumps += len(p.Files)
		}
	}
	return float64(sum) / float64(dumps)
}

// rowOf returns the row of rows whose class is class, or nil.
func rowOf(rows []map[string]any, class string) map[string]any {
	for _, r := range rows {
		if r["class"] == class {
			return r
		}
	}
	return nil
}

// TestFleetCompare asks the cohort fleet "what does release 1 hold that
// release 2 does not" with the pods as samples: AuditRecord comes first,
// with the counts per cohort that the program kept, and eight dumps
// above eight (p = 2/C(16,8)); ReplayEntry, held by one pod of four,
// differs as much per dump but does not reach p < 0.05 (p 0.47), so it
// is shown only with --alpha 1.
func TestFleetCompare(t *testing.T) {
	t.Parallel()
	dir, pods, _ := cohortFleet(t)
	audit := func(p cohortPod) int { return p.Audit }
	replay := func(p cohortPod) int { return p.Replay }
	wantAudit := [2]float64{meanPerDump(pods, "1", audit), meanPerDump(pods, "2", audit)}
	wantReplay := [2]float64{meanPerDump(pods, "1", replay), meanPerDump(pods, "2", replay)}
	if wantAudit != [2]float64{700, 100} || wantReplay != [2]float64{375, 0} {
		t.Fatalf("bench/gen-cohorts.js kept %v AuditRecord and %v ReplayEntry per dump, want 700, 100 and 375, 0", wantAudit, wantReplay)
	}

	var all fleetJSON
	okJSON(t, &all, "fleet", dir, "--compare", "release", "--json", "--alpha", "1", "-n", "0")
	classes := all.table(t, 0)
	first := classes[0]
	if first["class"] != "AuditRecord" || first["count_a"] != wantAudit[0] || first["count_b"] != wantAudit[1] ||
		first["count_diff"] != wantAudit[1]-wantAudit[0] || first["count_p"] != 2.0/12870 || first["retained_p"] != 2.0/12870 {
		t.Errorf("first class %v, want AuditRecord at %v per dump, p = 2/12870", first, wantAudit)
	}
	r := rowOf(classes, "ReplayEntry")
	if r == nil || r["count_a"] != wantReplay[0] || r["count_b"] != wantReplay[1] || r["count_p"].(float64) < 0.05 {
		t.Errorf("ReplayEntry %v, want %v per dump and p >= 0.05", r, wantReplay)
	}
	cohorts := all.table(t, 3)
	if len(cohorts) != 2 || cohorts[0]["cohort"] != "A: release=1" || cohorts[0]["dumps"] != 8.0 ||
		cohorts[1]["cohort"] != "B: release=2" || cohorts[1]["dumps"] != 8.0 {
		t.Errorf("cohorts %v, want release 1 and 2 of 8 dumps", cohorts)
	}

	var shown fleetJSON
	okJSON(t, &shown, "fleet", dir, "--compare", "release=1,2", "--json", "-n", "0")
	classes = shown.table(t, 0)
	if classes[0]["class"] != "AuditRecord" || rowOf(classes, "ReplayEntry") != nil {
		t.Errorf("classes shown at p < 0.05: %v; want AuditRecord first, and not ReplayEntry", classes)
	}
	for _, row := range classes {
		if p := row["count_p"].(float64); p >= 0.05 {
			t.Errorf("%v shown with p %v", row["class"], p)
		}
	}
	// Reversed, the differences change sign.
	var reversed fleetJSON
	okJSON(t, &reversed, "fleet", dir, "--compare", "release=2,1", "--json", "-n", "1")
	if row := reversed.table(t, 0)[0]; row["class"] != "AuditRecord" || row["count_diff"] != 600.0 {
		t.Errorf("release=2,1: %v, want AuditRecord +600", row)
	}

	text := ok(t, "fleet", dir, "--compare", "release")
	for _, want := range []string{"A: release=1 (8 dumps), B: release=2 (8 dumps); each dump a sample",
		"\nAuditRecord   ", "Classes whose number of instances per dump differs (p < 0.05)"} {
		if !strings.Contains(text, want) {
			t.Errorf("heapx fleet --compare release does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "ReplayEntry") {
		t.Errorf("the text shows ReplayEntry, which one pod holds:\n%s", text)
	}

	cr := csv.NewReader(strings.NewReader(ok(t, "fleet", dir, "--compare", "release", "--csv")))
	cr.FieldsPerRecord = -1
	var found bool
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(rec) > 5 && rec[1] == "AuditRecord" {
			found = true
			if got := strings.Join(rec[2:6], ","); got != "700,100,-600,0.0001554001554001554" {
				t.Errorf("AuditRecord's CSV count cells %s, want 700,100,-600,0.0001554001554001554", got)
			}
		}
	}
	if !found {
		t.Error("the CSV has no AuditRecord row")
	}
}

// TestFleetCompareBadFlags: each mistake is an error saying what to do,
// with no output.
func TestFleetCompareBadFlags(t *testing.T) {
	t.Parallel()
	dir, _ := exportedFleet(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--compare", "release", "--by", "pod"}, "--by and --compare cannot be used together"},
		{[]string{"--alpha", "0.1"}, "--alpha needs --compare LABEL[=A,B]"},
		{[]string{"--compare", "=41,42"}, "name a label"},
		{[]string{"--compare", "release=41"}, "give two values after the label"},
		{[]string{"--compare", "release=41,43"}, "no dump has release=43; its values are 41, 42"},
		{[]string{"--compare", "zone"}, `no dump has a label "zone"; the dumps' labels are pod, release, service`},
		{[]string{"--compare", "service"}, `every dump with a label "service" has the value "api"`},
		{[]string{"--compare", "release", "--alpha", "2"}, "--alpha must be a p-value"},
	} {
		r := heapx(t, append([]string{"fleet", dir}, c.args...)...)
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, c.want) {
			t.Errorf("heapx fleet %v: exit %d, stdout %q, stderr %q; want an error saying %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	// Three dumps against three: no difference can pass, and heapx says so.
	r := heapx(t, "fleet", dir, "--compare", "release")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "with 3 and 3 dumps, no difference can reach p < 0.05") {
		t.Errorf("three against three: exit %d, stdout\n%s\nstderr\n%s", r.code, r.stdout, r.stderr)
	}
}
