package cdp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Target is one debuggable target an endpoint lists: the Node.js process
// behind `node --inspect`, or a page, worker or extension of a Chrome
// started with --remote-debugging-port.
type Target struct {
	ID    string `json:"id"`
	Type  string `json:"type"` // "node", "page", "iframe", "service_worker", ...
	Title string `json:"title"`
	URL   string `json:"url"`
	// WebSocketURL is where to Dial the target; empty when another client
	// holds a target that allows only one.
	WebSocketURL string `json:"webSocketDebuggerUrl"`
}

// maxListing bounds what heapx reads of an endpoint's JSON listings.
const maxListing = 64 << 20

// ListTargets returns the targets of the DevTools endpoint at hostPort
// (node --inspect's or Chrome's --remote-debugging-port), from its
// /json/list. Their WebSocket URLs are rewritten to reach hostPort: an
// endpoint names itself by the address it listens on, which is not the
// one to use through a forwarded port or from outside a container.
func ListTargets(ctx context.Context, hostPort string) ([]Target, error) {
	var ts []Target
	if err := getJSON(ctx, hostPort, "/json/list", &ts); err != nil {
		return nil, err
	}
	for i := range ts {
		rewriteHost(&ts[i], hostPort)
	}
	return ts, nil
}

// HasParameter reports whether the protocol the endpoint at hostPort
// describes (its /json/protocol) gives the command domain.command the
// parameter param. Targets ignore parameters they do not know, so this is
// how to tell whether an option is honoured.
func HasParameter(ctx context.Context, hostPort, domain, command, param string) (bool, error) {
	var p struct {
		Domains []struct {
			Domain   string `json:"domain"`
			Commands []struct {
				Name       string `json:"name"`
				Parameters []struct {
					Name string `json:"name"`
				} `json:"parameters"`
			} `json:"commands"`
		} `json:"domains"`
	}
	if err := getJSON(ctx, hostPort, "/json/protocol", &p); err != nil {
		return false, err
	}
	for _, d := range p.Domains {
		if d.Domain != domain {
			continue
		}
		for _, c := range d.Commands {
			if c.Name != command {
				continue
			}
			for _, q := range c.Parameters {
				if q.Name == param {
					return true, nil
				}
			}
		}
	}
	return false, nil
}

// OpenPage opens a new page (a tab) on the browser whose DevTools
// endpoint is at hostPort (PUT /json/new), loading pageURL ("about:blank"
// when empty), and returns it as a target to Dial. A Node.js endpoint has
// no pages to open: its error says so.
func OpenPage(ctx context.Context, hostPort, pageURL string) (Target, error) {
	if pageURL == "" {
		pageURL = "about:blank"
	}
	var t Target
	// Chrome takes the page's URL as the whole query, unescaped.
	if err := requestJSON(ctx, http.MethodPut, hostPort, "/json/new?"+pageURL, &t); err != nil {
		return Target{}, fmt.Errorf("opening a page: %w", err)
	}
	if t.WebSocketURL == "" || t.ID == "" {
		return Target{}, fmt.Errorf("opening a page: the endpoint at %s sent no page to connect to", hostPort)
	}
	rewriteHost(&t, hostPort)
	return t, nil
}

// ClosePage closes the page id of the browser at hostPort
// (/json/close/ID).
func ClosePage(ctx context.Context, hostPort, id string) error {
	u := "http://" + hostPort + "/json/close/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("closing page %s: %w", id, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("closing page %s: %s", id, resp.Status)
	}
	return nil
}

// Version returns what the endpoint at hostPort says it is
// (/json/version): "Chrome/148.0.7778.167", "node.js/v20.20.2".
func Version(ctx context.Context, hostPort string) (string, error) {
	var v struct {
		Browser string `json:"Browser"`
	}
	if err := getJSON(ctx, hostPort, "/json/version", &v); err != nil {
		return "", err
	}
	return v.Browser, nil
}

// rewriteHost makes t's WebSocket URL reach hostPort.
func rewriteHost(t *Target, hostPort string) {
	if u, err := url.Parse(t.WebSocketURL); err == nil && u.Host != "" {
		u.Host = hostPort
		t.WebSocketURL = u.String()
	}
}

// getJSON decodes what GET http://hostPort/path returns into v.
func getJSON(ctx context.Context, hostPort, path string, v any) error {
	return requestJSON(ctx, http.MethodGet, hostPort, path, v)
}

// requestJSON decodes what the request method http://hostPort/path returns
// into v. ctx's deadline bounds the wait: an endpoint may take the
// connection and never answer.
func requestJSON(ctx context.Context, method, hostPort, path string, v any) error {
	u := "http://" + hostPort + path
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil && isTimeout(err) {
		return fmt.Errorf("the DevTools endpoint at %s did not answer %s in time: %w", hostPort, path, ErrTimeout)
	}
	if err != nil {
		return fmt.Errorf("no DevTools endpoint at %s (is the program running with --inspect, or Chrome with --remote-debugging-port?): %w", hostPort, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxListing))
	if err != nil && isTimeout(err) {
		return fmt.Errorf("the DevTools endpoint at %s did not finish answering %s in time: %w", hostPort, path, ErrTimeout)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", u, resp.Status, clip(body))
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%s is not a DevTools endpoint: its answer is not the JSON expected (%v): %s", u, err, clip(body))
	}
	return nil
}

// listening matches the line node prints on stderr when its inspector
// starts: "Debugger listening on ws://127.0.0.1:9229/<uuid>".
var listening = regexp.MustCompile(`^Debugger listening on (ws://\S+)\s*$`)

// ListeningURL returns the WebSocket URL in line when it is the line node
// --inspect prints as its inspector starts.
func ListeningURL(line string) (string, bool) {
	m := listening.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// HostPort returns the host:port of a ws:// URL, where the endpoint's
// HTTP listings are too.
func HostPort(wsURL string) (string, error) {
	u, err := url.Parse(wsURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return "", fmt.Errorf("%q is not a ws:// URL", wsURL)
	}
	return u.Host, nil
}

// InspectorNoise reports whether line is one of the messages node's
// inspector prints on stderr because a debugger came or went, which say
// nothing about the program.
func InspectorNoise(line string) bool {
	line = strings.TrimRight(line, "\r\n")
	if _, ok := ListeningURL(line); ok {
		return true
	}
	switch line {
	case "For help, see: https://nodejs.org/en/docs/inspector", "Debugger attached.", "Waiting for the debugger to disconnect...":
		return true
	}
	// Printed as the program exits with the inspector still open.
	return strings.HasPrefix(line, "Debugger ending on ws://")
}
