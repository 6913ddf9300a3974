package cdp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/heapx/heapx/capture/cdp"
	"github.com/heapx/heapx/capture/cdp/cdptest"
)

// dial connects to the fake endpoint's one target, through its listing.
func dial(t *testing.T, srv *cdptest.Server) *cdp.Conn {
	t.Helper()
	ctx := context.Background()
	ts, err := cdp.ListTargets(ctx, srv.HostPort())
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 1 || ts[0].Type != "node" || ts[0].URL != "file:///fake/app.js" {
		t.Fatalf("targets: %+v", ts)
	}
	// The listing names 127.0.0.1:1; the client reaches the endpoint
	// where it found the listing.
	if want := "ws://" + srv.HostPort() + "/T1"; ts[0].WebSocketURL != want {
		t.Fatalf("WebSocket URL %q, want %q", ts[0].WebSocketURL, want)
	}
	c, err := cdp.Dial(ctx, ts[0].WebSocketURL, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCallsEventsAndErrors checks a reply's result, an error reply, and
// that every event sent before a reply has been handled, in order, when
// the call returns (a snapshot's chunks are all written when
// takeHeapSnapshot returns).
func TestCallsEventsAndErrors(t *testing.T) {
	srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		switch method {
		case "Runtime.getHeapUsage":
			return map[string]float64{"usedSize": 1234, "totalSize": 5678}, 0, "", false
		case "Test.events":
			for i := range 100 {
				send("Test.chunk", map[string]int{"n": i})
			}
			return nil, 0, "", false
		}
		return nil, cdp.CodeMethodNotFound, "'" + method + "' wasn't found", false
	})
	defer srv.Close()
	c := dial(t, srv)
	ctx := context.Background()

	var usage struct{ UsedSize, TotalSize float64 }
	if err := c.Call(ctx, "Runtime.getHeapUsage", nil, &usage); err != nil || usage.UsedSize != 1234 || usage.TotalSize != 5678 {
		t.Fatalf("getHeapUsage: %+v, %v", usage, err)
	}

	var got []int
	off := c.On("Test.chunk", func(p json.RawMessage) {
		var v struct{ N int }
		json.Unmarshal(p, &v)
		got = append(got, v.N)
	})
	if err := c.Call(ctx, "Test.events", nil, nil); err != nil {
		t.Fatal(err)
	}
	off()
	if len(got) != 100 {
		t.Fatalf("%d events handled when the call returned, want 100", len(got))
	}
	for i, n := range got {
		if n != i {
			t.Fatalf("event %d is %d: out of order", i, n)
		}
	}

	// Two receivers of one event both get it, in the order they were
	// added; turning one off leaves the other.
	var order []string
	offA := c.On("Test.chunk", func(json.RawMessage) { order = append(order, "a") })
	offB := c.On("Test.chunk", func(json.RawMessage) { order = append(order, "b") })
	if err := c.Call(ctx, "Test.events", nil, nil); err != nil {
		t.Fatal(err)
	}
	offA()
	if err := c.Call(ctx, "Test.events", nil, nil); err != nil {
		t.Fatal(err)
	}
	offB()
	if err := c.Call(ctx, "Test.events", nil, nil); err != nil {
		t.Fatal(err)
	}
	if len(order) != 300 || order[0] != "a" || order[1] != "b" || order[199] != "b" || order[200] != "b" || order[299] != "b" {
		t.Fatalf("two receivers, then one, then none: %d calls (%v...)", len(order), order[:4])
	}

	err := c.Call(ctx, "Nope.nothing", map[string]int{"x": 1}, nil)
	var ce *cdp.Error
	if !errors.As(err, &ce) || ce.Code != cdp.CodeMethodNotFound || ce.Method != "Nope.nothing" || err.Error() != "Nope.nothing: 'Nope.nothing' wasn't found" {
		t.Fatalf("error reply: %v (%#v)", err, err)
	}
}

// TestDroppedConnection checks that a call whose target goes away returns
// an error saying so, wrapping ErrClosed, that Done is closed, and that
// later calls fail at once.
func TestDroppedConnection(t *testing.T) {
	srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		return nil, 0, "", method == "Test.die"
	})
	defer srv.Close()
	c := dial(t, srv)
	ctx := context.Background()
	if err := c.Call(ctx, "Test.fine", nil, nil); err != nil || c.Err() != nil {
		t.Fatal(err, c.Err())
	}
	err := c.Call(ctx, "Test.die", nil, nil)
	if !errors.Is(err, cdp.ErrClosed) || !strings.Contains(err.Error(), "went away") {
		t.Fatalf("call on a dropped connection: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the connection dropped")
	}
	if err := c.Call(ctx, "Test.fine", nil, nil); !errors.Is(err, cdp.ErrClosed) {
		t.Fatalf("call after the drop: %v", err)
	}
}

// TestCallContext checks that a call gives up when its context ends,
// and that a reply arriving later is dropped without harm.
func TestCallContext(t *testing.T) {
	release := make(chan struct{})
	srv := cdptest.New(func(method string, params json.RawMessage, send func(string, any)) (any, int, string, bool) {
		if method == "Test.slow" {
			<-release
		}
		return nil, 0, "", false
	})
	defer srv.Close()
	c := dial(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := c.Call(ctx, "Test.slow", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow call: %v", err)
	}
	close(release)
	if err := c.Call(context.Background(), "Test.fast", nil, nil); err != nil {
		t.Fatalf("the call after a late reply: %v", err)
	}
}

// TestListeningURL checks the parsing of node's stderr: the line with the
// inspector's address, and the lines the inspector adds that heapx hides.
func TestListeningURL(t *testing.T) {
	u, ok := cdp.ListeningURL("Debugger listening on ws://127.0.0.1:40123/0f0e6c1a-7a3d-4a5b-9d3e-2c9b8e1f7a10")
	if !ok || u != "ws://127.0.0.1:40123/0f0e6c1a-7a3d-4a5b-9d3e-2c9b8e1f7a10" {
		t.Fatalf("ListeningURL: %q %v", u, ok)
	}
	if _, ok := cdp.ListeningURL("my app says: Debugger listening on ws://x"); ok {
		t.Error("a program's own line taken for the inspector's")
	}
	for _, line := range []string{"For help, see: https://nodejs.org/en/docs/inspector", "Debugger attached.", "Waiting for the debugger to disconnect...", "Debugger ending on ws://127.0.0.1:1/x\n"} {
		if !cdp.InspectorNoise(line) {
			t.Errorf("%q not hidden", line)
		}
	}
	if cdp.InspectorNoise("listening on :8080") {
		t.Error("a program's line hidden")
	}
	if hp, err := cdp.HostPort("ws://127.0.0.1:9229/abc"); err != nil || hp != "127.0.0.1:9229" {
		t.Errorf("HostPort: %q %v", hp, err)
	}
	if _, err := cdp.HostPort("http://x:1/"); err == nil {
		t.Error("HostPort took an http URL")
	}
}

// TestHasParameter checks the reading of /json/protocol.
func TestHasParameter(t *testing.T) {
	srv := cdptest.New(nil)
	defer srv.Close()
	srv.Protocol = `{"domains":[{"domain":"HeapProfiler","commands":[{"name":"startSampling","parameters":[{"name":"samplingInterval"},{"name":"includeObjectsCollectedByMajorGC"}]}]}]}`
	ctx := context.Background()
	for _, c := range []struct {
		param string
		want  bool
	}{{"includeObjectsCollectedByMajorGC", true}, {"includeObjectsCollectedByMinorGC", false}} {
		got, err := cdp.HasParameter(ctx, srv.HostPort(), "HeapProfiler", "startSampling", c.param)
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.param, got, err, c.want)
		}
	}
	if _, err := cdp.ListTargets(ctx, "127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "no DevTools endpoint at 127.0.0.1:1") {
		t.Errorf("no endpoint: %v", err)
	}
}

// allocated runs f and returns the bytes the Go heap allocated meanwhile
// (in this process: the fake endpoint's too).
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// dialTimeout connects to srv's target with a short timeout.
func dialTimeout(t *testing.T, srv *cdptest.Server, timeout time.Duration) *cdp.Conn {
	t.Helper()
	c, err := cdp.Dial(context.Background(), "ws://"+srv.HostPort()+"/T1", timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// within fails t unless f returns within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if took := time.Since(start); took > d {
		t.Errorf("%s took %v, more than %v", what, took, d)
	}
}

// TestSilentEndpoint: an endpoint that takes the connection and never
// answers, at each step. The listing, the WebSocket handshake and a call
// each give up at their deadline with an error wrapping ErrTimeout.
func TestSilentEndpoint(t *testing.T) {
	silent, err := cdptest.NewSilent()
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	within(t, 5*time.Second, "the listing", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := cdp.ListTargets(ctx, silent.HostPort())
		if !errors.Is(err, cdp.ErrTimeout) || !strings.Contains(err.Error(), "did not answer /json/list in time") {
			t.Errorf("listing a silent endpoint: %v", err)
		}
	})
	within(t, 5*time.Second, "the handshake", func() {
		_, err := cdp.Dial(context.Background(), "ws://"+silent.HostPort()+"/x", 300*time.Millisecond)
		if !errors.Is(err, cdp.ErrTimeout) || !strings.Contains(err.Error(), "no WebSocket handshake within 300ms") {
			t.Errorf("a silent handshake: %v", err)
		}
	})
	hang := cdptest.New(nil)
	defer hang.Close()
	hang.HangHandshake = true
	within(t, 5*time.Second, "the hung handshake", func() {
		_, err := cdp.Dial(context.Background(), "ws://"+hang.HostPort()+"/T1", 300*time.Millisecond)
		if !errors.Is(err, cdp.ErrTimeout) {
			t.Errorf("a hung handshake: %v", err)
		}
	})
	mute := cdptest.New(func(string, json.RawMessage, func(string, any)) (any, int, string, bool) {
		return cdptest.NoReply, 0, "", false
	})
	defer mute.Close()
	c := dialTimeout(t, mute, 300*time.Millisecond)
	within(t, 5*time.Second, "an unanswered call", func() {
		err := c.Call(context.Background(), "HeapProfiler.collectGarbage", nil, nil)
		if !errors.Is(err, cdp.ErrTimeout) || !strings.Contains(err.Error(), "HeapProfiler.collectGarbage: the target at ws://"+mute.HostPort()+"/T1 did not answer within 300ms") {
			t.Errorf("an unanswered call: %v", err)
		}
	})
}

// TestProgressExtendsDeadline: a call that takes three times the timeout
// but whose target reports progress meanwhile (as a heap snapshot does)
// is answered; without progress reports it times out.
func TestProgressExtendsDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := cdptest.New(func(method string, _ json.RawMessage, send func(string, any)) (any, int, string, bool) {
		for i := range 9 {
			time.Sleep(timeout / 3)
			send("Test.progress", map[string]int{"done": i})
		}
		return nil, 0, "", false
	})
	defer srv.Close()
	c := dialTimeout(t, srv, timeout)
	off := c.On("Test.progress", func(json.RawMessage) { c.Progress() })
	if err := c.Call(context.Background(), "Test.long", nil, nil); err != nil {
		t.Fatalf("a long call with progress: %v", err)
	}
	off()
	if err := c.Call(context.Background(), "Test.long", nil, nil); !errors.Is(err, cdp.ErrTimeout) {
		t.Fatalf("a long call without progress: %v", err)
	}
}

// TestHostileMessages: a target that sends a reply a byte at a time, one
// that declares a frame of 2 GB (and sends some of it), one that declares
// 10 MB and sends 1 MB of it, and one that sends a message that is not
// JSON. Each ends the connection with a message saying so, within the
// timeout, and the client allocates a few MB at most: the oversize frame
// is refused from its header.
func TestHostileMessages(t *testing.T) {
	const timeout = 500 * time.Millisecond
	for _, c := range []struct {
		name   string
		reply  any
		want   string
		isTime bool
		alloc  uint64
	}{
		{"trickle", cdptest.Trickle{Result: map[string]string{"x": strings.Repeat("y", 100)}, Every: 50 * time.Millisecond}, "500ms", true, 1 << 20},
		{"2 GB frame", cdptest.Lie{Declared: 2 << 30, Send: 32 << 20}, "sent a message of 2048 MB declared, over the 16 MB heapx takes", false, 2 << 20},
		{"frame cut", cdptest.Lie{Declared: 10 << 20, Send: 1 << 20}, "500ms", true, 24 << 20},
		{"not JSON", cdptest.Raw("{\"id\":1,\"result\":{nope"), `sent a message that is not JSON (invalid character 'n' looking for beginning of object key string): {"id":1,"result":{nope`, false, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := cdptest.New(func(string, json.RawMessage, func(string, any)) (any, int, string, bool) {
				return c.reply, 0, "", false
			})
			defer srv.Close()
			conn := dialTimeout(t, srv, timeout)
			var err error
			n := allocated(func() {
				within(t, 5*time.Second, "the call", func() {
					err = conn.Call(context.Background(), "Test.call", nil, nil)
				})
			})
			// A slow message ends the connection, unless the call's own
			// deadline comes first.
			if !errors.Is(err, cdp.ErrClosed) && !c.isTime || !strings.Contains(err.Error(), c.want) || errors.Is(err, cdp.ErrTimeout) != c.isTime {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
			if n > c.alloc {
				t.Errorf("the client allocated %d MB, more than %d MB", n>>20, c.alloc>>20)
			}
			t.Logf("%v; %d KB allocated", err, n>>10)
		})
	}
}

// TestCallStream streams a 64 MB result member to its reader: what the
// reader gets is the member's value exactly, and the client allocates a
// fraction of it. A reply laid out otherwise ("result" before "id") is
// read whole and streamed all the same; one without the member, or cut
// short, is an error.
func TestCallStream(t *testing.T) {
	big := `{"head":{},"samples":[` + strings.Repeat(`{"size":32768,"nodeId":1,"ordinal":1},`, 64<<20/38) + `{"size":1,"nodeId":1,"ordinal":2}]}`
	for _, c := range []struct {
		name, reply, want, err string
		alloc                  uint64
	}{
		{"V8's layout", `{"id":1,"result":{"profile":` + big + `}}`, big, "", 8 << 20},
		{"other layout", `{"result":{"profile":{"samples":[]}},"id":1}`, `{"samples":[]}`, "", 1 << 20},
		{"no member", `{"id":1,"result":{}}`, ``, `HeapProfiler.stopSampling: the reply has no "profile": {}`, 1 << 20},
		{"cut short", `{"id":1,"result":{"profile":{"head":{"a":1`, `{"head":{"a"`, "HeapProfiler.stopSampling: the reply is cut short (12 bytes, not ending its JSON object)", 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			reply := cdptest.Raw(c.reply)
			srv := cdptest.New(func(method string, _ json.RawMessage, _ func(string, any)) (any, int, string, bool) {
				if method == "HeapProfiler.stopSampling" {
					return reply, 0, "", false
				}
				return nil, 0, "", false
			})
			defer srv.Close()
			conn := dialTimeout(t, srv, 5*time.Second)
			var got strings.Builder
			var n int64
			var err error
			a := allocated(func() {
				err = conn.CallStream(context.Background(), "HeapProfiler.stopSampling", nil, "profile", func(r io.Reader) error {
					if len(c.want) > 1<<20 {
						n, err = io.Copy(io.Discard, r)
						return err
					}
					n, err = io.Copy(&got, r)
					return err
				})
			})
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Errorf("got %v, want %q", err, c.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if n != int64(len(c.want)) || (got.Len() > 0 && got.String() != c.want) {
				t.Errorf("streamed %d bytes (%.80q), want %d", n, got.String(), len(c.want))
			}
			if a > c.alloc {
				t.Errorf("streaming %d MB allocated %d MB", n>>20, a>>20)
			}
			// The connection goes on.
			if err := conn.Call(context.Background(), "Test.next", nil, nil); err != nil {
				t.Errorf("the call after: %v", err)
			}
		})
	}
}
