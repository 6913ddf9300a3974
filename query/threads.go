package query

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
)

// The threads view: every thread's stack with what its frames hold (MAT's
// Thread Overview), from the stacks a dump carries (Java's HPROF, a
// Node.js core). Its JSON form is heapx stack --json's.

func init() {
	Register(&Query{
		Name: "threads", Group: GroupInspections, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show each thread's stack with the objects its frames hold and their retained sizes",
		Help: `Show the threads of a dump that records them (Eclipse MAT's Thread
Overview), the ones keeping the most alive first: each thread's object
with its retained size and what it keeps with its frames, then its
frames innermost first (class, method, file:line) with the objects each
frame holds and their retained sizes. Java (HPROF): the objects the
frames' local variables and operand stacks hold (Java frame roots) and
their JNI local references; a thread blocked in a method that holds a
big collection in a local shows here. Node.js core dumps: JavaScript
frames with their receiver, arguments and closure variables. V8 and
Firefox heap snapshots record no stacks. heapx stack prints the same
threads in the dump's order.`,
		Args: []Arg{limitArg(20)},
		Run:  withLimit(ThreadsResult),
	})
}

// ThreadsSchemaVersion is the version of the threads JSON object that
// heapx stack --json and heapx threads --json print.
const ThreadsSchemaVersion = 1

// ThreadsJSON is the `heapx stack --json` (and `heapx threads --json`)
// output, a contract: fields are added, never changed.
type ThreadsJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	// Binary and Runtime name the node executable read with a core and
	// the Node and V8 it is; Runtime is "Java VM" for HPROF ("" for an
	// exchange file without a producer).
	Binary  string       `json:"binary"`
	Runtime string       `json:"runtime"`
	Threads []ThreadJSON `json:"threads"`
}

// ThreadJSON is one thread of ThreadsJSON.
type ThreadJSON struct {
	Thread uint64 `json:"thread"`
	Name   string `json:"name"`
	Stop   string `json:"stop"`
	// ID is the thread object's id (Java's java.lang.Thread), 0 when
	// none; Class its class; State the thread's state as the runtime
	// names it (Java: RUNNABLE, WAITING, ...), "" when not known.
	ID    uint64 `json:"id"`
	Class string `json:"class"`
	State string `json:"state"`
	// The thread object's sizes, and HeldSize what it keeps alive with
	// its frames' objects (inspect.ThreadStack.Held); null when the
	// heap was not analysed (heapx stack on a core).
	ShallowSize  *uint64           `json:"shallow_size"`
	RetainedSize *uint64           `json:"retained_size"`
	HeldSize     *uint64           `json:"held_size"`
	Frames       []ThreadFrameJSON `json:"frames"`
}

// ThreadFrameJSON is one frame of a ThreadJSON.
type ThreadFrameJSON struct {
	Index      int              `json:"index"`
	Kind       string           `json:"kind"`
	Type       string           `json:"type"`
	Function   string           `json:"function"`
	Script     string           `json:"script"`
	Line       uint32           `json:"line"`
	Column     uint32           `json:"column"`
	PC         string           `json:"pc"`
	FP         string           `json:"fp"`
	FunctionID uint64           `json:"function_id"`
	Values     []FrameValueJSON `json:"values"`
	// Class and Method split a Java frame's Function ("" for other
	// kinds).
	Class  string `json:"class"`
	Method string `json:"method"`
}

// FrameValueJSON is one value of a ThreadFrameJSON.
type FrameValueJSON struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Text string `json:"text"`
	ID   uint64 `json:"id"`
	Smi  *int64 `json:"smi"`
	// Class is the object's class, "" when the value is no object of
	// the heap or the heap was not read; its sizes are null then.
	Class        string  `json:"class"`
	ShallowSize  *uint64 `json:"shallow_size"`
	RetainedSize *uint64 `json:"retained_size"`
}

// NewThreadsJSON lays out stacks read without their heap (a core's,
// walked alone): no classes, no sizes.
func NewThreadsJSON(file string, stacks []model.Stack) *ThreadsJSON {
	out := &ThreadsJSON{SchemaVersion: ThreadsSchemaVersion, File: file, Threads: []ThreadJSON{}}
	for i := range stacks {
		out.Threads = append(out.Threads, threadJSON(&stacks[i]))
	}
	return out
}

// ThreadsJSONOf lays out the threads of an analysed dump (from
// inspect.ThreadStacks, in the order given) with their classes and
// sizes.
func ThreadsJSONOf(file string, a *analysis.Analysis, ts []inspect.ThreadStack) *ThreadsJSON {
	g := a.Graph
	out := &ThreadsJSON{SchemaVersion: ThreadsSchemaVersion, File: file, Threads: []ThreadJSON{}}
	out.Runtime, _ = g.MetaValue("producer")
	out.Runtime = strings.TrimSuffix(out.Runtime, " core dump")
	out.Binary, _ = g.MetaValue("nodecore:binary")
	class := func(n model.NodeIndex) string {
		if a.Classes == nil {
			return g.NodeName(n)
		}
		return a.Classes.Name(n)
	}
	for i := range ts {
		t := &ts[i]
		tj := threadJSON(t.Stack)
		if t.Object != model.NoNode {
			tj.Class = class(t.Object)
		}
		tj.ShallowSize, tj.RetainedSize, tj.HeldSize = ptr(t.Shallow), ptr(t.Retained), ptr(t.Held)
		for fi := range tj.Frames {
			for vi := range tj.Frames[fi].Values {
				hv := t.Values[fi][vi]
				if hv.Node == model.NoNode {
					continue
				}
				v := &tj.Frames[fi].Values[vi]
				v.Class, v.ShallowSize, v.RetainedSize = class(hv.Node), ptr(hv.Shallow), ptr(hv.Retained)
			}
		}
		out.Threads = append(out.Threads, tj)
	}
	return out
}

func ptr(v uint64) *uint64 { return &v }

// threadJSON lays out one stack without sizes.
func threadJSON(s *model.Stack) ThreadJSON {
	t := ThreadJSON{Thread: s.Thread, Name: s.Name, Stop: s.Stop, ID: s.Object, State: s.State, Frames: []ThreadFrameJSON{}}
	for i, f := range s.Frames {
		fj := ThreadFrameJSON{Index: i, Kind: f.Kind.String(), Type: f.Type, Function: f.Function, Script: f.Script,
			Line: f.Line, Column: f.Column, PC: fmt.Sprintf("0x%x", f.PC), FP: fmt.Sprintf("0x%x", f.FP),
			FunctionID: f.FunctionNode, Values: []FrameValueJSON{}}
		if f.Kind == model.FrameJava {
			fj.Class, fj.Method = SplitJavaFunction(f.Function)
		}
		for _, v := range f.Values {
			vj := FrameValueJSON{Role: v.Role.String(), Name: v.Name, Text: v.Text, ID: v.Node}
			if v.IsSmi {
				smi := v.Smi
				vj.Smi = &smi
			}
			fj.Values = append(fj.Values, vj)
		}
		t.Frames = append(t.Frames, fj)
	}
	return t
}

// SplitJavaFunction splits a Java frame's function, "pkg.Class.method",
// into its class and method (method names have no dots).
func SplitJavaFunction(f string) (class, method string) {
	i := strings.LastIndexByte(f, '.')
	if i < 0 {
		return "", f
	}
	return f[:i], f[i+1:]
}

// JavaLocation is where a Java frame is, as Java's stack traces write it:
// "File.java:36", "Native Method", "Unknown Source".
func JavaLocation(f *model.Frame) string {
	switch {
	case f.Type == "hprof:native method":
		return "Native Method"
	case f.Script == "":
		return "Unknown Source"
	case f.Line > 0:
		return f.Script + ":" + strconv.FormatUint(uint64(f.Line), 10)
	}
	return f.Script
}

// noStacks is what the threads view says about a dump without stacks.
const noStacks = "This dump records no thread stacks: Java's HPROF dumps and Node.js core dumps do (and exchange files converted from them); V8 and Firefox heap snapshots do not."

// ThreadsResult lays out the threads of sn, at most limit (0 or less:
// all), the ones keeping the most alive first, as a tree: each thread,
// its frames, the objects each frame holds. Its JSON form is
// ThreadsJSONOf's, in the same order.
func ThreadsResult(sn Snapshot, limit int) (*Result, error) {
	a := sn.Analysis
	ts := inspect.ThreadStacks(a)
	if len(ts) == 0 {
		return &Result{Notes: []string{noStacks}, JSON: ThreadsJSONOf(sn.Path, a, nil)}, nil
	}
	slices.SortStableFunc(ts, func(x, y inspect.ThreadStack) int { return cmp.Compare(y.Held, x.Held) })
	shown := ts
	if limit > 0 && limit < len(ts) {
		shown = ts[:limit]
	}
	nm := analysis.NewNamer(a.Graph, a.DOM)
	tree := &Tree{Columns: []Column{{Key: "thread", Title: "Thread / frame / object", Kind: Text},
		{Key: "location", Title: "Location", Kind: Text}, colShallow, colRetained,
		{Key: "held_size", Title: "Held with its frames", Kind: Bytes}}}
	var held uint64
	for i := range shown {
		held += shown[i].Held
		tree.Roots = append(tree.Roots, threadNode(a, nm, &shown[i]))
	}
	which := fmt.Sprintf("The %s threads", humanize.Thousands(uint64(len(ts))))
	if len(shown) < len(ts) {
		which = fmt.Sprintf("The %s threads shown (of %s; -n 0 shows all)", humanize.Thousands(uint64(len(shown))), humanize.Thousands(uint64(len(ts))))
	}
	r := &Result{Sections: []*Section{{Heading: "Threads, keeping the most alive first", Tree: tree}},
		JSON: ThreadsJSONOf(sn.Path, a, shown)}
	r.Notes = []string{fmt.Sprintf("%s keep %s alive with their frames (%s of the heap); a thread's size counts its object and what its frames hold, each object once.",
		which, humanize.Size(held), humanize.Percent(held, a.TotalSize()))}
	return r, nil
}

// maxFrameValues bounds the values of a frame the tree shows: a frame
// holds a few, and a crafted dump must not make a page of millions.
const maxFrameValues = 100

// threadNode is one thread of the tree, its frames below it and their
// values below them.
func threadNode(a *analysis.Analysis, nm *analysis.Namer, t *inspect.ThreadStack) *TreeNode {
	s := t.Stack
	label := "thread " + strconv.FormatUint(s.Thread, 10)
	if s.Name != "" {
		label += " " + strconv.Quote(s.Name)
	}
	if s.State != "" {
		label += " " + s.State
	}
	var shallow, retained any
	if t.Object != model.NoNode {
		label += ": " + objectName(a, nm, t.Object)
		shallow, retained = t.Shallow, t.Retained
	}
	n := &TreeNode{Values: []any{label, fmt.Sprintf("%d frames", len(s.Frames)), shallow, retained, t.Held}}
	for fi := range s.Frames {
		f := &s.Frames[fi]
		fn := &TreeNode{Values: []any{fmt.Sprintf("#%d %s", fi, frameLabel(f)), frameWhere(f), nil, nil, nil}}
		for vi, v := range f.Values {
			if vi == maxFrameValues {
				fn.Children = append(fn.Children, &TreeNode{Values: []any{fmt.Sprintf("… %s more (heapx stack lists every one)",
					humanize.Thousands(uint64(len(f.Values)-vi))), "", nil, nil, nil}})
				break
			}
			hv := t.Values[fi][vi]
			text := v.Text
			var sh, rt any
			if hv.Node != model.NoNode {
				text = heldName(a, nm, hv.Node)
				sh, rt = hv.Shallow, hv.Retained
			}
			role := v.Role.String()
			if v.Name != "" {
				role += " " + v.Name
			}
			fn.Children = append(fn.Children, &TreeNode{Values: []any{role + ": " + text, "", sh, rt, nil}})
		}
		n.Children = append(n.Children, fn)
	}
	return n
}

// heldName is an object a frame holds as the tree names it: a string
// quoted after its class, so that a local "GET" does not read as a class
// GET; any other object as everywhere.
func heldName(a *analysis.Analysis, nm *analysis.Namer, n model.NodeIndex) string {
	g := a.Graph
	if !g.NodeType(n).Category.IsString() || a.Classes == nil {
		return objectName(a, nm, n)
	}
	return a.Classes.Name(n) + " " + strconv.Quote(Shorten(nm.Name(n), MaxNameWidth)) + " " + IDText(g, g.NodeID(n))
}

// frameLabel is a frame's function as the threads view names it.
func frameLabel(f *model.Frame) string {
	switch {
	case f.Function != "":
		return f.Function
	case f.Type != "":
		return "[" + f.Type[strings.IndexByte(f.Type, ':')+1:] + "]"
	}
	return "??"
}

// frameWhere is a frame's location: file:line for Java, script:line:
// column for JavaScript.
func frameWhere(f *model.Frame) string {
	switch f.Kind {
	case model.FrameJava:
		return JavaLocation(f)
	case model.FrameJS:
		if f.Line > 0 {
			return fmt.Sprintf("%s:%d:%d", f.Script, f.Line, f.Column)
		}
		return f.Script
	case model.FrameNative:
		if f.PC != 0 {
			return fmt.Sprintf("pc 0x%x", f.PC)
		}
	}
	return ""
}
