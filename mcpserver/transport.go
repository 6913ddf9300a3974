package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxRequest is the longest request line LineTransport reads: a
// tool call's arguments (paths, ids, an SQL statement) are a few hundred
// bytes, and the line is held whole while it is decoded.
const DefaultMaxRequest = 4 << 20

// LineTransport is heapx mcp's transport: JSON-RPC messages, one per
// line, read from In and written to Out (the MCP stdio transport). It
// differs from the SDK's StdioTransport in one way: a line that is not a
// message the server can take (longer than MaxRequest, not JSON, JSON
// that is not a JSON-RPC 2.0 message, a batch) is answered with a
// JSON-RPC error, carrying the request's id when the line shows one, and
// the server reads the next line; the SDK's transport ends the session on
// such a line, and a client's one bad line would cost every dump the
// server holds open. An oversize line is read through, never held: the
// transport's memory is MaxRequest whatever comes in.
type LineTransport struct {
	In  io.Reader
	Out io.Writer
	// MaxRequest bounds a request line in bytes; 0 is DefaultMaxRequest.
	MaxRequest int
	// Log receives a line for each request refused; nil discards them.
	Log io.Writer
}

// Connect starts reading In.
func (t *LineTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &lineConn{in: t.In, out: t.Out, log: t.Log, max: t.MaxRequest,
		incoming: make(chan lineItem), closed: make(chan struct{})}
	if c.max <= 0 {
		c.max = DefaultMaxRequest
	}
	if c.log == nil {
		c.log = io.Discard
	}
	go c.readLoop()
	return c, nil
}

// lineConn is a LineTransport's connection.
type lineConn struct {
	in  io.Reader
	out io.Writer
	log io.Writer
	max int

	writeMu  sync.Mutex
	incoming chan lineItem
	closed   chan struct{}
	once     sync.Once
}

// lineItem is a message read, or the error that ended the input.
type lineItem struct {
	msg jsonrpc.Message
	err error
}

func (c *lineConn) SessionID() string { return "" }

// Read returns the next message: a goroutine reads the lines, so that a
// Close or a cancelled ctx ends a Read blocked on input.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case it := <-c.incoming:
		return it.msg, it.err
	}
}

// Write writes msg as one line.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.writeLine(data)
}

func (c *lineConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close ends the connection (and closes In, when it can be closed, to
// end the read under way).
func (c *lineConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		if cl, ok := c.in.(io.Closer); ok {
			cl.Close()
		}
	})
	return nil
}

// readLoop reads lines until the input ends, handing messages to Read
// and answering the lines that are not messages.
func (c *lineConn) readLoop() {
	r := bufio.NewReaderSize(c.in, 64<<10)
	var buf []byte
	for {
		line, n, err := readLine(r, c.max, buf[:0])
		buf = line
		if msg := c.decode(line, n); msg != nil {
			select {
			case c.incoming <- lineItem{msg: msg}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.incoming <- lineItem{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads a line into buf, keeping at most max+1 of its bytes
// (the newline dropped), and returns them with the line's full length.
func readLine(r *bufio.Reader, max int, buf []byte) ([]byte, int, error) {
	n := 0
	for {
		frag, err := r.ReadSlice('\n')
		frag = bytes.TrimSuffix(frag, []byte("\n"))
		n += len(frag)
		if keep := max + 1 - len(buf); keep > 0 {
			buf = append(buf, frag[:min(len(frag), keep)]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return buf, n, err
	}
}

// JSON-RPC 2.0's error codes for a line that is not JSON and for JSON
// that is not a request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// decode turns a line into a message, or answers it with an error and
// returns nil. n is the line's length; line holds at most max+1 bytes of
// it.
func (c *lineConn) decode(line []byte, n int) jsonrpc.Message {
	line = bytes.TrimSuffix(line, []byte("\r"))
	if n > c.max {
		c.refuse(line, codeInvalidRequest, fmt.Sprintf("the request is %d bytes long; heapx mcp reads requests of at most %d bytes", n, c.max))
		return nil
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	var probe any
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		msg := err.Error()
		var se *json.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s (at byte %d)", msg, se.Offset)
		}
		c.refuse(trimmed, codeParseError, "the request is not JSON: "+msg)
		return nil
	}
	if trimmed[0] == '[' {
		c.refuse(nil, codeInvalidRequest, "JSON-RPC batches are not supported: send one request per line")
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		c.refuse(trimmed, codeInvalidRequest, "not a JSON-RPC 2.0 message: "+err.Error())
		return nil
	}
	return msg
}

// refuse answers a line that is not a message with a JSON-RPC error,
// with the line's id when it shows one (so the client's call fails now
// instead of waiting), null otherwise as JSON-RPC says.
func (c *lineConn) refuse(line []byte, code int, msg string) {
	id := json.RawMessage("null")
	if v := idOf(line); v != nil {
		id = v
	}
	fmt.Fprintf(c.log, "heapx mcp: refused a request (id %s): %s\n", id, msg)
	resp, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	c.writeLine(resp)
}

// idOf finds the top-level "id" of a JSON object, from what of it is
// well formed (the start of an oversize or broken line), and returns it
// when it is a number or a string.
func idOf(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line[:min(len(line), 64<<10)]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if k != "id" {
			continue
		}
		var s string
		var f float64
		if json.Unmarshal(v, &s) != nil && json.Unmarshal(v, &f) != nil {
			return nil // an object, an array, null or a boolean
		}
		return v
	}
	return nil
}
