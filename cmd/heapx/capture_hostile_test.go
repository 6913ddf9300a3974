package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/capture/cdp/cdptest"
)

// These tests run `heapx capture --inspect` against a fake inspector
// that misbehaves (capture/cdp/cdptest): heapx must never hang, never
// grow past about 100 MB whatever the target sends, and say what went
// wrong in one line, leaving no file behind.

// hostileRun runs heapx capture on the endpoint at hostPort with args,
// and returns its exit code, stderr, how long it took and its peak RSS.
func hostileRun(t *testing.T, hostPort string, args ...string) (int, string, time.Duration, int64) {
	t.Helper()
	cmd := heapxCommand(t, append([]string{"capture", "--inspect", hostPort}, args...)...)
	peak := measurePeak(t, cmd)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, errb.String(), took, peak()
}

// progressThen answers takeHeapSnapshot with progress up to half and
// the first chunks of a snapshot, then with what last says.
func progressThen(last func() (any, bool)) cdptest.Handler {
	return func(method string, _ json.RawMessage, send func(string, any)) (any, int, string, bool) {
		if method != "HeapProfiler.takeHeapSnapshot" {
			return nil, 0, "", false
		}
		for done := 0; done <= 500; done += 100 {
			send("HeapProfiler.reportHeapSnapshotProgress", map[string]int{"done": done, "total": 1000})
		}
		for range 3 {
			send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": `{"snapshot":{},"nodes":[1,2,3`})
		}
		res, drop := last()
		return res, 0, "", drop
	}
}

// maxCaptureRSS is what heapx capture may reach whatever the target
// sends.
const maxCaptureRSS = 100 << 20

// TestCaptureHostileTarget: a silent endpoint, a target that answers
// nothing, a snapshot that stops half way (silent, or the connection
// closed), a reply sent a byte at a time, a frame declaring 2 GB, a
// message that is not JSON. Each ends heapx within a few seconds of its
// --timeout with one line saying so, under maxCaptureRSS, with no file.
func TestCaptureHostileTarget(t *testing.T) {
	t.Parallel()
	silent, err := cdptest.NewSilent()
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	for _, c := range []struct {
		name   string
		handle cdptest.Handler // nil: the silent endpoint
		want   string
	}{
		{"silent endpoint", nil, "heapx: capture: the DevTools endpoint at " + silent.HostPort() + " did not answer /json/list in time: timed out (--timeout 1s)"},
		{"no answer", func(string, json.RawMessage, func(string, any)) (any, int, string, bool) {
			return cdptest.NoReply, 0, "", false
		}, "heapx: capture: NodeRuntime.notifyWhenWaitingForDisconnect: the target at ws://"},
		{"snapshot never finishes", progressThen(func() (any, bool) { return cdptest.NoReply, false }), "not written: HeapProfiler.takeHeapSnapshot: the target at ws://"},
		{"closed mid-snapshot", progressThen(func() (any, bool) { return nil, true }), "went away"},
		{"a byte at a time", progressThen(func() (any, bool) {
			return cdptest.Trickle{Result: map[string]string{"pad": strings.Repeat("x", 1000)}, Every: 20 * time.Millisecond}, false
		}), "timed out"},
		{"2 GB frame", progressThen(func() (any, bool) { return cdptest.Lie{Declared: 2 << 30, Send: 64 << 20}, false }), "sent a message of 2048 MB declared, over the 16 MB heapx takes"},
		{"not JSON", progressThen(func() (any, bool) { return cdptest.Raw("\x00\x01 not json"), false }), "sent a message that is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hostPort := silent.HostPort()
			if c.handle != nil {
				srv := cdptest.New(c.handle)
				defer srv.Close()
				hostPort = srv.HostPort()
			}
			dir := t.TempDir()
			code, stderr, took, rss := hostileRun(t, hostPort, "--timeout", "1s", "-o", filepath.Join(dir, "x.heapsnapshot"))
			if code != 1 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want one line with %q", code, stderr, c.want)
			}
			if took > 15*time.Second || rss > maxCaptureRSS {
				t.Errorf("took %v, peaked at %d MB", took, rss>>20)
			}
			if names := dirFiles(t, dir); len(names) != 0 {
				t.Errorf("left behind: %q", names)
			}
			t.Logf("%v, %d MB: %s", took.Round(time.Millisecond), rss>>20, strings.TrimSpace(stderr))
		})
	}
}

// TestCaptureHeavyTarget: a snapshot whose progress takes three times
// --timeout is not cut off; a 256 MB snapshot, a 160 MB sampling profile
// and a timeline whose statistics name absurd intervals are written with
// heapx under maxCaptureRSS.
func TestCaptureHeavyTarget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("streams hundreds of MB")
	}
	piece := `{"a":[` + strings.Repeat("1,2,3,4,5,", 100_000) + `0]},`
	bigSnapshot := func(chunks int, every time.Duration) cdptest.Handler {
		return func(method string, _ json.RawMessage, send func(string, any)) (any, int, string, bool) {
			if method != "HeapProfiler.takeHeapSnapshot" && method != "HeapProfiler.stopTrackingHeapObjects" {
				return nil, 0, "", false
			}
			send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": "{\"x\":["})
			for i := range chunks {
				time.Sleep(every)
				send("HeapProfiler.reportHeapSnapshotProgress", map[string]int{"done": i + 1, "total": chunks})
				send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": piece})
			}
			send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": "0]}"})
			return nil, 0, "", false
		}
	}
	samples := strings.Repeat(`{"size":32768,"nodeId":1,"ordinal":1},`, 160<<20/38)
	profile := cdptest.RawResult(`{"profile":{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0,"id":1,"children":[]},"samples":[` + samples + `{"size":1,"nodeId":1,"ordinal":2}]}}`)
	for _, c := range []struct {
		name   string
		handle cdptest.Handler
		args   []string
		want   string
	}{
		{"slow snapshot", bigSnapshot(6, 500*time.Millisecond), []string{"-o", "slow.heapsnapshot"}, "wrote "},
		{"256 MB snapshot", bigSnapshot(256, 0), []string{"-o", "big.heapsnapshot"}, "wrote "},
		{"160 MB profile", func(method string, params json.RawMessage, _ func(string, any)) (any, int, string, bool) {
			if method == "HeapProfiler.stopSampling" {
				return profile, 0, "", false
			}
			return nil, 0, "", false
		}, []string{"--sampling", "100ms", "-o", "p.heapprofile"}, "4,415,057 samples standing for 145 GB allocated"},
		{"lying timeline", func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
			switch method {
			case "HeapProfiler.startTrackingHeapObjects":
				for i := range 200 {
					send("HeapProfiler.heapStatsUpdate", map[string]any{"statsUpdate": []int64{1 << 40, 1, 1, int64(i) << 30, 5, 5}})
				}
				send("HeapProfiler.lastSeenObjectId", map[string]any{"lastSeenObjectId": 1, "timestamp": 1})
			case "HeapProfiler.stopTrackingHeapObjects":
				send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": "{}"})
			}
			return nil, 0, "", false
		}, []string{"--timeline", "100ms", "-o", "t.heaptimeline"}, "in 1 intervals"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := cdptest.New(c.handle)
			defer srv.Close()
			dir := t.TempDir()
			args := append([]string{"--timeout", "1s"}, c.args...)
			args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
			cmd := heapxCommand(t, append([]string{"capture", "--inspect", srv.HostPort()}, args...)...)
			peak := measurePeak(t, cmd)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, errb.String())
			}
			rss := peak()
			if !strings.Contains(out.String(), c.want) || rss > maxCaptureRSS {
				t.Errorf("stdout %q, peak %d MB", out.String(), rss>>20)
			}
			t.Logf("%d MB: %s", rss>>20, strings.TrimSpace(out.String()))
		})
	}
}
