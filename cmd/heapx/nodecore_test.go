package main

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/coretest"
)

// TestNodeCore runs the commands on a core of core-state.js as a user
// does, with --binary: info, summary, top, report, sql, serve (its API's
// classes, instances and paths), paths, and a convert to
// .heapsnapshot that DevTools (and heapx) reads back with the same
// classes; and the bad inputs: no or a foreign binary, exit 1 and one
// line saying what is wrong.
func TestNodeCore(t *testing.T) {
	major := coretest.Majors(t)[0]
	c := coretest.Make(t, major)
	ex := c.Expect
	core, bin := c.Core, c.Binary

	r := heapx(t, "info", "--json", "--binary", bin, core)
	var info struct {
		Format   string `json:"format"`
		Producer string `json:"producer"`
		Nodes    int    `json:"node_count"`
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &info) != nil || info.Format != "nodecore" ||
		!strings.HasPrefix(info.Producer, "Node ") || info.Nodes < 10000 {
		t.Fatalf("info: exit %d, %+v\n%s%s", r.code, info, r.stdout, r.stderr)
	}

	count := func(args ...string) int {
		t.Helper()
		r := heapx(t, append([]string{"summary", "--json", "--limit", "0"}, args...)...)
		var s struct {
			Classes []struct {
				Constructor string `json:"constructor"`
				Count       int    `json:"count"`
			} `json:"classes"`
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &s) != nil {
			t.Fatalf("summary %v: exit %d\n%s", args, r.code, r.stderr)
		}
		for _, cl := range s.Classes {
			if cl.Constructor == ex.Tickets.Class {
				return cl.Count
			}
		}
		return 0
	}
	if n := count("--binary", bin, core); n != ex.Tickets.Count {
		t.Errorf("summary: %d %s, want %d", n, ex.Tickets.Class, ex.Tickets.Count)
	}
	converted := filepath.Join(t.TempDir(), "core.heapsnapshot")
	if r := heapx(t, "convert", "--binary", bin, core, converted); r.code != 0 {
		t.Fatalf("convert: exit %d\n%s", r.code, r.stderr)
	}
	if n := count(converted); n != ex.Tickets.Count {
		t.Errorf("the converted .heapsnapshot: %d %s, want %d", n, ex.Tickets.Class, ex.Tickets.Count)
	}
	// The exchange format keeps the heap and the stacks.
	exchange := filepath.Join(t.TempDir(), "core.jsonl")
	if r := heapx(t, "convert", "--binary", bin, core, exchange); r.code != 0 {
		t.Fatalf("convert to .jsonl: exit %d\n%s", r.code, r.stderr)
	}
	if n := count(exchange); n != ex.Tickets.Count {
		t.Errorf("the converted .jsonl: %d %s, want %d", n, ex.Tickets.Class, ex.Tickets.Count)
	}
	if r := heapx(t, "stack", exchange); r.code != 0 || !strings.Contains(r.stdout, ex.Stack.Recursion.Function) {
		t.Errorf("stack of the converted .jsonl: exit %d, no %s frame\n%s%s", r.code, ex.Stack.Recursion.Function, r.stdout, r.stderr)
	}
	// A fleet export opens the core with the binary as every command does.
	fleetDir := t.TempDir()
	if r := heapx(t, "export", "--parquet", fleetDir, "--binary", bin, core); r.code != 0 {
		t.Fatalf("export --parquet: exit %d\n%s", r.code, r.stderr)
	}
	parts, _ := filepath.Glob(filepath.Join(fleetDir, "dump=*"))
	if len(parts) != 1 {
		t.Fatalf("export --parquet wrote %v, want one partition", parts)
	}
	if n := count(parts[0]); n != ex.Tickets.Count {
		t.Errorf("the exported partition: %d %s, want %d", n, ex.Tickets.Class, ex.Tickets.Count)
	}
	for _, args := range [][]string{
		{"top", "-n", "5", core},
		{"report", core},
		{"sql", core, "select count(*) from nodes_named where category = 'object' and name = '" + ex.Tickets.Class + "'"},
	} {
		r := heapx(t, append([]string{"--binary", bin}, args...)...)
		if r.code != 0 || r.stdout == "" {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
		if args[0] == "sql" && !strings.Contains(r.stdout, "1000") {
			t.Errorf("sql: %q, want the count %d", r.stdout, ex.Tickets.Count)
		}
	}

	ticket := serveCore(t, core, bin, ex.Tickets.Class, ex.Tickets.Count)
	// A core's ids are addresses: text and CSV show them in hex, as heapx
	// stack does, and --id reads them so; --json keeps the number.
	hexID := "0x" + strconv.FormatUint(ticket, 16)
	r = heapx(t, "paths", "--json", "--binary", bin, core, "--id", hexID)
	var paths pathsOfCore
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &paths) != nil {
		t.Fatalf("paths --id %s: exit %d\n%s%s", hexID, r.code, r.stdout, r.stderr)
	}
	paths.check(t, "paths", ticket, ex.Tickets.Class)
	for _, args := range [][]string{{"paths", "--id", hexID}, {"paths", "--id", "@" + hexID, "--csv"}} {
		r := heapx(t, append(args, "--binary", bin, core)...)
		if r.code != 0 || !strings.Contains(r.stdout, ex.Tickets.Class+" @"+hexID) {
			t.Errorf("%v: exit %d, no %q in\n%s%s", args, r.code, ex.Tickets.Class+" @"+hexID, r.stdout, r.stderr)
		}
	}
	if r := heapx(t, "summary", "--binary", bin, core); r.code != 0 || !strings.Contains(r.stdout, "global") {
		t.Errorf("summary: exit %d\n%s", r.code, r.stderr)
	}
	decimal := regexp.MustCompile(` @[0-9]{4,}\b`)
	for _, args := range [][]string{{"top", "-n", "3"}, {"top", "-n", "3", "--csv"}} {
		if r := heapx(t, append(args, "--binary", bin, core)...); !strings.Contains(r.stdout, " @0x") || decimal.MatchString(r.stdout) {
			t.Errorf("%v: the ids are not in hex:\n%s", args, r.stdout)
		}
	}

	for _, bad := range []struct{ binary, want string }{
		{"/bin/sh", "no v8dbg_* postmortem metadata"},
		{filepath.Join(t.TempDir(), "missing-node"), "missing-node"},
	} {
		r := heapx(t, "summary", "--binary", bad.binary, core)
		if r.code != 1 || !strings.Contains(r.stderr, bad.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("summary --binary %s: exit %d, stderr %q, want exit 1 and one line saying %q", bad.binary, r.code, r.stderr, bad.want)
		}
	}
}

// pathsOfCore is what heapx paths --json and serve's paths API say: the
// retainer paths of one object.
type pathsOfCore struct {
	Target struct {
		ID          uint64 `json:"id"`
		Constructor string `json:"constructor"`
	} `json:"target"`
	Paths []struct {
		System bool `json:"system"`
		Steps  []struct {
			EdgeName string `json:"edge_name"`
		} `json:"steps"`
	} `json:"paths"`
}

// check asserts that the paths lead to the object with id, of class, and
// that the first starts at a user root (a global) and goes through
// globalThis.coreState.tickets, where core-state.js keeps the tickets.
func (p pathsOfCore) check(t *testing.T, what string, id uint64, class string) {
	t.Helper()
	if p.Target.ID != id || p.Target.Constructor != class || len(p.Paths) == 0 {
		t.Fatalf("%s: target %+v with %d paths, want the %s @%d and a path", what, p.Target, len(p.Paths), class, id)
	}
	var names []string
	for _, s := range p.Paths[0].Steps {
		names = append(names, s.EdgeName)
	}
	if p.Paths[0].System || !strings.Contains(" "+strings.Join(names, " ")+" ", " coreState tickets ") {
		t.Errorf("%s: the first path (system %v) goes through %v, want one from a global through coreState and tickets", what, p.Paths[0].System, names)
	}
}

// serveCore runs heapx serve on the core as a user does and asks its API
// what the browser asks: the class's count among the classes, its
// instances, and one instance's retainer paths; it returns that instance's
// id and stops the server.
func serveCore(t *testing.T, core, bin, class string, count int) uint64 {
	t.Helper()
	url, stderr, stop := serving(t, "--binary", bin, core, "--no-browser")
	defer func() {
		if code := stop(); code != 0 {
			t.Errorf("serve: exit code %d after Ctrl-C, want 0; stderr:\n%s", code, stderr)
		}
	}()
	get := func(path string, v any) {
		t.Helper()
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || json.Unmarshal(body, v) != nil {
			t.Fatalf("serve: GET %s: %d\n%s", path, res.StatusCode, body)
		}
	}
	var classes struct {
		Classes []struct {
			Index       int    `json:"index"`
			Constructor string `json:"constructor"`
			Count       int    `json:"count"`
		} `json:"classes"`
	}
	get("api/v1/classes?filter="+class, &classes)
	index := -1
	for _, c := range classes.Classes {
		if c.Constructor == class {
			index = c.Index
			if c.Count != count {
				t.Errorf("serve: %d %s, want %d", c.Count, class, count)
			}
		}
	}
	if index < 0 {
		t.Fatalf("serve: no class %s in %+v", class, classes)
	}
	var instances struct {
		Total   int `json:"total"`
		Objects []struct {
			ID uint64 `json:"id"`
		} `json:"objects"`
	}
	get("api/v1/classes/"+strconv.Itoa(index)+"/instances?limit=5", &instances)
	if instances.Total != count || len(instances.Objects) != 5 {
		t.Fatalf("serve: %d instances of %s (%d on the page), want %d", instances.Total, class, len(instances.Objects), count)
	}
	id := instances.Objects[0].ID
	var paths pathsOfCore
	get("api/v1/objects/"+strconv.FormatUint(id, 10)+"/paths", &paths)
	paths.check(t, "serve", id, class)
	return id
}
