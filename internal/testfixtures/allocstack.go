package testfixtures

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// StackFrame is one frame of an allocation stack, as heapx writes it
// (query.FrameJSON).
type StackFrame struct {
	Function string `json:"function"`
	Script   string `json:"script"`
	Line     int32  `json:"line"`
	Column   int32  `json:"column"`
}

// AllocationStack is DevTools' Allocation stack pane of one object.
type AllocationStack struct {
	Class string       `json:"class"`
	ID    uint64       `json:"id"`
	Stack []StackFrame `json:"stack"`
}

// DevToolsAllocationStacks reads testdata/golden/NAME.devtools-allocation-stack.jsonl
// (testdata/gen/devtools-allocation.mjs stack) with the frames as heapx
// shows them: an unnamed function is "(anonymous)", and V8's synthetic
// "(root)" frame, which DevTools lists last, is left out.
func DevToolsAllocationStacks(t testing.TB, name string) []AllocationStack {
	t.Helper()
	f, err := os.Open(filepath.Join(Dir(), "golden", name+".devtools-allocation-stack.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []AllocationStack
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var s AllocationStack
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		if n := len(s.Stack); n > 0 && s.Stack[n-1].Function == "(root)" && s.Stack[n-1].Script == "" {
			s.Stack = s.Stack[:n-1]
		}
		for i := range s.Stack {
			if s.Stack[i].Function == "" {
				s.Stack[i].Function = "(anonymous)"
			}
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s holds no stacks", f.Name())
	}
	return out
}
