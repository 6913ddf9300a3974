package jstrace

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/testfixtures"
)

// needNode skips when node is not installed (fails under CI).
func needNode(t *testing.T) {
	t.Helper()
	testfixtures.NeedTool(t, "node")
}

// traceOf writes files (name -> text) to a temporary directory, runs
// node on the first name with opt, and returns the decoded events (one
// line each, memtrace.Event.String, paths relative to the directory), the
// program's stdout and the result.
func traceOf(t *testing.T, opt Options, files ...string) ([]string, string, Result) {
	t.Helper()
	needNode(t)
	dir := t.TempDir()
	for i := 0; i < len(files); i += 2 {
		path := filepath.Join(dir, files[i])
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var trace, stdout bytes.Buffer
	opt.Stdout = &stdout
	if opt.Stderr == nil {
		opt.Stderr = io.Discard
	}
	for i, g := range opt.Include {
		opt.Include[i] = filepath.Join(dir, g)
	}
	res, err := Run(context.Background(), []string{"node", filepath.Join(dir, files[0])}, opt, &trace)
	if err != nil {
		t.Fatal(err)
	}
	if res.Bytes != int64(trace.Len()) {
		t.Errorf("Result.Bytes %d, wrote %d", res.Bytes, trace.Len())
	}
	return decode(t, trace.Bytes(), dir), stdout.String(), res
}

func decode(t *testing.T, raw []byte, dir string) []string {
	t.Helper()
	r, err := memtrace.NewReader(bytes.NewReader(raw), "trace")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%v\nafter:\n%s", err, strings.Join(out, "\n"))
		}
		line := strings.ReplaceAll(ev.String(), dir+"/", "")
		if ev.Kind == memtrace.Idle {
			line = strings.TrimSuffix(line, fmt.Sprintf(" %d ms", ev.Millis)) // wall-clock time: not compared
		}
		out = append(out, line)
	}
}

// sameEvents compares event lines.
func sameEvents(t *testing.T, got []string, want string) {
	t.Helper()
	w := strings.Split(strings.TrimSpace(want), "\n")
	for i := range w {
		w[i] = strings.TrimSpace(w[i])
	}
	if strings.Join(got, "\n") != strings.Join(w, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
}

// TestFigure5 is the MemInsight paper's Fig. 5 program: its trace, record
// by record, at its places in the source.
func TestFigure5(t *testing.T) {
	evs, _, res := traceOf(t, Options{}, "fig5.js", `var x = {}, y = {};
function m(p, q) { p.f = q; return p }
m(x, y); x = null;
`)
	if res.ExitCode != 0 || res.Flags != 0 {
		t.Errorf("result %+v", res)
	}
	sameEvents(t, evs, `
		0 SCRIPT fig5.js iids 1..14
		0 FREE_VARS fig5.js:1:1 []
		0 FREE_VARS fig5.js:2:1 []
		1 SCRIPT_ENTER fig5.js:1:1 script 1 ctx 2
		2 CREATE_FUN fig5.js:2:1 obj 2 ctx 2 proto 0
		3 DECLARE fig5.js:2:1 ctx 2 m = 2
		4 CREATE_OBJ fig5.js:1:9 obj 3 kind 0
		5 CREATE_OBJ fig5.js:1:17 obj 4 kind 0
		6 DECLARE fig5.js:1:5 ctx 2 x = 3
		7 DECLARE fig5.js:1:13 ctx 2 y = 4
		8 TOP_LEVEL_FLUSH fig5.js:1:1
		9 TOP_LEVEL_FLUSH fig5.js:2:1
		10 FUNCTION_ENTER fig5.js:2:1 ctx 3 parent 2 fn 0
		11 DECLARE fig5.js:2:1 ctx 3 p = 3
		12 DECLARE fig5.js:2:1 ctx 3 q = 4
		13 PUTFIELD fig5.js:2:20 3.f = 4
		14 RETURN fig5.js:2:29 ctx 3 value 3
		15 FUNCTION_EXIT fig5.js:2:1 ctx 3 how 0
		16 TOP_LEVEL_FLUSH fig5.js:3:1
		17 WRITE fig5.js:3:10 ctx 2 x = 0
		18 TOP_LEVEL_FLUSH fig5.js:3:10
		19 SCRIPT_EXIT fig5.js:1:1 ctx 2 how 0
		19 IDLE
		19 LAST_USE obj 2 at 9 fig5.js:3:1
		19 LAST_USE obj 3 at 13 fig5.js:2:20
		19 END_LAST_USE 19
		19 EXIT code 0 how 0 ""
		19 END code 0 signal 0 flags 0`)
}

// TestClosureAndAsync: a closure keeps its defining context (parent 3 at
// the arrow's entry, FREE_VARS [box] of counter), an await suspends and
// resumes its call after the script's end, and a primitive-only variable
// (n) is not logged.
func TestClosureAndAsync(t *testing.T) {
	evs, _, _ := traceOf(t, Options{}, "closure.js", `function counter() {
  let n = 0, box = { n };
  return () => box;
}
const get = counter();
async function later(x) {
  const r = await x;
  return [r];
}
later({}).then((v) => { get(); });
`)
	sameEvents(t, evs, `
		0 SCRIPT closure.js iids 1..22
		0 FREE_VARS closure.js:1:1 [get]
		0 FREE_VARS closure.js:1:1 [box]
		0 FREE_VARS closure.js:3:10 []
		0 FREE_VARS closure.js:6:1 []
		0 FREE_VARS closure.js:10:16 []
		1 SCRIPT_ENTER closure.js:1:1 script 1 ctx 2
		2 CREATE_FUN closure.js:1:1 obj 2 ctx 2 proto 0
		3 DECLARE closure.js:1:1 ctx 2 counter = 2
		4 CREATE_FUN closure.js:6:1 obj 3 ctx 2 proto 0
		5 DECLARE closure.js:6:1 ctx 2 later = 3
		6 TOP_LEVEL_FLUSH closure.js:1:1
		7 FUNCTION_ENTER closure.js:1:1 ctx 3 parent 2 fn 0
		8 CREATE_OBJ closure.js:2:20 obj 4 kind 0
		9 DECLARE closure.js:2:14 ctx 3 box = 4
		10 CREATE_FUN closure.js:3:10 obj 5 ctx 3 proto 0
		11 RETURN closure.js:3:3 ctx 3 value 5
		12 FUNCTION_EXIT closure.js:1:1 ctx 3 how 0
		13 DECLARE closure.js:5:7 ctx 2 get = 5
		14 TOP_LEVEL_FLUSH closure.js:5:1
		15 TOP_LEVEL_FLUSH closure.js:6:1
		16 CREATE_OBJ closure.js:10:7 obj 6 kind 0
		17 FUNCTION_ENTER closure.js:6:1 ctx 4 parent 2 fn 0
		18 DECLARE closure.js:6:1 ctx 4 x = 6
		19 SUSPEND closure.js:7:13 ctx 4
		20 CREATE_FUN closure.js:10:16 obj 8 ctx 2 proto 0
		21 TOP_LEVEL_FLUSH closure.js:10:1
		22 SCRIPT_EXIT closure.js:1:1 ctx 2 how 0
		23 RESUME closure.js:7:13 ctx 4
		24 DECLARE closure.js:7:9 ctx 4 r = 6
		25 CREATE_OBJ closure.js:8:10 obj 9 kind 1
		26 PUTFIELD closure.js:8:10 9.[0] = 6
		27 RETURN closure.js:8:3 ctx 4 value 9
		28 FUNCTION_EXIT closure.js:6:1 ctx 4 how 0
		29 FUNCTION_ENTER closure.js:10:16 ctx 5 parent 2 fn 0
		30 DECLARE closure.js:10:16 ctx 5 v = 9
		31 FUNCTION_ENTER closure.js:3:10 ctx 6 parent 3 fn 0
		32 RETURN closure.js:3:10 ctx 6 value 4
		33 FUNCTION_EXIT closure.js:3:10 ctx 6 how 0
		34 FUNCTION_EXIT closure.js:10:16 ctx 5 how 0
		34 IDLE
		34 LAST_USE obj 2 at 6 closure.js:5:13
		34 LAST_USE obj 3 at 15 closure.js:10:1
		34 LAST_USE obj 7 at 19 closure.js:10:1
		34 LAST_USE obj 5 at 30 closure.js:10:25
		34 END_LAST_USE 34
		34 EXIT code 0 how 0 ""
		34 END code 0 signal 0 flags 0`)
}

// TestPositions: columns count UTF-16 code units as V8 does (an emoji is
// two), a tab is one column, lines are the original file's after a #!
// line and after code inserted on earlier lines, in the trace and in the
// program's own stack traces.
func TestPositions(t *testing.T) {
	evs, out, _ := traceOf(t, Options{}, "pos.mjs", "#!/usr/bin/env node\n"+
		"const s = \"\u00e9\U0001F600\"; const o = { a: 1 };\n"+
		"\tconst arr = [\n"+
		"  {}]; console.log(s.length, new Error().stack.split('\\n')[1].replace(/.*pos.mjs:/, ''));\n")
	var creates []string
	for _, e := range evs {
		if strings.Contains(e, "CREATE_OBJ") {
			creates = append(creates, e[strings.Index(e, "pos.mjs"):])
		}
	}
	want := []string{"pos.mjs:2:28 obj 2 kind 0", "pos.mjs:4:3 obj 3 kind 0", "pos.mjs:3:14 obj 4 kind 1", "pos.mjs:4:30 obj 6 kind 2", "pos.mjs:4:71 obj 8 kind 3"}
	if strings.Join(creates, "\n") != strings.Join(want, "\n") {
		t.Errorf("allocations:\n%s\nwant\n%s", strings.Join(creates, "\n"), strings.Join(want, "\n"))
	}
	// The program's own stack trace gives the original line and column.
	if out != "3 4:30\n" {
		t.Errorf("program printed %q, want the string's length 3 and line 4, column 30", out)
	}
}

// TestES2022OutputUnchanged runs testdata/es2022 (classes with private
// fields and static blocks, destructuring, spread, optional chaining,
// logical assignment, generators, async generators, for await, top-level
// await, labels, eval, Map/Set and array mutators) with and without
// instrumentation: the output must be byte for byte the same, and every
// instrumented file must pass node --check.
func TestES2022OutputUnchanged(t *testing.T) {
	needNode(t)
	for _, name := range []string{"features.mjs", "plain.cjs"} {
		t.Run(name, func(t *testing.T) {
			path, _ := filepath.Abs(filepath.Join("testdata", "es2022", name))
			plain := exec.Command("node", path)
			want, err := plain.Output()
			if err != nil {
				t.Fatalf("node %s: %v", name, err)
			}
			var stdout, trace bytes.Buffer
			res, err := Run(context.Background(), []string{"node", path}, Options{Stdout: &stdout, Stderr: os.Stderr}, &trace)
			if err != nil || res.ExitCode != 0 || res.Flags != 0 {
				t.Fatalf("traced: %v %+v", err, res)
			}
			if stdout.String() != string(want) {
				t.Errorf("output changed under instrumentation:\n%s\nwant:\n%s", stdout.String(), want)
			}
			evs := decode(t, trace.Bytes(), filepath.Dir(path))
			if n := len(evs); n < 100 {
				t.Errorf("only %d records", n)
			}
		})
	}
	// node --check on what the instrumenter makes of each file.
	dir := t.TempDir()
	if err := unpack(dir); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/es2022/*")
	for _, f := range files {
		kind := "cjs"
		if strings.HasSuffix(f, ".mjs") {
			kind = "esm"
		}
		out := filepath.Join(dir, "out-"+filepath.Base(f))
		script := fmt.Sprintf(`import { instrument } from %q; import fs from 'node:fs';
fs.writeFileSync(%q, instrument(fs.readFileSync(%q, 'utf8'), %q, %q));`,
			filepath.Join(dir, "js", "instrument.mjs"), out, f, f, kind)
		if b, err := exec.Command("node", "--input-type=module", "-e", script).CombinedOutput(); err != nil {
			t.Fatalf("instrumenting %s: %v\n%s", f, err, b)
		}
		if b, err := exec.Command("node", "--check", out).CombinedOutput(); err != nil {
			t.Errorf("node --check on instrumented %s: %v\n%s", f, err, b)
		}
	}
}

// grep returns the event lines containing all of parts.
func grep(evs []string, parts ...string) []string {
	var out []string
next:
	for _, e := range evs {
		for _, p := range parts {
			if !strings.Contains(e, p) {
				continue next
			}
		}
		out = append(out, e)
	}
	return out
}

// TestEndings: however the program ends, the trace ends with an END
// record that says how, after what the program did, and what the trace
// could not see is recorded (UNSEEN).
func TestEndings(t *testing.T) {
	for _, c := range []struct {
		name    string
		files   []string
		include []string
		code    int
		signal  int
		flags   uint64
		want    [][]string // each a set of parts one event line must contain
		none    []string   // parts no event line may contain
	}{
		{name: "throws", files: []string{"a.js", "const a = {};\nthrow new Error('bad');\n"}, code: 1,
			want: [][]string{{"CREATE_OBJ a.js:1:11"}, {`EXIT code 1 how 2 "Error: bad"`}, {"END code 1 signal 0 flags 0"}}},
		{name: "process.exit", files: []string{"a.js", "const a = [{}];\nprocess.exit(3);\n"}, code: 3,
			want: [][]string{{"PUTFIELD a.js:1:11"}, {`EXIT code 3 how 1 ""`}, {"END code 3 signal 0 flags 0"}}},
		{name: "unhandled rejection", files: []string{"a.mjs", "await null;\nPromise.reject(new Error('no'));\n"}, code: 1,
			want: [][]string{{`EXIT code 1 how 2 "Error: no"`}, {"END code 1"}}},
		{name: "killed", files: []string{"a.js", "let keep = [];\nfor (let i = 0; i < 20000; i++) keep.push({ i });\nprocess.kill(process.pid, 'SIGKILL');\n"},
			code: -1, signal: 9, flags: memtrace.EndNoExit,
			// The chunks written before the kill are there; the one
			// being filled is lost.
			want: [][]string{{"PUTFIELD a.js:2:"}, {"END code -1 signal 9 flags 2"}}, none: []string{"EXIT"}},
		{name: "worker", files: []string{"a.js", "const { Worker } = require('worker_threads');\nnew Worker('1 + 1', { eval: true }).on('exit', () => console.log('done'));\n"},
			want: [][]string{{"UNSEEN", "what 2", "worker thread"}, {"EXIT code 0 how 0"}}},
		{name: "eval", files: []string{"a.js", "const f = new Function('return {}');\nconsole.log(eval('f()'));\n"},
			want: [][]string{{"UNSEEN a.js:1:11 what 1"}, {"UNSEEN a.js:2:13 what 1"}}},
		{name: "child process", files: []string{"a.js", "require('child_process').spawn(process.execPath, ['-e', 'console.log(1)'], { stdio: 'inherit' });\n"},
			want: [][]string{{"UNSEEN", "what 5", "-e console.log"}, {"EXIT code 0"}}},
		{name: "node_modules left out", files: []string{"a.js", "console.log(require('lib').made());\n", "node_modules/lib/index.js", "exports.made = () => ({ x: {} });\n"},
			want: [][]string{{"UNSEEN", "what 3", "node_modules/lib/index.js"}}, none: []string{"SCRIPT node_modules"}},
		{name: "node_modules included", files: []string{"a.js", "console.log(require('lib').made());\n", "node_modules/lib/index.js", "exports.made = () => ({ x: {} });\n"},
			include: []string{"**/node_modules/lib/**"},
			want:    [][]string{{"SCRIPT node_modules/lib/index.js"}, {"CREATE_OBJ node_modules/lib/index.js:1:28 obj 6 kind 0"}, {"PUTFIELD node_modules/lib/index.js:1:23 7.x = 6"}}, none: []string{"UNSEEN"}},
		{name: "ES module left out", files: []string{"a.mjs", "import { made } from 'lib';\nconsole.log(made());\n", "node_modules/lib/package.json", `{"type":"module","exports":"./m.js"}`, "node_modules/lib/m.js", "export const made = () => [];\n"},
			want: [][]string{{"UNSEEN", "what 3", "node_modules/lib/m.js"}, {"SCRIPT a.mjs"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			evs, _, res := traceOf(t, Options{Include: c.include}, c.files...)
			if res.ExitCode != c.code || res.Signal != c.signal || res.Flags != c.flags {
				t.Errorf("result %+v, want exit %d signal %d flags %d", res, c.code, c.signal, c.flags)
			}
			for _, w := range c.want {
				if len(grep(evs, w...)) == 0 {
					t.Errorf("no event with %q in:\n%s", w, strings.Join(evs, "\n"))
				}
			}
			for _, n := range c.none {
				if len(grep(evs, n)) != 0 {
					t.Errorf("an event with %q in:\n%s", n, strings.Join(evs, "\n"))
				}
			}
		})
	}
}

// TestNativeModels: what native code stores is reported (docs/trace.md,
// "Native models"): a Map filled by its constructor and by set, a Set,
// array mutators, Object.assign and Object.defineProperty.
func TestNativeModels(t *testing.T) {
	evs, out, _ := traceOf(t, Options{}, "n.js", `const a = {}, b = {};
const m = new Map([['k', a]]); m.set(b, a); m.delete('k'); m.clear();
const s = new Set([a]); s.add(b); s.delete(a);
const arr = []; arr.push(a, b); arr.pop(); arr.unshift(b);
const t = Object.assign({}, { x: a }); Object.defineProperty(t, 'y', { value: b });
console.log(m.size, s.size, arr.length, t.x === a, t.y === b);
`)
	if out != "0 1 2 true true\n" {
		t.Errorf("program printed %q", out)
	}
	var got []string
	for _, e := range evs {
		if strings.Contains(e, "COLL_") || strings.Contains(e, "PUTFIELD") {
			got = append(got, e[strings.IndexByte(e, ' ')+1:])
		}
	}
	// The literals' own elements come first (the array [['k', a]] and
	// its pair); each native call is at the place of its receiver.
	sameEvents(t, got, `
		PUTFIELD n.js:2:20 4.[1] = 2
		PUTFIELD n.js:2:19 5.[0] = 4
		COLL_SET n.js:2:11 6 "k" = 2
		COLL_SET n.js:2:32 6 @3 = 2
		COLL_DELETE n.js:2:45 6 "k"
		COLL_CLEAR n.js:2:60 6
		PUTFIELD n.js:3:19 7.[0] = 2
		COLL_SET n.js:3:11 8 @2 = 2
		COLL_SET n.js:3:25 8 @3 = 3
		COLL_DELETE n.js:3:35 8 @2
		PUTFIELD n.js:4:17 9.[0] = 2
		PUTFIELD n.js:4:17 9.[1] = 3
		PUTFIELD n.js:4:33 9.[1] = 0
		PUTFIELD n.js:4:44 9.[0] = 3
		PUTFIELD n.js:4:44 9.[1] = 2
		PUTFIELD n.js:5:29 12.x = 2
		PUTFIELD n.js:5:11 11.x = 2
		PUTFIELD n.js:5:70 13.value = 3
		PUTFIELD n.js:5:40 11.y = 3`)
}

// TestHolders: event emitters hold the listeners the program made, and
// timers their callbacks, as the trace models them (docs/trace.md,
// "Native models"): a listener is a property on('NAME') of its emitter (a
// second one held at once on('NAME')#1) until it is removed or, for once,
// has run; process is held by globalThis; a timer's callback is a
// property of globalThis until it has run or is cleared; a bound function
// is made where bind is called and holds its target and arguments. The
// program sees its emitters, timers and bound functions as without the
// trace.
func TestHolders(t *testing.T) {
	evs, out, _ := traceOf(t, Options{}, "h.js", `const { EventEmitter } = require('events');
const e = new EventEmitter(), a = () => 1, b = () => 2;
e.on('x', a); e.on('x', b); e.once('y', a); e.off('x', a); e.emit('y'); e.on('x', a); e.removeAllListeners('x');
process.on('warning', b);
const t = setTimeout(a, 1); const i = setInterval(b, 1); clearInterval(i);
setImmediate(() => console.log(e.listenerCount('x'), e.listenerCount('y'), typeof t.ref, process.listenerCount('warning'), setTimeout.name, bound.name));
const bound = a.bind(null, e); e.on('z', bound);
`)
	if out != "0 0 function 2 setTimeout bound a\n" { // Node has a warning listener of its own
		t.Errorf("program printed %q", out)
	}
	var got []string
	released := map[string]bool{}
	for _, e := range evs {
		if !strings.Contains(e, "PUTFIELD") {
			continue
		}
		// A one-shot timer is released at the idle point after it ran, in
		// an order that depends on which of the two has run by then.
		if r := "1.setImmediate()#0 = 0"; strings.HasSuffix(e, r) {
			released[r] = !released[r]
			continue
		}
		if r := "1.setTimeout()#0 = 0"; strings.HasSuffix(e, r) {
			released[r] = !released[r]
			continue
		}
		got = append(got, e[strings.IndexByte(e, ' ')+1:])
	}
	if len(released) != 2 || !released["1.setImmediate()#0 = 0"] || !released["1.setTimeout()#0 = 0"] {
		t.Errorf("the timeout and the immediate released %d times, want once each:\n%s", len(released), strings.Join(evs, "\n"))
	}
	sameEvents(t, got, `
		PUTFIELD h.js:3:1 4.on('x') = 5
		PUTFIELD h.js:3:15 4.on('x')#1 = 6
		PUTFIELD h.js:3:29 4.on('y') = 5
		PUTFIELD h.js:3:45 4.on('x') = 0
		PUTFIELD h.js:3:60 4.on('y') = 0
		PUTFIELD h.js:3:73 4.on('x') = 5
		PUTFIELD h.js:3:87 4.on('x') = 0
		PUTFIELD h.js:3:87 4.on('x')#1 = 0
		PUTFIELD 1.process = 7
		PUTFIELD h.js:4:1 7.on('warning') = 6
		PUTFIELD h.js:5:11 1.setTimeout()#0 = 5
		PUTFIELD h.js:5:39 1.setInterval()#0 = 6
		PUTFIELD h.js:5:58 1.setInterval()#0 = 0
		PUTFIELD h.js:6:1 1.setImmediate()#0 = 14
		PUTFIELD h.js:7:15 15.[[BoundTargetFunction]] = 5
		PUTFIELD h.js:7:15 15.[[BoundArguments]][0] = 4
		PUTFIELD h.js:7:32 4.on('z') = 15`)
	if len(grep(evs, "CREATE_OBJ h.js:7:15 obj 15 kind 2")) != 1 {
		t.Errorf("no allocation of the bound function at the bind:\n%s", strings.Join(evs, "\n"))
	}
}

// TestCancel: cancelling Run interrupts the program (SIGINT, as Ctrl-C);
// the runtime records the signal and ends the trace with it, and the
// program dies of it as it would untraced.
func TestCancel(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	app := filepath.Join(dir, "forever.js")
	if err := os.WriteFile(app, []byte("const kept = [];\nsetInterval(() => kept.push({}), 1);\nconsole.log('ready');\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 6)
		io.ReadFull(pr, b) // "ready\n"
		cancel()
		io.Copy(io.Discard, pr)
	}()
	var trace bytes.Buffer
	res, err := Run(ctx, []string{"node", app}, Options{Stdout: pw, Stderr: io.Discard}, &trace)
	pw.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if res.Signal != int(syscall.SIGINT) || res.Flags != 0 || res.Exit == nil || res.Exit.How != memtrace.ExitSignal || res.Exit.Detail != "SIGINT" ||
		len(res.Received) != 1 || res.Received[0] != "SIGINT" {
		t.Errorf("result %+v (exit %+v), want ended by SIGINT with the EXIT record saying so", res, res.Exit)
	}
	evs := decode(t, trace.Bytes(), dir)
	if len(grep(evs, "SIGNAL SIGINT")) != 1 || len(grep(evs, `EXIT code -1 how 3 "SIGINT"`)) != 1 || !strings.Contains(evs[len(evs)-1], "END code -1 signal 2 flags 0") {
		t.Errorf("trace:\n%s", strings.Join(evs, "\n"))
	}
}

// TestBigSource: a file over HEAPX_TRACE_MAX_SOURCE runs uninstrumented,
// CommonJS or ES module, its output unchanged, and the trace names it
// (UNSEEN what 3, with its size); a smaller one beside it is traced.
func TestBigSource(t *testing.T) {
	t.Setenv("HEAPX_TRACE_MAX_SOURCE", "2000")
	big := "exports.make = () => ({ v: {} });\n" + strings.Repeat("// padding of a large bundle\n", 100)
	evs, out, res := traceOf(t, Options{}, "a.js", "const m = require('./big.js');\nimport('./big.mjs').then((e) => console.log(m.make().v, e.made()));\n",
		"big.js", big, "big.mjs", strings.Replace(big, "exports.make =", "export const made =", 1))
	if res.ExitCode != 0 || out != "{} { v: {} }\n" {
		t.Errorf("exit %d, printed %q", res.ExitCode, out)
	}
	for _, f := range []string{"big.js", "big.mjs"} {
		if len(grep(evs, "UNSEEN", "what 3", f+": 0.0 MB is over the 0.0 MB heapx instruments")) != 1 {
			t.Errorf("no UNSEEN for %s in:\n%s", f, strings.Join(evs, "\n"))
		}
		if len(grep(evs, "SCRIPT "+f)) != 0 {
			t.Errorf("%s was instrumented", f)
		}
	}
	if len(grep(evs, "SCRIPT a.js")) != 1 {
		t.Errorf("a.js was not instrumented:\n%s", strings.Join(evs, "\n"))
	}
}
