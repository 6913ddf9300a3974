package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/heapx/heapx/humanize"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/query"
)

// closureShown is how many closure variables a frame lists unless
// WriteStacks is asked for all.
const closureShown = 6

// WriteStacks prints stacks as heapx stack does: a thread a block (its
// runtime's heading, its frames by kind), a frame a line with its values
// indented under it (a JavaScript frame's receiver, arguments and closure,
// a Java frame's objects with their sizes). A frame lists at most 6 closure
// variables unless all is set. The text is for a terminal: the JSON form
// of stacks is WriteJSON's.
func WriteStacks(w io.Writer, s *query.ThreadsJSON, all bool) error {
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

// orUnknown names a thread object whose class is not known.
func orUnknown(class string) string {
	if class == "" {
		return "(thread object)"
	}
	return class
}

// writeFrame prints one frame, as its kind is written: Java's as a Java
// stack trace's line, JavaScript's with its script position and values,
// V8's own by type, native ones by symbol and pc.
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
