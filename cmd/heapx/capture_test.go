package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/model"
	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/report"
)

// These tests capture real programs as a user would: a Node.js program
// leaking through an event listener (testdata/capture/listener-leak.js),
// programs that crash, a page leaking detached DOM in headless Chromium,
// and a JVM. They skip where node or Chromium is not installed, but fail
// under CI=true (.ci/run installs both).

// leakJS is the leaking Node.js program.
var leakJS, _ = filepath.Abs("../../testdata/capture/listener-leak.js")

// needNode skips t where node is not installed; under CI, which installs
// it, it fails t.
func needNode(t *testing.T) {
	t.Helper()
	needTool(t, "node")
}

// needTool returns the path of the program named, which t needs: where
// it is not installed t is skipped, or fails under CI=true.
func needTool(t *testing.T, name string) string {
	t.Helper()
	return testfixtures.NeedTool(t, name)
}

// lineOf returns the 1-based line of leakJS that starts with prefix (after
// indentation), where the program's functions are.
func lineOf(t *testing.T, prefix string) int {
	t.Helper()
	return lineIn(t, leakJS, prefix)
}

// lineIn returns the 1-based line of the file at path that starts with
// prefix (after indentation).
func lineIn(t *testing.T, path, prefix string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), prefix) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line starting %q", path, prefix)
	return 0
}

// inspected is a Node.js program the test started with --inspect, as a
// user would before attaching heapx to it.
type inspected struct {
	cmd      *exec.Cmd
	hostPort string
}

// startInspected starts node --inspect=127.0.0.1:0 on the leaking program
// (with ballast objects, when not 0), and returns once the program runs.
// It is killed when t ends.
func startInspected(t *testing.T, ballast int) *inspected {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("node", "--inspect=127.0.0.1:0", leakJS, pidFile, fmt.Sprint(ballast))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	listening := regexp.MustCompile(`Debugger listening on ws://([^/]+)/`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var hp string
	select {
	case hp = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("node --inspect did not start listening")
	}
	waitFile(t, pidFile)
	return &inspected{cmd: cmd, hostPort: hp}
}

// waitFile waits for a program to write the file at path.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s was never written", path)
		}
	}
}

// alive reports whether the program is still running.
func (p *inspected) alive() bool { return p.cmd.Process.Signal(syscall.Signal(0)) == nil }

// dirFiles lists the names in dir, temporary files included.
func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestCaptureSeriesReport is memlab's method with no scenario code: heapx
// starts the leaking program, takes three snapshots a second apart
// (gzip-compressed) and reports on them, the last reported on and the
// first two as baselines. The report finds the listener leak: the
// LeakedRequest objects allocated between the first two snapshots and
// alive in the third, held through the emitter's 'shutdown' listeners.
func TestCaptureSeriesReport(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "leak.heapsnapshot.gz")
	r := heapx(t, "capture", "--every", "1s", "--count", "3", "-o", out, "--report", "--json", "--", "node", leakJS)
	if r.code != 0 {
		t.Fatalf("exit %d:\n%s", r.code, r.stderr)
	}
	snaps := []string{filepath.Join(dir, "leak-1.heapsnapshot.gz"), filepath.Join(dir, "leak-2.heapsnapshot.gz"), filepath.Join(dir, "leak-3.heapsnapshot.gz")}
	// With the report on stdout, what was written is said on stderr.
	var said []string
	for _, s := range snaps {
		said = append(said, fmt.Sprintf("wrote %s (", s))
	}
	for _, want := range said {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
		}
	}
	// Each snapshot has its scripts side file beside it (docs/capture.md).
	if got := dirFiles(t, dir); strings.Join(got, " ") != "leak-1.heapsnapshot.gz leak-1.heapsnapshot.scripts.jsonl leak-2.heapsnapshot.gz leak-2.heapsnapshot.scripts.jsonl leak-3.heapsnapshot.gz leak-3.heapsnapshot.scripts.jsonl" {
		t.Errorf("the directory holds %q", got)
	}
	var d report.Doc
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("stdout is not the report's JSON: %v\n%s", err, r.stdout)
	}
	if d.File != snaps[2] || strings.Join(d.Baselines, " ") != snaps[0]+" "+snaps[1] || len(d.Warnings) != 0 {
		t.Errorf("report on %s with baselines %v, warnings %v", d.File, d.Baselines, d.Warnings)
	}
	leaks := reportPart(t, &d, "leaks")
	if len(leaks) == 0 || !strings.Contains(leaks[0]["classes"].(string), "LeakedRequest") {
		t.Fatalf("the leaks do not name LeakedRequest: %v", leaks)
	}
	for _, p := range d.Parts {
		if p.Key != "leaks" {
			continue
		}
		var hops []string
		for _, row := range p.Result.Sections[1].Rows {
			hops = append(hops, fmt.Sprint(row["edge"], " ", row["object"]))
		}
		path := strings.Join(hops, " / ")
		if !strings.Contains(path, "->bus EventEmitter") || !strings.Contains(path, ".shutdown Array") {
			t.Errorf("the leak's path does not go through the emitter's listeners: %s", path)
		}
	}
}

// TestCaptureTimeline records an allocation timeline of the program heapx
// starts (tracking from its first line) and reads it back: a V8 heap
// timeline with its samples and allocation call tree, in which the
// LeakedRequest objects allocated while tracked were allocated by
// handle(), at its line in the program.
func TestCaptureTimeline(t *testing.T) {
	needNode(t)
	path := filepath.Join(t.TempDir(), "t.heaptimeline")
	out := ok(t, "capture", "--timeline", "2s", "-o", path, "--", "node", leakJS)
	if !regexp.MustCompile(`^wrote \S+t\.heaptimeline \(.+\): allocations tracked for [0-9.]+ s in \d+ intervals; live objects [0-9,]+ at the start, [0-9,]+ at the end \(at most [0-9,]+\)\n$`).MatchString(out) {
		t.Errorf("output %q", out)
	}
	var info struct {
		Format string `json:"format"`
		Trace  bool   `json:"has_allocation_trace"`
	}
	okJSON(t, &info, "info", "--json", path)
	if info.Format != "v8.heaptimeline" || !info.Trace {
		t.Errorf("info: %+v", info)
	}
	g, _, err := formats.Open(path, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := g.Trace
	if tr == nil || len(tr.Samples) < 10 {
		t.Fatalf("the timeline has no samples: %+v", tr)
	}
	handleLine := lineOf(t, "function handle(")
	byID := map[uint32]model.TraceNode{}
	for _, n := range tr.Tree {
		byID[n.ID] = n
	}
	tracked, inFile, inHandle := 0, 0, 0
	for n := 0; n < g.NumNodes(); n++ {
		id := g.TraceNodeID[n]
		if id == 0 || g.NodeName(model.NodeIndex(n)) != "LeakedRequest" {
			continue
		}
		tracked++
		f := tr.Functions[byID[id].Function]
		if !strings.HasSuffix(g.Strings.At(f.ScriptName), "listener-leak.js") {
			continue
		}
		inFile++
		// Trace function lines are 1-based.
		if g.Strings.At(f.Name) == "handle" && int(f.Line) == handleLine {
			inHandle++
		}
	}
	// V8 names the function of the frame that allocates: handle() until
	// the optimizing compiler inlines it into the interval's callback,
	// which is then named (an inlined frame has no frame of its own).
	if tracked == 0 || inHandle == 0 || inFile < tracked*9/10 {
		t.Errorf("%d LeakedRequest objects have an allocation stack, %d of them in listener-leak.js, %d in handle() at line %d", tracked, inFile, inHandle, handleLine)
	}
}

// heapProfileNode is a node of a sampling heap profile.
type heapProfileNode struct {
	CallFrame struct {
		FunctionName string `json:"functionName"`
		URL          string `json:"url"`
		LineNumber   int    `json:"lineNumber"`
	} `json:"callFrame"`
	SelfSize int64              `json:"selfSize"`
	Children []*heapProfileNode `json:"children"`
}

// selfSizeOf sums the self sizes of the profile's nodes for the function
// named at 0-based line in the leaking program.
func selfSizeOf(n *heapProfileNode, name string, line int) int64 {
	var sum int64
	if n.CallFrame.FunctionName == name && strings.HasSuffix(n.CallFrame.URL, "listener-leak.js") && n.CallFrame.LineNumber == line {
		sum += n.SelfSize
	}
	for _, c := range n.Children {
		sum += selfSizeOf(c, name, line)
	}
	return sum
}

// TestCaptureSampling runs the sampling heap profiler on a program a user
// started with --inspect. The profile is what `node --heap-prof` writes,
// private under a private umask, and keeps the samples of collected
// objects: churn()'s objects die at once and still show. heapx's readers
// name it as a profile, not a snapshot, and the program runs on.
func TestCaptureSampling(t *testing.T) {
	needNode(t)
	p := startInspected(t, 0)
	path := filepath.Join(t.TempDir(), "s.heapprofile")
	out := heapxUmask(t, "077", "capture", "--inspect", p.hostPort, "--sampling", "2s", "-o", path)
	if !regexp.MustCompile(`^wrote \S+s\.heapprofile \(.+\): [0-9,]+ samples standing for .+ allocated\n$`).MatchString(out) {
		t.Errorf("output %q", out)
	}
	if m := perm(t, path); m != 0o600 {
		t.Errorf("under umask 077 the profile is %v", m)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var prof struct {
		Head    *heapProfileNode `json:"head"`
		Samples []struct {
			Size   int64 `json:"size"`
			NodeID int64 `json:"nodeId"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(b, &prof); err != nil || prof.Head == nil || len(prof.Samples) == 0 {
		t.Fatalf("not a sampling heap profile (%v): %.200s", err, b)
	}
	// Profiles give the line a function starts on, 0-based.
	if churned := selfSizeOf(prof.Head, "churn", lineOf(t, "function churn(")-1); churned == 0 {
		t.Errorf("no sample in churn(): the profile lacks the objects the GC collected")
	}
	if r := heapx(t, "info", path); r.code != 1 || !strings.Contains(r.stderr, "a sampling heap profile") {
		t.Errorf("heapx info on the profile: exit %d, %s", r.code, r.stderr)
	}
	if !p.alive() {
		t.Error("the program heapx attached to is gone")
	}
}

// TestCaptureOnSignal takes a series on SIGUSR1: heapx starts the program
// and says it waits; each signal takes a snapshot.
func TestCaptureOnSignal(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	cmd := heapxCommand(t, "capture", "--count", "2", "-o", filepath.Join(dir, "s.heapsnapshot"), "--", "node", leakJS)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	if !sc.Scan() || sc.Text() != fmt.Sprintf("heapx: waiting for SIGUSR1 (kill -USR1 %d) to take each of 2 snapshot(s)", cmd.Process.Pid) {
		cmd.Process.Kill()
		t.Fatalf("heapx said %q", sc.Text())
	}
	go func() {
		for sc.Scan() {
		}
	}()
	for i := 1; i <= 2; i++ {
		cmd.Process.Signal(syscall.SIGUSR1)
		want := filepath.Join(dir, fmt.Sprintf("s-%d.heapsnapshot", i))
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(want); err == nil {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no %s after SIGUSR1", want)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("heapx: %v", err)
	}
	if got := strings.Count(out.String(), "wrote "); got != 2 {
		t.Errorf("output %q", out.String())
	}
}

// TestCaptureTargetGone kills the target in the middle of a capture: a
// snapshot streaming from a program attached with --inspect, and an
// allocation timeline of a program heapx started. Each time heapx says
// what happened, leaves no file (not even a temporary one) and exits 1,
// or as the program it started did (killed: 137).
func TestCaptureTargetGone(t *testing.T) {
	needNode(t)
	t.Run("attached", func(t *testing.T) {
		// A heap large enough for its snapshot to take a while.
		p := startInspected(t, 100000)
		dir := t.TempDir()
		path := filepath.Join(dir, "cut.heapsnapshot")
		cmd := heapxCommand(t, "capture", "--inspect", p.hostPort, "-o", path)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill the program once heapx is writing.
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if names := dirFiles(t, dir); len(names) > 0 && strings.Contains(names[0], ".tmp-heapx-") {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("heapx never started writing")
			}
		}
		p.cmd.Process.Kill()
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("heapx: %v, want exit 1", err)
		}
		want := "heapx: capture: " + path + " not written: the target at ws://" + p.hostPort + "/"
		if !strings.HasPrefix(errb.String(), want) || !strings.Contains(errb.String(), "went away") || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("stderr %q, want one line starting %q saying the target went away", errb.String(), want)
		}
		if names := dirFiles(t, dir); len(names) != 0 {
			t.Errorf("left behind: %q", names)
		}
	})
	t.Run("started", func(t *testing.T) {
		dir := t.TempDir()
		pidFile := filepath.Join(t.TempDir(), "pid")
		path := filepath.Join(dir, "t.heaptimeline")
		cmd := heapxCommand(t, "capture", "--timeline", "60s", "-o", path, "--", "node", leakJS, pidFile)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var pid int
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				fmt.Sscan(string(b), &pid)
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the program never ran")
			}
		}
		syscall.Kill(pid, syscall.SIGKILL)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 137 {
			t.Fatalf("heapx: %v, want exit 137", err)
		}
		// heapx ends as the program did, as a shell says: 128 + 9.
		if !regexp.MustCompile(`^heapx: capture: node was killed by SIGKILL before the capture was complete \(after [0-9.]+ s; no timeline written\)\n$`).MatchString(errb.String()) {
			t.Errorf("stderr %q", errb.String())
		}
		if names := dirFiles(t, dir); len(names) != 0 {
			t.Errorf("left behind: %q", names)
		}
	})
}

// TestCaptureInterrupted interrupts an allocation timeline (SIGINT, as
// Ctrl-C sends): heapx exits 1 saying so, writes nothing, and leaves the
// program it attached to running and no longer tracked: a snapshot taken
// afterwards has no allocation stacks.
func TestCaptureInterrupted(t *testing.T) {
	needNode(t)
	p := startInspected(t, 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "t.heaptimeline")
	cmd := heapxCommand(t, "capture", "--inspect", p.hostPort, "--timeline", "60s", "-o", path)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("heapx: %v, want exit 1 (%s)", err, errb.String())
	}
	if want := "heapx: capture: " + path + " not written: interrupted (SIGINT)\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
	if names := dirFiles(t, dir); len(names) != 0 {
		t.Errorf("left behind: %q", names)
	}
	if !p.alive() {
		t.Fatal("the program is gone")
	}
	after := filepath.Join(dir, "after.heapsnapshot")
	ok(t, "capture", "--inspect", p.hostPort, "-o", after)
	var info struct {
		Trace bool `json:"has_allocation_trace"`
	}
	okJSON(t, &info, "info", "--json", after)
	if info.Trace {
		t.Error("the program is still tracked after the interrupted timeline")
	}
}

// TestCaptureChromium captures a page of a headless Chromium started with
// --remote-debugging-port=0 (the port it chose is in DevToolsActivePort),
// picked by a part of its URL. The page leaks detached lists, which
// heapx detached finds in the snapshot.
func TestCaptureChromium(t *testing.T) {
	browser := needTool(t, "chromium")
	dir := t.TempDir()
	profile := filepath.Join(dir, "profile")
	page, _ := filepath.Abs("../../testdata/capture/detached-dom.html")
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "file://"+page)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var logb bytes.Buffer
	cmd.Stderr = &logb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	var port string
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort")); err == nil && bytes.Contains(b, []byte("\n")) {
			port = string(b[:bytes.IndexByte(b, '\n')])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromium wrote no DevToolsActivePort:\n%s", logb.String())
		}
	}
	// With a second page open (headless Chromium opens one from the
	// command line), heapx cannot choose without --url.
	req, _ := http.NewRequest(http.MethodPut, "http://127.0.0.1:"+port+"/json/new?about:blank", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if r := heapx(t, "capture", "--inspect", "127.0.0.1:"+port, "-o", filepath.Join(dir, "x.heapsnapshot")); r.code != 1 || !strings.Contains(r.stderr, "targets at 127.0.0.1:"+port+" match; say which with --url") {
		t.Errorf("two pages, no --url: exit %d, %s", r.code, r.stderr)
	}
	// The page leaks a list every 50 ms once it has loaded, which on a
	// busy machine takes a while: take snapshots until one holds some.
	path := filepath.Join(dir, "page.heapsnapshot")
	var rows []map[string]any
	for deadline := time.Now().Add(60 * time.Second); ; {
		time.Sleep(time.Second)
		ok(t, "capture", "--inspect", "127.0.0.1:"+port, "--url", "detached-dom", "-o", path)
		var d render.Document
		okJSON(t, &d, "detached", "--json", "-n", "0", path)
		trees := 0
		if len(d.Sections) > 0 {
			rows = d.Sections[0].Rows
			for _, row := range rows {
				if strings.HasPrefix(fmt.Sprint(row["root"]), `Detached <ul class="leaked-list">`) && row["elements"] == 21.0 {
					trees++
				}
			}
		}
		if trees > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no detached leaked-list tree of 21 elements in the page's snapshots within a minute: %v", rows)
		}
	}
}

// TestCaptureJVM dumps a JVM with jcmd: a program that keeps 2,000
// Ticket objects, read back from the gzip-compressed dump.
func TestCaptureJVM(t *testing.T) {
	testfixtures.NeedTool(t, "java") // a JDK 11 or later, which has jcmd too
	testfixtures.NeedTool(t, "jcmd")
	src, _ := filepath.Abs("../../testdata/gen/TicketLeak.java")
	cmd := exec.Command("java", src)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || sc.Text() != "step 1 tickets 2000" {
		cmd.Process.Kill()
		t.Fatalf("the Java program said %q", sc.Text())
	}
	path := filepath.Join(t.TempDir(), "tickets.hprof.gz")
	if out := ok(t, "capture", "--jvm", fmt.Sprint(cmd.Process.Pid), "-o", path); !strings.HasPrefix(out, "wrote "+path+" (") {
		t.Errorf("output %q", out)
	}
	var d struct {
		Classes []struct {
			Constructor string `json:"constructor"`
			Count       int    `json:"count"`
		} `json:"classes"`
	}
	okJSON(t, &d, "summary", "--json", "-n", "0", path)
	found := false
	for _, c := range d.Classes {
		if c.Constructor == "TicketLeak$Ticket" {
			found = c.Count == 2000
		}
	}
	if !found {
		t.Error("the dump has no 2,000 TicketLeak$Ticket")
	}
	if r := heapx(t, "capture", "--jvm", "999999999", "-o", path+".2"); r.code != 1 || !strings.Contains(r.stderr, "jcmd 999999999 GC.heap_dump failed") {
		t.Errorf("a JVM that is not there: exit %d, %s", r.code, r.stderr)
	}
}

// TestCaptureUsage checks the mistakes a user makes with the flags, each
// answered before anything is started.
func TestCaptureUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"capture"}, "capture needs one target: --inspect HOST:PORT, --jvm PID, or a command after --"},
		{[]string{"capture", "--inspect", "9229", "--jvm", "1"}, "capture needs one target"},
		{[]string{"capture", "--url", "x", "--jvm", "1"}, "--url picks a target of --inspect HOST:PORT"},
		{[]string{"capture", "--inspect", "9229", "--timeline", "5s", "--every", "1s"}, "--timeline and --sampling record one file each"},
		{[]string{"capture", "--inspect", "9229", "--timeline", "5s", "--sampling", "5s"}, "cannot be used together"},
		{[]string{"capture", "--inspect", "9229", "--json"}, "--json is a flag of --report"},
		{[]string{"capture", "--inspect", "9229", "--grow", "lots"}, `--grow: "lots" is not a percentage above 0`},
		{[]string{"capture", "--jvm", "1", "--grow", "20%"}, "--grow measures a V8 heap"},
		{[]string{"capture", "--jvm", "1", "--sampling", "5s"}, "need a V8 target"},
		{[]string{"capture", "--inspect", "9229", "--sampling", "5s", "--report"}, "--report needs heap snapshots"},
		{[]string{"capture", "--inspect", "9229", "--count", "0"}, "--count must be 1 or more"},
		{[]string{"capture", "dump.heapsnapshot"}, "capture takes no FILE argument"},
		{[]string{"capture", "--", "python3", "app.py"}, `heapx starts Node.js programs (node app.js ...), not "python3"`},
		{[]string{"capture", "--inspect", "127.0.0.1:1"}, "no DevTools endpoint at 127.0.0.1:1"},
		{[]string{"capture", "-o", "/nonexistent/x.heapsnapshot", "--", "node", "app.js"}, "/nonexistent/x.heapsnapshot: no directory /nonexistent to write it in"},
	} {
		r := heapx(t, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("heapx %v: exit %d, stderr %q; want one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestCaptureProgramFinishes runs programs that end normally before the
// capture does. A sampling profile and an allocation timeline end with
// the program and are written, saying so, and heapx exits 0: they cover
// its whole run. A series cannot be complete: heapx keeps the snapshots
// taken, says which, and exits 1. The program's output reaches heapx's
// stderr without the lines node's inspector adds.
func TestCaptureProgramFinishes(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "short.js")
	if err := os.WriteFile(prog, []byte("const kept = [];\nfor (let i = 0; i < 1000; i++) kept.push({ i });\nsetTimeout(() => console.log('done', kept.length), 700);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := filepath.Join(dir, "short.heapprofile")
	r := heapx(t, "capture", "--sampling", "60s", "-o", profile, "--", "node", prog)
	if r.code != 0 || !strings.HasSuffix(r.stdout, "allocated (until the program ended)\n") || r.stderr != "done 1000\n" {
		t.Errorf("sampling a program that finishes: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Node keeps a program it tracks allocations of alive after its end
	// (the inspector's update timer holds the event loop): heapx asks
	// whether it is idle, and ends the timeline with it.
	timeline := filepath.Join(dir, "short.heaptimeline")
	start := time.Now()
	r = heapx(t, "capture", "--timeline", "60s", "-o", timeline, "--", "node", prog)
	took := time.Since(start)
	if r.code != 0 || !strings.Contains(r.stdout, "(until the program ended)") || r.stderr != "done 1000\n" || took > 30*time.Second {
		t.Errorf("a timeline of a program that finishes: exit %d after %v, stdout %q, stderr %q", r.code, took, r.stdout, r.stderr)
	}
	var tl sitesDoc
	okJSON(t, &tl, "timeline", "--json", timeline)
	if rows := tl.Sections[0].Rows; len(rows) != 10 || rowInt(rows[9], "end_ms") > 25000 || rowInt(rows[9], "live_count") < 1000 {
		t.Errorf("the timeline of a program that finished: %v", rows)
	}
	r = heapx(t, "capture", "--every", "300ms", "--count", "10", "-o", filepath.Join(dir, "s.heapsnapshot"), "--", "node", prog)
	kept := regexp.MustCompile(`heapx: kept the snapshots written before the end: (\S+s-1\.heapsnapshot(, \S+s-\d\.heapsnapshot)*)\n`).FindStringSubmatch(r.stderr)
	if r.code != 1 || kept == nil || !regexp.MustCompile(`\nheapx: capture: node exited normally \(status 0\) before the capture was complete \(after [0-9.]+ s; \d of 10 snapshots taken\)\n$`).MatchString(r.stderr) {
		t.Fatalf("a series of a program that finishes: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, f := range strings.Split(kept[1], ", ") {
		var info struct {
			Format string `json:"format"`
		}
		okJSON(t, &info, "info", "--json", f)
		if info.Format != "v8.heapsnapshot" {
			t.Errorf("%s kept is %q", f, info.Format)
		}
	}
	for _, noise := range []string{"Debugger", "For help", "Waiting for the debugger"} {
		if strings.Contains(r.stderr, noise) {
			t.Errorf("stderr has node's inspector lines: %q", r.stderr)
		}
	}
}

// writeProgram writes a JavaScript program to dir and returns its path.
func writeProgram(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCaptureProgramCrashes runs a program that throws under each kind of
// capture: its own output and error reach heapx's stderr as node prints
// them, and heapx exits with its status, saying how it ended, what the
// capture had done, and its error line. A timeline or a profile is
// written up to the crash; a series keeps no snapshot (none was due yet).
func TestCaptureProgramCrashes(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	prog := writeProgram(t, dir, "throw.js", "const kept = [];\nfor (let i = 0; i < 1000; i++) kept.push({ i });\nconsole.error('starting');\nsetTimeout(() => { throw new Error('boom at ' + kept.length); }, 400);\n")
	for _, c := range []struct {
		name string
		args []string
		done string
		ext  string
	}{
		{"every", []string{"--every", "2s"}, `0 of 3 snapshots taken`, ""},
		{"count", []string{"--count", "2"}, `0 of 2 snapshots taken`, ""},
		{"grow", []string{"--grow", "50%"}, `0 of 3 snapshots taken`, ""},
		{"one", nil, `no snapshot taken`, ""},
		{"timeline", []string{"--timeline", "20s"}, `the timeline is written up to then`, ".heaptimeline"},
		{"sampling", []string{"--sampling", "20s"}, `the profile is written up to then`, ".heapprofile"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			r := heapx(t, append(append([]string{"capture", "-o", out}, c.args...), "--", "node", prog)...)
			last := regexp.MustCompile(`\nheapx: capture: node exited with status 1 before the capture was complete \(after [0-9.]+ s; ` + c.done + `\): Error: boom at 1000\n$`)
			if r.code != 1 || !last.MatchString(r.stderr) || !strings.Contains(r.stderr, "starting\n") || !strings.Contains(r.stderr, "throw.js:4") {
				t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			files := dirFiles(t, out)
			if c.ext == "" {
				if len(files) != 0 || strings.Contains(r.stdout, "wrote") {
					t.Errorf("a series left %q, said %q", files, r.stdout)
				}
				return
			}
			if len(files) == 0 || !strings.HasSuffix(files[0], c.ext) || !strings.Contains(r.stdout, "(until the program ended)") {
				t.Errorf("files %q, stdout %q", files, r.stdout)
			}
		})
	}
}

// TestCaptureProgramEndings ends a program in other ways during a series:
// a module not found, process.exit with a status after a message, a
// signal, and a crash after some snapshots were taken, which are kept.
func TestCaptureProgramEndings(t *testing.T) {
	needNode(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, src string
		args      []string
		code      int
		want      string // how heapx's last line ends, a regexp
	}{
		{"missing module", "", []string{"--every", "2s"}, 1, `node exited with status 1 before the capture was complete \(after [0-9.]+ s; 0 of 3 snapshots taken\): Error: Cannot find module '\S+nothere\.js'`},
		{"exit status", "console.log('up');\nsetTimeout(() => { console.error('fatal: no config'); process.exit(3); }, 300);\n", []string{"--every", "2s"}, 3, `node exited with status 3 before the capture was complete \(after [0-9.]+ s; 0 of 3 snapshots taken\): fatal: no config`},
		{"signal", "setTimeout(() => process.kill(process.pid, 'SIGKILL'), 300);\n", []string{"--every", "2s"}, 137, `node was killed by SIGKILL before the capture was complete \(after [0-9.]+ s; 0 of 3 snapshots taken\)`},
		{"after snapshots", "const kept = [];\nconst t = setInterval(() => { for (let i = 0; i < 100; i++) kept.push({ i }); }, 50);\nsetTimeout(() => { clearInterval(t); throw new RangeError('late ' + kept.length); }, 2500);\n", []string{"--every", "700ms", "--count", "10"}, 1, `node exited with status 1 before the capture was complete \(after [0-9.]+ s; [1-3] of 10 snapshots taken\): RangeError: late \d+`},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := filepath.Join(dir, "nothere.js")
			if c.src != "" {
				prog = writeProgram(t, dir, strings.ReplaceAll(c.name, " ", "-")+".js", c.src)
			}
			out := t.TempDir()
			r := heapx(t, append(append([]string{"capture", "-o", filepath.Join(out, "s.heapsnapshot")}, c.args...), "--", "node", prog)...)
			if r.code != c.code || !regexp.MustCompile(`(^|\n)heapx: capture: `+c.want+`\n$`).MatchString(r.stderr) {
				t.Errorf("exit %d (want %d), stderr:\n%s", r.code, c.code, r.stderr)
			}
			files := dirFiles(t, out)
			if c.name != "after snapshots" {
				if len(files) != 0 {
					t.Errorf("left %q", files)
				}
				return
			}
			var kept []string // the snapshots, not their scripts side files
			for _, f := range files {
				if !strings.HasSuffix(f, ".scripts.jsonl") {
					kept = append(kept, filepath.Join(out, f))
				}
			}
			if len(kept) == 0 || !strings.Contains(r.stderr, "heapx: kept the snapshots written before the end: "+strings.Join(kept, ", ")+"\n") {
				t.Errorf("kept %q; stderr:\n%s", kept, r.stderr)
			}
		})
	}
}

// TestCaptureOutputDirectory gives -o an existing directory: each kind
// of capture writes its default names (heap-TIME with the kind's
// extension; a series numbered) into it.
func TestCaptureOutputDirectory(t *testing.T) {
	needNode(t)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"series", []string{"--every", "300ms", "--count", "2"}, `^heap-\d{8}-\d{6}-1\.heapsnapshot heap-\d{8}-\d{6}-1\.heapsnapshot\.scripts\.jsonl heap-\d{8}-\d{6}-2\.heapsnapshot heap-\d{8}-\d{6}-2\.heapsnapshot\.scripts\.jsonl$`},
		{"timeline", []string{"--timeline", "500ms"}, `^heap-\d{8}-\d{6}\.heaptimeline heap-\d{8}-\d{6}\.heaptimeline\.scripts\.jsonl heap-\d{8}-\d{6}\.heaptimeline\.stats\.jsonl$`},
		{"sampling", []string{"--sampling", "500ms"}, `^heap-\d{8}-\d{6}\.heapprofile heap-\d{8}-\d{6}\.heapprofile\.scripts\.jsonl$`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			r := heapx(t, append(append([]string{"capture", "-o", dir + "/"}, c.args...), "--", "node", leakJS)...)
			if got := strings.Join(dirFiles(t, dir), " "); r.code != 0 || !regexp.MustCompile(c.want).MatchString(got) {
				t.Errorf("exit %d, %s holds %q; stderr %s", r.code, dir, got, r.stderr)
			}
		})
	}
}
