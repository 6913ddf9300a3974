package cdp_test

import (
	"context"
	"encoding/json"
	"errors"
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
	c, err := cdp.Dial(ctx, ts[0].WebSocketURL)
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
