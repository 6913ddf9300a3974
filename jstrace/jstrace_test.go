package jstrace

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats/memtrace"
)

// needNode skips when node is not installed.
func needNode(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
}

// traceOf runs node with the program text in a file named name under a
// temporary directory, and returns the decoded events (one line each,
// memtrace.Event.String, file names relative to the directory), the
// program's stdout and the result.
func traceOf(t *testing.T, name, program string, args ...string) ([]string, string, Result) {
	t.Helper()
	needNode(t)
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	var trace, stdout bytes.Buffer
	res, err := Run(context.Background(), append([]string{"node", path}, args...), Options{Stdout: &stdout, Stderr: os.Stderr}, &trace)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, trace.Bytes(), dir), stdout.String(), res
}

func decode(t *testing.T, raw []byte, dir string) []string {
	t.Helper()
	r, err := memtrace.NewReader(bytes.NewReader(raw), "trace")
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
			t.Fatalf("%v\nafter:\n%s", err, strings.Join(out, "\n"))
		}
		out = append(out, strings.ReplaceAll(ev.String(), dir+"/", ""))
	}
}

func TestDump(t *testing.T) {
	f := os.Getenv("HEAPX_DUMP")
	if f == "" {
		t.Skip()
	}
	evs, out, res := traceOf(t, filepath.Base(f), string(must(os.ReadFile(f))))
	t.Logf("%s\n%s\n%+v", strings.Join(evs, "\n"), out, res)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
