package hprof

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/model"
)

// threadsDump is a crafted dump of two threads in JDK 17's layout
// (Thread.threadStatus) or, with holder, JDK 19's (the status on a
// Thread$FieldHolder): thread 1, a Worker (a Thread subclass) named
// "worker-1" with Java id 77, sleeping in Worker.run, whose frame 1 holds
// an Item (named twice: once is kept) and which holds its name String as
// a JNI local outside its frames; thread 2, a plain Thread with id 78,
// blocked, with no frames and a local of a frame it does not have; a
// stack trace of thread 3, which has no thread object; a Java frame root
// of an object not in the dump; and a JNI local of a thread the dump has
// no object nor stack trace of.
func threadsDump(idSize int, holder bool) []byte {
	w := newBuilder(idSize)
	names := []string{1: "java/lang/Object", "java/lang/Thread", "java/lang/Thread$FieldHolder", "Worker", "java/lang/String",
		"[B", "Item", "tid", "name", "holder", "threadStatus", "value", "coder", "count", "sleep", "run", "Thread.java", "Worker.java", "()V"}
	for i := 1; i < len(names); i++ {
		w.Record(tagUTF8, func(b *builder) { b.ID(uint64(i)).Raw([]byte(names[i])...) })
	}
	// Class id 0x100*k, LOAD CLASS serial k, name string k.
	for k := uint64(1); k <= 7; k++ {
		w.Record(tagLoadClass, func(b *builder) { b.U4(uint32(k)).ID(0x100 * k).U4(0).ID(k) })
	}
	w.Record(tagStackFrame, func(b *builder) { b.ID(0x9001).ID(15).ID(19).ID(17).U4(2).U4(uint32(0xfffffffd)) }) // Thread.sleep, native
	w.Record(tagStackFrame, func(b *builder) { b.ID(0x9002).ID(16).ID(19).ID(18).U4(4).U4(12) })                 // Worker.run, line 12
	w.Record(tagStackTrace, func(b *builder) { b.U4(5).U4(1).U4(2).ID(0x9001).ID(0x9002) })
	w.Record(tagStackTrace, func(b *builder) { b.U4(6).U4(2).U4(0) })
	w.Record(tagStackTrace, func(b *builder) { b.U4(7).U4(3).U4(1).ID(0x9002) })
	last := [2]uint64{11, tInt} // Thread's last field: threadStatus, or holder
	if holder {
		last = [2]uint64{10, tObject}
	}
	status := func(b *builder, id uint64, v uint32) {
		if holder {
			b.ID(id)
		} else {
			b.U4(v)
		}
	}
	lastLen := uint32(4)
	if holder {
		lastLen = uint32(idSize)
	}
	w.Record(tagHeapDumpSegment, func(b *builder) {
		b.ClassDump(0x100, 0, 0, nil, nil)
		b.ClassDump(0x200, 0x100, 0, nil, [][2]uint64{{8, tLong}, {9, tObject}, last})
		b.ClassDump(0x300, 0x100, 0, nil, [][2]uint64{{11, tInt}})
		b.ClassDump(0x400, 0x200, 0, nil, [][2]uint64{{14, tInt}})
		b.ClassDump(0x500, 0x100, 0, nil, [][2]uint64{{12, tObject}, {13, tByte}})
		b.ClassDump(0x600, 0x100, 0, nil, nil)
		b.ClassDump(0x700, 0x100, 0, nil, nil)
		b.U1(rootThreadObject).ID(0x1000).U4(1).U4(5)
		b.U1(rootThreadObject).ID(0x2000).U4(2).U4(6)
		b.U1(rootJavaFrame).ID(0x1400).U4(1).U4(1)
		b.U1(rootJavaFrame).ID(0x1400).U4(1).U4(1)
		b.U1(rootJNILocal).ID(0x1200).U4(1).U4(uint32(0xffffffff))
		b.U1(rootJavaFrame).ID(0x1400).U4(2).U4(5)
		b.U1(rootJavaFrame).ID(0xdead).U4(1).U4(0)
		b.U1(rootJNILocal).ID(0x1400).U4(9).U4(0) // thread 9 is not in the dump
		// Worker: its own count, then Thread's tid, name, status or holder.
		b.U1(subInstanceDump).ID(0x1000).U4(0).ID(0x400).U4(4 + 8 + uint32(idSize) + lastLen).U4(3).U4(0).U4(77).ID(0x1200)
		status(b, 0x1100, 0xe1) // alive, waiting with a timeout, sleeping
		b.U1(subInstanceDump).ID(0x2000).U4(0).ID(0x200).U4(8 + uint32(idSize) + lastLen).U4(0).U4(78).ID(0)
		status(b, 0x2100, 0x401) // alive, blocked entering a monitor
		if holder {
			b.U1(subInstanceDump).ID(0x1100).U4(0).ID(0x300).U4(4).U4(0xe1)
			b.U1(subInstanceDump).ID(0x2100).U4(0).ID(0x300).U4(4).U4(0x401)
		}
		b.U1(subInstanceDump).ID(0x1200).U4(0).ID(0x500).U4(uint32(idSize) + 1).ID(0x1300).U1(0)
		b.U1(subPrimArrayDump).ID(0x1300).U4(0).U4(8).U1(tByte).Raw([]byte("worker-1")...)
		b.U1(subInstanceDump).ID(0x1400).U4(0).ID(0x700).U4(0)
	})
	w.Record(tagHeapDumpEnd, func(*builder) {})
	return w.B
}

// stackText writes stacks one frame a line, values after the frame.
func stackText(stacks []model.Stack) string {
	var b strings.Builder
	for _, s := range stacks {
		fmt.Fprintf(&b, "thread %d %q object 0x%x %s\n", s.Thread, s.Name, s.Object, s.State)
		for _, f := range s.Frames {
			fmt.Fprintf(&b, "  %s %s %s %s:%d", f.Kind, f.Type, f.Function, f.Script, f.Line)
			for _, v := range f.Values {
				fmt.Fprintf(&b, " [%s 0x%x %s]", v.Role, v.Node, v.Text)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// TestThreadsCrafted reads threadsDump in both layouts and both id sizes:
// threads in the order of their objects, named by their name String, with
// their Java ids and states; frames with class, method, file and line;
// values on the frame their depth names, each once, and the ones of no
// frame on a last one; a stack trace without a thread object is a stack
// too, and the roots of a thread the dump does not have are counted.
func TestThreadsCrafted(t *testing.T) {
	want := `thread 77 "worker-1" object 0x1000 TIMED_WAITING
  java hprof:native method java.lang.Thread.sleep Thread.java:0
  java  Worker.run Worker.java:12 [local 0x1400 <Item @0x1400>]
  runtime hprof:outside Java frames  :0 [jni local 0x1200 "worker-1"]
thread 78 "" object 0x2000 BLOCKED
  runtime hprof:outside Java frames  :0 [local 0x1400 <Item @0x1400>]
thread 3 "" object 0x0 
  java  Worker.run Worker.java:12
`
	for _, holder := range []bool{false, true} {
		for _, idSize := range []int{8, 4} {
			g, err := readBytes(t, threadsDump(idSize, holder))
			if err != nil {
				t.Fatalf("holder %v, id size %d: %v", holder, idSize, err)
			}
			if got := stackText(g.Stacks); got != want {
				t.Errorf("holder %v, id size %d: stacks\n%s\nwant\n%s", holder, idSize, got, want)
			}
			if v, _ := g.MetaValue("hprof:orphan_thread_roots"); v != "1" {
				t.Errorf("holder %v, id size %d: hprof:orphan_thread_roots %q, want 1", holder, idSize, v)
			}
		}
	}
}

// javaLine is the 1-based line of testdata/gen/ThreadsDemo.java that ends
// with the comment marker.
func javaLine(t *testing.T, marker string) uint32 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gen", "ThreadsDemo.java"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(l, "// "+marker) {
			return uint32(i + 1)
		}
	}
	t.Fatalf("ThreadsDemo.java has no line marked %s", marker)
	return 0
}

// TestThreadsOfAJVM reads the stacks of a real JVM (OpenJDK 17 running
// testdata/gen/ThreadsDemo.java, dumped by jcmd GC.heap_dump; see
// testdata/gen/java-threads.sh): its threads by name with their Java ids
// and states, the frames where the program blocks at the lines it blocks
// on, and the objects those frames' locals hold; every Java frame and JNI
// local root of the dump is a value of its thread's frame.
func TestThreadsOfAJVM(t *testing.T) {
	g, err := ReadFile(filepath.Join("..", "..", "testdata", "hprof", "java-threads.hprof.gz"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*model.Stack{}
	values := 0
	for i := range g.Stacks {
		s := &g.Stacks[i]
		byName[s.Name] = s
		for _, f := range s.Frames {
			seen := map[string]bool{}
			for _, v := range f.Values {
				key := fmt.Sprint(v.Role, v.Node)
				if seen[key] {
					t.Errorf("thread %q frame %s holds %s twice", s.Name, f.Function, v.Text)
				}
				seen[key] = true
				values++
			}
		}
	}
	if main := byName["main"]; main == nil || main.Thread != 1 || main.State != "RUNNABLE" || main.Object == 0 {
		t.Errorf("main thread: %+v", main)
	}
	for _, c := range []struct {
		thread string
		frame  int
		method string
		marker string
		holds  string
	}{
		{"holder", 1, "ThreadsDemo.hold", "HOLD-LINE", "<java.util.ArrayList @0x"},
		{"nested", 1, "ThreadsDemo.inner", "INNER-LINE", "<byte[] @0x"},
		{"nested", 2, "ThreadsDemo.outer", "", "<java.util.HashMap @0x"},
	} {
		s := byName[c.thread]
		if s == nil || len(s.Frames) <= c.frame {
			t.Fatalf("thread %q: %+v", c.thread, s)
		}
		if s.State != "TIMED_WAITING" || s.Frames[0].Function != "java.lang.Thread.sleep" || s.Frames[0].Type != "hprof:native method" {
			t.Errorf("thread %q is %s in %+v, want TIMED_WAITING in Thread.sleep", c.thread, s.State, s.Frames[0])
		}
		f := s.Frames[c.frame]
		if f.Kind != model.FrameJava || f.Function != c.method || f.Script != "ThreadsDemo.java" {
			t.Errorf("thread %q frame %d: %+v", c.thread, c.frame, f)
		}
		if c.marker != "" && f.Line != javaLine(t, c.marker) {
			t.Errorf("thread %q frame %d at line %d, want %d", c.thread, c.frame, f.Line, javaLine(t, c.marker))
		}
		if len(f.Values) != 1 || f.Values[0].Role != model.RoleLocal || !strings.HasPrefix(f.Values[0].Text, c.holds) {
			t.Errorf("thread %q frame %d holds %+v, want one local %s…>", c.thread, c.frame, f.Values, c.holds)
		}
	}
	// Each root record of a thread is a value, but for the same object
	// named twice at one depth (a local and an operand): the dump has 47
	// records, one of them such a repeat (the Common-Cleaner's thread
	// object at depth 2).
	roots := 0
	for _, r := range g.GCRoots {
		if k := g.RootKinds[r.Kind]; k == "hprof:Java frame" || k == "hprof:JNI local" {
			roots++
		}
	}
	if values != 46 || roots != 47 {
		t.Errorf("%d frame values for %d Java frame and JNI local roots", values, roots)
	}
}
