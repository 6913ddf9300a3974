package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/jsonl"
	v8 "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/query"
)

// TestStackCommand runs `heapx stack` on a core of core-state.js as a user
// does: the main thread's JavaScript frames are the program's recursion
// with its arguments and lines, in text and in JSON, with --binary and
// with the binary the core names; an exchange file holding the core's
// stacks prints the same threads.
func TestStackCommand(t *testing.T) {
	for _, major := range coretest.Majors(t) {
		t.Run("node"+coretest.Pinned[major], func(t *testing.T) {
			c := coretest.Make(t, major)
			want := c.Expect.Stack
			r := heapx(t, "stack", c.Core, "--binary", c.Binary, "--json")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			var out query.ThreadsJSON
			if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
				t.Fatal(err)
			}
			if out.SchemaVersion != 1 || out.Binary != c.Binary || !strings.HasPrefix(out.Runtime, "Node "+strconv.Itoa(major)+" (V8 ") {
				t.Errorf("header: schema %d, binary %q, runtime %q", out.SchemaVersion, out.Binary, out.Runtime)
			}
			var main *query.ThreadJSON
			for i := range out.Threads {
				if out.Threads[i].Thread == uint64(c.PID) {
					main = &out.Threads[i]
				}
			}
			if main == nil || main.Name != "main" {
				t.Fatalf("no main thread %d in %d threads", c.PID, len(out.Threads))
			}
			var js []query.ThreadFrameJSON
			for _, f := range main.Frames {
				if f.Kind == "javascript" {
					js = append(js, f)
				}
			}
			if len(js) < want.Recursion.Depth+2 {
				t.Fatalf("%d JavaScript frames", len(js))
			}
			if js[0].Function != want.Block.Function || js[0].Line != uint32(want.Block.Line) || js[0].Script != want.ScriptPath {
				t.Errorf("innermost frame %s %s:%d, want %s %s:%d", js[0].Function, js[0].Script, js[0].Line, want.Block.Function, want.ScriptPath, want.Block.Line)
			}
			for i, args := range want.Recursion.Args {
				f := js[1+i]
				if f.Function != want.Recursion.Function || f.Line != uint32(want.Recursion.Line) {
					t.Errorf("frame %d: %s:%d, want %s:%d", f.Index, f.Function, f.Line, want.Recursion.Function, want.Recursion.Line)
				}
				var got []string
				for _, v := range f.Values {
					if v.Role == "argument" {
						got = append(got, v.Text)
					}
				}
				exp := []string{strconv.Itoa(int(args[0].(float64))), strconv.Quote(args[1].(string)), strconv.FormatFloat(args[2].(float64), 'g', -1, 64)}
				if len(got) < 3 || strings.Join(got[:3], ",") != strings.Join(exp, ",") {
					t.Errorf("frame %d: arguments %q, want %q first", f.Index, got, exp)
				}
				if v := f.Values[1]; v.Smi == nil || *v.Smi != int64(args[0].(float64)) || v.ID != 0 {
					t.Errorf("frame %d: the small integer argument is %+v", f.Index, v)
				}
				if v := f.Values[2]; v.Smi != nil || v.ID == 0 {
					t.Errorf("frame %d: the string argument is %+v, want a heap object's id", f.Index, v)
				}
			}
			if f := js[1+want.Recursion.Depth]; f.Function != want.Caller.Function || f.Line != uint32(want.Caller.Line) {
				t.Errorf("caller frame %s:%d, want %s:%d", f.Function, f.Line, want.Caller.Function, want.Caller.Line)
			}

			// heapx threads reads the heap too: the same main thread,
			// with the classes and retained sizes of what its frames
			// hold (the string argument of the recursion's frames).
			var sized query.ThreadsJSON
			okJSON(t, &sized, "threads", "--json", "-n", "0", c.Core, "--binary", c.Binary)
			var sizedMain *query.ThreadJSON
			for i := range sized.Threads {
				if sized.Threads[i].Thread == uint64(c.PID) {
					sizedMain = &sized.Threads[i]
				}
			}
			if sizedMain == nil || len(sizedMain.Frames) != len(main.Frames) {
				t.Fatalf("threads: no main thread of %d frames: %+v", len(main.Frames), sizedMain)
			}
			for i, f := range sizedMain.Frames {
				if f.Function != main.Frames[i].Function || len(f.Values) != len(main.Frames[i].Values) {
					t.Fatalf("threads: frame %d is %s with %d values, stack says %s with %d", i, f.Function, len(f.Values), main.Frames[i].Function, len(main.Frames[i].Values))
				}
			}
			if v := sizedMain.Frames[js[1].Index].Values[2]; v.Class != "(string)" || v.RetainedSize == nil || *v.RetainedSize == 0 {
				t.Errorf("threads: the recursion's string argument is %+v, want a string with its retained size", v)
			}

			// Text, the binary taken from the core's NT_FILE note when it
			// is here (Node 20 runs as /usr/bin/node or from the cache).
			text := heapx(t, "stack", c.Core, "--all")
			if text.code != 0 {
				t.Fatalf("exit %d: %s", text.code, text.stderr)
			}
			for _, s := range []string{
				"(main): ",
				"  #1   descend  " + want.ScriptPath + ":" + strconv.Itoa(want.Recursion.Line) + ":",
				`arguments (4): 3, "level-3", 3.5, <Object @0x`,
				`SECRET = "open-sesame"`,
				"[EntryFrame]",
				"node::Start(int, char**)  (native, pc 0x",
				"no JavaScript frames",
			} {
				if !strings.Contains(text.stdout, s) {
					t.Errorf("the text output has no %q", s)
				}
			}
			if short := heapx(t, "stack", c.Core); strings.Contains(short.stdout, "SECRET") || !strings.Contains(short.stdout, "more (--all)") {
				t.Error("without --all a frame lists every closure variable")
			}

			// convert keeps the stacks: core -> .jsonl -> .db, and heapx
			// stack reads the same threads from both.
			dir := t.TempDir()
			flat, db := filepath.Join(dir, "core.jsonl"), filepath.Join(dir, "core.db")
			if r := heapx(t, "convert", c.Core, flat, "--binary", c.Binary); r.code != 0 {
				t.Fatalf("convert to .jsonl: exit %d: %s", r.code, r.stderr)
			}
			if r := heapx(t, "convert", flat, db); r.code != 0 {
				t.Fatalf("convert to .db: exit %d: %s", r.code, r.stderr)
			}
			for _, file := range []string{flat, db} {
				x := heapx(t, "stack", file, "--json")
				var back query.ThreadsJSON
				if err := json.Unmarshal([]byte(x.stdout), &back); err != nil {
					t.Fatalf("%s: exit %d %s: %v", file, x.code, x.stderr, err)
				}
				a, _ := json.Marshal(out.Threads)
				b, _ := json.Marshal(back.Threads)
				if string(a) != string(b) {
					t.Errorf("%s: the stacks differ from the core's", filepath.Base(file))
				}
			}
		})
	}
}

// TestStackBadInput: a dump without stacks, a truncated core, a core of a
// process that is not node, a binary that is not node, --binary with an
// exchange file: each a clear error and exit 1.
func TestStackBadInput(t *testing.T) {
	dir := t.TempDir()
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	nonNode, err := coretest.Gcore(t, sleep.Process.Pid, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(nonNode)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.core")
	if err := os.WriteFile(truncated, b[:len(b)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	header := filepath.Join(dir, "header.core")
	if err := os.WriteFile(header, b[:40], 0o644); err != nil {
		t.Fatal(err)
	}
	snapshot := filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz")
	sh, _ := exec.LookPath("sh")
	cases := []struct {
		args []string
		msg  string
	}{
		{[]string{snapshot}, "has no stacks: only a core dump"},
		{[]string{snapshot, "--binary", sh}, "--binary is for core dumps"},
		{[]string{nonNode}, "not a Node.js core"},
		{[]string{nonNode, "--binary", sh}, sh + " is position-independent but the core does not say where it was loaded"},
		{[]string{truncated}, "truncated.core: truncated core"},
		{[]string{header}, "too short for an ELF core"},
		{[]string{filepath.Join(dir, "missing.core")}, "missing.core"},
	}
	for _, c := range cases {
		r := heapx(t, append([]string{"stack"}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, c.msg) || r.stdout != "" {
			t.Errorf("stack %v: exit %d, stderr %q, stdout %d bytes; want exit 1 saying %q", c.args, r.code, r.stderr, len(r.stdout), c.msg)
		}
	}
}

// TestConvertStacks converts a file with stacks: to .db they are kept
// (heapx stack reads them back), to .heapsnapshot they are left out with a
// warning saying so.
func TestConvertStacks(t *testing.T) {
	g, err := v8.ReadFile(filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), v8.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	g.Stacks = testfixtures.Stacks(g)
	dir := t.TempDir()
	flat := filepath.Join(dir, "stacks.jsonl")
	f, err := os.Create(flat)
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonl.Write(f, g, jsonl.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := heapx(t, "stack", flat, "--json")
	if want.code != 0 {
		t.Fatalf("stack on .jsonl: exit %d: %s", want.code, want.stderr)
	}
	db := filepath.Join(dir, "stacks.db")
	if r := heapx(t, "convert", flat, db); r.code != 0 || strings.Contains(r.stderr, "warning") {
		t.Fatalf("convert to .db: exit %d: %s", r.code, r.stderr)
	}
	got := heapx(t, "stack", db, "--json")
	if got.code != 0 || strings.ReplaceAll(got.stdout, db, flat) != want.stdout {
		t.Errorf("the .db's stacks differ from the .jsonl's (exit %d, %s)", got.code, got.stderr)
	}
	snap := filepath.Join(dir, "stacks.heapsnapshot")
	r := heapx(t, "convert", flat, snap)
	if r.code != 0 || !strings.Contains(r.stderr, "the 4 threads' stacks are left out: a V8 heap snapshot has no place for them") {
		t.Errorf("convert to .heapsnapshot: exit %d, stderr %q", r.code, r.stderr)
	}
}
