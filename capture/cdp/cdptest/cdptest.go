// Package cdptest is a scripted DevTools endpoint for tests: it lists one
// target at /json/list, describes a protocol at /json/protocol, and
// answers the target's WebSocket with what a test's Handler says, so the
// client and what is built on it can be tested on the cases a real target
// rarely shows: an error reply, a dropped connection, a cut stream, and a
// hostile or broken target (silent, slow, lying about a frame's size,
// sending what is not JSON).
package cdptest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Handler answers one call. It may send events first with send; it
// returns the result (nil for {}) or, when errMsg is not empty, an error
// reply with code. Returning drop true closes the connection instead of
// answering. A result of type Raw, Trickle, Lie or NoReply is not a
// result but a way to misbehave.
type Handler func(method string, params json.RawMessage, send func(method string, params any)) (result any, code int, errMsg string, drop bool)

// NoReply, as a Handler's result, leaves the call unanswered.
var NoReply = noReply{}

type noReply struct{}

// Raw, as a Handler's result, is sent as the whole reply message, as it
// is: for a reply that is not JSON.
type Raw []byte

// RawResult, as a Handler's result, is the reply's result as it is, in
// JSON: a large one is sent without being decoded and encoded again.
type RawResult []byte

// Trickle, as a Handler's result, sends the reply Msg (a JSON value of
// the reply's result) a byte every Every.
type Trickle struct {
	Result any
	Every  time.Duration
}

// Lie, as a Handler's result, sends a frame header declaring Declared
// bytes, then Send bytes of it, then waits for the client to give up.
type Lie struct {
	Declared, Send int64
}

// Server is a fake DevTools endpoint.
type Server struct {
	*httptest.Server
	// Protocol is what /json/protocol serves.
	Protocol string
	// HangHandshake makes the target's WebSocket endpoint take the
	// connection and never answer the handshake.
	HangHandshake bool

	handle Handler
	mu     sync.Mutex
	calls  []string
	quit   chan struct{}
	once   sync.Once
}

// New starts a fake endpoint that answers with h; Close stops it.
func New(h Handler) *Server {
	s := &Server{handle: h, Protocol: `{"domains":[]}`, quit: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/json/list", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode([]map[string]string{{
			"id": "T1", "type": "node", "title": "fake", "url": "file:///fake/app.js",
			// As node does: the address it listens on, which the client
			// rewrites to the one it reached the listing at.
			"webSocketDebuggerUrl": "ws://127.0.0.1:1/T1",
		}})
	})
	mux.HandleFunc("/json/protocol", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(s.Protocol))
	})
	mux.HandleFunc("/T1", s.serve)
	s.Server = httptest.NewServer(mux)
	return s
}

// Close stops the endpoint, ending whatever a misbehaving handler waits
// on.
func (s *Server) Close() {
	s.once.Do(func() { close(s.quit) })
	s.Server.CloseClientConnections()
	s.Server.Close()
}

// HostPort is the endpoint's address, as --inspect takes it.
func (s *Server) HostPort() string { return strings.TrimPrefix(s.URL, "http://") }

// Calls returns the methods called so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.HangHandshake {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				<-s.quit
				conn.Close()
			}
		}
		return
	}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	var wmu sync.Mutex
	write := func(v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		c.WriteMessage(websocket.TextMessage, b)
		wmu.Unlock()
	}
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			return
		}
		var m struct {
			ID     int64           `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(b, &m) != nil {
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, m.Method)
		s.mu.Unlock()
		send := func(method string, params any) { write(map[string]any{"method": method, "params": params}) }
		result, code, msg, drop := s.handle(m.Method, m.Params, send)
		switch res := result.(type) {
		case noReply:
			continue
		case Raw:
			wmu.Lock()
			c.WriteMessage(websocket.TextMessage, res)
			wmu.Unlock()
			continue
		case RawResult:
			wmu.Lock()
			if w, err := c.NextWriter(websocket.TextMessage); err == nil {
				fmt.Fprintf(w, `{"id":%d,"result":`, m.ID)
				w.Write(res)
				w.Write([]byte("}"))
				w.Close()
			}
			wmu.Unlock()
			continue
		case Trickle:
			b, _ := json.Marshal(map[string]any{"id": m.ID, "result": res.Result})
			wmu.Lock()
			s.trickle(c.NetConn(), b, res.Every)
			wmu.Unlock()
			continue
		case Lie:
			wmu.Lock()
			s.lie(c.NetConn(), res)
			wmu.Unlock()
			return
		}
		switch {
		case drop:
			return
		case msg != "":
			write(map[string]any{"id": m.ID, "error": map[string]any{"code": code, "message": msg}})
		default:
			if result == nil {
				result = struct{}{}
			}
			write(map[string]any{"id": m.ID, "result": result})
		}
	}
}

// frameHeader is the header of an unmasked, final text frame of n bytes,
// as a server sends one.
func frameHeader(n int64) []byte {
	switch {
	case n < 126:
		return []byte{0x81, byte(n)}
	case n < 1<<16:
		h := []byte{0x81, 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(n))
		return h
	}
	h := make([]byte, 10)
	h[0], h[1] = 0x81, 127
	binary.BigEndian.PutUint64(h[2:], uint64(n))
	return h
}

// trickle writes msg as one frame, a byte every every, until done or
// the endpoint closes.
func (s *Server) trickle(conn net.Conn, msg []byte, every time.Duration) {
	frame := append(frameHeader(int64(len(msg))), msg...)
	for _, b := range frame {
		if _, err := conn.Write([]byte{b}); err != nil {
			return
		}
		select {
		case <-s.quit:
			return
		case <-time.After(every):
		}
	}
}

// lie writes a frame header declaring l.Declared bytes and l.Send bytes
// of spaces, then waits until the client hangs up or the endpoint closes.
func (s *Server) lie(conn net.Conn, l Lie) {
	if _, err := conn.Write(frameHeader(l.Declared)); err != nil {
		return
	}
	fill := []byte(strings.Repeat(" ", 64<<10))
	for sent := int64(0); sent < l.Send; {
		k := min(int64(len(fill)), l.Send-sent)
		if _, err := conn.Write(fill[:k]); err != nil {
			return
		}
		sent += k
	}
	go func() {
		<-s.quit
		conn.Close()
	}()
	conn.SetReadDeadline(time.Time{})
	var b [1]byte
	for {
		if _, err := conn.Read(b[:]); err != nil {
			return
		}
	}
}

// Silent is a TCP endpoint that takes connections and never says a word:
// neither the HTTP listing nor a WebSocket handshake is ever answered.
type Silent struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// NewSilent starts a silent endpoint; Close stops it.
func NewSilent() (*Silent, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Silent{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
		}
	}()
	return s, nil
}

// HostPort is the endpoint's address.
func (s *Silent) HostPort() string { return s.ln.Addr().String() }

// Close stops the endpoint and drops its connections.
func (s *Silent) Close() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}
