package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/nodecore"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/render"
)

// stackSchemaVersion is the version of the `heapx stack --json` object.
const stackSchemaVersion = 1

// stackJSON is the `heapx stack --json` output, a contract (docs/json.md).
type stackJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	// Binary and Runtime name the node executable read with a core and
	// the Node and V8 it is ("" for an exchange file).
	Binary  string       `json:"binary"`
	Runtime string       `json:"runtime"`
	Threads []threadJSON `json:"threads"`
}

type threadJSON struct {
	Thread uint64      `json:"thread"`
	Name   string      `json:"name"`
	Stop   string      `json:"stop"`
	Frames []frameJSON `json:"frames"`
}

type frameJSON struct {
	Index      int         `json:"index"`
	Kind       string      `json:"kind"`
	Type       string      `json:"type"`
	Function   string      `json:"function"`
	Script     string      `json:"script"`
	Line       uint32      `json:"line"`
	Column     uint32      `json:"column"`
	PC         string      `json:"pc"`
	FP         string      `json:"fp"`
	FunctionID uint64      `json:"function_id"`
	Values     []valueJSON `json:"values"`
}

type valueJSON struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Text string `json:"text"`
	ID   uint64 `json:"id"`
	Smi  *int64 `json:"smi"`
}

func newStackCmd(stderr *os.File) *cobra.Command {
	var asJSON, all bool
	c := &cobra.Command{
		Use:   "stack FILE",
		Short: "Print every thread's stack of a Node.js core dump: JavaScript frames with arguments and closures",
		Long: `Print every thread's call stack of a Node.js core dump (x86-64 Linux, from
gcore or a crash), innermost frame first: JavaScript frames with their
function, script:line (where the function starts), receiver, arguments
and the variables their closure captures; V8's own frames (entry, exit,
internal) by type; native frames by the node binary's symbol.

The node executable the process ran comes from --binary (heapx's flag for
every command on a core), or from the path the core names when that file
is here; it must be the same build. Only the stacks are read, not the
heap, so this is quick on a big core. FILE may
also be an exchange file (.jsonl, .db) converted from a core, which keeps
the stacks.

By default a frame lists at most 6 closure variables; --all lists every
one. With --json the stacks are printed as one JSON object (docs/json.md).`,
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

// readStacks walks a core's threads, or reads the stacks an exchange file
// carries.
func readStacks(path, binary string, stderr *os.File) (*stackJSON, error) {
	head := make([]byte, 4)
	if f, err := os.Open(path); err == nil {
		io.ReadFull(f, head)
		f.Close()
	}
	out := &stackJSON{SchemaVersion: stackSchemaVersion, File: path, Threads: []threadJSON{}}
	var stacks []model.Stack
	if bytes.Equal(head, []byte("\x7fELF")) {
		p, err := nodecore.Open(path, binary)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		if stacks, err = p.Stacks(); err != nil {
			return nil, err
		}
		out.Binary, out.Runtime = p.Binary, p.RuntimeName()
	} else {
		if binary != "" {
			return nil, fmt.Errorf("--binary is for core dumps; %s is not an ELF core", path)
		}
		d, err := load(path, stderr, hx.Options{Stored: hx.SkipStored, NodesOnly: true})
		if err != nil {
			return nil, err
		}
		stacks = d.Graph().Stacks
		if len(stacks) == 0 {
			return nil, fmt.Errorf("%s has no stacks: only a core dump, or an exchange file converted from one, carries them", path)
		}
	}
	for _, s := range stacks {
		t := threadJSON{Thread: s.Thread, Name: s.Name, Stop: s.Stop, Frames: []frameJSON{}}
		for i, f := range s.Frames {
			fj := frameJSON{Index: i, Kind: f.Kind.String(), Type: f.Type, Function: f.Function, Script: f.Script,
				Line: f.Line, Column: f.Column, PC: fmt.Sprintf("0x%x", f.PC), FP: fmt.Sprintf("0x%x", f.FP),
				FunctionID: f.FunctionNode, Values: []valueJSON{}}
			for _, v := range f.Values {
				vj := valueJSON{Role: v.Role.String(), Name: v.Name, Text: v.Text, ID: v.Node}
				if v.IsSmi {
					smi := v.Smi
					vj.Smi = &smi
				}
				fj.Values = append(fj.Values, vj)
			}
			t.Frames = append(t.Frames, fj)
		}
		out.Threads = append(out.Threads, t)
	}
	return out, nil
}

// closureShown is how many closure variables a frame lists without --all.
const closureShown = 6

// writeStacks prints the stacks as text: a thread a block, a frame a line,
// its values indented under it.
func writeStacks(w io.Writer, s *stackJSON, all bool) error {
	bw := bufio.NewWriter(w)
	if s.Runtime != "" {
		fmt.Fprintf(bw, "%s: %s, %s\n", s.File, s.Runtime, s.Binary)
	}
	withJS := 0
	for _, t := range s.Threads {
		fmt.Fprintf(bw, "\nthread %d", t.Thread)
		if t.Name != "" {
			fmt.Fprintf(bw, " (%s)", t.Name)
		}
		js := 0
		for _, f := range t.Frames {
			if f.Kind == model.FrameJS.String() {
				js++
			}
		}
		if js > 0 {
			withJS++
			fmt.Fprintf(bw, ": %d JavaScript frames of %d\n", js, len(t.Frames))
		} else {
			fmt.Fprintf(bw, ": no JavaScript frames (%d native)\n", len(t.Frames))
		}
		for _, f := range t.Frames {
			writeFrame(bw, &f, all)
		}
		if t.Stop != "" {
			fmt.Fprintf(bw, "      (the walk ended: %s)\n", t.Stop)
		}
	}
	if withJS == 0 {
		fmt.Fprintf(bw, "\nNo thread was running JavaScript when the core was taken.\n")
	}
	return bw.Flush()
}

func writeFrame(w io.Writer, f *frameJSON, all bool) {
	switch f.Kind {
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
		fmt.Fprintf(w, "  #%-3d [%s]\n", f.Index, strings.TrimPrefix(f.Type, "v8:"))
	default:
		name := f.Function
		if name == "" {
			name = "??"
		}
		fmt.Fprintf(w, "  #%-3d %s  (native, pc %s)\n", f.Index, name, f.PC)
	}
}
