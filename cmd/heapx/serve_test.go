package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is what a running heapx wrote to stderr so far.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// has waits a few seconds for text to have been written.
func (s *syncBuffer) has(text string) bool {
	for range 50 {
		if strings.Contains(s.String(), text) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// serving starts heapx serve with args as a user does (stdout a pipe, so
// no browser opens), waits for the address it prints and returns it,
// with what it writes to stderr and a function that stops it with
// Ctrl-C and returns its exit code.
func serving(t *testing.T, args ...string) (url string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	cmd := heapxCommand(t, append([]string{"serve"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr = &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	stop = func() int {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case code := <-exited:
			return code
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("heapx serve did not stop on SIGINT")
			return <-exited
		}
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, out)
		close(lines)
	}()
	go func() {
		cmd.Wait()
		exited <- cmd.ProcessState.ExitCode()
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("heapx serve printed no address; stderr:\n%s", stderr)
		}
		m := regexp.MustCompile(`^heapx: serving (.*) at (http://\S+) \(Ctrl-C to stop\)$`).FindStringSubmatch(line)
		if m == nil {
			stop()
			t.Fatalf("heapx serve printed %q", line)
		}
		url = m[2]
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("heapx serve printed no address in 60 s; stderr:\n%s", stderr)
	}
	return url, stderr, stop
}

// TestServe runs heapx serve on the leak series: it listens on the
// loopback address, answers the API with what heapx report says, and
// stops cleanly on Ctrl-C.
func TestServe(t *testing.T) {
	var files []string
	for _, f := range []string{"node-leak-3.heapsnapshot.gz", "node-leak-1.heapsnapshot.gz", "node-leak-2.heapsnapshot.gz"} {
		files = append(files, copyFixture(t, f))
	}
	url, stderr, stop := serving(t, append(files, "--no-browser")...)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || strings.Contains(url, "token") {
		t.Errorf("address %s, want the loopback address without a token", url)
	}
	res, err := http.Get(url + "api/v1/report")
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		File      string   `json:"file"`
		Baselines []string `json:"baselines"`
		Parts     []struct {
			Key string `json:"key"`
		} `json:"parts"`
	}
	json.NewDecoder(res.Body).Decode(&rep)
	res.Body.Close()
	if rep.File != files[0] || len(rep.Baselines) != 2 || len(rep.Parts) == 0 || rep.Parts[0].Key != "leaks" {
		t.Errorf("the report: %+v", rep)
	}
	// The SQL console's cache goes where heapx sql's does, said on stderr.
	res, err = http.Post(url+"api/v1/sql", "application/json", strings.NewReader(`{"query": "SELECT count(*) AS n FROM node"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), `"rows":[{"n":53155}]`) {
		t.Errorf("SQL: %s", body)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit code %d after Ctrl-C, want 0; stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(files[0] + ".heapx.db"); err != nil || !stderr.has("heapx: building the SQL cache of "+files[0]) {
		t.Errorf("the SQL cache is not beside the dump (%v) or not announced:\n%s", err, stderr)
	}
}

// TestServeTrace runs heapx serve on a memory trace as a user does: the
// page's session lists the lifetime queries, which answer with heapx
// lifetimes' numbers, and the report is heapx report TRACE's.
func TestServeTrace(t *testing.T) {
	url, stderr, stop := serving(t, handlerTrace, "--no-browser")
	get := func(path string, out any) {
		t.Helper()
		res, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if err := json.NewDecoder(res.Body).Decode(out); err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %v", path, res.StatusCode, err)
		}
	}
	var info struct {
		Trace *struct {
			Objects int `json:"objects"`
		} `json:"trace"`
		Queries []struct {
			Name string `json:"name"`
		} `json:"queries"`
	}
	get("api/v1/session", &info)
	if info.Trace == nil || info.Trace.Objects != 18 || len(info.Queries) != 11 {
		t.Errorf("the session: trace %+v, %d queries; want 18 objects and the 11 lifetime queries", info.Trace, len(info.Queries))
	}
	var leaks struct {
		Sections []struct {
			Rows []map[string]any `json:"rows"`
		} `json:"sections"`
	}
	get("api/v1/queries/trace-leaks", &leaks)
	if len(leaks.Sections) != 1 || len(leaks.Sections[0].Rows) != 1 || leaks.Sections[0].Rows[0]["site"] != "/app/handler.js:3:14" {
		t.Errorf("trace-leaks: %+v", leaks)
	}
	var rep struct {
		Format string `json:"format"`
	}
	get("api/v1/report", &rep)
	if rep.Format != "memtrace" {
		t.Errorf("the report's format is %q, want memtrace", rep.Format)
	}
	if code := stop(); code != 0 {
		t.Errorf("exit code %d after Ctrl-C, want 0; stderr:\n%s", code, stderr)
	}
}

// TestServeReachable: an address other machines can reach gets a token
// and a warning.
func TestServeReachable(t *testing.T) {
	url, stderr, stop := serving(t, filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), "--http", "0.0.0.0:0")
	defer stop()
	m := regexp.MustCompile(`^http://[^/]+:(\d+)/\?token=([0-9a-f]{32})$`).FindStringSubmatch(url)
	if m == nil {
		t.Fatalf("address %s, want one with a 128-bit token", url)
	}
	if !stderr.has("heapx: warning: serving on 0.0.0.0:" + m[1] + " (every address of this machine), which other machines may reach") {
		t.Errorf("no warning:\n%s", stderr)
	}
	local := "http://127.0.0.1:" + m[1]
	for _, c := range []struct {
		path string
		want int
	}{{"/api/v1/session", 401}, {"/api/v1/session?token=" + m[2], 200}, {"/", 401}} {
		res, err := http.Get(local + c.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.path, res.StatusCode, c.want)
		}
	}
}

// TestServeErrors: a missing file or a bad address fails before serving.
func TestServeErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "serve needs a FILE argument"},
		{[]string{"serve", "no-such.heapsnapshot"}, "no-such.heapsnapshot"},
		{[]string{"serve", filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), "--http", "256.0.0.1:80"}, "--http 256.0.0.1:80"},
		{[]string{"serve", filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz"), filepath.Join("..", "..", "testdata", "hprof", "java-leakdemo-small.hprof.gz")}, "snapshots of different runtimes cannot be compared"},
		{[]string{"serve", handlerTrace, filepath.Join("..", "..", "testdata", "node-basic.heapsnapshot.gz")}, "handler.memtrace is a memory trace, which is served alone"},
	} {
		r := heapx(t, c.args...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("heapx %s: exit %d, stderr %q; want 1 and %q", strings.Join(c.args, " "), r.code, r.stderr, c.want)
		}
	}
}

// TestServeWarnsOfTheOrder: snapshots given in the wrong order are
// served, with the warning heapx report gives on stderr and in the API.
func TestServeWarnsOfTheOrder(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata")
	url, stderr, stop := serving(t, filepath.Join(dir, "node-leak-1.heapsnapshot.gz"), filepath.Join(dir, "node-leak-3.heapsnapshot.gz"), "--no-browser")
	defer stop()
	if !stderr.has("heapx: warning: The snapshots look out of order") || !stderr.has("heapx serve "+filepath.Join(dir, "node-leak-3.heapsnapshot.gz")+" "+filepath.Join(dir, "node-leak-1.heapsnapshot.gz")) {
		t.Errorf("no warning with the right command line on stderr:\n%s", stderr)
	}
	res, err := http.Get(url + "api/v1/session")
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		Warnings []struct{ Code string } `json:"warnings"`
	}
	json.NewDecoder(res.Body).Decode(&info)
	res.Body.Close()
	if len(info.Warnings) != 1 || info.Warnings[0].Code != "order_reversed" {
		t.Errorf("the session's warnings: %+v", info.Warnings)
	}
}
