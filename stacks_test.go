package heapx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/heapx/heapx"
)

// TestStacksJava reads the threads of the committed ThreadsDemo dump
// (testdata/gen/java-threads.sh): the main thread blocked reading stdin,
// its object's sizes and the objects its frames hold, in the dump's order.
func TestStacksJava(t *testing.T) {
	const dump = "testdata/hprof/java-threads.hprof.gz"
	var stages []heapx.Stage
	s, err := heapx.Stacks(dump, heapx.Options{Progress: func(st heapx.Stage, done, total int64) {
		if len(stages) == 0 || stages[len(stages)-1] != st {
			stages = append(stages, st)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.SchemaVersion != 1 || s.File != dump || s.Runtime != "Java VM" || s.Binary != "" || len(s.Threads) != 9 {
		t.Fatalf("schema %d, file %q, runtime %q, binary %q, %d threads", s.SchemaVersion, s.File, s.Runtime, s.Binary, len(s.Threads))
	}
	if len(stages) != 2 || stages[0] != heapx.Reading || stages[1] != heapx.Analyzing {
		t.Errorf("progress stages %v, want reading then analyzing", stages)
	}
	main := s.Threads[0]
	if main.Thread != 1 || main.Name != "main" || main.State != "RUNNABLE" || main.Class != "java.lang.Thread" || main.ID != 0xfc127180 ||
		main.RetainedSize == nil || *main.RetainedSize != 216 || len(main.Frames) != 12 {
		t.Fatalf("main thread: %+v", main)
	}
	f := main.Frames[0]
	if f.Function != "java.io.FileInputStream.readBytes" || f.Type != "hprof:native method" || len(f.Values) != 1 ||
		f.Values[0].Role != "jni local" || f.Values[0].Class != "java.io.FileDescriptor" || *f.Values[0].RetainedSize != 40 {
		t.Errorf("innermost frame: %+v", f)
	}
	if f := main.Frames[11]; f.Class != "ThreadsDemo" || f.Method != "main" || f.Script != "ThreadsDemo.java" || f.Line != 105 {
		t.Errorf("outermost frame: %+v", f)
	}
}

// TestStacksBadInput: a dump that records no stacks, and a node binary
// given with a file that is no core, fail with what to do.
func TestStacksBadInput(t *testing.T) {
	if _, err := heapx.Stacks(leak1, heapx.Options{}); err == nil || !strings.Contains(err.Error(), "has no stacks: only a core dump, a Java heap dump") {
		t.Errorf("a V8 snapshot: %v", err)
	}
	_, err := heapx.Stacks(java, heapx.Options{Binary: "/usr/bin/node"})
	if !errors.Is(err, heapx.ErrBinaryNotCore) || !strings.Contains(err.Error(), java+" is not an ELF core") {
		t.Errorf("a binary with an HPROF dump: %v", err)
	}
	if _, err := heapx.Stacks("testdata/no-such.hprof", heapx.Options{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}
