package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
)

// runRSS runs heapx in a process of its own and returns its stdout and
// peak memory (measurePeak).
func runRSS(t *testing.T, args ...string) (string, int64) {
	t.Helper()
	cmd := heapxCommand(t, args...)
	peak := measurePeak(t, cmd)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("heapx %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), peak()
}

// measurePeak makes cmd, made by heapxCommand and not yet started, report
// heapx's peak resident memory, which the returned function gives in bytes
// once cmd has run. The peak comes from runForPeak, heapx's parent, not
// from this process's child: Go starts a child with vfork, and Linux
// counts the parent's peak memory at the exec in the child's, and this
// test process has run heapx on large dumps itself.
func measurePeak(t *testing.T, cmd *exec.Cmd) func() int64 {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	cmd.Env = append(cmd.Env, asMain+"=peak") // the last one counts
	cmd.ExtraFiles = []*os.File{w}
	return func() int64 {
		t.Helper()
		w.Close()
		peak, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(string(peak), 10, 64)
		if err != nil {
			t.Fatalf("heapx %v: peak memory %q: %v", cmd.Args[1:], peak, err)
		}
		return n
	}
}

// runForPeak runs heapx with this process's arguments as its child and
// writes the child's peak resident memory in bytes to file descriptor 3
// (runRSS). Its exit code is heapx's.
func runForPeak() int {
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = append(os.Environ(), asMain+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "no rusage here")
		return 1
	}
	fmt.Fprint(os.NewFile(3, "peak"), ru.Maxrss<<10) // kilobytes on Linux
	return cmd.ProcessState.ExitCode()
}

// TestLongValuesCostAPrefix: showing 80 characters of a long value costs
// what the value's one copy does, not a multiple of it. heapx sql's table
// reads a prefix of a 100 MB cell (SQLite holds the one copy; the whole
// cell converted peaked at 1.4 GB); a V8 snapshot of 100 KB compressed
// with a 100 MB string is read keeping one copy of it and shown cut (970
// MB before).
func TestLongValuesCostAPrefix(t *testing.T) {
	t.Parallel()
	testfixtures.Long(t) // minutes: a 100 MB cell and a 100 MB string
	const n = 100_000_000
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	ok(t, "convert", copyFixture(t, "node-basic.heapsnapshot.gz"), db)
	out, rss := runRSS(t, "sql", db, fmt.Sprintf("SELECT zeroblob(%d) AS b, length(zeroblob(%d)) AS n", n, n))
	if want := strings.Repeat("0", 79) + "…"; !strings.Contains(out, want) || rss > 300<<20 {
		t.Errorf("sql on a %d-byte blob: peak %d MB (want under 300), output\n%.300s", n, rss>>20, out)
	}

	snap := filepath.Join(dir, "long.heapsnapshot.gz")
	f, err := os.Create(snap)
	if err != nil {
		t.Fatal(err)
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	fmt.Fprint(zw, `{"snapshot":{"meta":{"node_fields":["type","name","id","self_size","edge_count"],`+
		`"node_types":[["synthetic","string"],"string","number","number","number"],`+
		`"edge_fields":["type","name_or_index","to_node"],"edge_types":[["property"],"string_or_number","node"]},`+
		`"node_count":2,"edge_count":1},"nodes":[0,0,1,0,1,1,1,3,`, n, `,0],"edges":[0,0,5],"strings":["root","`)
	chunk := bytes.Repeat([]byte("é\\n"), 1<<18) // 1 MiB of JSON, decoding to 3 bytes a 4
	for i := 0; i < n/(3<<18); i++ {
		zw.Write(chunk)
	}
	fmt.Fprint(zw, `"]}`)
	zw.Close()
	f.Close()
	out, rss = runRSS(t, "top", snap)
	if !strings.Contains(out, `é\né\n`) || rss > 300<<20 {
		t.Errorf("top on a %d-byte string: peak %d MB (want under 300), output\n%.500s", n, rss>>20, out)
	}
}
