package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/heapx/heapx/session"
)

// Listener is a server's listening socket, with what the address asks of
// the server: one on the loopback address answers only requests that
// name it (Options.Hosts, against DNS rebinding); one other machines may
// reach answers only requests that carry a random token (Options.Token).
type Listener struct {
	net.Listener
	// URL is the address to give the user, the token in it when there
	// is one: for a server on every address of the machine, with the
	// machine's name.
	URL string
	// Exposed, when not empty, says where other machines may reach the
	// server (an address, or "HOST:PORT (every address of this
	// machine)"): anyone with URL can read everything the dump holds.
	Exposed string
	opt     Options
}

// Listen listens on addr (HOST:PORT; port 0 is a free one) and sets opt
// (a copy: Token and Hosts, as the address asks) for the server Serve
// runs on it.
func Listen(addr string, opt Options) (*Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	l := &Listener{Listener: ln, URL: "http://" + ln.Addr().String() + "/", opt: opt}
	tcp := ln.Addr().(*net.TCPAddr)
	if tcp.IP.IsLoopback() {
		l.opt.Hosts = LoopbackHosts(ln.Addr())
		return l, nil
	}
	l.opt.Token = randomToken()
	l.Exposed = ln.Addr().String()
	if tcp.IP.IsUnspecified() {
		// Every address of the machine: the address to give is the
		// machine's name.
		host, _ := os.Hostname()
		if host == "" {
			host = "localhost"
		}
		l.Exposed = net.JoinHostPort(addrHost(addr), strconv.Itoa(tcp.Port)) + " (every address of this machine)"
		l.URL = "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
	}
	l.URL += "?token=" + l.opt.Token
	return l, nil
}

// Options are the server's options as Listen set them.
func (l *Listener) Options() Options { return l.opt }

// Serve serves s (Handler) on l until ctx is done, then shuts the server
// down, leaving the requests in flight 5 seconds to finish, and returns
// nil; a failure to serve is returned. It closes l either way.
func (l *Listener) Serve(ctx context.Context, s *session.Session) error {
	defer l.Close()
	srv := &http.Server{Handler: Handler(s, l.opt), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: log.New(io.Discard, "", 0)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l.Listener) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(stop)
		return nil
	}
}

// addrHost is the host part of a listening address as given ("" for
// ":8080" reads as 0.0.0.0).
func addrHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "0.0.0.0"
	}
	return host
}

// randomToken returns 128 random bits in hex.
func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// LimitMemory sets the soft memory limit of a server holding a dump:
// what is live once it is ready, and half as much again for the requests
// (at least 512 MB). A server keeps the analysis (most of its heap) for
// hours, and Go's collector lets a heap grow to twice what is live before
// it collects: under many requests the garbage alone would double the
// server's memory (a 1 GB snapshot's server went from 1.7 to 3.4 GB with
// requests bounded by serve's limits). At the limit the collector works
// harder instead. GOMEMLIMIT, when set, is left to decide. It returns the
// limit set, 0 when it left it to GOMEMLIMIT.
func LimitMemory() int64 {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	live := ms.HeapAlloc
	limit := int64(live + max(live/2, 512<<20))
	debug.SetMemoryLimit(limit)
	return limit
}

// OpenBrowser opens url in the desktop's browser, if it has one, without
// waiting for it.
func OpenBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
