package cdp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
)

// frameGuard watches the bytes a target sends, beneath the websocket
// library, and refuses a message whose frame headers declare more than
// limit() bytes as soon as the header is in, before any of the message
// is passed on: a target declaring a frame of 2 GB costs nothing. (The
// library's own read limit counts bytes as they are read, and only
// between whole messages can it be changed; this one is read as each
// header arrives, so a streamed reply may be larger.) It also bounds the
// HTTP response to the WebSocket handshake.
type frameGuard struct {
	net.Conn
	limit func() int64

	inHandshake bool
	handshake   int // bytes of the handshake's response so far
	crlf        int // of "\r\n\r\n", the bytes matched so far
	hdr         [14]byte
	nhdr        int   // bytes of the current frame header so far
	payload     int64 // bytes of the current frame still to come
	msg         int64 // bytes the current message's frames declared
}

// maxHandshake bounds the HTTP response to the handshake.
const maxHandshake = 64 << 10

// errTooBig is the error of a message over the limit.
var errTooBig = errors.New("message too big")

// tooBigError says how big a message the target declared.
type tooBigError struct{ declared, limit int64 }

func (e *tooBigError) Error() string {
	return fmt.Sprintf("a message of %d MB declared, over the %d MB heapx takes", e.declared>>20, e.limit>>20)
}

func (e *tooBigError) Unwrap() error { return errTooBig }

func (g *frameGuard) Read(p []byte) (int, error) {
	n, err := g.Conn.Read(p)
	if n > 0 {
		if gerr := g.scan(p[:n]); gerr != nil {
			g.Conn.Close()
			return 0, gerr
		}
	}
	return n, err
}

// scan follows the frames in b, the next bytes from the target.
func (g *frameGuard) scan(b []byte) error {
	for len(b) > 0 {
		if g.inHandshake {
			for i, c := range b {
				switch {
				case c == "\r\n\r\n"[g.crlf]:
					g.crlf++
				case c == '\r':
					g.crlf = 1
				default:
					g.crlf = 0
				}
				g.handshake++
				if g.crlf == 4 {
					g.inHandshake = false
					b = b[i+1:]
					break
				}
				if g.handshake > maxHandshake {
					return fmt.Errorf("the answer to the WebSocket handshake is over %d KB", maxHandshake>>10)
				}
			}
			if g.inHandshake {
				return nil
			}
			continue
		}
		if g.payload > 0 {
			k := min(int64(len(b)), g.payload)
			g.payload -= k
			b = b[k:]
			continue
		}
		g.hdr[g.nhdr] = b[0]
		g.nhdr++
		b = b[1:]
		if err := g.header(); err != nil {
			return err
		}
	}
	return nil
}

// header takes a frame header once it is whole.
func (g *frameGuard) header() error {
	if g.nhdr < 2 {
		return nil
	}
	need := 2
	switch g.hdr[1] & 0x7f {
	case 126:
		need += 2
	case 127:
		need += 8
	}
	if g.hdr[1]&0x80 != 0 {
		need += 4 // a mask key, which a server should not send
	}
	if g.nhdr < need {
		return nil
	}
	var n int64
	switch g.hdr[1] & 0x7f {
	case 126:
		n = int64(binary.BigEndian.Uint16(g.hdr[2:]))
	case 127:
		u := binary.BigEndian.Uint64(g.hdr[2:])
		if u > 1<<62 {
			u = 1 << 62
		}
		n = int64(u)
	default:
		n = int64(g.hdr[1] & 0x7f)
	}
	g.nhdr, g.payload = 0, n
	switch op := g.hdr[0] & 0x0f; {
	case op >= 8:
		return nil // a control frame: ping, pong, close
	case op != 0:
		g.msg = 0 // a new message; 0 continues one
	}
	g.msg += n
	if limit := g.limit(); g.msg > limit {
		return &tooBigError{declared: g.msg, limit: limit}
	}
	return nil
}
