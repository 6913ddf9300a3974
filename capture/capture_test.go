package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/capture/cdp/cdptest"
	"github.com/heapx/heapx/formats"
	_ "github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/internal/testfixtures"
)

// These tests run the capture against a scripted DevTools endpoint, for
// what a real target rarely shows: a stream cut short, an option the
// target lacks, an interrupt at a given moment. cmd/heapx/capture_test.go
// runs real Node.js, Chromium and Java programs.

// phases records a capture's progress.
type phases struct {
	mu     sync.Mutex
	labels []string
	last   int64
}

func (p *phases) Phase(label string, total int64) {
	p.mu.Lock()
	p.labels = append(p.labels, label)
	p.mu.Unlock()
}

func (p *phases) Set(done int64) {
	p.mu.Lock()
	p.last = done
	p.mu.Unlock()
}

// chunked splits b into chunks of at most n bytes.
func chunked(b []byte, n int) []string {
	var out []string
	for len(b) > 0 {
		k := min(n, len(b))
		out = append(out, string(b[:k]))
		b = b[k:]
	}
	return out
}

// snapshotServer is an endpoint whose takeHeapSnapshot sends progress and
// then chunks (cut after cutAfter of them, when cutAfter >= 0).
func snapshotServer(chunks []string, cutAfter int) *cdptest.Server {
	return cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		switch method {
		case "HeapProfiler.takeHeapSnapshot", "HeapProfiler.stopTrackingHeapObjects":
			var p struct{ ReportProgress bool }
			json.Unmarshal(params, &p)
			if p.ReportProgress {
				for done := 0; done <= 1000; done += 250 {
					send("HeapProfiler.reportHeapSnapshotProgress", map[string]int{"done": done, "total": 1000})
				}
			}
			for i, c := range chunks {
				if i == cutAfter {
					return nil, 0, "", true
				}
				send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": c})
			}
		}
		return nil, 0, "", false
	})
}

// connect opens a session with the fake endpoint, as --inspect does.
func connect(t *testing.T, srv *cdptest.Server) *V8 {
	t.Helper()
	s, err := ConnectV8(context.Background(), srv.HostPort(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// noFilesBut fails t when dir holds anything but the files named, such
// as a temporary file left behind.
func noFilesBut(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// TestSnapshotStreamsToFile streams a real snapshot (a Node.js fixture) in
// chunks, plain and gzip-compressed, and checks the files hold exactly
// what was sent, read back as the snapshot, and that progress went
// through building and writing.
func TestSnapshotStreamsToFile(t *testing.T) {
	fixture := filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz")
	snap := testfixtures.Gunzip(t, fixture)
	want, _, err := formats.Open(fixture, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv := snapshotServer(chunked(snap, 100_000), -1)
	defer srv.Close()
	s := connect(t, srv)
	dir := t.TempDir()
	for _, name := range []string{"a.heapsnapshot", "a.heapsnapshot.gz"} {
		path := filepath.Join(dir, name)
		var p phases
		size, err := s.Snapshot(context.Background(), path, &p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Size() != size {
			t.Fatalf("%s: size %d, stat %v %v", name, size, st, err)
		}
		if strings.HasSuffix(name, ".gz") != (size < int64(len(snap))/2) {
			t.Errorf("%s: %d bytes for a %d-byte snapshot", name, size, len(snap))
		}
		g, _, err := formats.Open(path, formats.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g.NumNodes() != want.NumNodes() || g.NumEdges() != want.NumEdges() {
			t.Errorf("%s: %d nodes, %d edges; the fixture has %d, %d", name, g.NumNodes(), g.NumEdges(), want.NumNodes(), want.NumEdges())
		}
		if phases := []string{"building the snapshot", "writing " + path}; strings.Join(p.labels, "|") != strings.Join(phases, "|") || p.last != int64(len(snap)) {
			t.Errorf("%s: phases %q, last %d; want %q and %d", name, p.labels, p.last, phases, len(snap))
		}
	}
	plain, err := os.ReadFile(filepath.Join(dir, "a.heapsnapshot"))
	if err != nil || !bytes.Equal(plain, snap) {
		t.Fatalf("the file is not what the target sent (%d bytes vs %d; %v)", len(plain), len(snap), err)
	}
	noFilesBut(t, dir, "a.heapsnapshot", "a.heapsnapshot.gz")
}

// TestSnapshotCutShort checks a snapshot whose stream stops: the target
// goes away mid-stream, or sends a stream that does not end the JSON.
// Either is an error that says so, and no file, not even a temporary
// one, is left.
func TestSnapshotCutShort(t *testing.T) {
	snap := testfixtures.Gunzip(t, filepath.Join(testfixtures.Dir(), "node-basic.heapsnapshot.gz"))
	chunks := chunked(snap, 100_000)
	for _, c := range []struct {
		name   string
		chunks []string
		cut    int
		want   string
	}{
		{"dropped", chunks, len(chunks) / 2, "went away"},
		{"truncated", chunks[:len(chunks)-1], -1, "incomplete"},
		{"empty", nil, -1, "sent no snapshot"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := snapshotServer(c.chunks, c.cut)
			defer srv.Close()
			s := connect(t, srv)
			dir := t.TempDir()
			_, err := s.Snapshot(context.Background(), filepath.Join(dir, "x.heapsnapshot.gz"), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error saying %q", err, c.want)
			}
			noFilesBut(t, dir)
		})
	}
}

// TestSnapshotMemoryFlat streams 128 MB of snapshot through the client
// and checks that the Go heap never holds more than a few chunks of it:
// the snapshot goes to disk as it comes, never whole into memory.
func TestSnapshotMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 128 MB")
	}
	const chunk, total = 1 << 20, 128 << 20
	piece := strings.Repeat("1,2,3,4,5,", chunk/10)
	var peak uint64
	srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		if method != "HeapProfiler.takeHeapSnapshot" {
			return nil, 0, "", false
		}
		var ms runtime.MemStats
		send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": "{"})
		for i := 0; i < total/chunk; i++ {
			send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": piece})
			if i%16 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}
		send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": "}"})
		return nil, 0, "", false
	})
	defer srv.Close()
	s := connect(t, srv)
	path := filepath.Join(t.TempDir(), "big.heapsnapshot")
	n, err := s.Snapshot(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(2 + total/chunk*len(piece)); n != want {
		t.Fatalf("wrote %d bytes, want %d", n, want)
	}
	// Server and client share this heap: each chunk exists a few times
	// over (encoded, in the socket buffers, decoded) and GC lets garbage
	// reach twice the live heap. 64 MB is half the stream.
	if peak > 64<<20 {
		t.Errorf("the heap reached %d MB while streaming %d MB: the snapshot is held in memory", peak>>20, total>>20)
	}
	t.Logf("peak heap %d MB for a %d MB snapshot", peak>>20, n>>20)
}

// timelineServer is an endpoint that tracks allocations: it sends stats
// as a target does once tracking starts, and a snapshot when it stops.
func timelineServer(snap []byte) *cdptest.Server {
	chunks := chunked(snap, 100_000)
	return cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		switch method {
		case "HeapProfiler.startTrackingHeapObjects":
			// As V8 sends an update: the changed intervals' stats (in
			// one or more events), then the last id. Interval 0 holds
			// what existed before; then two intervals of new objects,
			// one of which later dies down.
			send("HeapProfiler.heapStatsUpdate", map[string]any{"statsUpdate": []int{0, 50, 5000}})
			send("HeapProfiler.lastSeenObjectId", map[string]any{"lastSeenObjectId": 100, "timestamp": 1000.5})
			send("HeapProfiler.heapStatsUpdate", map[string]any{"statsUpdate": []int{1, 10, 800}})
			send("HeapProfiler.lastSeenObjectId", map[string]any{"lastSeenObjectId": 200, "timestamp": 1050})
			send("HeapProfiler.heapStatsUpdate", map[string]any{"statsUpdate": []int{1, 2, 160}})
			send("HeapProfiler.heapStatsUpdate", map[string]any{"statsUpdate": []int{2, 30, 2400}})
			send("HeapProfiler.lastSeenObjectId", map[string]any{"lastSeenObjectId": 300, "timestamp": 1100})
		case "HeapProfiler.stopTrackingHeapObjects":
			for _, c := range chunks {
				send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": c})
			}
		}
		return nil, 0, "", false
	})
}

// TestTimeline records a timeline from a scripted target: tracking starts
// with allocation stacks, the program is let run, the stats are summed
// per interval (an interval's later count replaces the earlier one), and
// the snapshot stopTrackingHeapObjects sends is the file.
func TestTimeline(t *testing.T) {
	snap := testfixtures.Gunzip(t, filepath.Join(testfixtures.Dir(), "node-timeline.heaptimeline.gz"))
	srv := timelineServer(snap)
	defer srv.Close()
	s := connect(t, srv)
	s.waiting = true // as for a program Launch started
	path := filepath.Join(t.TempDir(), "t.heaptimeline")
	st, err := s.Timeline(context.Background(), path, 50*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := TimelineStats{Updates: 3, LastSeenID: 300, StartObjects: 50, StartSize: 5000, Objects: 82, Size: 7560, PeakObjects: 82, PeakSize: 7560}
	st.Duration, st.intervalObjects, st.intervalSizes = 0, nil, nil
	if !reflect.DeepEqual(st, want) {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	calls := strings.Join(srv.Calls(), " ")
	if want := "NodeRuntime.notifyWhenWaitingForDisconnect HeapProfiler.startTrackingHeapObjects Runtime.runIfWaitingForDebugger HeapProfiler.stopTrackingHeapObjects"; calls != want {
		t.Errorf("calls %q, want %q", calls, want)
	}
	g, _, err := formats.Open(path, formats.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g.Trace == nil || len(g.Trace.Samples) == 0 || len(g.Trace.Tree) == 0 {
		t.Errorf("the timeline read back has no samples or trace tree")
	}
	// Beside it, the updates, one line each with all its events' stats.
	stats, err := os.ReadFile(path + ".stats.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"format":"heapx.heapstats","version":1}
{"t":1000.5,"last_id":100,"stats":[0,50,5000]}
{"t":1050,"last_id":200,"stats":[1,10,800]}
{"t":1100,"last_id":300,"stats":[1,2,160,2,30,2400]}
`; string(stats) != want {
		t.Errorf("side file:\n%s\nwant:\n%s", stats, want)
	}
}

// TestTimelineEndsWhenIdle: a Node program that finished stays alive
// while tracked, and Node never says so; Timeline asks whether it is idle
// (Runtime.evaluate of idleCheck) and, told yes twice, ends early with
// what it has, the timeline and its side file written.
func TestTimelineEndsWhenIdle(t *testing.T) {
	snap := testfixtures.Gunzip(t, filepath.Join(testfixtures.Dir(), "node-timeline.heaptimeline.gz"))
	chunks := chunked(snap, 100_000)
	var mu sync.Mutex
	asked := 0
	srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		switch method {
		case "Runtime.evaluate":
			var p struct {
				Expression string `json:"expression"`
			}
			json.Unmarshal(params, &p)
			mu.Lock()
			defer mu.Unlock()
			asked++
			// Busy at first, then idle.
			return map[string]any{"result": map[string]any{"type": "boolean", "value": p.Expression == idleCheck && asked > 1}}, 0, "", false
		case "HeapProfiler.stopTrackingHeapObjects":
			for _, c := range chunks {
				send("HeapProfiler.addHeapSnapshotChunk", map[string]string{"chunk": c})
			}
		}
		return nil, 0, "", false
	})
	defer srv.Close()
	s := connect(t, srv)
	path := filepath.Join(t.TempDir(), "t.heaptimeline")
	start := time.Now()
	st, err := s.Timeline(context.Background(), path, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Finished || time.Since(start) > time.Minute {
		t.Errorf("finished %v after %v", st.Finished, time.Since(start))
	}
	mu.Lock()
	if asked != 3 {
		t.Errorf("asked %d times, want 3 (busy, idle, idle)", asked)
	}
	mu.Unlock()
	for _, p := range []string{path, path + ".stats.jsonl"} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
}

// TestInterruptStopsProfiling interrupts a timeline and a sampling
// profile while they run: each returns the interrupt's cause, writes
// nothing, and has told the target to stop (HeapProfiler.disable), so
// the program is not left tracked.
func TestInterruptStopsProfiling(t *testing.T) {
	srv := cdptest.New(func(string, json.RawMessage, func(string, any)) (any, int, string, bool) { return nil, 0, "", false })
	defer srv.Close()
	for _, mode := range []string{"timeline", "sampling"} {
		t.Run(mode, func(t *testing.T) {
			s := connect(t, srv)
			dir := t.TempDir()
			ctx, cancel := context.WithCancelCause(context.Background())
			interrupt := errors.New("interrupted (SIGINT)")
			time.AfterFunc(100*time.Millisecond, func() { cancel(interrupt) })
			var err error
			if mode == "timeline" {
				_, err = s.Timeline(ctx, filepath.Join(dir, "t.heaptimeline"), time.Hour, nil)
			} else {
				_, err = s.Sampling(ctx, filepath.Join(dir, "s.heapprofile"), time.Hour, 32768, nil)
			}
			if err != interrupt {
				t.Fatalf("got %v, want the interrupt", err)
			}
			calls := srv.Calls()
			if calls[len(calls)-1] != "HeapProfiler.disable" {
				t.Errorf("calls %q do not end by stopping the profiler", calls)
			}
			noFilesBut(t, dir)
		})
	}
}

// TestSamplingOptions checks the sampling profile's options against what
// the target's protocol offers: with includeObjectsCollectedByMajorGC
// listed both flags are sent; without, or when the target refuses them,
// the profile is taken without, and the stats say it keeps survivors
// only. The file is the profile as the target sent it.
func TestSamplingOptions(t *testing.T) {
	profile := `{"head":{"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1,"children":[]},"samples":[{"size":64,"nodeId":1,"ordinal":1},{"size":32,"nodeId":1,"ordinal":2}]}`
	withFlags := `{"domains":[{"domain":"HeapProfiler","commands":[{"name":"startSampling","parameters":[{"name":"samplingInterval"},{"name":"includeObjectsCollectedByMajorGC"},{"name":"includeObjectsCollectedByMinorGC"}]}]}]}`
	for _, c := range []struct {
		name, protocol string
		refuse         bool
		collected      bool
	}{
		{"supported", withFlags, false, true},
		{"not listed", `{"domains":[]}`, false, false},
		{"refused", withFlags, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var started []string
			srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
				switch method {
				case "HeapProfiler.startSampling":
					started = append(started, string(params))
					if c.refuse && strings.Contains(string(params), "include") {
						return nil, cdp.CodeInvalidParams, "Invalid parameters", false
					}
				case "HeapProfiler.stopSampling":
					return map[string]json.RawMessage{"profile": json.RawMessage(profile)}, 0, "", false
				}
				return nil, 0, "", false
			})
			defer srv.Close()
			srv.Protocol = c.protocol
			s := connect(t, srv)
			path := filepath.Join(t.TempDir(), "s.heapprofile")
			st, err := s.Sampling(context.Background(), path, 10*time.Millisecond, 4096, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st.Collected != c.collected || st.Samples != 2 || st.Bytes != 96 {
				t.Errorf("stats %+v", st)
			}
			last := started[len(started)-1]
			if strings.Contains(last, "includeObjectsCollectedByMajorGC\":true") != c.collected || !strings.Contains(last, `"samplingInterval":4096`) {
				t.Errorf("started with %s", last)
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != profile {
				t.Errorf("file %q (%v), want the profile as sent", b, err)
			}
		})
	}
}

// scriptedHeap is a Gauge whose heap follows a script, one state per
// measure: the live size and the garbage a collection would free. A
// collection frees the garbage of the state the next measure reads.
type scriptedHeap struct {
	states []struct{ live, garbage int64 }
	reads  int
	gcs    int
}

func (h *scriptedHeap) HeapUsed(context.Context) (int64, error) {
	st := h.states[min(h.reads, len(h.states)-1)]
	h.reads++
	return st.live + st.garbage, nil
}

func (h *scriptedHeap) CollectGarbage(context.Context) error {
	h.gcs++
	h.states[min(h.reads, len(h.states)-1)].garbage = 0
	return nil
}

// TestSeriesGrow checks --grow: a snapshot is taken only when the heap is
// past the threshold still after a collection (garbage does not count),
// measured from the heap after the last snapshot.
func TestSeriesGrow(t *testing.T) {
	h := &scriptedHeap{states: []struct{ live, garbage int64 }{
		{100, 30}, // the start, after a collection: 100
		{110, 0},  // under 120 (20% over 100)
		{100, 30}, // 130 with garbage: collect...
		{110, 10}, // ... 110: garbage alone crossed the line
		{125, 0},  // over: collect...
		{125, 0},  // ... still over: snapshot 1
		{125, 0},  // after it: the new reference
		{140, 0},  // under 150
		{151, 0},  // over: collect...
		{151, 0},  // ... snapshot 2
		{151, 0},  // after it
	}}
	var took []int
	err := Series{Count: 2, Grow: 0.2, Poll: time.Millisecond}.Run(context.Background(), h, func(_ context.Context, i int) error {
		took = append(took, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(took) != 2 || took[0] != 1 || took[1] != 2 || h.reads != len(h.states) || h.gcs != 4 {
		t.Errorf("took %v after %d measures and %d collections; want [1 2], %d and 4", took, h.reads, h.gcs, len(h.states))
	}
}

// TestSeriesPath checks the names of a series' files.
func TestSeriesPath(t *testing.T) {
	for in, want := range map[string]string{
		"leak.heapsnapshot":        "leak-2.heapsnapshot",
		"out/leak.heapsnapshot.gz": "out/leak-2.heapsnapshot.gz",
		"dump.hprof.GZ":            "dump-2.hprof.GZ",
		"noext":                    "noext-2",
		".heapsnapshot":            ".heapsnapshot-2",
	} {
		if got := SeriesPath(in, 2); got != want {
			t.Errorf("SeriesPath(%q, 2) = %q, want %q", in, got, want)
		}
	}
}

// TestPickTarget checks the choice of a target among an endpoint's: by
// URL part, the one page of a browser, and the errors that list them.
func TestPickTarget(t *testing.T) {
	ts := []cdp.Target{
		{Type: "page", URL: "https://shop.example/cart", WebSocketURL: "ws://h/1"},
		{Type: "service_worker", URL: "https://shop.example/sw.js", WebSocketURL: "ws://h/2"},
		{Type: "page", URL: "about:blank", WebSocketURL: ""},
	}
	if got, err := pickTarget(ts, "h", "cart"); err != nil || got.WebSocketURL != "ws://h/1" {
		t.Errorf("by URL: %v %v", got, err)
	}
	if got, err := pickTarget(ts, "h", ""); err != nil || got.WebSocketURL != "ws://h/1" {
		t.Errorf("the one page: %v %v", got, err)
	}
	if _, err := pickTarget(ts, "h", "shop.example"); err == nil || !strings.Contains(err.Error(), "2 targets at h match; say which with --url") {
		t.Errorf("two matches: %v", err)
	}
	if _, err := pickTarget(ts, "h", "nothing"); err == nil || !strings.Contains(err.Error(), `no target at h has a URL containing "nothing"; it lists: page https://shop.example/cart, service_worker`) {
		t.Errorf("no match: %v", err)
	}
	if _, err := pickTarget(nil, "h", ""); err == nil || !strings.Contains(err.Error(), "lists no target") {
		t.Errorf("no target: %v", err)
	}
}
