package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// streamInfo is the part of `heapx info --json` compared between a file
// and the same bytes read from a pipe.
type streamInfo struct {
	Format      string `json:"format"`
	Nodes       int    `json:"node_count"`
	Edges       int    `json:"edge_count"`
	TotalSelf   uint64 `json:"total_self_size"`
	FileSize    int64  `json:"file_size"`
	Compression string `json:"compression"`
}

// TestReadFromPipe reads dumps of each stream format from a pipe, as
// `heapx info /dev/stdin < dump` or `<(zcat dump.gz)` give them (issue
// 12.8: the input was opened twice, once to detect its format, and the
// second read, which started where the first had stopped, said
// "truncated file?"). Each must read as the file does.
func TestReadFromPipe(t *testing.T) {
	t.Parallel()
	jsonl := filepath.Join(t.TempDir(), "basic.jsonl.gz")
	ok(t, "convert", "../../testdata/node-basic.heapsnapshot.gz", jsonl)
	for _, path := range []string{
		"../../testdata/node-basic.heapsnapshot.gz",
		"../../testdata/spidermonkey/ff-small-page.fxsnapshot",
		jsonl,
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var want, got streamInfo
			okJSON(t, &want, "info", "--json", path)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r := heapxProcess(t, bytes.NewReader(data), "info", "--json", "/dev/stdin")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("from a pipe: %+v\nfrom the file: %+v", got, want)
			}
		})
	}
}

// TestReadFromFIFO reads a dump from a named pipe, which hung forever: the
// writer had gone once detection closed it, and the second open waited
// for another.
func TestReadFromFIFO(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "dump")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	data, err := os.ReadFile("../../testdata/node-basic.heapsnapshot.gz")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		// Opening blocks until heapx opens the other end.
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(data)
		w.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	heapx := heapxCommand(t, "summary", "-n", "1", fifo)
	cmd := exec.CommandContext(ctx, heapx.Path, heapx.Args[1:]...)
	cmd.Env = heapx.Env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatal("heapx hung reading a FIFO")
	}
	if err != nil || !strings.Contains(string(out), "of 178 classes") {
		t.Fatalf("%v:\n%s", err, out)
	}
}

// TestPipeNeedsFile checks that a format read in two passes says plainly
// that it needs a file when given a pipe.
func TestPipeNeedsFile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../testdata/hprof/java-leakdemo-small.hprof.gz")
	if err != nil {
		t.Fatal(err)
	}
	r := heapxProcess(t, bytes.NewReader(data), "info", "/dev/stdin")
	want := "heapx: /dev/stdin: not a regular file (a pipe or a FIFO?), and hprof dumps are read from a file that can be read twice: save the dump to a file first\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", r.code, r.stderr, want)
	}
}
