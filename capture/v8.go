package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/heapx/heapx/capture/cdp"
)

// Progress hears how a capture advances. Each phase (building a snapshot,
// writing a file, tracking allocations) begins with Phase, then Set says
// how much of total is done; total < 0 means unknown. Calls come from one
// goroutine at a time, but not always the same one.
type Progress interface {
	Phase(label string, total int64)
	Set(done int64)
}

// noProgress is the Progress of a caller that wants none.
type noProgress struct{}

func (noProgress) Phase(string, int64) {}
func (noProgress) Set(int64)           {}

// V8 is a DevTools session with one V8 target, a Node.js process or a
// Chrome page, through which heapx takes heap snapshots, records
// allocation timelines and runs the sampling heap profiler.
type V8 struct {
	conn     *cdp.Conn
	hostPort string        // of the endpoint's HTTP listings
	timeout  time.Duration // of the listings, the connection and each call
	ended    chan struct{} // Node said the program finished
	endOnce  sync.Once
	waiting  bool // the program waits for RunProgram
}

// ConnectV8 connects to the target at endpoint: a ws:// URL, or the
// HOST:PORT (or just PORT, on this machine) of a DevTools endpoint, where
// it picks the target whose URL contains urlPart. Without urlPart the
// endpoint must list one target, as `node --inspect` does; a Chrome with
// several tabs needs urlPart to say which page. timeout (0 for
// cdp.DefaultTimeout) bounds the listing, the connection, and then each
// call as cdp.Conn.Call says.
func ConnectV8(ctx context.Context, endpoint, urlPart string, timeout time.Duration) (*V8, error) {
	if timeout <= 0 {
		timeout = cdp.DefaultTimeout
	}
	wsURL := endpoint
	var hostPort string
	if strings.HasPrefix(endpoint, "ws://") || strings.HasPrefix(endpoint, "wss://") {
		hp, err := cdp.HostPort(endpoint)
		if err != nil {
			return nil, err
		}
		hostPort = hp
	} else {
		hostPort = endpointHostPort(endpoint)
		lctx, cancel := context.WithTimeout(ctx, timeout)
		ts, err := cdp.ListTargets(lctx, hostPort)
		cancel()
		if err != nil {
			return nil, err
		}
		t, err := pickTarget(ts, hostPort, urlPart)
		if err != nil {
			return nil, err
		}
		wsURL = t.WebSocketURL
	}
	conn, err := cdp.Dial(ctx, wsURL, timeout)
	if err != nil {
		return nil, err
	}
	s := &V8{conn: conn, hostPort: hostPort, timeout: timeout, ended: make(chan struct{})}
	// Node says when the program has finished and only the debugger
	// keeps it alive; a Chrome page has no NodeRuntime, which is fine.
	conn.On("NodeRuntime.waitingForDisconnect", func(json.RawMessage) { s.endOnce.Do(func() { close(s.ended) }) })
	if err := conn.Call(ctx, "NodeRuntime.notifyWhenWaitingForDisconnect", map[string]bool{"enabled": true}, nil); err != nil && !isMethodNotFound(err) {
		conn.Close()
		return nil, err
	}
	return s, nil
}

// ConnectProcess connects to a program Launch started. The program
// waits for RunProgram before running its first line.
func ConnectProcess(ctx context.Context, p *Process, timeout time.Duration) (*V8, error) {
	s, err := ConnectV8(ctx, p.WebSocketURL, "", timeout)
	if err != nil {
		return nil, err
	}
	s.waiting = true
	return s, nil
}

// endpointHostPort completes a bare port to a host:port on this machine.
func endpointHostPort(endpoint string) string {
	if _, err := strconv.Atoi(endpoint); err == nil {
		return net.JoinHostPort("127.0.0.1", endpoint)
	}
	if strings.HasPrefix(endpoint, ":") {
		return "127.0.0.1" + endpoint
	}
	return endpoint
}

// pickTarget chooses the target to capture among those an endpoint lists.
func pickTarget(ts []cdp.Target, hostPort, urlPart string) (cdp.Target, error) {
	var match []cdp.Target
	for _, t := range ts {
		if t.WebSocketURL == "" {
			continue
		}
		if urlPart != "" && !strings.Contains(t.URL, urlPart) {
			continue
		}
		match = append(match, t)
	}
	if len(match) > 1 && urlPart == "" {
		// A browser lists its service workers and frames beside the
		// page; one page is the obvious choice.
		var pages []cdp.Target
		for _, t := range match {
			if t.Type == "page" || t.Type == "node" {
				pages = append(pages, t)
			}
		}
		if len(pages) == 1 {
			return pages[0], nil
		}
	}
	if len(match) == 1 {
		return match[0], nil
	}
	list := make([]string, len(ts))
	for i, t := range ts {
		list[i] = t.Type + " " + t.URL
	}
	switch {
	case len(ts) == 0:
		return cdp.Target{}, fmt.Errorf("the DevTools endpoint at %s lists no target", hostPort)
	case len(match) == 0 && urlPart != "":
		return cdp.Target{}, fmt.Errorf("no target at %s has a URL containing %q; it lists: %s", hostPort, urlPart, strings.Join(list, ", "))
	case len(match) == 0:
		return cdp.Target{}, fmt.Errorf("every target at %s is held by another debugger client: %s", hostPort, strings.Join(list, ", "))
	}
	return cdp.Target{}, fmt.Errorf("%d targets at %s match; say which with --url SUBSTRING: %s", len(match), hostPort, strings.Join(list, ", "))
}

// isMethodNotFound reports whether err is a target's answer that it has
// no such method.
func isMethodNotFound(err error) bool {
	var e *cdp.Error
	return errors.As(err, &e) && e.Code == cdp.CodeMethodNotFound
}

// Lost is closed when the connection is: the target exited, the page was
// closed, the network dropped. Why is then the reason.
func (s *V8) Lost() <-chan struct{} { return s.conn.Done() }

// Finished is closed when a Node.js program has finished and only the
// session keeps it alive: its heap can still be read, but it will not
// change. A timeline or a sampling profile in progress ends early then,
// with what it has. Why is then the reason.
func (s *V8) Finished() <-chan struct{} { return s.ended }

// Why says why the session is over (Lost, Finished), or nil while it is
// not.
func (s *V8) Why() error {
	if err := s.conn.Err(); err != nil {
		return err
	}
	select {
	case <-s.ended:
		return errFinished
	default:
		return nil
	}
}

// Close ends the session. The target stops what the session started
// (V8 stops allocation tracking and sampling when a session ends), and
// object ids start again from scratch in the next session's snapshots.
func (s *V8) Close() error { return s.conn.Close() }

// RunProgram lets a program Launch started run. It waits before its
// first line (--inspect-brk) so that no allocation escapes a timeline or
// a sampling profile, which start it once they run. For a session of
// ConnectV8 it does nothing: heapx never releases a program a user holds.
func (s *V8) RunProgram(ctx context.Context) error {
	if !s.waiting {
		return nil
	}
	s.waiting = false
	return s.cause(ctx, s.conn.Call(ctx, "Runtime.runIfWaitingForDebugger", nil, nil))
}

// HeapUsed returns the bytes the target's JavaScript heap uses, live
// objects and garbage not yet collected alike.
func (s *V8) HeapUsed(ctx context.Context) (int64, error) {
	var r struct {
		UsedSize float64 `json:"usedSize"`
	}
	if err := s.conn.Call(ctx, "Runtime.getHeapUsage", nil, &r); err != nil {
		return 0, err
	}
	return int64(r.UsedSize), nil
}

// CollectGarbage runs a full garbage collection in the target.
func (s *V8) CollectGarbage(ctx context.Context) error {
	return s.conn.Call(ctx, "HeapProfiler.collectGarbage", nil, nil)
}

// StopProfiling stops allocation tracking and sampling on the target, if
// it is still there, so that a capture that failed or was interrupted
// never leaves the program slowed down. It gives the target a few seconds
// to answer.
func (s *V8) StopProfiling() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// HeapProfiler.disable stops both without taking a snapshot (which
	// stopTrackingHeapObjects would).
	s.conn.Call(ctx, "HeapProfiler.disable", nil, nil)
}

// Snapshot takes a heap snapshot and writes it to path, chunk by chunk as
// the target sends it, gzip-compressed when path ends in ".gz". It
// returns the file's size.
func (s *V8) Snapshot(ctx context.Context, path string, p Progress) (int64, error) {
	return s.streamSnapshot(ctx, path, p, "HeapProfiler.takeHeapSnapshot")
}

// streamSnapshot calls method, which makes the target build a snapshot
// and send it as HeapProfiler.addHeapSnapshotChunk events, and writes
// the chunks to path as they come.
func (s *V8) streamSnapshot(ctx context.Context, path string, p Progress, method string) (int64, error) {
	if p == nil {
		p = noProgress{}
	}
	return writeFile(path, func(w io.Writer) error {
		sink := &chunkSink{w: w, p: p, path: path, conn: s.conn}
		defer s.conn.On("HeapProfiler.addHeapSnapshotChunk", sink.chunk)()
		defer s.conn.On("HeapProfiler.reportHeapSnapshotProgress", sink.progress)()
		err := s.conn.Call(ctx, method, map[string]bool{"reportProgress": true}, nil)
		return sink.finish(s.cause(ctx, err))
	})
}

// causeWait is how long a call that lost its connection waits for the
// caller to say why (cancelling ctx with the program's exit status).
const causeWait = 1500 * time.Millisecond

// cause explains an error of a call: the reason the context was cancelled
// with, or the session's end.
func (s *V8) cause(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, cdp.ErrClosed) {
		select {
		case <-ctx.Done():
		case <-time.After(causeWait):
		}
	}
	return causeOr(ctx, err)
}

// chunkSink writes the chunks of a snapshot as they arrive. Its methods
// run on the connection's reading goroutine, finish on the caller's,
// which may have given up waiting (an interrupt) while a chunk is being
// written: mu keeps the two apart.
type chunkSink struct {
	mu       sync.Mutex
	conn     *cdp.Conn // told of each step forward (cdp.Conn.Progress)
	done     int64     // the last progress reported
	w        io.Writer
	p        Progress
	path     string
	n        int64
	last     byte
	err      error
	built    bool // the building phase was announced
	writing  bool // the writing phase was
	finished bool
}

func (k *chunkSink) chunk(params json.RawMessage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.finished || k.err != nil {
		return
	}
	var c struct {
		Chunk string `json:"chunk"`
	}
	if err := json.Unmarshal(params, &c); err != nil {
		k.err = fmt.Errorf("a snapshot chunk is not what DevTools sends: %v", err)
		return
	}
	if !k.writing {
		k.writing = true
		k.p.Phase("writing "+k.path, -1)
	}
	if _, err := io.WriteString(k.w, c.Chunk); err != nil {
		k.err = err
		return
	}
	if len(c.Chunk) > 0 {
		k.last = c.Chunk[len(c.Chunk)-1]
	}
	k.n += int64(len(c.Chunk))
	k.p.Set(k.n)
	if len(c.Chunk) > 0 {
		k.conn.Progress()
	}
}

func (k *chunkSink) progress(params json.RawMessage) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.finished || k.writing {
		return
	}
	var r struct {
		Done  int64 `json:"done"`
		Total int64 `json:"total"`
	}
	if json.Unmarshal(params, &r) != nil || r.Total <= 0 {
		return
	}
	// Only a step forward moves the deadline: a target repeating the
	// same report is not building a snapshot.
	if r.Done > k.done {
		k.done = r.Done
		k.conn.Progress()
	}
	// V8's units are its own (objects and references visited); the bar
	// shows them per mille so that one bar fits whatever the total.
	if !k.built {
		k.built = true
		k.p.Phase("building the snapshot", 1000)
	}
	k.p.Set(r.Done * 1000 / r.Total)
}

// finish ends the stream after the call that produced it returned err.
func (k *chunkSink) finish(err error) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.finished = true
	switch {
	case err != nil:
		return err
	case k.err != nil:
		return k.err
	case !k.writing || k.n <= 0:
		return errors.New("the target sent no snapshot")
	case k.last != '}':
		// A snapshot is one JSON object; anything else was cut short.
		return fmt.Errorf("the snapshot the target sent is incomplete (%d bytes, not ending the JSON object)", k.n)
	}
	return nil
}
