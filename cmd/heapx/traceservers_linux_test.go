package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/testfixtures"
)

// The programs of testdata/gen/lifetimes traced as servers are: run
// under real requests from an HTTP client, then ended as servers are (a
// terminal's Ctrl-C, SIGTERM, SIGKILL). Each program says what heapx must
// find.

// nodeForTrace skips a test that runs node when it is not installed, and
// fails it under CI, which installs node (.ci/run).
func nodeForTrace(t *testing.T) {
	t.Helper()
	testfixtures.NeedTool(t, "node")
}

// tracedServer is heapx trace running a server of testdata/gen/lifetimes,
// in a process group of its own, as a terminal runs a job.
type tracedServer struct {
	cmd    *exec.Cmd
	trace  string
	port   int
	node   int         // the server's pid
	before int         // the signal listeners the server saw before adding its own
	stdout *syncBuffer // what heapx printed after the server's first line
	stderr *syncBuffer
	exited chan error
	client *http.Client
}

func startTracedServer(t *testing.T, program string, extra ...string) *tracedServer {
	t.Helper()
	nodeForTrace(t)
	s := &tracedServer{trace: filepath.Join(t.TempDir(), "server.hxtrace"), stdout: &syncBuffer{}, stderr: &syncBuffer{},
		exited: make(chan error, 1), client: &http.Client{Timeout: 10 * time.Second}}
	args := append([]string{"trace", "-o", s.trace}, extra...)
	s.cmd = heapxCommand(t, append(args, "--", "node", filepath.Join("..", "..", "testdata", "gen", "lifetimes", program))...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	s.cmd.Stderr = s.stderr
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL) })
	ready := make(chan bool, 1)
	go func() {
		lines := bufio.NewScanner(out)
		ok := lines.Scan() && strings.HasPrefix(lines.Text(), "listening ")
		if ok {
			n, _ := fmt.Sscanf(lines.Text(), "listening %d %d %d", &s.port, &s.node, &s.before)
			ok = n >= 2
		}
		ready <- ok
		for lines.Scan() {
			fmt.Fprintln(s.stdout, lines.Text())
		}
		s.exited <- s.cmd.Wait() // once stdout is read to its end
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("%s did not say it listens; stderr:\n%s", program, s.stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not start in a minute; stderr:\n%s", program, s.stderr.String())
	}
	return s
}

// get requests path and reads the whole answer.
func (s *tracedServer) get(t *testing.T, path string) {
	t.Helper()
	res, err := s.client.Get(fmt.Sprintf("http://127.0.0.1:%d%s", s.port, path))
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	if _, err := bufio.NewReader(res.Body).WriteTo(devNull{}); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

// wait waits for heapx to end and returns its exit code.
func (s *tracedServer) wait(t *testing.T) int {
	t.Helper()
	select {
	case err := <-s.exited:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatalf("heapx trace did not end in a minute after the signal; stderr:\n%s", s.stderr.String())
	}
	return -1
}

// TestTraceServerEndings: an HTTP server traced under real requests and
// ended as servers are: Ctrl-C in a terminal (SIGINT to the whole process
// group), SIGTERM to node, SIGTERM and SIGHUP to heapx alone (which passes
// it on), and SIGKILL to node. The trace holds every request, says how
// the program ended, and finds the leak at its allocation line; SIGKILL
// loses only what the last fraction of a second wrote, and here nothing,
// since the requests ended half a second before.
func TestTraceServerEndings(t *testing.T) {
	const requests = 150
	for _, c := range []struct {
		name   string
		signal func(s *tracedServer) error
		code   int
		says   string
		sig    string // the signal the program received and died of; "" for SIGKILL
	}{
		{"Ctrl-C to the process group", func(s *tracedServer) error { return syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT) },
			130, "the program was ended by SIGINT, which it had no listener for", "SIGINT"},
		{"SIGTERM to node", func(s *tracedServer) error { return syscall.Kill(s.node, syscall.SIGTERM) },
			143, "the program was ended by SIGTERM", "SIGTERM"},
		{"SIGTERM to heapx", func(s *tracedServer) error { return s.cmd.Process.Signal(syscall.SIGTERM) },
			143, "the program was ended by SIGTERM", "SIGTERM"},
		{"SIGHUP to heapx", func(s *tracedServer) error { return s.cmd.Process.Signal(syscall.SIGHUP) },
			129, "the program was ended by SIGHUP", "SIGHUP"},
		{"SIGKILL to node", func(s *tracedServer) error { return syscall.Kill(s.node, syscall.SIGKILL) },
			137, "the program was killed by SIGKILL before it could say how it ended", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := startTracedServer(t, "server-leak.js")
			for i := range requests {
				s.get(t, fmt.Sprintf("/items/%d?q=%d", i%9, i))
			}
			time.Sleep(500 * time.Millisecond)
			if err := c.signal(s); err != nil {
				t.Fatal(err)
			}
			if code := s.wait(t); code != c.code || !strings.Contains(s.stderr.String(), c.says) {
				t.Errorf("heapx trace: exit %d, stderr %q; want %d and %q", code, s.stderr.String(), c.code, c.says)
			}
			res := analyzeFile(t, s.trace)
			kept := oneSiteOn(t, res, "server-leak.js", 16)
			if kept.Count != requests || kept.AtEnd != requests || !kept.Leaking || kept.Trend.Growth < requests-10 {
				t.Errorf("server-leak.js:16: %d objects, %d alive at the end, trend %+v; want %d, %d, a leak of about one a request",
					kept.Count, kept.AtEnd, kept.Trend, requests, requests)
			}
			if body := oneSiteOn(t, res, "server-leak.js", 17); body.Count != requests || body.AtEnd != 0 || body.Leaking {
				t.Errorf("server-leak.js:17 (the bodies): %d objects, %d at the end, leaking %v", body.Count, body.AtEnd, body.Leaking)
			}
			if c.sig != "" && (res.Exit.How != memtrace.ExitSignal || res.Exit.Text != c.sig || len(res.Signals) != 1 || res.Signals[0] != c.sig) {
				t.Errorf("exit %v, signals %v; want an EXIT of %s", res.Exit, res.Signals, c.sig)
			}
			if c.sig == "" && (res.Exit.Kind != 0 || res.EndRecord.Signal != uint64(syscall.SIGKILL)) {
				t.Errorf("exit %v, end %v; want no EXIT, an END with SIGKILL", res.Exit, res.EndRecord)
			}
			out := queryTrace(t, "lifetimes", s.trace)
			if !rowHas(out, "found", "server-leak.js:16:16") || !rowHas(out, "server-leak.js:16:", "leak") {
				t.Errorf("heapx lifetimes does not mark server-leak.js:16 as a leak:\n%s", out)
			}
		})
	}
}

// queryTrace runs heapx like ok, but allows warnings on stderr.
func queryTrace(t *testing.T, args ...string) string {
	t.Helper()
	r := heapx(t, args...)
	if r.code != 0 {
		t.Fatalf("heapx %v: exit %d, stderr:\n%s", args, r.code, r.stderr)
	}
	return r.stdout
}

// rowHas says whether a line of out containing site contains want.
func rowHas(out, site, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, site) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

// TestTraceServerWithoutLeak: a server with a bounded ring of records, a
// table that fills over its first requests and per-request objects:
// heapx trace --report, trace-leaks and lifetimes say no leak was found,
// in one line, and no site is marked.
func TestTraceServerWithoutLeak(t *testing.T) {
	s := startTracedServer(t, "server-clean.js", "--report")
	for i := range 200 {
		s.get(t, fmt.Sprintf("/route%d?i=%d", i%7, i))
	}
	time.Sleep(200 * time.Millisecond)
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	if code := s.wait(t); code != 130 {
		t.Errorf("heapx trace: exit %d, stderr %s", code, s.stderr.String())
	}
	if out := s.stdout.String(); !strings.Contains(out, "no leak found: ") || !strings.Contains(out, "Allocation sites with problems") {
		t.Errorf("heapx trace --report printed:\n%s", out)
	}
	for _, q := range []string{"trace-leaks", "lifetimes"} {
		out := ok(t, q, s.trace)
		if !strings.Contains(out, "no leak found: no allocation site's stale objects kept growing over the ") || strings.Contains(out, "Leak found") || rowHas(out, "server-clean.js", "leak") {
			t.Errorf("heapx %s of a server without a leak:\n%s", q, out)
		}
	}
	res := analyzeFile(t, s.trace)
	if ring := oneSiteOn(t, res, "server-clean.js", 18); ring.Count != 200 || ring.AtEnd != 20 || ring.Leaking {
		t.Errorf("the ring's records: %d, %d at the end, leaking %v; want 200, 20, no", ring.Count, ring.AtEnd, ring.Leaking)
	}
}

// TestTraceAsyncNeverSettles: an async/await service whose /slow requests
// await a promise that never settles. Their contexts, held by the
// suspended calls, are a leak at their allocation line, with a warning
// that the trace cannot see the promises; the requests that finish leave
// nothing. Idle points are the returns to the event loop, about one a
// request, not one per await.
func TestTraceAsyncNeverSettles(t *testing.T) {
	s := startTracedServer(t, "async-hang.mjs")
	slow := &http.Client{Timeout: 150 * time.Millisecond}
	const each = 40
	for i := range each {
		s.get(t, fmt.Sprintf("/fast/%d", i))
		if res, err := slow.Get(fmt.Sprintf("http://127.0.0.1:%d/slow/%d", s.port, i)); err == nil {
			res.Body.Close()
			t.Fatalf("GET /slow/%d answered %d", i, res.StatusCode)
		}
	}
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	if code := s.wait(t); code != 130 {
		t.Errorf("heapx trace: exit %d, stderr %s", code, s.stderr.String())
	}
	res := analyzeFile(t, s.trace)
	ctx := sitesOn(res, "async-hang.mjs", 15)
	if len(ctx) == 0 || ctx[0].Count != 2*each || ctx[0].AtEnd != each || !ctx[0].Leaking || ctx[0].Suspended != each {
		t.Fatalf("async-hang.mjs:15 (the contexts): %+v; want %d made, %d alive at the end held by suspended calls, leaking", ctx, 2*each, each)
	}
	if at, _ := res.Positions(ctx[0].SuspendedAt); at.Line != 16 {
		t.Errorf("the contexts are held by calls suspended at %v, want line 16", at)
	}
	if n := len(res.Idles); n < each || n > 2*each+5 {
		t.Errorf("%d idle points for %d requests (%d of which await twice): want about one a request", n, 2*each, each)
	}
	var doc struct {
		Warnings []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(queryTrace(t, "trace-leaks", "--json", s.trace)), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range doc.Warnings {
		found = found || w.Code == "trace_held_by_suspended" && strings.Contains(w.Message, "async-hang.mjs:15:") && strings.Contains(w.Message, "async-hang.mjs:16:")
	}
	if !found {
		t.Errorf("no trace_held_by_suspended warning naming lines 15 and 16: %+v", doc.Warnings)
	}
}

// TestTracePlateauLeak: a leak that grows in steps (every 8th round) and
// drops by a third every 80 rounds is found; a bounded cache that fills in
// its first 16 rounds is not.
func TestTracePlateauLeak(t *testing.T) {
	nodeForTrace(t)
	path, out := traceProgram(t, "plateaus.js")
	if !strings.Contains(out, `{"history":18,"recent":16}`) {
		t.Fatalf("plateaus.js printed %q", out)
	}
	res := analyzeFile(t, path)
	kept := oneSiteOn(t, res, "plateaus.js", 18)
	plateaus, dips := 0, 0
	for i := 1; i < len(kept.StaleAtIdle); i++ {
		switch d := kept.StaleAtIdle[i] - kept.StaleAtIdle[i-1]; {
		case d == 0:
			plateaus++
		case d < 0:
			dips++
		}
	}
	if !kept.Leaking || plateaus < len(kept.StaleAtIdle)/2 || dips == 0 {
		t.Errorf("plateaus.js:18: leaking %v, %d flat steps and %d dips in %v", kept.Leaking, plateaus, dips, kept.StaleAtIdle)
	}
	if recent := oneSiteOn(t, res, "plateaus.js", 21); recent.Leaking || recent.AtEnd != 16 {
		t.Errorf("plateaus.js:21 (a bounded cache): leaking %v, %d at the end", recent.Leaking, recent.AtEnd)
	}
	if leaks := ok(t, "trace-leaks", path); !strings.Contains(leaks, "plateaus.js:18:") || strings.Contains(leaks, "plateaus.js:21:") {
		t.Errorf("heapx trace-leaks:\n%s", leaks)
	}
}

// TestTraceGracefulServer: a server with SIGINT and SIGTERM listeners of
// its own, which shuts down over a second and a half. A Ctrl-C to the
// process group reaches it once, heapx's listener is not among those it
// counts, and heapx says it received SIGINT and then called process.exit.
func TestTraceGracefulServer(t *testing.T) {
	s := startTracedServer(t, "graceful.js")
	if s.before != 0 {
		t.Errorf("the server saw %d signal listeners before adding its own, want 0", s.before)
	}
	s.get(t, "/")
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	if code := s.wait(t); code != 0 || !strings.Contains(s.stderr.String(), "the program received SIGINT, then exited with status 0 (process.exit)") {
		t.Errorf("heapx trace: exit %d, stderr %q", code, s.stderr.String())
	}
	if out := s.stdout.String(); out != `{"signals":1}`+"\n" {
		t.Errorf("the server printed %q, want one signal", out)
	}
	res := analyzeFile(t, s.trace)
	if res.Exit.How != memtrace.ExitProcessExit || len(res.Signals) != 1 || res.Signals[0] != "SIGINT" {
		t.Errorf("exit %v, signals %v; want process.exit after one SIGINT", res.Exit, res.Signals)
	}
}

// TestTraceListenersOnSocket: listeners that pile up on a keep-alive
// connection's socket, one a request, are a leak the trace cannot
// measure (Node made the socket and holds it; the program does not), and
// heapx says so.
func TestTraceListenersOnSocket(t *testing.T) {
	s := startTracedServer(t, "socket-listeners.js")
	for i := range 30 {
		s.get(t, fmt.Sprintf("/r%d", i)) // one keep-alive connection
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	if code := s.wait(t); code != 130 {
		t.Errorf("heapx trace: exit %d, stderr %s", code, s.stderr.String())
	}
	out := queryTrace(t, "trace-leaks", s.trace)
	if !strings.Contains(out, "up to 30 of the program's functions were held at once as on('close') listeners by an emitter Node made") ||
		!strings.Contains(out, "socket-listeners.js:14:") {
		t.Errorf("heapx trace-leaks: no warning about the socket's listeners:\n%s", out)
	}
}
