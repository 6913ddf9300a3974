package model

import (
	"fmt"
	"slices"
)

// Stack is one thread's call stack at the moment the dump was taken. Core
// dumps carry them (formats/nodecore walks each thread's frames), and so
// do Java's HPROF dumps (formats/hprof: stack traces, with the objects
// the frames' locals hold); V8 heap snapshots do not, which is the
// call-stack record seed 000 says the V8 format lacks. Stacks are few and
// short, so they are plain Go values.
type Stack struct {
	// Thread is the thread's id: the operating system's for a core
	// (Linux: its LWP), Java's (Thread.getId()) for HPROF, or HPROF's
	// thread serial number when the dump does not say Java's.
	Thread uint64
	// Name says which thread it is when known ("main" for the process's
	// first thread, a Java thread's name), else "".
	Name string
	// Object is the identifier (Nodes.ID) of the thread's own heap
	// object (Java's java.lang.Thread), 0 when it has none.
	Object uint64
	// State is the thread's state in its runtime's words when the dump
	// says it (Java's Thread.State: "RUNNABLE", "WAITING",
	// "TIMED_WAITING", "BLOCKED", ...), else "".
	State string
	// Frames are innermost first.
	Frames []Frame
	// Stop says why the walk ended before the outermost frame (a frame
	// pointer outside the stack, memory the core does not hold), "" when
	// it reached the end of the chain.
	Stop string
}

// Frame is one frame of a Stack.
type Frame struct {
	// Kind is the frame's neutral kind: FrameJS, FrameJava, FrameNative
	// or FrameRuntime.
	Kind FrameKind
	// Type is the runtime's own name of the frame type, namespaced
	// ("v8:InterpretedFrame", "v8:ExitFrame", "hprof:native method"),
	// "" for native frames and Java frames with a line.
	Type string
	// Function is the function's name: a JavaScript function's name
	// ("(anonymous)" when it has none), a Java method's, qualified by
	// its class ("java.lang.Thread.sleep"), a native frame's symbol, ""
	// when unknown.
	Function string
	// Script is the script's name (a file path or URL, "node:internal/..."
	// for Node's own; a Java class's source file, "Thread.java"), "" when
	// unknown or native.
	Script string
	// Line and Column are 1-based; 0 is unknown. A core gives a
	// function-level position: where the function is defined; HPROF the
	// line the frame is at, and no column.
	Line, Column uint32
	// PC and FP are the frame's return address into its code and its
	// frame pointer.
	PC, FP uint64
	// FunctionNode is the identifier (Nodes.ID) of the function's node,
	// 0 when there is none.
	FunctionNode uint64
	// Values are the frame's receiver, arguments and the closure
	// variables of its function, in that order (a core's JavaScript
	// frames), or the objects its locals hold (a Java frame's).
	Values []FrameValue
}

// FrameKind is what a frame is, in the vocabulary of every runtime.
type FrameKind uint8

const (
	// FrameNative is a frame of native (C, C++) code.
	FrameNative FrameKind = iota
	// FrameJS is a JavaScript function's frame.
	FrameJS
	// FrameRuntime is a frame the runtime itself pushed (V8's entry,
	// exit, internal and stub frames).
	FrameRuntime
	// FrameJava is a Java method's frame (native methods included).
	FrameJava
)

var frameKindNames = [...]string{FrameNative: "native", FrameJS: "javascript", FrameRuntime: "runtime", FrameJava: "java"}

// String is the kind's name in the exchange format.
func (k FrameKind) String() string {
	if int(k) < len(frameKindNames) {
		return frameKindNames[k]
	}
	return fmt.Sprintf("FrameKind(%d)", uint8(k))
}

// ParseFrameKind is the kind a name (FrameKind.String) names.
func ParseFrameKind(s string) (FrameKind, error) {
	for k, n := range frameKindNames {
		if n == s {
			return FrameKind(k), nil
		}
	}
	return 0, fmt.Errorf("unknown frame kind %q (want native, javascript, runtime or java)", s)
}

// FrameValue is one value a frame holds: its receiver, an argument, a
// variable its function's closure captures, or an object a local holds.
type FrameValue struct {
	Role ValueRole
	// Name is the variable's name for a closure variable, the argument's
	// position ("0", "1", ...) for an argument, "this" for the receiver;
	// "" for a local (HPROF does not name them).
	Name string
	// Node is the identifier (Nodes.ID) of the heap object the value is,
	// 0 when it is not one (a small integer, or a word that is no value).
	Node uint64
	// Smi is the small integer the value is, when IsSmi.
	Smi   int64
	IsSmi bool
	// Text is the value as heapx shows it: 7, "level-3", 3.5, Ticket
	// @0x1234, <function spin>.
	Text string
}

// ValueRole is what a FrameValue is to its frame.
type ValueRole uint8

const (
	// RoleReceiver is the frame's receiver (this).
	RoleReceiver ValueRole = iota
	// RoleArgument is an argument passed to the frame's function.
	RoleArgument
	// RoleClosure is a variable of the function's closure (its context).
	RoleClosure
	// RoleLocal is an object a local variable or the operand stack of
	// the frame holds (HPROF's Java frame root).
	RoleLocal
	// RoleJNILocal is an object a JNI local reference of the frame
	// holds (HPROF's JNI local root).
	RoleJNILocal
)

var valueRoleNames = [...]string{RoleReceiver: "receiver", RoleArgument: "argument", RoleClosure: "closure",
	RoleLocal: "local", RoleJNILocal: "jni local"}

// String is the role's name in the exchange format.
func (r ValueRole) String() string {
	if int(r) < len(valueRoleNames) {
		return valueRoleNames[r]
	}
	return fmt.Sprintf("ValueRole(%d)", uint8(r))
}

// ParseValueRole is the role a name (ValueRole.String) names.
func ParseValueRole(s string) (ValueRole, error) {
	for r, n := range valueRoleNames {
		if n == s {
			return ValueRole(r), nil
		}
	}
	return 0, fmt.Errorf("unknown frame value role %q (want receiver, argument, closure, local or jni local)", s)
}

// compareStacks reports the first difference between two graphs' stacks.
func compareStacks(a, b []Stack) error {
	if len(a) != len(b) {
		return fmt.Errorf("%d stacks vs %d", len(a), len(b))
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Thread != y.Thread || x.Name != y.Name || x.Stop != y.Stop || x.Object != y.Object || x.State != y.State || len(x.Frames) != len(y.Frames) {
			return fmt.Errorf("stack %d differs: thread %d %q (object %#x, %s, %d frames, stop %q) vs thread %d %q (object %#x, %s, %d frames, stop %q)",
				i, x.Thread, x.Name, x.Object, x.State, len(x.Frames), x.Stop, y.Thread, y.Name, y.Object, y.State, len(y.Frames), y.Stop)
		}
		for j := range x.Frames {
			f, h := &x.Frames[j], &y.Frames[j]
			same := f.Kind == h.Kind && f.Type == h.Type && f.Function == h.Function && f.Script == h.Script &&
				f.Line == h.Line && f.Column == h.Column && f.PC == h.PC && f.FP == h.FP && f.FunctionNode == h.FunctionNode
			if !same || !slices.Equal(f.Values, h.Values) {
				return fmt.Errorf("stack %d frame %d differs: %+v vs %+v", i, j, *f, *h)
			}
		}
	}
	return nil
}
