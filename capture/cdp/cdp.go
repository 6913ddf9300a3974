// Package cdp is a small client of the Chrome DevTools Protocol, the
// JSON-RPC over WebSocket that `node --inspect` and Chrome's
// --remote-debugging-port speak: finding a target (/json/list), calling
// methods and receiving events. It knows no domain; package capture says
// which methods it calls and what their parameters are.
//
// Events are handed to their handlers in the order they arrive, on the
// goroutine that reads the socket, and a method's reply is delivered only
// after every event sent before it. So a handler that writes a heap
// snapshot's chunks to a file has written them all when the
// takeHeapSnapshot call returns, and a slow disk slows the reading of the
// socket instead of piling chunks up in memory.
package cdp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"
)

// MaxMessage bounds one message from the target. The websocket library's
// default (32 KiB) is far below a heap snapshot chunk (V8 sends up to 1 MB
// of JSON per chunk, more once escaped) and a sampling profile, which
// comes back in one reply; the bound keeps a misbehaving endpoint from
// making heapx allocate without limit.
const MaxMessage = 512 << 20

// Conn is a connection to one target (a Node.js process, a Chrome page).
// Its methods are safe for concurrent use.
type Conn struct {
	ws     *websocket.Conn
	url    string
	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[int64]chan reply
	handlers map[string]func(json.RawMessage)

	done chan struct{} // closed when the connection is over
	err  error         // why; set before done is closed
}

type reply struct {
	result json.RawMessage
	err    error
}

// Error is an error the target answered a call with, such as an unknown
// method or invalid parameters.
type Error struct {
	Method  string
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data"`
}

func (e *Error) Error() string {
	msg := e.Method + ": " + e.Message
	if e.Data != "" {
		msg += " (" + e.Data + ")"
	}
	return msg
}

// Protocol error codes of JSON-RPC that targets answer with.
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
)

// ErrClosed is what calls return, wrapped, once the connection is closed:
// by Close, by the target (it exited, or the page was closed) or by the
// network.
var ErrClosed = errors.New("connection closed")

// Dial connects to the WebSocket URL of a target (a webSocketDebuggerUrl
// from /json/list, or the ws:// URL node prints).
func Dial(ctx context.Context, wsURL string) (*Conn, error) {
	ws, _, err := websocket.Dial(ctx, wsURL, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", wsURL, err)
	}
	ws.SetReadLimit(MaxMessage)
	c := &Conn{
		ws:       ws,
		url:      wsURL,
		pending:  map[int64]chan reply{},
		handlers: map[string]func(json.RawMessage){},
		done:     make(chan struct{}),
	}
	go c.read()
	return c, nil
}

// Done is closed when the connection is over; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is nil while the connection is open, and after that an error
// wrapping ErrClosed that says why it closed.
func (c *Conn) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Close closes the connection. A target ends what the session started
// when the session ends: V8 stops allocation tracking and sampling.
func (c *Conn) Close() error {
	// CloseNow, not a close handshake: a target busy writing a snapshot
	// would not answer the handshake for seconds.
	err := c.ws.CloseNow()
	<-c.done
	return err
}

// On makes f receive the parameters of every event named method (e.g.
// "HeapProfiler.addHeapSnapshotChunk") until the returned func is called.
// f runs on the goroutine that reads the connection: it sees events in
// order, and the reading waits for it. params is only valid during the
// call.
func (c *Conn) On(method string, f func(params json.RawMessage)) (off func()) {
	c.mu.Lock()
	c.handlers[method] = f
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.handlers, method)
		c.mu.Unlock()
	}
}

// Call calls method with params (nil for none) and decodes the reply's
// result into result (nil to ignore it). It returns an *Error when the
// target answers with an error, ctx's error when ctx ends first, and an
// error wrapping ErrClosed when the connection closes first.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	id := c.nextID.Add(1)
	msg := struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{id, method, params}
	b, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.Err() != nil {
		c.mu.Unlock()
		return fmt.Errorf("%s: %w", method, c.err)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		forget()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case c.Err() != nil:
			return fmt.Errorf("%s: %w", method, c.err)
		}
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			if e, ok := r.err.(*Error); ok {
				e.Method = method
				return e
			}
			return fmt.Errorf("%s: %w", method, r.err)
		}
		if result != nil {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("%s: unexpected reply %s: %w", method, clip(r.result), err)
			}
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	}
}

// envelope is any message from the target: a reply has an ID, an event a
// Method.
type envelope struct {
	ID     int64           `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
}

// read reads messages until the connection ends, dispatching events to
// their handlers and replies to their calls.
func (c *Conn) read() {
	var buf bytes.Buffer
	var why error // the reason to report
	for {
		_, r, err := c.ws.Reader(context.Background())
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(r)
		}
		if err != nil {
			why = closeReason(c.url, err)
			break
		}
		var m envelope
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			why = fmt.Errorf("the target at %s sent a message that is not JSON (%v): %s: %w", c.url, err, clip(buf.Bytes()), ErrClosed)
			break
		}
		if m.Method != "" && m.ID == 0 {
			c.mu.Lock()
			f := c.handlers[m.Method]
			c.mu.Unlock()
			if f != nil {
				f(m.Params)
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ch == nil {
			continue // a call given up on (its context ended)
		}
		if m.Error != nil {
			ch <- reply{err: m.Error}
		} else {
			ch <- reply{result: m.Result}
		}
	}
	c.mu.Lock()
	c.err = why
	for id, ch := range c.pending {
		ch <- reply{err: c.err}
		delete(c.pending, id)
	}
	close(c.done)
	c.mu.Unlock()
	c.ws.CloseNow()
}

// closeReason turns the error that ended the reading into one that says
// what happened in a user's terms.
func closeReason(url string, err error) error {
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the target at %s went away (it exited, its page was closed, or the network dropped): %w", url, ErrClosed)
	case errors.Is(err, websocket.ErrMessageTooBig):
		return fmt.Errorf("the target at %s sent a message over %d MB: %w", url, MaxMessage>>20, ErrClosed)
	case websocket.CloseStatus(err) != -1:
		return fmt.Errorf("the target at %s closed the connection (%v): %w", url, websocket.CloseStatus(err), ErrClosed)
	case errors.Is(err, net.ErrClosed):
		return fmt.Errorf("%s: %w", url, ErrClosed)
	}
	return fmt.Errorf("the target at %s went away (%v): %w", url, err, ErrClosed)
}

// clip shortens a message quoted in an error.
func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
