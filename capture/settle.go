package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heapx/heapx/capture/cdp"
)

// netWatch follows the page's requests (the Network domain's events) to
// tell when the network is idle: no request in flight for a while.
type netWatch struct {
	mu       sync.Mutex
	inflight map[string]string // by request id: its URL
	last     time.Time         // a request started or ended
}

// watchNetwork starts following the requests of the page on conn. The
// inspector keeps no response body for heapx (the buffer sizes are 0):
// it only hears when requests start and end.
func watchNetwork(ctx context.Context, conn *cdp.Conn) (*netWatch, error) {
	n := &netWatch{inflight: map[string]string{}, last: time.Now()}
	conn.On("Network.requestWillBeSent", n.started)
	conn.On("Network.loadingFinished", n.ended)
	conn.On("Network.loadingFailed", n.ended)
	err := conn.Call(ctx, "Network.enable", map[string]int{"maxTotalBufferSize": 0, "maxResourceBufferSize": 0}, nil)
	return n, err
}

func (n *netWatch) started(params json.RawMessage) {
	var r struct {
		RequestID string `json:"requestId"`
		Type      string `json:"type"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
	}
	if json.Unmarshal(params, &r) != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.last = time.Now()
	// A stream of server events never ends: it is not a page loading.
	if r.Type == "EventSource" {
		return
	}
	n.inflight[r.RequestID] = r.Request.URL
}

func (n *netWatch) ended(params json.RawMessage) {
	var r struct {
		RequestID string `json:"requestId"`
	}
	if json.Unmarshal(params, &r) != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.last = time.Now()
	delete(n.inflight, r.RequestID)
}

// idle says how long the network has been idle (0 while a request is in
// flight) and which requests are in flight, sorted.
func (n *netWatch) idle() (time.Duration, []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.inflight) > 0 {
		urls := make([]string, 0, len(n.inflight))
		for _, u := range n.inflight {
			urls = append(urls, u)
		}
		sort.Strings(urls)
		return 0, urls
	}
	return time.Since(n.last), nil
}

// counter counts events.
type counter struct{ n atomic.Int64 }

func (c *counter) count(json.RawMessage) { c.n.Add(1) }

// watchNavigations counts the loads of a new document in the page's
// main frame (a route change of a single-page app, in its document, is
// not one).
func watchNavigations(conn *cdp.Conn) *counter {
	c := &counter{}
	conn.On("Page.frameNavigated", func(params json.RawMessage) {
		var f struct {
			Frame struct {
				ParentID string `json:"parentId"`
			} `json:"frame"`
		}
		if json.Unmarshal(params, &f) == nil && f.Frame.ParentID == "" {
			c.count(params)
		}
	})
	return c
}

// quietJS resolves once the document has had no mutation for quiet ms
// (a MutationObserver on all of it), or after limit ms: whether it was
// quiet, and whether the document has loaded. Its observer and timers are
// gone when it resolves.
const quietJS = `new Promise(resolve => {
	const quiet = %d, limit = %d;
	let timer, cap;
	const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(() => done(true), quiet); });
	const done = q => { obs.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve({quiet: q, loaded: document.readyState === 'complete'}); };
	obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
	timer = setTimeout(() => done(true), quiet);
	cap = setTimeout(() => done(false), limit);
})`

// settle waits until the page is at rest: loaded, no request in flight
// and no DOM mutation for quiet, up to limit. A page that does not come to
// rest (a clock ticking in the DOM, a request that never ends) is not an
// error: settle returns what kept it busy, for a warning, and the
// scenario goes on.
func (p *page) settle(ctx context.Context, quiet, limit time.Duration) (string, error) {
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		var st struct {
			Quiet  bool `json:"quiet"`
			Loaded bool `json:"loaded"`
		}
		err := p.eval(ctx, fmt.Sprintf(quietJS, quiet.Milliseconds(), max(left, quiet).Milliseconds()), &st)
		if err != nil && !isContextGone(err) {
			return "", err
		}
		idle, inflight := p.net.idle()
		if err == nil && st.Quiet && st.Loaded && idle >= quiet {
			return "", nil
		}
		if time.Now().After(deadline) {
			var busy []string
			switch {
			case err != nil:
				busy = append(busy, "it kept loading new documents")
			case !st.Loaded:
				busy = append(busy, "the document was still loading")
			case !st.Quiet:
				busy = append(busy, "the DOM kept changing")
			}
			if len(inflight) > 0 {
				busy = append(busy, fmt.Sprintf("%d request(s) stayed in flight (%s)", len(inflight), clipText(inflight[0], 120)))
			} else if idle < quiet {
				busy = append(busy, "requests kept starting")
			}
			return fmt.Sprintf("the page did not come to rest within %v: %s", limit, strings.Join(busy, ", ")), nil
		}
		// The DOM was quiet but the network was not: wait for it.
		if err := sleep(ctx, min(max(quiet-idle, pollEvery), time.Until(deadline)+pollEvery)); err != nil {
			return "", err
		}
	}
}
