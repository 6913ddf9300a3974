package nodecore

// StackRoot is a heap reference held by a thread's stack: a slot of a
// JavaScript frame (receiver, argument, local, context, function) that
// keeps its target alive, as V8's own stack visitor would report it.
type StackRoot struct {
	// Value is the tagged word the slot holds; only heap-object pointers
	// into the scanned heap become edges.
	Value uint64
	// Thread is the thread's TID, Frame the frame's index from the top.
	Thread int32
	Frame  int
	// Name says what the slot is ("spin: argument n", "frame 3 function"),
	// the edge name from the stack root's node.
	Name string
}

// StackRoots, when set (by the frame walker's init, stack.go), returns
// every thread's stack-slot references; the graph builder adds them as
// edges from a "(Stack roots)" node under the root, so objects held only
// by a running function are retained as V8 retains them. Nil while no
// frame walker is linked: the graph then has the global objects and V8's
// handle roots only.
var StackRoots func(p *Process) ([]StackRoot, error)
