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
//
// A target cannot hold heapx nor make it grow: the handshake, each call
// and each message have a deadline (a long call's progress moves it:
// Progress), a message larger than MaxMessage is refused from its frame
// header, and the one reply that may be larger, a sampling profile, is
// streamed (CallStream). The WebSocket is gorilla/websocket's, whose
// reads take deadlines; frameGuard adds the header check beneath it.
package cdp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// MaxMessage bounds a message from the target that is read into memory:
// every event and reply but a streamed one (CallStream). A heap snapshot
// chunk is about 100 KB of JSON (more once escaped), a statistics update
// of a long allocation timeline a few MB. A message declaring more is
// refused from its frame header, before any of it is read, so that a
// misbehaving endpoint cannot make heapx allocate.
const MaxMessage = 16 << 20

// maxStreamed bounds a reply CallStream passes on as it arrives, to a
// file: a sampling heap profile of a long run is hundreds of MB.
const maxStreamed = 16 << 30

// DefaultTimeout is how long a call waits, with no reply and no progress
// (Progress), before giving up; and how long one message may take to
// arrive once it has begun.
const DefaultTimeout = 30 * time.Second

// ErrTimeout is wrapped by the error of a call that got no reply in time,
// and of a connection that ended because a message came too slowly.
var ErrTimeout = errors.New("timed out")

// Conn is a connection to one target (a Node.js process, a Chrome page).
// Its methods are safe for concurrent use.
type Conn struct {
	ws      *websocket.Conn
	url     string
	timeout time.Duration
	nextID  atomic.Int64
	streams atomic.Int64 // streamed calls pending
	// progress is when the target last showed progress (Progress), in
	// Unix nanoseconds: it moves every pending call's deadline.
	progress atomic.Int64

	wmu      sync.Mutex // one writer at a time, as the websocket needs
	mu       sync.Mutex
	pending  map[int64]*call
	handlers map[string][]*handler

	done chan struct{} // closed when the connection is over
	err  error         // why; set before done is closed
}

// call is a call waiting for its reply.
type call struct {
	ch chan reply
	// stream, when set, receives the reply's result as it arrives
	// (CallStream); it runs on the reading goroutine.
	stream func(io.Reader) error
	member string // the result's member stream receives
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
// from /json/list, or the ws:// URL node prints). The connection and its
// handshake must be done within timeout (DefaultTimeout when 0), which
// then bounds each call and each message as Call says.
func Dial(ctx context.Context, wsURL string, timeout time.Duration) (*Conn, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Conn{
		url:      wsURL,
		timeout:  timeout,
		pending:  map[int64]*call{},
		handlers: map[string][]*handler{},
		done:     make(chan struct{}),
	}
	d := websocket.Dialer{
		HandshakeTimeout: timeout,
		ReadBufferSize:   64 << 10,
		WriteBufferSize:  16 << 10,
		// The guard reads what the target sends as it is: above TLS for
		// a wss:// URL.
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return c.guard((&net.Dialer{}).DialContext(ctx, network, addr))
		},
		NetDialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return c.guard((&tls.Dialer{}).DialContext(ctx, network, addr))
		},
	}
	ws, _, err := d.DialContext(ctx, wsURL, nil)
	if err != nil {
		if ctx.Err() == nil && isTimeout(err) {
			err = fmt.Errorf("no WebSocket handshake within %v: %w", timeout, ErrTimeout)
		}
		return nil, fmt.Errorf("connecting to %s: %w", wsURL, err)
	}
	c.ws = ws
	// The guard beneath enforces the limits; the library's is a
	// backstop.
	ws.SetReadLimit(maxStreamed)
	go c.read()
	return c, nil
}

// guard puts a frameGuard over a connection just made.
func (c *Conn) guard(conn net.Conn, err error) (net.Conn, error) {
	if err != nil {
		return nil, err
	}
	return &frameGuard{Conn: conn, limit: c.readLimit, inHandshake: true}, nil
}

// isTimeout reports whether err is a network deadline's.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
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
	// No close handshake: a target busy writing a snapshot would not
	// answer it for seconds.
	err := c.ws.Close()
	<-c.done
	return err
}

// handler is one receiver of an event (On); a pointer, so that off
// removes this one and no other.
type handler struct{ f func(json.RawMessage) }

// On makes f receive the parameters of every event named method (e.g.
// "HeapProfiler.addHeapSnapshotChunk") until the returned func is called.
// f runs on the goroutine that reads the connection: it sees events in
// order, and the reading waits for it. params is only valid during the
// call. An event may have several receivers (the scripts side file and a
// scenario's own list both hear Debugger.scriptParsed): they get it in the
// order they were added.
func (c *Conn) On(method string, f func(params json.RawMessage)) (off func()) {
	h := &handler{f: f}
	c.mu.Lock()
	c.handlers[method] = append(c.handlers[method], h)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		hs := c.handlers[method]
		for i, x := range hs {
			if x == h {
				// A new slice: dispatch may be walking the old one.
				c.handlers[method] = append(hs[:i:i], hs[i+1:]...)
				break
			}
		}
		if len(c.handlers[method]) == 0 {
			delete(c.handlers, method)
		}
	}
}

// Progress tells the connection that the target is making progress on a
// long call (a heap snapshot's progress report, a chunk of it): every
// pending call's deadline starts again. Event handlers call it.
func (c *Conn) Progress() { c.progress.Store(time.Now().UnixNano()) }

// Call calls method with params (nil for none) and decodes the reply's
// result into result (nil to ignore it). It returns an *Error when the
// target answers with an error, ctx's error when ctx ends first, an
// error wrapping ErrTimeout when the connection's timeout passes with
// neither a reply nor a call of Progress, and an error wrapping ErrClosed
// when the connection closes first.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := c.call(ctx, method, params, &call{})
	if err != nil || result == nil {
		return err
	}
	if err := json.Unmarshal(raw, result); err != nil {
		return fmt.Errorf("%s: unexpected reply %s: %w", method, clip(raw), err)
	}
	return nil
}

// CallStream calls method and passes the value of the member named
// member of the reply's result (the "profile" of stopSampling's) to f as
// a stream, read from the connection as it arrives, so that a result of
// hundreds of MB is never whole in memory. f runs on the goroutine that
// reads the connection; its error is the call's. A reply that is not
// laid out as V8 lays replies out ({"id":N,"result":{"member":...}}) is
// read into memory first, up to MaxMessage.
func (c *Conn) CallStream(ctx context.Context, method string, params any, member string, f func(value io.Reader) error) error {
	_, err := c.call(ctx, method, params, &call{stream: f, member: member})
	return err
}

func (c *Conn) call(ctx context.Context, method string, params any, cl *call) (json.RawMessage, error) {
	id := c.nextID.Add(1)
	msg := struct {
		ID     int64  `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}{id, method, params}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	cl.ch = make(chan reply, 1)
	if cl.stream != nil {
		c.streams.Add(1)
		defer c.streams.Add(-1)
	}
	c.mu.Lock()
	if c.Err() != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, c.err)
	}
	c.pending[id] = cl
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	start := time.Now()
	if err := c.write(ctx, b); err != nil {
		forget()
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case c.Err() != nil:
			return nil, fmt.Errorf("%s: %w", method, c.err)
		case isTimeout(err):
			return nil, fmt.Errorf("%s: the target at %s took no message for %v: %w", method, c.url, c.timeout, ErrTimeout)
		}
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	timer := time.NewTimer(c.timeout)
	defer timer.Stop()
	for {
		select {
		case r := <-cl.ch:
			if r.err != nil {
				if e, ok := r.err.(*Error); ok {
					e.Method = method
					return nil, e
				}
				return nil, fmt.Errorf("%s: %w", method, r.err)
			}
			return r.result, nil
		case <-ctx.Done():
			forget()
			return nil, ctx.Err()
		case <-timer.C:
			if left := c.deadline(start); left > 0 {
				timer.Reset(left)
				continue
			}
			forget()
			return nil, fmt.Errorf("%s: the target at %s did not answer within %v: %w", method, c.url, c.timeout, ErrTimeout)
		}
	}
}

// deadline is how long a call started at start may still wait: the
// timeout from the later of its start and the target's last progress.
func (c *Conn) deadline(start time.Time) time.Duration {
	from := start
	if p := time.Unix(0, c.progress.Load()); p.After(from) {
		from = p
	}
	return time.Until(from.Add(c.timeout))
}

// write sends one message, within ctx and the timeout.
func (c *Conn) write(ctx context.Context, b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	dl := time.Now().Add(c.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.ws.SetWriteDeadline(dl)
	return c.ws.WriteMessage(websocket.TextMessage, b)
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

// replyHead matches how V8 begins a successful reply whose result is an
// object, which CallStream streams from its first member's value on.
var replyHead = regexp.MustCompile(`^\{"id":(\d+),"result":\{"(\w+)":`)

// headSize is how much of a message is read to see whether it is a
// reply to stream.
const headSize = 64

// read reads messages until the connection ends, dispatching events to
// their handlers and replies to their calls.
func (c *Conn) read() {
	var buf bytes.Buffer
	head := make([]byte, headSize)
	var why error // the reason to report
	for {
		c.ws.SetReadDeadline(time.Time{}) // a target may be quiet for long
		_, r, err := c.ws.NextReader()
		if err == nil {
			// Begun, a message must arrive within the timeout: a target
			// sending one a byte at a time does not hold heapx.
			c.ws.SetReadDeadline(time.Now().Add(c.timeout))
			var n int
			n, err = io.ReadFull(r, head)
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = nil
			}
			if err == nil {
				var streamed bool
				streamed, err = c.streamReply(head[:n], r)
				if streamed {
					continue
				}
			}
			if err == nil {
				buf.Reset()
				buf.Write(head[:n])
				_, err = buf.ReadFrom(io.LimitReader(r, MaxMessage-int64(n)+1))
				if err == nil && buf.Len() > MaxMessage {
					err = websocket.ErrReadLimit
				}
			}
		}
		if err != nil {
			why = c.closeReason(err)
			break
		}
		if err := c.dispatch(buf.Bytes()); err != nil {
			why = err
			break
		}
	}
	c.mu.Lock()
	c.err = why
	for id, cl := range c.pending {
		cl.ch <- reply{err: c.err}
		delete(c.pending, id)
	}
	close(c.done)
	c.mu.Unlock()
	c.ws.Close()
}

// readLimit is the size of a message the target may send: larger while
// a streamed reply is awaited (frameGuard).
func (c *Conn) readLimit() int64 {
	if c.streams.Load() > 0 {
		return maxStreamed
	}
	return MaxMessage
}

// streamReply passes the rest of a message that begins with head to the
// call awaiting it as a stream, when it is the reply of a CallStream laid
// out as V8 lays replies out. It reports whether it did; its error ends
// the connection (the message could not be read to its end).
func (c *Conn) streamReply(head []byte, rest io.Reader) (bool, error) {
	m := replyHead.FindSubmatch(head)
	if m == nil {
		return false, nil
	}
	id, _ := strconv.ParseInt(string(m[1]), 10, 64)
	c.mu.Lock()
	cl := c.pending[id]
	if cl == nil || cl.stream == nil || cl.member != string(m[2]) {
		c.mu.Unlock()
		return false, nil
	}
	delete(c.pending, id)
	c.mu.Unlock()
	// A reply of hundreds of MB takes a while: its deadline moves as
	// it arrives. The value is what follows the head, less the result's
	// and the envelope's closing braces.
	rest = &extending{r: rest, c: c}
	body := &trimTail{r: io.MultiReader(bytes.NewReader(head[len(m[0]):]), rest), keep: 2}
	ferr := cl.stream(body)
	// Whatever f left unread is read, so that the next message can be.
	if _, err := io.Copy(io.Discard, body); err != nil {
		cl.ch <- reply{err: fmt.Errorf("reading the reply: %w", err)}
		return true, err
	}
	if ferr == nil && body.tail() != "}}" {
		ferr = fmt.Errorf("the reply is cut short (%d bytes, not ending its JSON object)", body.n)
	}
	cl.ch <- reply{err: ferr}
	return true, nil
}

// extending reads a streamed reply, moving the read deadline forward as
// each part of it arrives.
type extending struct {
	r io.Reader
	c *Conn
}

func (e *extending) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if n > 0 {
		e.c.ws.SetReadDeadline(time.Now().Add(e.c.timeout))
		e.c.Progress()
	}
	return n, err
}

// trimTail reads r but for its last keep bytes, which tail then gives.
type trimTail struct {
	r    io.Reader
	keep int
	buf  []byte // read and not given out: buf[off:]
	off  int
	err  error
	n    int64 // bytes given out
}

func (t *trimTail) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(t.buf)-t.off <= t.keep && t.err == nil {
		if t.buf == nil {
			t.buf = make([]byte, 0, 64<<10)
		}
		t.buf = t.buf[:copy(t.buf, t.buf[t.off:])]
		t.off = 0
		k, err := t.r.Read(t.buf[len(t.buf):cap(t.buf)])
		t.buf, t.err = t.buf[:len(t.buf)+k], err
	}
	avail := len(t.buf) - t.off - t.keep
	if avail <= 0 {
		return 0, t.err
	}
	k := copy(p, t.buf[t.off:t.off+avail])
	t.off += k
	t.n += int64(k)
	return k, nil
}

// tail is what was held back, once the reading is over.
func (t *trimTail) tail() string { return string(t.buf[t.off:]) }

// dispatch hands one whole message to its handler or call.
func (c *Conn) dispatch(b []byte) error {
	var m envelope
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("the target at %s sent a message that is not JSON (%v): %s: %w", c.url, err, clip(b), ErrClosed)
	}
	if m.Method != "" && m.ID == 0 {
		c.mu.Lock()
		hs := c.handlers[m.Method]
		c.mu.Unlock()
		for _, h := range hs {
			h.f(m.Params)
		}
		return nil
	}
	c.mu.Lock()
	cl := c.pending[m.ID]
	delete(c.pending, m.ID)
	c.mu.Unlock()
	switch {
	case cl == nil:
		// A call given up on (its context ended).
	case m.Error != nil:
		cl.ch <- reply{err: m.Error}
	case cl.stream != nil:
		var members map[string]json.RawMessage
		err := json.Unmarshal(m.Result, &members)
		if v, ok := members[cl.member]; err == nil && ok {
			err = cl.stream(bytes.NewReader(v))
		} else if err == nil {
			err = fmt.Errorf("the reply has no %q: %s", cl.member, clip(m.Result))
		}
		cl.ch <- reply{err: err}
	default:
		cl.ch <- reply{result: m.Result}
	}
	return nil
}

// closeReason turns the error that ended the reading into one that says
// what happened in a user's terms.
func (c *Conn) closeReason(err error) error {
	var ce *websocket.CloseError
	switch {
	case errors.Is(err, errTooBig):
		return fmt.Errorf("the target at %s sent %v: %w", c.url, err, ErrClosed)
	case errors.Is(err, websocket.ErrReadLimit):
		return fmt.Errorf("the target at %s sent a message over the %d MB heapx takes: %w", c.url, MaxMessage>>20, ErrClosed)
	case isTimeout(err):
		return fmt.Errorf("the target at %s sent a message too slowly (not whole within %v): %w (%w)", c.url, c.timeout, ErrClosed, ErrTimeout)
	case errors.As(err, &ce) && ce.Code != websocket.CloseAbnormalClosure:
		return fmt.Errorf("the target at %s closed the connection (%d %s): %w", c.url, ce.Code, ce.Text, ErrClosed)
	case errors.Is(err, net.ErrClosed):
		return fmt.Errorf("%s: %w", c.url, ErrClosed)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || ce != nil:
		return fmt.Errorf("the target at %s went away (it exited, its page was closed, or the network dropped): %w", c.url, ErrClosed)
	}
	return fmt.Errorf("the target at %s went away (%v): %w", c.url, err, ErrClosed)
}

// clip shortens a message quoted in an error.
func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}
