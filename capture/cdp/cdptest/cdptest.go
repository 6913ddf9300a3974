// Package cdptest is a scripted DevTools endpoint for tests: it lists one
// target at /json/list, describes a protocol at /json/protocol, and
// answers the target's WebSocket with what a test's Handler says, so the
// client and what is built on it can be tested on the cases a real target
// rarely shows (an error reply, a dropped connection, a cut stream).
package cdptest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/coder/websocket"
)

// Handler answers one call. It may send events first with send; it
// returns the result (nil for {}) or, when errMsg is not empty, an error
// reply with code. Returning drop true closes the connection instead of
// answering.
type Handler func(method string, params json.RawMessage, send func(method string, params any)) (result any, code int, errMsg string, drop bool)

// Server is a fake DevTools endpoint.
type Server struct {
	*httptest.Server
	// Protocol is what /json/protocol serves.
	Protocol string

	handle Handler
	mu     sync.Mutex
	calls  []string
}

// New starts a fake endpoint that answers with h; Close stops it.
func New(h Handler) *Server {
	s := &Server{handle: h, Protocol: `{"domains":[]}`}
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

// HostPort is the endpoint's address, as --inspect takes it.
func (s *Server) HostPort() string { return strings.TrimPrefix(s.URL, "http://") }

// Calls returns the methods called so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx := context.Background()
	var wmu sync.Mutex
	write := func(v any) {
		b, _ := json.Marshal(v)
		wmu.Lock()
		c.Write(ctx, websocket.MessageText, b)
		wmu.Unlock()
	}
	for {
		_, b, err := c.Read(ctx)
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
