package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/coretest"
)

// TestNodeCore runs the commands on a core of core-state.js as a user
// does, with --binary: info, summary, top, report, sql and a convert to
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
