package nodecore

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/coretest"
	"github.com/heapx/heapx/model"
)

func TestMain(m *testing.M) {
	code := m.Run()
	coretest.RemoveShared()
	os.Exit(code)
}

// openShared opens the shared known-state core of major.
func openShared(t *testing.T, major int) (*Process, *coretest.Core) {
	t.Helper()
	c := coretest.Shared(t, major)
	p, err := Open(c.Core, c.Binary)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, c
}

// mainStack is the stack of the process's main thread.
func mainStack(t *testing.T, stacks []model.Stack, pid int) *model.Stack {
	t.Helper()
	for i := range stacks {
		if stacks[i].Thread == uint64(pid) {
			if stacks[i].Name != "main" {
				t.Errorf("the thread of the process id is named %q, want main", stacks[i].Name)
			}
			return &stacks[i]
		}
	}
	t.Fatalf("no stack of the main thread %d among %d", pid, len(stacks))
	return nil
}

// values picks a frame's values of one role by name.
func values(f *model.Frame, role model.ValueRole) map[string]model.FrameValue {
	out := map[string]model.FrameValue{}
	for _, v := range f.Values {
		if v.Role == role {
			out[v.Name] = v
		}
	}
	return out
}

// TestStacksKnownState walks the main thread of core-state.js's core:
// block, then descend DEPTH times with the arguments the program passed
// (a small integer, a string, a heap number), then main; each with its
// function name, script and the line the function starts on, and
// descend's closure variable SECRET. Under every major of the run.
func TestStacksKnownState(t *testing.T) {
	for _, major := range coretest.Majors(t) {
		t.Run("node"+coretest.Pinned[major], func(t *testing.T) {
			p, c := openShared(t, major)
			stacks, err := p.Stacks()
			if err != nil {
				t.Fatal(err)
			}
			if len(stacks) != len(p.Threads) {
				t.Errorf("%d stacks for %d threads", len(stacks), len(p.Threads))
			}
			want := c.Expect.Stack
			s := mainStack(t, stacks, c.PID)
			var js []*model.Frame
			for i := range s.Frames {
				if f := &s.Frames[i]; f.Kind == model.FrameJS {
					js = append(js, f)
				}
			}
			depth := want.Recursion.Depth
			if len(js) < depth+2 {
				t.Fatalf("%d JavaScript frames on the main thread, want at least %d", len(js), depth+2)
			}
			check := func(f *model.Frame, fn string, line int) {
				t.Helper()
				if f.Function != fn || f.Script != want.ScriptPath || int(f.Line) != line || f.Column == 0 || f.FunctionNode == 0 || f.Type != "v8:JavaScriptFrame" {
					t.Errorf("frame %s %s:%d:%d (%s, function node 0x%x), want %s %s:%d", f.Function, f.Script, f.Line, f.Column, f.Type, f.FunctionNode, fn, want.ScriptPath, line)
				}
			}
			check(js[0], want.Block.Function, want.Block.Line)
			for i := 0; i < depth; i++ {
				f := js[1+i]
				check(f, want.Recursion.Function, want.Recursion.Line)
				args := values(f, model.RoleArgument)
				exp := want.Recursion.Args[i]
				n, label, weight := exp[0].(float64), exp[1].(string), exp[2].(float64)
				if a := args["0"]; !a.IsSmi || a.Smi != int64(n) || a.Text != strconv.Itoa(int(n)) {
					t.Errorf("descend frame %d: argument 0 is %+v, want the small integer %v", i, a, n)
				}
				if a := args["1"]; a.Text != strconv.Quote(label) || a.Node == 0 {
					t.Errorf("descend frame %d: argument 1 is %+v, want the string %q", i, a, label)
				}
				if a := args["2"]; a.Text != strconv.FormatFloat(weight, 'g', -1, 64) || a.Node == 0 {
					t.Errorf("descend frame %d: argument 2 is %+v, want the heap number %v", i, a, weight)
				}
				if r, ok := values(f, model.RoleReceiver)["this"]; !ok || r.Text != "undefined" {
					t.Errorf("descend frame %d: receiver %+v, want undefined", i, r)
				}
				closure := values(f, model.RoleClosure)
				for name, v := range want.Recursion.Closure {
					if closure[name].Text != strconv.Quote(v) {
						t.Errorf("descend frame %d: closure variable %s is %+v, want %q", i, name, closure[name], v)
					}
				}
			}
			check(js[1+depth], want.Caller.Function, want.Caller.Line)
			// Node's own function: where it starts, read from its source,
			// an external string in the binary. Its name is the one V8
			// inferred, which V8 12 and later no longer keep for Node's
			// snapshotted code (Error.stack finds it from the receiver).
			if in := want.Internal; in != nil {
				found := false
				for _, f := range js {
					if f.Script == in.Script && int(f.Line) == in.Line && int(f.Column) == in.Column {
						found = true
						if f.Function != in.Function && !(f.Function == "(anonymous)" && major >= 22) {
							t.Errorf("the frame at %s:%d:%d is %s, want %s", f.Script, f.Line, f.Column, f.Function, in.Function)
						}
					}
				}
				if !found {
					t.Errorf("no frame at %s:%d:%d (%s)", in.Script, in.Line, in.Column, in.Function)
				}
			} else {
				t.Log("core-state.js found no internal frame to expect")
			}
			// Below the JavaScript: V8's entry frame, then node's C++,
			// named by the binary's symbols.
			var entry, start bool
			for _, f := range s.Frames {
				entry = entry || f.Kind == model.FrameRuntime && f.Type == "v8:EntryFrame"
				start = start || f.Kind == model.FrameNative && f.Function == "node::Start(int, char**)"
			}
			if !entry || !start {
				t.Errorf("main thread: entry frame %v, native node::Start %v", entry, start)
			}
			// Every other thread is walked too: at least its innermost
			// frame, natively named.
			for _, o := range stacks {
				if len(o.Frames) == 0 {
					t.Errorf("thread %d has no frame", o.Thread)
				}
			}
		})
	}
}

// TestStackRoots: the frames' slots are offered as roots, each argument
// once, named by its function.
func TestStackRoots(t *testing.T) {
	p, c := openShared(t, coretest.Majors(t)[0])
	roots, err := StackRoots(p)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]int{}
	for _, r := range roots {
		if !p.Heap.IsHeapObject(r.Value) {
			t.Fatalf("root %+v is not a heap object", r)
		}
		labels[r.Name]++
		if r.Name == "descend: argument 1" {
			s, _, err := p.Heap.String(p.Heap.Untag(r.Value), -1)
			if err != nil || !strings.HasPrefix(s, "level-") {
				t.Errorf("descend's argument 1 root is %q (%v), want a level-<n> string", s, err)
			}
		}
	}
	depth := c.Expect.Stack.Recursion.Depth
	for _, l := range []string{"descend: argument 1", "descend: argument 2", "descend: function", "descend: context"} {
		if labels[l] != depth {
			t.Errorf("%d roots %q, want one per descend frame (%d)", labels[l], l, depth)
		}
	}
	if labels["block: argument 0"] != 1 {
		t.Errorf("%d roots for block's argument, want 1", labels["block: argument 0"])
	}
}

// TestStacksDamagedRegisters walks the known-state core with a thread's
// registers made wrong, as a truncated or damaged core has them: no
// panic, a stack with a reason it stopped, or the chain found again.
func TestStacksDamagedRegisters(t *testing.T) {
	p, c := openShared(t, coretest.Majors(t)[0])
	orig := append([]Thread(nil), p.Threads...)
	defer func() { p.Threads = orig }()
	var main Thread
	for _, th := range orig {
		if int(th.TID) == c.PID {
			main = th
		}
	}
	cases := map[string]struct {
		set  func(*Thread)
		stop string // part of the stop reason, "" for a full walk
		js   bool   // the JavaScript frames are still found
	}{
		"rsp unmapped":    {func(t *Thread) { t.Regs[RegRSP] = 0x10 }, "stack pointer 0x10 is not in the core's memory", false},
		"rbp zero":        {func(t *Thread) { t.Regs[RegRBP] = 0 }, "", true},
		"rbp unaligned":   {func(t *Thread) { t.Regs[RegRBP]++ }, "", true},
		"rbp below rsp":   {func(t *Thread) { t.Regs[RegRBP] = t.RSP() - 64 }, "", true},
		"rip zero":        {func(t *Thread) { t.Regs[RegRIP] = 0 }, "", true},
		"rsp at the top":  {func(t *Thread) { t.Regs[RegRSP] = p.Segment(t.RSP()).End() - 8; t.Regs[RegRBP] = 0 }, "no frame chain was found", false},
		"rbp at the top":  {func(t *Thread) { t.Regs[RegRBP] = p.Segment(t.RSP()).End() - 8 }, "", false},
		"all ones":        {func(t *Thread) { t.Regs[RegRBP], t.Regs[RegRSP], t.Regs[RegRIP] = ^uint64(0), ^uint64(0), ^uint64(0) }, "not in the core's memory", false},
		"rbp is rsp+8":    {func(t *Thread) { t.Regs[RegRBP] = t.RSP() + 8 }, "", false},
		"rsp in the heap": {func(t *Thread) { t.Regs[RegRSP] = p.Heap.Untag(main.RBP()) }, "", false},
	}
	for name, cs := range cases {
		t.Run(name, func(t *testing.T) {
			th := main
			cs.set(&th)
			p.Threads = []Thread{th}
			stacks, err := p.Stacks()
			if err != nil {
				t.Fatal(err)
			}
			s := stacks[0]
			if len(s.Frames) == 0 {
				t.Fatal("no frame at all; the innermost (rip) is always listed")
			}
			if cs.stop != "" && !strings.Contains(s.Stop, cs.stop) {
				t.Errorf("stop %q, want it to say %q", s.Stop, cs.stop)
			}
			if cs.js {
				found := false
				for _, f := range s.Frames {
					found = found || f.Function == c.Expect.Stack.Recursion.Function
				}
				if !found {
					t.Errorf("the recursion's frames were not found again (%d frames, stop %q)", len(s.Frames), s.Stop)
				}
			}
			if _, err := StackRoots(p); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestStacksNoJavaScript cores a node process idle in its event loop:
// no thread runs JavaScript, and the walk says so with native frames
// only.
func TestStacksNoJavaScript(t *testing.T) {
	script := filepath.Join(t.TempDir(), "idle.js")
	src := `process.stdout.write(JSON.stringify({ready: true}) + "\n"); setInterval(() => {}, 1e6);`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	c := coretest.MakeOf(t, coretest.Majors(t)[0], script)
	p, err := Open(c.Core, c.Binary)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stacks, err := p.Stacks()
	if err != nil {
		t.Fatal(err)
	}
	s := mainStack(t, stacks, c.PID)
	native := 0
	for _, st := range stacks {
		for _, f := range st.Frames {
			if f.Kind == model.FrameJS {
				t.Errorf("thread %d has a JavaScript frame %s at an idle point", st.Thread, f.Function)
			}
		}
	}
	for _, f := range s.Frames {
		if f.Kind == model.FrameNative && f.Function != "" {
			native++
		}
	}
	if native < 3 {
		t.Errorf("the idle main thread has %d named native frames, want the event loop's (uv_run, node::Start...)", native)
	}
}
