package coretest

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMake makes a core of the known-state program under each major of the
// run and checks what the tests built on it rely on: an x86-64 ELF core of
// the process, the program's expectations parsed, the snapshot written,
// and the core deleted when the test ends.
func TestMake(t *testing.T) {
	for _, major := range Majors(t) {
		var corePath string
		t.Run("node"+Pinned[major], func(t *testing.T) {
			c := Make(t, major)
			corePath = c.Core
			f, err := elf.Open(c.Core)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Type != elf.ET_CORE || f.Machine != elf.EM_X86_64 {
				t.Fatalf("%s: type %v machine %v, want an x86-64 core", c.Core, f.Type, f.Machine)
			}
			if !strings.HasSuffix(filepath.Base(c.Core), "."+strconv.Itoa(c.PID)) {
				t.Errorf("core %s is not named after pid %d", c.Core, c.PID)
			}
			e := c.Expect
			if e.Node != "v"+Pinned[major] || e.Tickets.Count != 1000 || e.Tickets.Class != "Ticket" {
				t.Errorf("expectations: node %q, %d %q", e.Node, e.Tickets.Count, e.Tickets.Class)
			}
			if e.Stack.Recursion.Depth != 7 || len(e.Stack.Recursion.Args) != 7 ||
				e.Stack.Recursion.Args[3][1] != "level-3" || e.Stack.Recursion.Args[3][2] != 3.5 {
				t.Errorf("recursion: %+v", e.Stack.Recursion)
			}
			if e.Stack.Recursion.Line == 0 || e.Stack.Block.Line == 0 || e.Stack.Caller.Line == 0 {
				t.Errorf("lines not found: %+v", e.Stack)
			}
			if e.Strings.Thin != "thin-target-string" || e.Strings.ExternalLength < 1000 {
				t.Errorf("strings: %+v", e.Strings)
			}
			if st, err := os.Stat(c.Snapshot); err != nil || st.Size() < 1<<20 {
				t.Errorf("snapshot %s: %v", c.Snapshot, err)
			}
		})
		if corePath != "" {
			if _, err := os.Stat(corePath); !os.IsNotExist(err) {
				t.Errorf("%s is still there after the test: %v", corePath, err)
			}
		}
	}
}
