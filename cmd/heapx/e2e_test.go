package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	hx "github.com/heapx/heapx"
	"github.com/heapx/heapx/internal/testfixtures"
)

// These tests run heapx the way a user does, on the fixtures in testdata/,
// comparing with the numbers Chrome DevTools' own heap snapshot worker
// computed for the same files (testdata/golden). Most call run, the
// command's whole life short of the process, in the test process: its
// stdout and stderr are not terminals, as in CI, so no progress bar may
// ever appear. The few tests of what only a process shows (its exit on a
// signal, its stdout on a terminal, its umask, its peak memory, stdin from
// a pipe) run the test binary as heapx (heapxCommand).

// asMain is the environment variable that makes the test binary heapx.
const asMain = "HEAPX_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	switch os.Getenv(asMain) {
	case "1":
		main() // exits
	case "peak":
		os.Exit(runForPeak())
	}
	// testing.M has no TempDir, hence MkdirTemp and the explicit cleanup.
	dir, err := os.MkdirTemp("", "heapx-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sharedDir holds the files analysedCopy makes once for every test.
var sharedDir string

// analysedCopies are the conversions analysedCopy made, by output path.
var analysedCopies sync.Map // string -> *analysedCopyResult

type analysedCopyResult struct {
	once   sync.Once
	stdout string
	err    error
}

// analysedCopy returns f converted with --analyze to the format of ext
// (".db", ".jsonl.gz") and what convert printed. Several tests read the
// same copies of every fixture, and writing them is most of what those
// tests cost, so the first test to ask makes each and the others wait for
// it; they must not change it.
func analysedCopy(t *testing.T, f fixture, ext string) (path, stdout string) {
	t.Helper()
	path = filepath.Join(sharedDir, f.name+ext)
	v, _ := analysedCopies.LoadOrStore(path, &analysedCopyResult{})
	c := v.(*analysedCopyResult)
	c.once.Do(func() {
		c.err = fmt.Errorf("heapx convert --analyze %s %s did not finish", f.path, path)
		r := heapx(t, "convert", "--analyze", f.path, path)
		c.err = nil
		c.stdout = r.stdout
		if r.code != 0 || r.stderr != "" {
			c.err = fmt.Errorf("heapx convert --analyze %s %s: exit %d, stderr:\n%s", f.path, path, r.code, r.stderr)
		}
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return path, c.stdout
}

// heapxCommand returns a command that runs heapx with args in a process
// of its own: this test binary, which TestMain turns into heapx (main, as
// a built heapx runs it), so no build is needed and -race covers it too.
func heapxCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), asMain+"=1")
	return cmd
}

// result is one run of heapx.
type result struct {
	stdout, stderr string
	code           int
}

// heapx runs heapx with args in this process and returns what it printed
// and its exit code. Its stderr is a file, so progress bars (drawn only
// on a terminal) cannot appear; tests may call it in parallel, since run
// builds its command tree anew each time.
func heapx(t *testing.T, args ...string) result {
	t.Helper()
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	r := result{code: runRecovered(t, args, &stdout, stderr)}
	errb, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	r.stdout, r.stderr = stdout.String(), string(errb)
	return r
}

// runRecovered is run, failing the test (instead of ending every test)
// when it panics: no input may ever cause one.
func runRecovered(t *testing.T, args []string, stdout io.Writer, stderr *os.File) int {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("heapx %v panicked: %v\n%s", args, p, debug.Stack())
		}
	}()
	return run(args, stdout, stderr)
}

// heapxProcess runs heapx with args in a process of its own, its stdin
// reading from in (a pipe) or from nothing when in is nil, and returns
// what it printed and its exit code.
func heapxProcess(t *testing.T, in io.Reader, args ...string) result {
	t.Helper()
	cmd := heapxCommand(t, args...)
	cmd.Stdin = in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("running heapx %v: %v", args, err)
	}
	// A Go panic or fatal error prints a goroutine trace and exits 2; no
	// input may ever cause one.
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") || r.code == 2 {
		t.Fatalf("heapx %v crashed (exit %d):\n%s", args, r.code, r.stderr)
	}
	return r
}

// ok runs heapx, requires success and silence on stderr, and returns stdout.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	r := heapx(t, args...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("heapx %v: exit %d, stderr:\n%s", args, r.code, r.stderr)
	}
	return r.stdout
}

// okJSON runs heapx like ok and decodes its stdout into v.
func okJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := ok(t, args...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("heapx %v: %v in:\n%s", args, err, out)
	}
}

// infoCounts is the part of `heapx info --json` the format tests check.
type infoCounts struct {
	Format    string `json:"format"`
	Nodes     int    `json:"node_count"`
	Edges     int    `json:"edge_count"`
	TotalSelf uint64 `json:"total_self_size"`
}

// fixture is one testdata dump and its DevTools golden file.
type fixture struct {
	name, path string
}

// noGolden are the V8 dumps of testdata/ made for other tests, which have
// no DevTools golden (testdata/gen/README.md).
var noGolden = map[string]bool{
	"node-list-20k-1-baseline": true, "node-list-20k-2-target": true, "node-list-20k-3-final": true,
}

// fixtures lists every V8 dump in testdata/ with its DevTools golden, so a
// new fixture is tested without touching this file; a dump whose golden
// is missing fails the test instead of dropping out of it.
func fixtures(t *testing.T) []fixture {
	t.Helper()
	var fs []fixture
	for _, p := range testfixtures.V8Dumps(t) {
		base := filepath.Base(p)
		name := base[:strings.Index(base, ".")]
		if noGolden[name] {
			continue
		}
		if _, err := os.Stat(goldenPath(name)); err != nil {
			t.Fatalf("%s has no DevTools golden (testdata/golden/README.md says how to make one): %v", p, err)
		}
		fs = append(fs, fixture{name, filepath.Join("..", "..", "testdata", base)})
	}
	return fs
}

func goldenPath(name string) string {
	return filepath.Join("..", "..", "testdata", "golden", name+".devtools.json")
}

// golden is the part of a DevTools golden file these tests compare.
type golden struct {
	NodeCount     int    `json:"node_count"`
	EdgeCount     int    `json:"edge_count"`
	TotalSelfSize uint64 `json:"total_self_size"`
}

func readGolden(t *testing.T, name string) golden {
	t.Helper()
	b, err := os.ReadFile(goldenPath(name))
	if err != nil {
		t.Fatal(err)
	}
	var g golden
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatalf("%s: %v", goldenPath(name), err)
	}
	return g
}

// TestInfoJSONMatchesDevTools checks `info --json` on every fixture: the
// counts and total size DevTools computed, and a census that adds up.
func TestInfoJSONMatchesDevTools(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var info hx.Info
			out := ok(t, "info", "--json", f.path)
			dec := json.NewDecoder(strings.NewReader(out))
			dec.DisallowUnknownFields() // docs/json.md documents every field
			if err := dec.Decode(&info); err != nil {
				t.Fatalf("info --json is not the documented object: %v\n%s", err, out)
			}
			want := readGolden(t, f.name)
			if info.NodeCount != want.NodeCount || info.EdgeCount != want.EdgeCount || info.TotalSelfSize != want.TotalSelfSize {
				t.Errorf("nodes %d, edges %d, total self size %d; DevTools says %d, %d, %d",
					info.NodeCount, info.EdgeCount, info.TotalSelfSize, want.NodeCount, want.EdgeCount, want.TotalSelfSize)
			}
			if info.SchemaVersion != 1 || info.File != f.path || info.Compression != "gzip" || !strings.HasSuffix(info.Producer, "(V8)") && !strings.HasPrefix(info.Producer, "Chromium") {
				t.Errorf("schema_version %d, file %q, compression %q, producer %q",
					info.SchemaVersion, info.File, info.Compression, info.Producer)
			}
			wantFormat := "v8.heapsnapshot"
			if strings.HasSuffix(f.path, ".heaptimeline.gz") {
				wantFormat = "v8.heaptimeline"
			}
			if info.Format != wantFormat {
				t.Errorf("format %q, want %q", info.Format, wantFormat)
			}
			var n, size uint64
			for _, r := range info.NodeTypes {
				n, size = n+r.Count, size+r.SelfSize
			}
			if n != uint64(want.NodeCount) || size != want.TotalSelfSize {
				t.Errorf("node_types add up to %d nodes, %d bytes", n, size)
			}
			n, size = 0, 0
			for _, r := range info.Categories {
				n, size = n+r.Count, size+r.SelfSize
			}
			if n != uint64(want.NodeCount) || size != want.TotalSelfSize {
				t.Errorf("categories add up to %d nodes, %d bytes", n, size)
			}
			if info.StringCount == 0 || !info.HasLocations || !info.HasDetachedness {
				t.Errorf("string_count %d, has_locations %v, has_detachedness %v: every fixture has all three",
					info.StringCount, info.HasLocations, info.HasDetachedness)
			}
			// Only the fixtures made with --track-heap-objects or a
			// timeline carry an allocation trace (testdata/gen/README.md).
			wantTrace := f.name == "node-trace" || f.name == "node-timeline" || f.name == "node-sites"
			if info.HasAllocationTrace != wantTrace {
				t.Errorf("has_allocation_trace %v, want %v", info.HasAllocationTrace, wantTrace)
			}
		})
	}
}

// TestInfoText checks the human-readable output of info.
func TestInfoText(t *testing.T) {
	t.Parallel()
	out := ok(t, "info", "../../testdata/chromium-small-page.heapsnapshot.gz")
	for _, want := range []string{
		"Format            v8.heapsnapshot\n",
		"Nodes             173,737\n",
		"Edges             577,170\n",
		"Total self size   5.0 MB (5,006,009 bytes)\n",
		"Detachedness      yes (510 detached)\n",
		"Node type ", "Category ", "Self size",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
}

// TestBadInput runs info on things that are not heap dumps: each must fail
// with exit code 1 and one "heapx: " line naming the file.
func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := testfixtures.Gunzip(t, "../../testdata/node-basic.heapsnapshot.gz")
	gz, err := os.ReadFile("../../testdata/node-basic.heapsnapshot.gz")
	if err != nil {
		t.Fatal(err)
	}
	var notJSON bytes.Buffer
	zw := gzip.NewWriter(&notJSON)
	zw.Write([]byte("hello, not a snapshot\n"))
	zw.Close()

	files := map[string][]byte{
		"garbage.heapsnapshot":          []byte("\x00\x01garbage\xff"),
		"empty.heapsnapshot":            {},
		"truncated.heapsnapshot.gz":     gz[:len(gz)/2],
		"gzip-header-only.gz":           gz[:10],
		"truncated.heapsnapshot":        raw[:len(raw)/2],
		"cut-in-header.heapsnapshot":    raw[:40],
		"not-json.heapsnapshot.gz":      notJSON.Bytes(),
		"trailing-junk.heapsnapshot":    append(append([]byte{}, raw...), "}}"...),
		"unbalanced-array.heapsnapshot": []byte(`{"snapshot":{"meta":{},"node_count":1,"edge_count":0},"nodes":[[[[`),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "a-directory.heapsnapshot"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{ // file -> what the message must say
		"does-not-exist.heapsnapshot":   "no such file",
		"a-directory.heapsnapshot":      "is a directory",
		"garbage.heapsnapshot":          "not a heap dump heapx can read",
		"empty.heapsnapshot":            "empty file",
		"truncated.heapsnapshot.gz":     ": file ends early: the dump is truncated",
		"gzip-header-only.gz":           "",
		"truncated.heapsnapshot":        fmt.Sprintf(": byte %d: file ends early: the dump is truncated", len(raw)/2),
		"cut-in-header.heapsnapshot":    "",
		"not-json.heapsnapshot.gz":      "",
		"trailing-junk.heapsnapshot":    "",
		"unbalanced-array.heapsnapshot": "",
	}
	for name, msg := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(dir, name)
			for _, args := range [][]string{{"info", path}, {"info", "--json", path}} {
				r := heapx(t, args...)
				if r.code != 1 {
					t.Errorf("heapx %v: exit %d, want 1", args, r.code)
				}
				if r.stdout != "" {
					t.Errorf("heapx %v printed to stdout:\n%s", args, r.stdout)
				}
				if !strings.HasPrefix(r.stderr, "heapx: ") || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("heapx %v: stderr is not one \"heapx: \" line:\n%s", args, r.stderr)
				}
				if !strings.Contains(r.stderr, path) || !strings.Contains(r.stderr, msg) {
					t.Errorf("heapx %v: message does not name the file and say %q:\n%s", args, msg, r.stderr)
				}
			}
		})
	}
}

// TestUsageErrors checks that command-line mistakes fail the same way as
// bad input: one "heapx: " line, exit code 1.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"info"},
		{"info", "a", "b"},
		{"no-such-command"},
		{"info", "--no-such-flag", "x"},
	} {
		r := heapx(t, args...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "heapx: ") || r.stdout != "" {
			t.Errorf("heapx %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

// TestVersionAndHelp checks --version and that help lists the commands.
func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	if out := ok(t, "--version"); !strings.HasPrefix(out, "heapx ") {
		t.Errorf("--version printed %q", out)
	}
	out := ok(t, "--help")
	if !strings.Contains(out, "info") {
		t.Errorf("--help does not list info:\n%s", out)
	}
}
