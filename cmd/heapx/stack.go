package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/analysis/inspect"
	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/formats/hprof"
	"github.com/heapx/heapx/formats/nodecore"
	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
	"github.com/heapx/heapx/render"
)

func newStackCmd(stderr *os.File) *cobra.Command {
	var asJSON, all bool
	c := &cobra.Command{
		Use:   "stack FILE",
		Short: "Print every thread's stack: a Java heap dump's frames with the objects their locals hold, a Node.js core's JavaScript frames",
		Long: `Print every thread's call stack, innermost frame first, in the dump's
order (heapx threads shows the same threads, the ones keeping the most
alive first).

Java heap dumps (HPROF, from jcmd GC.heap_dump, jmap or
-XX:+HeapDumpOnOutOfMemoryError): each thread's name, state and
java.lang.Thread object with its retained size, then its frames (class,
method, file:line) with the objects each frame's locals hold (and its JNI
local references), with their retained sizes.

Node.js core dumps (x86-64 Linux, from gcore or a crash): JavaScript
frames with their function, script:line (where the function starts),
receiver, arguments and the variables their closure captures; V8's own
frames (entry, exit, internal) by type; native frames by the node
binary's symbol. The node executable the process ran comes from --binary
(heapx's flag for every command on a core), or from the path the core
names when that file is here; it must be the same build. Only the stacks
are read, not the heap, so this is quick on a big core.

FILE may also be an exchange file (.jsonl, .db) converted from either,
which keeps the stacks (without sizes: heapx threads has them).

By default a JavaScript frame lists at most 6 closure variables; --all
lists every one. With --json the stacks are printed as one JSON object
(docs/json.md).`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := readStacks(args[0], binaryPath, stderr)
			if err != nil {
				return err
			}
			if asJSON {
				return render.WriteJSON(cmd.OutOrStdout(), out)
			}
			return writeStacks(cmd.OutOrStdout(), out, all)
		},
	}
	c.Flags().BoolVar(&all, "all", false, "list every closure variable of a frame")
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	return c
}

// readStacks walks a core's threads, reads and analyses a Java heap dump
// for its threads with their sizes, or reads the stacks an exchange file
// carries.
func readStacks(path, binary string, stderr *os.File) (*query.ThreadsJSON, error) {
	f, _ := formats.Detect(path)
	if binary != "" && (f == nil || f.Name != nodecore.Name) {
		return nil, fmt.Errorf("--binary is for core dumps; %s is not an ELF core", path)
	}
	switch {
	case f != nil && f.Name == nodecore.Name:
		p, err := nodecore.Open(path, binary)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		stacks, err := p.Stacks()
		if err != nil {
			return nil, err
		}
		out := query.NewThreadsJSON(path, stacks)
		out.Binary, out.Runtime = p.Binary, p.RuntimeName()
		return out, nil
	case f != nil && f.Name == hprof.Name:
		d, a, err := loadAndAnalyze(path, stderr)
		if err != nil {
			return nil, err
		}
		if len(d.Graph().Stacks) == 0 {
			return nil, fmt.Errorf("%s has no stack traces (an HPROF dump from jcmd GC.heap_dump, jmap or a crash has them)", path)
		}
		return query.ThreadsJSONOf(path, a, inspect.ThreadStacks(a)), nil
	}
	d, err := load(path, stderr, hx.Options{Stored: hx.SkipStored, NodesOnly: true})
	if err != nil {
		return nil, err
	}
	g := d.Graph()
	if len(g.Stacks) == 0 {
		return nil, fmt.Errorf("%s has no stacks: only a core dump, a Java heap dump, or an exchange file converted from one, carries them", path)
	}
	out := query.NewThreadsJSON(path, g.Stacks)
	out.Runtime, _ = g.MetaValue("producer")
	out.Runtime = strings.TrimSuffix(out.Runtime, " core dump")
	return out, nil
}

// closureShown is how many closure variables a frame lists without --all.
const closureShown = 6

// writeStacks prints the stacks as text: a thread a block, a frame a line,
// its values indented under it.
func writeStacks(w io.Writer, s *query.ThreadsJSON, all bool) error {
	bw := bufio.NewWriter(w)
	if s.Runtime != "" {
		fmt.Fprintf(bw, "%s: %s", s.File, s.Runtime)
		if s.Binary != "" {
			fmt.Fprintf(bw, ", %s", s.Binary)
		}
		fmt.Fprintln(bw)
	}
	withJS, java := 0, false
	for _, t := range s.Threads {
		fmt.Fprintf(bw, "\nthread %d", t.Thread)
		if t.Name != "" {
			fmt.Fprintf(bw, " (%s)", t.Name)
		}
		js, jv := 0, 0
		for _, f := range t.Frames {
			switch f.Kind {
			case model.FrameJS.String():
				js++
			case model.FrameJava.String():
				jv++
			}
		}
		switch {
		case jv > 0 || t.ID != 0:
			java = true
			writeJavaThread(bw, &t, jv)
		case js > 0:
			withJS++
			fmt.Fprintf(bw, ": %d JavaScript frames of %d\n", js, len(t.Frames))
		default:
			fmt.Fprintf(bw, ": no JavaScript frames (%d native)\n", len(t.Frames))
		}
		for _, f := range t.Frames {
			writeFrame(bw, &f, all)
		}
		if t.Stop != "" {
			fmt.Fprintf(bw, "      (the walk ended: %s)\n", t.Stop)
		}
	}
	if withJS == 0 && !java {
		fmt.Fprintf(bw, "\nNo thread was running JavaScript when the core was taken.\n")
	}
	return bw.Flush()
}

// writeJavaThread ends a Java thread's heading line: its state, frames,
// object and what it keeps alive.
func writeJavaThread(w io.Writer, t *query.ThreadJSON, frames int) {
	if t.State != "" {
		fmt.Fprintf(w, " %s", t.State)
	}
	fmt.Fprintf(w, ": %d Java frames", frames)
	if t.ID != 0 {
		fmt.Fprintf(w, "; %s @0x%x", orUnknown(t.Class), t.ID)
		if t.RetainedSize != nil {
			fmt.Fprintf(w, " retains %s", humanize.Size(*t.RetainedSize))
		}
	}
	if t.HeldSize != nil {
		fmt.Fprintf(w, "; with its frames %s", humanize.Size(*t.HeldSize))
	}
	fmt.Fprintln(w)
}

func orUnknown(class string) string {
	if class == "" {
		return "(thread object)"
	}
	return class
}

func writeFrame(w io.Writer, f *query.ThreadFrameJSON, all bool) {
	switch f.Kind {
	case model.FrameJava.String():
		mf := model.Frame{Type: f.Type, Script: f.Script, Line: f.Line}
		fmt.Fprintf(w, "  #%-3d %s(%s)\n", f.Index, f.Function, query.JavaLocation(&mf))
		writeHeld(w, f.Values)
	case model.FrameJS.String():
		loc := f.Script
		if f.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", f.Script, f.Line, f.Column)
		}
		if loc == "" {
			loc = "(no script)"
		}
		fmt.Fprintf(w, "  #%-3d %s  %s\n", f.Index, f.Function, loc)
		var args, closure []string
		receiver := ""
		for _, v := range f.Values {
			switch v.Role {
			case model.RoleReceiver.String():
				receiver = v.Text
			case model.RoleArgument.String():
				args = append(args, v.Text)
			case model.RoleClosure.String():
				closure = append(closure, v.Name+" = "+v.Text)
			}
		}
		fmt.Fprintf(w, "        this = %s; arguments (%d): %s\n", receiver, len(args), strings.Join(args, ", "))
		if len(closure) > 0 {
			more := ""
			if !all && len(closure) > closureShown {
				more = fmt.Sprintf(", … %d more (--all)", len(closure)-closureShown)
				closure = closure[:closureShown]
			}
			fmt.Fprintf(w, "        closure: %s%s\n", strings.Join(closure, ", "), more)
		}
	case model.FrameRuntime.String():
		fmt.Fprintf(w, "  #%-3d [%s]\n", f.Index, f.Type[strings.IndexByte(f.Type, ':')+1:])
		writeHeld(w, f.Values)
	default:
		name := f.Function
		if name == "" {
			name = "??"
		}
		fmt.Fprintf(w, "  #%-3d %s  (native, pc %s)\n", f.Index, name, f.PC)
	}
}

// writeHeld lists the objects a Java frame holds, with their sizes when
// known.
func writeHeld(w io.Writer, values []query.FrameValueJSON) {
	for _, v := range values {
		fmt.Fprintf(w, "        %s %s", v.Role, v.Text)
		if v.RetainedSize != nil {
			fmt.Fprintf(w, "  shallow %s, retained %s", humanize.Size(*v.ShallowSize), humanize.Size(*v.RetainedSize))
		}
		fmt.Fprintln(w)
	}
}
