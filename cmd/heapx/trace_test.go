package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/memtrace"
	"github.com/heapx/heapx/internal/testfixtures"
)

// TestTraceCommand runs heapx trace as a user does: the program's output
// and exit status pass through, the trace is written where -o says (and
// by default beside the script's name), and it decodes to its END record.
func TestTraceCommand(t *testing.T) {
	testfixtures.NeedTool(t, "node")
	dir := t.TempDir()
	app := filepath.Join(dir, "app.mjs")
	if err := os.WriteFile(app, []byte("const items = [];\nfor (let i = 0; i < 3; i++) items.push({ i });\nconsole.log('items', items.length);\nprocess.exitCode = 3;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run.hxtrace")
	r := heapxProcess(t, nil, "trace", "-o", out, "--", "node", app)
	if r.code != 3 || r.stdout != "items 3\n" || !strings.Contains(r.stderr, "heapx: wrote "+out) || !strings.Contains(r.stderr, "exited with status 3") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	evs := readTrace(t, out)
	if len(evs) < 10 || evs[len(evs)-1] != "END code 3 signal 0 flags 0" {
		t.Errorf("trace ends with %q (%d records)", evs[len(evs)-1], len(evs))
	}
	pushes := 0
	for _, e := range evs {
		if strings.HasPrefix(e, "PUTFIELD "+app+":2:") {
			pushes++
		}
	}
	if pushes != 3 {
		t.Errorf("%d PUTFIELDs of items.push at line 2, want 3:\n%s", pushes, strings.Join(evs, "\n"))
	}
	// No leftovers beside the trace.
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files in the directory: %v", ents)
	}

	// Default name: the script's, with .hxtrace, in the working directory.
	cmd := heapxCommand(t, "trace", "--", "node", "app.mjs")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "wrote app.hxtrace") {
		t.Errorf("heapx trace -- node app.mjs: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(dir, "app.hxtrace")); err != nil {
		t.Error(err)
	}

	// Usage errors say what is missing.
	if r := heapx(t, "trace", "node", app); r.code != 1 || !strings.Contains(r.stderr, "after --") {
		t.Errorf("without --: exit %d, %q", r.code, r.stderr)
	}
	if r := heapx(t, "trace", "--", "no-such-program-heapx"); r.code != 1 || !strings.Contains(r.stderr, "no-such-program-heapx") {
		t.Errorf("missing program: exit %d, %q", r.code, r.stderr)
	}
}

// readTrace decodes a trace file into event lines without their times.
func readTrace(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := memtrace.NewReader(bytes.NewReader(raw), path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		s := ev.String()
		out = append(out, s[strings.IndexByte(s, ' ')+1:])
	}
}
