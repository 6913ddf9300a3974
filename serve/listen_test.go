package serve_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/serve"
)

// TestListenLoopback checks that a server on the loopback address gets
// the Hosts that name it and no token, and its address as it is.
func TestListenLoopback(t *testing.T) {
	ln, err := serve.Listen("127.0.0.1:0", serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if want := "http://127.0.0.1:" + port + "/"; ln.URL != want {
		t.Errorf("URL %q, want %q", ln.URL, want)
	}
	opt := ln.Options()
	if ln.Exposed != "" || opt.Token != "" {
		t.Errorf("a loopback server is exposed (%q) or has a token (%q)", ln.Exposed, opt.Token)
	}
	if want := []string{"127.0.0.1:" + port, "localhost:" + port}; strings.Join(opt.Hosts, " ") != strings.Join(want, " ") {
		t.Errorf("Hosts %q, want %q", opt.Hosts, want)
	}
}

// TestListenEveryAddress checks that a server on every address gets a
// random token, which the URL (with the machine's name) carries.
func TestListenEveryAddress(t *testing.T) {
	ln, err := serve.Listen(":0", serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if want := "0.0.0.0:" + port + " (every address of this machine)"; ln.Exposed != want {
		t.Errorf("Exposed %q, want %q", ln.Exposed, want)
	}
	token := ln.Options().Token
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(token) {
		t.Errorf("token %q is not 128 bits in hex", token)
	}
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	if want := "http://" + net.JoinHostPort(host, port) + "/?token=" + token; ln.URL != want {
		t.Errorf("URL %q, want %q", ln.URL, want)
	}
	if len(ln.Options().Hosts) != 0 {
		t.Errorf("an exposed server limits Hosts to %q", ln.Options().Hosts)
	}
	if _, err := serve.Listen("127.0.0.1:"+port+"0000", serve.Options{}); err == nil {
		t.Error("listening on a port out of range succeeded")
	}
}

// TestListenerServe serves a session until the context is done, and
// checks that a token-less request to an exposed server is refused and
// that Serve returns nil at the end.
func TestListenerServe(t *testing.T) {
	ln, err := serve.Listen("0.0.0.0:0", serve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ln.Serve(ctx, open(t, "node-sites.heapsnapshot.gz")) }()
	base := "http://127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port) + "/api/v1/session"
	for _, c := range []struct {
		url  string
		want int
	}{{base, http.StatusUnauthorized}, {base + "?token=" + ln.Options().Token, http.StatusOK}} {
		resp, err := http.Get(c.url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s: %d, want %d", c.url, resp.StatusCode, c.want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after the context's end: %v", err)
	}
	if _, err := http.Get(base); err == nil {
		t.Error("the server still answers after Serve returned")
	}
}

// TestLimitMemory checks the limit: what is live and half as much again,
// 512 MB at least, and none when GOMEMLIMIT decides.
func TestLimitMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	limit := serve.LimitMemory()
	if limit < 512<<20 || debug.SetMemoryLimit(-1) != limit {
		t.Errorf("limit %d (set: %d), want 512 MB or more, set", limit, debug.SetMemoryLimit(-1))
	}
	t.Setenv("GOMEMLIMIT", "4GiB")
	if limit := serve.LimitMemory(); limit != 0 {
		t.Errorf("with GOMEMLIMIT set, LimitMemory set %d", limit)
	}
}
