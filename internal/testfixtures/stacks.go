package testfixtures

import "github.com/heapx/heapx/model"

// Stacks are stacks as a core's reader makes them: a main thread with
// a JavaScript frame holding a receiver, a small integer, a heap object
// and a closure variable, a runtime frame and a native one; and a thread
// whose walk stopped early, and one without frames. The exchange
// format's round-trip tests write them into g (a fixture's graph).
func Stacks(g *model.Graph) []model.Stack {
	obj := g.NodeID(1)
	return []model.Stack{
		{Thread: 4242, Name: "main", Frames: []model.Frame{
			{Kind: model.FrameJS, Type: "v8:InterpretedFrame", Function: "descend", Script: "/app/core-state.js", Line: 212, Column: 1,
				PC: 0x7f00_0000_1234, FP: 0x7ffe_0000_0100, FunctionNode: obj, Values: []model.FrameValue{
					{Role: model.RoleReceiver, Name: "this", Text: "undefined", Node: obj + 8},
					{Role: model.RoleArgument, Name: "0", Smi: -3, IsSmi: true, Text: "-3"},
					{Role: model.RoleArgument, Name: "1", Node: obj, Text: `"level-3 \"quoted\"\n"`},
					{Role: model.RoleClosure, Name: "SECRET", Node: obj, Text: `"open-sesame"`},
				}},
			{Kind: model.FrameRuntime, Type: "v8:EntryFrame", PC: 0x1000, FP: 0x7ffe_0000_0200},
			{Kind: model.FrameNative, Function: "node::Start(int, char**)", PC: 1<<64 - 1, FP: 0x7ffe_0000_0300},
		}},
		{Thread: 4243, Stop: "frame pointer 0x10 is outside the thread's stack", Frames: []model.Frame{
			{Kind: model.FrameNative, PC: 0x42, FP: 0x7ffd_0000_0000},
		}},
		{Thread: 4244},
		{Thread: 12, Name: "worker \"1\"", Object: obj + 16, State: "TIMED_WAITING", Frames: []model.Frame{
			{Kind: model.FrameJava, Type: "hprof:native method", Function: "java.lang.Thread.sleep", Script: "Thread.java"},
			{Kind: model.FrameJava, Function: "Main.hold", Script: "Main.java", Line: 36, Values: []model.FrameValue{
				{Role: model.RoleLocal, Node: obj, Text: "<java.util.ArrayList @0x1>"},
				{Role: model.RoleJNILocal, Node: obj + 8, Text: `"text"`},
			}},
		}},
	}
}
