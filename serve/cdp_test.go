package serve_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx/internal/testfixtures"
)

// browser is headless Chromium driven over the DevTools protocol through
// a pipe (--remote-debugging-pipe: JSON messages ended by a NUL byte on
// file descriptors 3 and 4), which needs neither a WebSocket library nor
// a free port.
type browser struct {
	t       *testing.T
	cmd     *exec.Cmd
	out     *os.File // to Chromium
	mu      sync.Mutex
	next    int
	pending map[int]chan cdpMessage
	// problems collects what the page must never do: exceptions, console
	// errors (CSP violations are reported there), dialogs (an alert()).
	problems []string
}

type cdpMessage struct {
	ID        int             `json:"id"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *struct{ Message string }
	SessionID string `json:"sessionId"`
}

// chromiumPath finds Chromium, or skips the test (fails it under CI).
func chromiumPath(t *testing.T) string {
	return testfixtures.NeedTool(t, "chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
}

func startBrowser(t *testing.T) *browser {
	path := chromiumPath(t)
	toChrome, chromeIn, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	chromeOut, fromChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(), "--window-size=1400,1000", "about:blank")
	cmd.ExtraFiles = []*os.File{toChrome, fromChrome} // fds 3 and 4
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	toChrome.Close()
	fromChrome.Close()
	b := &browser{t: t, cmd: cmd, out: chromeIn, pending: map[int]chan cdpMessage{}}
	go b.read(chromeOut)
	t.Cleanup(func() {
		b.out.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("chromium's stderr:\n%s", lastLines(stderr.String(), 20))
		}
	})
	return b
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (b *browser) read(f *os.File) {
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		raw, err := r.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.pending[m.ID]; ch != nil {
				ch <- m
				delete(b.pending, m.ID)
			}
		} else {
			b.event(m)
		}
		b.mu.Unlock()
	}
}

// event records the page's problems.
func (b *browser) event(m cdpMessage) {
	switch m.Method {
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		json.Unmarshal(m.Params, &p)
		b.problems = append(b.problems, "exception: "+p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Type == "error" || p.Type == "warning" {
			var args []string
			for _, a := range p.Args {
				args = append(args, string(a))
			}
			b.problems = append(b.problems, "console."+p.Type+": "+strings.Join(args, " "))
		}
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Entry.Level == "error" || p.Entry.Level == "warning" {
			b.problems = append(b.problems, "log "+p.Entry.Level+": "+p.Entry.Text+" "+p.Entry.URL)
		}
	case "Page.javascriptDialogOpening":
		b.problems = append(b.problems, "dialog opened: "+string(m.Params))
	}
}

// call sends one command and waits for its answer.
func (b *browser) call(session, method string, params any, result any) error {
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan cdpMessage, 1)
	b.pending[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	if params == nil {
		msg["params"] = map[string]any{}
	}
	raw, _ := json.Marshal(msg)
	if _, err := b.out.Write(append(raw, 0)); err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: chromium went away", method)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: no answer in 60 s", method)
	}
}

// page is one tab.
type page struct {
	b       *browser
	t       *testing.T
	session string
}

func (b *browser) newPage() *page {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		b.t.Fatal(err)
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		b.t.Fatal(err)
	}
	p := &page{b: b, t: b.t, session: att.SessionID}
	for _, m := range []string{"Page.enable", "Runtime.enable", "Log.enable"} {
		if err := b.call(p.session, m, nil, nil); err != nil {
			b.t.Fatal(err)
		}
	}
	p.must("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false})
	return p
}

func (p *page) must(method string, params any) {
	p.t.Helper()
	if err := p.b.call(p.session, method, params, nil); err != nil {
		p.t.Fatal(err)
	}
}

func (p *page) navigate(url string) {
	p.t.Helper()
	p.must("Page.navigate", map[string]any{"url": url})
}

// eval evaluates expression in the page (awaiting a promise) and
// decodes its value into out.
func (p *page) eval(expression string, out any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := p.b.call(p.session, "Runtime.evaluate", map[string]any{"expression": expression, "awaitPromise": true, "returnByValue": true}, &res)
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("evaluating %q: %s %s", expression, res.ExceptionDetails.Text, res.ExceptionDetails.Exception.Description)
	}
	if out != nil && len(res.Result.Value) > 0 {
		return json.Unmarshal(res.Result.Value, out)
	}
	return nil
}

// run evaluates expression and fails the test if it throws.
func (p *page) run(expression string) {
	p.t.Helper()
	if err := p.eval(expression, nil); err != nil {
		p.t.Fatal(err)
	}
}

// text returns the text of the first element matching selector ("" when
// there is none).
func (p *page) text(selector string) string {
	p.t.Helper()
	var s string
	if err := p.eval(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, selector), &s); err != nil {
		p.t.Fatal(err)
	}
	return s
}

// waitFor waits until the JavaScript condition cond is true, and fails
// the test with what the page shows after 30 s.
func (p *page) waitFor(what, cond string) {
	p.t.Helper()
	p.waitUpTo(30*time.Second, what, cond)
}

// waitUpTo is waitFor for up to timeout: the SQL console's first query
// builds the SQL cache, which takes minutes under the race detector.
func (p *page) waitUpTo(timeout time.Duration, what, cond string) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		err := p.eval("!!("+cond+")", &ok)
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("waiting for %s (%s): %v; the page shows:\n%s", what, cond, err, p.text("main"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// click clicks the first element matching selector.
func (p *page) click(selector string) {
	p.t.Helper()
	p.waitFor("an element to click: "+selector, fmt.Sprintf("document.querySelector(%q)", selector))
	p.run(fmt.Sprintf("document.querySelector(%q).click()", selector))
}

// screenshot saves the page as a PNG in dir and returns its path.
func (p *page) screenshot(dir, name string) string {
	p.t.Helper()
	var shot struct {
		Data string `json:"data"`
	}
	if err := p.b.call(p.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot); err != nil {
		p.t.Fatal(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		p.t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// noProblems fails the test for every problem the page had.
func (p *page) noProblems() {
	p.t.Helper()
	p.b.mu.Lock()
	defer p.b.mu.Unlock()
	for _, pr := range p.b.problems {
		p.t.Errorf("the page had a problem: %s", pr)
	}
}
