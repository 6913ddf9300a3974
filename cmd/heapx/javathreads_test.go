package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// demoFacts is what testdata/gen/ThreadsDemo.java says it holds, from its
// output: "holds THREAD CLASS.METHOD LINE TYPE COUNT" for an object a
// frame's local holds, "defines LOADER CLASS" for a class a loader
// defined, "caches LOADER CLASS" for the loader a static cache keeps.
type demoFacts struct {
	holds   []demoHold
	defines map[string][]string // class -> the loaders that defined it
	cached  string              // the loader only the static cache keeps
}

type demoHold struct {
	thread, method, typ string
	line                uint32
	count               uint64
}

func parseDemo(t *testing.T, out string) demoFacts {
	t.Helper()
	f := demoFacts{defines: map[string][]string{}}
	for _, l := range strings.Split(out, "\n") {
		w := strings.Fields(l)
		switch {
		case len(w) == 6 && w[0] == "holds":
			line, err1 := strconv.ParseUint(w[3], 10, 32)
			count, err2 := strconv.ParseUint(w[5], 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("ThreadsDemo said %q", l)
			}
			f.holds = append(f.holds, demoHold{thread: w[1], method: w[2], line: uint32(line), typ: w[4], count: count})
		case len(w) == 3 && w[0] == "defines":
			f.defines[w[2]] = append(f.defines[w[2]], w[1])
		case len(w) == 3 && w[0] == "caches":
			f.cached = w[1]
		}
	}
	if len(f.holds) != 3 || f.cached == "" {
		t.Fatalf("ThreadsDemo said too little:\n%s", out)
	}
	return f
}

// wantRetained is what the object of a fact retains on a 64-bit JVM with
// compressed references (12-byte headers, 4-byte references, 8-byte
// alignment), held by nothing else: an ArrayList of capacity COUNT with
// COUNT Items of one int; a byte[COUNT]. 0: not checked exactly.
func wantRetained(h demoHold) uint64 {
	align := func(n uint64) uint64 { return (n + 7) &^ 7 }
	switch h.typ {
	case "java.util.ArrayList":
		return 24 + align(16+4*h.count) + 16*h.count
	case "byte[]":
		return align(16 + h.count)
	}
	return 0
}

// checkThreadsDemo runs heapx stack, threads and class-loaders on a dump
// of ThreadsDemo as a user does and compares them with what the program
// said it holds; then converts the dump to .jsonl and .db, which keep the
// threads.
func checkThreadsDemo(t *testing.T, dump string, facts demoFacts) {
	var st query.ThreadsJSON
	okJSON(t, &st, "stack", "--json", dump)
	if st.SchemaVersion != 1 || st.Runtime != "Java VM" || st.File != dump {
		t.Errorf("stack --json: schema %d, runtime %q, file %q", st.SchemaVersion, st.Runtime, st.File)
	}
	text := ok(t, "stack", dump)
	for _, h := range facts.holds {
		th := threadNamed(t, &st, h.thread)
		if th.State != "TIMED_WAITING" || len(th.Frames) == 0 || th.Frames[0].Function != "java.lang.Thread.sleep" || th.Frames[0].Type != "hprof:native method" {
			t.Errorf("thread %s: %s, first frame %+v; want TIMED_WAITING in Thread.sleep", h.thread, th.State, th.Frames)
		}
		if th.ID == 0 || th.Class != "java.lang.Thread" || th.RetainedSize == nil || th.HeldSize == nil || *th.HeldSize < *th.RetainedSize {
			t.Errorf("thread %s's object: %+v", h.thread, th)
		}
		f := frameAt(th, h.method, h.line)
		if f == nil {
			t.Errorf("thread %s has no frame %s at line %d", h.thread, h.method, h.line)
			continue
		}
		class, method := query.SplitJavaFunction(h.method)
		if f.Kind != "java" || f.Script != "ThreadsDemo.java" || f.Class != class || f.Method != method {
			t.Errorf("frame %s: %+v", h.method, f)
		}
		var held *query.FrameValueJSON
		for i, v := range f.Values {
			if v.Class == h.typ && v.Role == "local" {
				held = &f.Values[i]
			}
		}
		if held == nil || held.RetainedSize == nil || held.ID == 0 {
			t.Errorf("frame %s holds %+v, want a local %s", h.method, f.Values, h.typ)
			continue
		}
		if want := wantRetained(h); want != 0 && *held.RetainedSize != want {
			t.Errorf("frame %s's %s of %d retains %d, want %d", h.method, h.typ, h.count, *held.RetainedSize, want)
		}
		if *th.HeldSize < *held.RetainedSize {
			t.Errorf("thread %s holds %d, less than its local %s (%d)", h.thread, *th.HeldSize, h.typ, *held.RetainedSize)
		}
		line := fmt.Sprintf("%s(ThreadsDemo.java:%d)\n        local <%s @0x%x>  shallow ", h.method, h.line, h.typ, held.ID)
		if !strings.Contains(text, line) || !regexp.MustCompile(`thread \d+ \(`+h.thread+`\) TIMED_WAITING: \d+ Java frames; java.lang.Thread @0x`).MatchString(text) {
			t.Errorf("the text has no %q for thread %s:\n%s", line, h.thread, text)
		}
	}

	// threads: the thread keeping the most alive first, in the same JSON.
	var top query.ThreadsJSON
	okJSON(t, &top, "threads", "--json", "-n", "1", dump)
	if len(top.Threads) != 1 || top.Threads[0].Name != "nested" || *top.Threads[0].HeldSize < 100016 {
		t.Errorf("threads -n 1: %+v, want nested, holding its byte[100000] and its map", top.Threads)
	}
	if out := ok(t, "threads", dump); !regexp.MustCompile(`(?s)Threads, keeping the most alive first.*thread \d+ "nested" TIMED_WAITING: java.lang.Thread @0x.*#1 ThreadsDemo.inner +ThreadsDemo.java:\d+ .*local: byte\[\] @0x[0-9a-f]+ +100 kB +100 kB`).MatchString(out) {
		t.Errorf("heapx threads:\n%s", out)
	}

	// class-loaders: the cached loader keeps the most, held through the
	// static CACHE; the classes defined twice with their loaders.
	var doc struct {
		Sections []struct {
			Heading string           `json:"heading"`
			Rows    []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	okJSON(t, &doc, "class-loaders", "--json", dump)
	if len(doc.Sections) != 2 || len(doc.Sections[0].Rows) == 0 {
		t.Fatalf("class-loaders --json: %+v", doc)
	}
	first := doc.Sections[0].Rows[0]
	if l, _ := first["loader"].(string); !strings.HasPrefix(l, `java.net.URLClassLoader "`+facts.cached+`" @0x`) ||
		!strings.Contains(first["held_by"].(string), "class ThreadsDemo @0x") || !strings.Contains(first["held_by"].(string), " .CACHE → ") {
		t.Errorf("the loader keeping the most: %v, want %s held through ThreadsDemo.CACHE", first, facts.cached)
	}
	twice := map[string][]string{}
	for _, r := range doc.Sections[1].Rows {
		twice[r["class"].(string)] = append(twice[r["class"].(string)], r["loader"].(string))
	}
	for class, loaders := range facts.defines {
		if len(loaders) < 2 {
			if _, ok := twice[class]; ok {
				t.Errorf("%s is defined once, by %s, but shown as defined by %v", class, loaders[0], twice[class])
			}
			continue
		}
		if len(twice[class]) != len(loaders) {
			t.Errorf("%s is defined by %v; class-loaders says %v", class, loaders, twice[class])
		}
		for _, l := range loaders {
			if !strings.Contains(strings.Join(twice[class], "\n"), `"`+l+`" @0x`) {
				t.Errorf("%s's definition by %s is missing: %v", class, l, twice[class])
			}
		}
	}
	if csv := ok(t, "class-loaders", "--csv", dump); !strings.HasPrefix(csv, "section,loader,classes,instances,retained_size,with_classes,retained_percent,held_by\n") {
		t.Errorf("class-loaders --csv starts %q", csv[:min(len(csv), 120)])
	}

	// convert keeps the threads: .jsonl and .db give heapx stack the same
	// threads (without sizes, which need the heap analysed) and heapx
	// threads the same answer.
	dir := t.TempDir()
	flat, db := filepath.Join(dir, "threads.jsonl"), filepath.Join(dir, "threads.db")
	ok(t, "convert", dump, flat)
	ok(t, "convert", flat, db)
	want := stripSizes(st.Threads)
	for _, file := range []string{flat, db} {
		var back query.ThreadsJSON
		okJSON(t, &back, "stack", "--json", file)
		sameThreads(t, filepath.Base(file)+": heapx stack", back.Threads, want)
		var sized query.ThreadsJSON
		okJSON(t, &sized, "threads", "--json", "-n", "1", file)
		sameThreads(t, filepath.Base(file)+": heapx threads", sized.Threads, top.Threads)
	}
}

func threadNamed(t *testing.T, st *query.ThreadsJSON, name string) *query.ThreadJSON {
	t.Helper()
	for i := range st.Threads {
		if st.Threads[i].Name == name {
			return &st.Threads[i]
		}
	}
	t.Fatalf("no thread %q in %d", name, len(st.Threads))
	return nil
}

func frameAt(th *query.ThreadJSON, function string, line uint32) *query.ThreadFrameJSON {
	for i, f := range th.Frames {
		if f.Function == function && f.Line == line {
			return &th.Frames[i]
		}
	}
	return nil
}

// stripSizes is threads as heapx stack shows them without the heap: no
// classes, no sizes.
func stripSizes(threads []query.ThreadJSON) []query.ThreadJSON {
	out := slices.Clone(threads)
	for i := range out {
		t := &out[i]
		t.Class, t.ShallowSize, t.RetainedSize, t.HeldSize = "", nil, nil, nil
		t.Frames = slices.Clone(t.Frames)
		for j := range t.Frames {
			f := &t.Frames[j]
			f.Values = slices.Clone(f.Values)
			for k := range f.Values {
				v := &f.Values[k]
				v.Class, v.ShallowSize, v.RetainedSize = "", nil, nil
			}
		}
	}
	return out
}

// sameThreads reports the first thread of got that differs from want's.
func sameThreads(t *testing.T, what string, got, want []query.ThreadJSON) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d threads, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		a, _ := json.Marshal(got[i])
		b, _ := json.Marshal(want[i])
		if string(a) != string(b) {
			t.Errorf("%s: thread %d differs:\n%s\nwant\n%s", what, i, a, b)
			return
		}
	}
}

// TestThreadsOfAJavaDump: the committed dump of ThreadsDemo
// (testdata/gen/java-threads.sh) against what the program said then; info
// says it has the 9 threads the JVM had.
func TestThreadsOfAJavaDump(t *testing.T) {
	dump := filepath.Join("..", "..", "testdata", "hprof", "java-threads.hprof.gz")
	out, err := os.ReadFile(dump + ".stdout.txt")
	if err != nil {
		t.Fatal(err)
	}
	checkThreadsDemo(t, dump, parseDemo(t, string(out)))
	if info := ok(t, "info", dump); !strings.Contains(info, "\nThread stacks     yes (9 threads: heapx stack)\n") {
		t.Errorf("info does not say the dump has 9 threads:\n%s", info)
	}
	var info struct {
		ThreadCount int `json:"thread_count"`
	}
	if okJSON(t, &info, "info", "--json", dump); info.ThreadCount != 9 {
		t.Errorf("info --json: thread_count %d, want 9", info.ThreadCount)
	}
}

// TestThreadsOfARunningJVM compiles and runs ThreadsDemo on this
// machine's JDK, dumps it with heapx capture --jvm once it says it is
// ready, and checks the dump against what it says it holds. It needs a
// JDK (java, javac, jcmd): it fails under CI=true without one, and skips
// elsewhere.
func TestThreadsOfARunningJVM(t *testing.T) {
	java, javac := needTool(t, "java"), needTool(t, "javac")
	needTool(t, "jcmd")
	dir := t.TempDir()
	gen := filepath.Join("..", "..", "testdata", "gen")
	for _, c := range [][]string{
		{"-d", filepath.Join(dir, "plugins"), filepath.Join(gen, "PluginSources.java")},
		{"-d", filepath.Join(dir, "app"), filepath.Join(gen, "ThreadsDemo.java")},
	} {
		if out, err := exec.Command(javac, c...).CombinedOutput(); err != nil {
			t.Fatalf("javac %v: %v\n%s", c, err, out)
		}
	}
	cmd := exec.Command(java, "-Xmx64m", "-cp", filepath.Join(dir, "app"), "ThreadsDemo", filepath.Join(dir, "plugins"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	var said strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
		said.WriteString(sc.Text() + "\n")
	}
	go io.Copy(io.Discard, stdout)
	facts := parseDemo(t, said.String())
	dump := filepath.Join(dir, "threads.hprof")
	ok(t, "capture", "--jvm", strconv.Itoa(cmd.Process.Pid), "-o", dump)
	checkThreadsDemo(t, dump, facts)
}
