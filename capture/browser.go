package capture

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/heapx/heapx/capture/cdp"
)

// browserNames are the names a Chromium is found by on the PATH, in
// order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// FindBrowser returns the path of a Chromium or Chrome on the PATH
// (chromium, chromium-browser, google-chrome, google-chrome-stable,
// chrome), or an error saying how to give one.
func FindBrowser() (string, error) {
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium or Chrome on the PATH (looked for %s): install one (apt-get install chromium) or give its path with --browser", strings.Join(browserNames, ", "))
}

// Browser is a headless Chromium heapx started for a scenario: a
// throwaway profile, its DevTools endpoint on 127.0.0.1 at a free port.
type Browser struct {
	// Endpoint is the HOST:PORT of its DevTools endpoint.
	Endpoint string

	cmd *exec.Cmd
	// dir holds the profile and the browser's temporary files; Close
	// removes it.
	dir    string
	stderr *lastLines
	exited chan struct{}
}

// browserFlags make a headless Chromium quiet and alike on every run:
// nothing fetched in the background nor synced, no first-run dialogs,
// timers not throttled in a page nobody looks at (a scenario's waits
// would stretch), no back-forward cache (a page left by a goto would stay
// alive in the renderer, in the snapshots), DevTools on this machine
// only.
var browserFlags = []string{
	"--headless", "--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
	"--disable-default-apps", "--mute-audio", "--disable-background-timer-throttling",
	"--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows", "--disable-features=BackForwardCache",
	"--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
}

// singletonSocket is where Chromium's singleton socket is in its TMPDIR.
const singletonSocket = "/org.chromium.Chromium.XXXXXX/SingletonSocket"

// browserStartTimeout is how long Chromium may take to open its DevTools
// port.
const browserStartTimeout = 30 * time.Second

// devtoolsListening is the line Chromium prints on stderr once its
// DevTools endpoint listens.
var devtoolsListening = regexp.MustCompile(`^DevTools listening on (ws://\S+)`)

// StartBrowser starts the Chromium at path headless, with a new profile
// in a temporary directory that Close removes, and returns once its
// DevTools endpoint listens (on 127.0.0.1, at a port the system picks).
// It runs in a process group of its own, which Close ends. As root,
// Chromium runs only without its sandbox (--no-sandbox), which heapx then
// adds.
func StartBrowser(ctx context.Context, path string) (*Browser, error) {
	dir, err := os.MkdirTemp("", "heapx-browser-")
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, browserFlags...), "--user-data-dir="+filepath.Join(dir, "profile"))
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	args = append(args, "about:blank")
	b := &Browser{dir: dir, stderr: &lastLines{max: 20}, exited: make(chan struct{})}
	b.cmd = exec.Command(path, args...)
	// Chromium leaves a directory of its own in TMPDIR when it is
	// terminated (its singleton socket's): its TMPDIR is dir, which Close
	// removes, unless the socket's path would be longer than a Unix
	// socket's may be (108 bytes), which Chromium cannot start with.
	if len(dir)+len(singletonSocket) < 108 {
		b.cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	}
	b.cmd.SysProcAttr = sysProcAttr()
	b.cmd.WaitDelay = 2 * time.Second
	pr, pw := io.Pipe()
	b.cmd.Stderr = pw
	if err := b.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	go func() {
		b.cmd.Wait()
		pw.Close()
		close(b.exited)
	}()
	found := make(chan string, 1)
	go b.readStderr(pr, found)
	timer := time.NewTimer(browserStartTimeout)
	defer timer.Stop()
	select {
	case ws := <-found:
		hp, err := cdp.HostPort(ws)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.Endpoint = hp
		return b, nil
	case <-b.exited:
		<-found // stderr read to its end
		b.Close()
		return nil, fmt.Errorf("%s exited before opening its DevTools port: %s", path, b.stderr.last())
	case <-timer.C:
		b.Close()
		return nil, fmt.Errorf("%s did not open its DevTools port within %v: %s", path, browserStartTimeout, b.stderr.last())
	case <-ctx.Done():
		b.Close()
		return nil, context.Cause(ctx)
	}
}

// readStderr reads Chromium's stderr to its end, keeping its last lines
// for errors and sending the DevTools endpoint's URL to found when it
// says where it listens; found is closed at the end.
func (b *Browser) readStderr(r io.Reader, found chan<- string) {
	defer close(found)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	sent := false
	for sc.Scan() {
		line := sc.Text()
		if m := devtoolsListening.FindStringSubmatch(line); m != nil && !sent {
			found <- m[1]
			sent = true
			continue
		}
		b.stderr.add(line)
	}
	io.Copy(io.Discard, r)
}

// Close ends the browser (SIGTERM to its process group, SIGKILL after 5
// s) and removes its profile.
func (b *Browser) Close() error {
	select {
	case <-b.exited:
	default:
		terminate(b.cmd.Process)
		select {
		case <-b.exited:
		case <-time.After(5 * time.Second):
			kill(b.cmd.Process)
			<-b.exited
		}
	}
	return os.RemoveAll(b.dir)
}

// Version says which browser it is: "Chrome/148.0.7778.167".
func (b *Browser) Version(ctx context.Context) string {
	return browserVersion(ctx, b.Endpoint)
}

// browserVersion asks the DevTools endpoint at hostPort which browser it
// is; "" when it does not say.
func browserVersion(ctx context.Context, hostPort string) string {
	v, err := cdp.Version(ctx, hostPort)
	if err != nil {
		return ""
	}
	return v
}

// lastLines keeps the last lines of a program's output that look like
// errors, for the message that says why it failed.
type lastLines struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (l *lastLines) add(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	if len(l.lines) > l.max {
		l.lines = l.lines[1:]
	}
}

// last is the most telling of the last lines: Chromium logs much that
// is harmless (no D-Bus in a container); a FATAL or ERROR line that is
// not about D-Bus says why it stopped.
func (l *lastLines) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.lines) - 1; i >= 0; i-- {
		s := l.lines[i]
		if strings.Contains(s, "dbus") || strings.Contains(s, "D-Bus") {
			continue
		}
		return s
	}
	if len(l.lines) > 0 {
		return l.lines[len(l.lines)-1]
	}
	return "it printed nothing"
}
