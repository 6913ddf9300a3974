package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heapx/heapx/capture/cdp"
)

// page is a browser page a scenario drives through its DevTools session:
// the steps a person does (Input, Page.navigate, Runtime.evaluate), and
// what a heap snapshot needs (the V8 session).
type page struct {
	*V8
	net *netWatch
	// navigations counts the main frame's loads of a new document.
	navigations *counter
}

// pollEvery is how often a step waiting for an element looks again.
const pollEvery = 100 * time.Millisecond

// remoteObject is a value of the page as the protocol describes it
// (Runtime.RemoteObject).
type remoteObject struct {
	Type        string          `json:"type"`
	Subtype     string          `json:"subtype"`
	ClassName   string          `json:"className"`
	Description string          `json:"description"`
	Value       json.RawMessage `json:"value"`
	ObjectID    string          `json:"objectId"`
}

// exceptionDetails is what the page threw (Runtime.ExceptionDetails).
type exceptionDetails struct {
	Text         string        `json:"text"`
	LineNumber   int           `json:"lineNumber"`
	ColumnNumber int           `json:"columnNumber"`
	Exception    *remoteObject `json:"exception"`
}

// Error is the exception's first line: "TypeError: x is not a function".
func (e *exceptionDetails) Error() string {
	msg := e.Text
	if e.Exception != nil && e.Exception.Description != "" {
		msg = e.Exception.Description
	} else if e.Exception != nil && len(e.Exception.Value) > 0 {
		msg = "Uncaught " + string(e.Exception.Value)
	}
	msg, _, _ = strings.Cut(msg, "\n")
	return msg
}

// evaluated is the answer of Runtime.evaluate and Runtime.callFunctionOn.
type evaluated struct {
	Result    remoteObject      `json:"result"`
	Exception *exceptionDetails `json:"exceptionDetails"`
}

// eval runs the JavaScript expression js in the page, awaiting the
// promise it returns, and decodes its value (JSON) into out (nil to
// ignore it). It is how heapx looks at the page: js must make nothing
// that stays.
func (p *page) eval(ctx context.Context, js string, out any) error {
	var r evaluated
	err := p.conn.Call(ctx, "Runtime.evaluate", map[string]any{"expression": js, "returnByValue": true, "awaitPromise": true, "silent": true}, &r)
	if err != nil {
		return p.cause(ctx, err)
	}
	if r.Exception != nil {
		return r.Exception
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result.Value, out); err != nil {
		return fmt.Errorf("the page answered %s: %v", clipText(string(r.Result.Value), 100), err)
	}
	return nil
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// elementState is where a step's element is, as locateJS says.
type elementState struct {
	State string  `json:"state"` // "none", "hidden", "shown"
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
}

// locateJS finds the first element matching a selector and, when it is
// shown, scrolls it into view and gives the middle of its box, where a
// click lands.
const locateJS = `(sel => {
	const el = document.querySelector(sel);
	if (!el) return {state: 'none'};
	if (el.scrollIntoView) el.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
	const r = el.getBoundingClientRect();
	if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === 'hidden') return {state: 'hidden'};
	return {state: 'shown', x: r.left + r.width / 2, y: r.top + r.height / 2};
})(%s)`

// waitShown waits until an element matching sel is shown (it has a box
// and is not visibility: hidden), up to the session's timeout, and says
// where it is. A selector that is not CSS fails at once.
func (p *page) waitShown(ctx context.Context, sel string) (elementState, error) {
	deadline := time.Now().Add(p.timeout)
	for {
		var st elementState
		err := p.eval(ctx, fmt.Sprintf(locateJS, jsString(sel)), &st)
		var ex *exceptionDetails
		switch {
		case errors.As(err, &ex):
			if strings.Contains(ex.Error(), "is not a valid selector") {
				return st, fmt.Errorf("%q is not a CSS selector", sel)
			}
			return st, err
		case err != nil && !isContextGone(err):
			return st, err
		case err == nil && st.State == "shown":
			return st, nil
		}
		if time.Now().After(deadline) {
			if st.State == "hidden" {
				return st, fmt.Errorf("the element %q is in the page but not shown after %v", sel, p.timeout)
			}
			return st, fmt.Errorf("no element matches %q after %v", sel, p.timeout)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return st, err
		}
	}
}

// isContextGone reports whether err is the page's answer while it
// navigates: the document the expression was for is gone.
func isContextGone(err error) bool {
	var e *cdp.Error
	return errors.As(err, &e) && (strings.Contains(e.Message, "context") || strings.Contains(e.Message, "Execution context"))
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// do runs one step.
func (p *page) do(ctx context.Context, s Step) error {
	switch s.Kind {
	case StepClick:
		return p.click(ctx, s.Selector)
	case StepType:
		return p.typeText(ctx, s.Selector, s.Arg)
	case StepPress:
		k, err := parseKey(s.Arg)
		if err != nil {
			return err
		}
		return p.press(ctx, k)
	case StepGoto:
		return p.navigate(ctx, s.Arg)
	case StepWait:
		if s.Selector == "" {
			return sleep(ctx, s.Delay)
		}
		_, err := p.waitShown(ctx, s.Selector)
		return err
	case StepEval:
		return p.run(ctx, s.Arg)
	}
	return fmt.Errorf("unknown step %q", s.Text)
}

// click clicks the middle of the element sel matches, once it is shown,
// with the mouse, as a person does: the page sees the pointer and mouse
// events, the focus moves, and whatever covers the element gets the click.
func (p *page) click(ctx context.Context, sel string) error {
	st, err := p.waitShown(ctx, sel)
	if err != nil {
		return err
	}
	for _, ev := range []map[string]any{
		{"type": "mouseMoved", "x": st.X, "y": st.Y},
		{"type": "mousePressed", "x": st.X, "y": st.Y, "button": "left", "buttons": 1, "clickCount": 1},
		{"type": "mouseReleased", "x": st.X, "y": st.Y, "button": "left", "buttons": 0, "clickCount": 1},
	} {
		if err := p.conn.Call(ctx, "Input.dispatchMouseEvent", ev, nil); err != nil {
			return p.cause(ctx, err)
		}
	}
	return nil
}

// typeText focuses the element sel matches and types text into it a key
// at a time; a character no key types alone (é, 字) is entered as an
// input method would.
func (p *page) typeText(ctx context.Context, sel, text string) error {
	if _, err := p.waitShown(ctx, sel); err != nil {
		return err
	}
	if err := p.eval(ctx, fmt.Sprintf(`document.querySelector(%s).focus()`, jsString(sel)), nil); err != nil {
		return err
	}
	for _, r := range text {
		var err error
		switch {
		case r == '\n':
			err = p.press(ctx, namedKeys["Enter"])
		case r < utf8.RuneSelf && r >= ' ':
			err = p.press(ctx, charKey(string(r)))
		default:
			err = p.conn.Call(ctx, "Input.insertText", map[string]string{"text": string(r)}, nil)
		}
		if err != nil {
			return p.cause(ctx, err)
		}
	}
	return nil
}

// press presses and releases k.
func (p *page) press(ctx context.Context, k key) error {
	down := map[string]any{"type": "rawKeyDown", "key": k.key, "code": k.code, "windowsVirtualKeyCode": k.vk,
		"nativeVirtualKeyCode": k.vk, "modifiers": k.modifiers}
	if k.text != "" {
		down["type"], down["text"], down["unmodifiedText"] = "keyDown", k.text, k.text
	}
	up := map[string]any{"type": "keyUp", "key": k.key, "code": k.code, "windowsVirtualKeyCode": k.vk,
		"nativeVirtualKeyCode": k.vk, "modifiers": k.modifiers}
	for _, ev := range []map[string]any{down, up} {
		if err := p.conn.Call(ctx, "Input.dispatchKeyEvent", ev, nil); err != nil {
			return p.cause(ctx, err)
		}
	}
	return nil
}

// navigate loads target, relative to the page's URL, and waits for its
// load event.
func (p *page) navigate(ctx context.Context, target string) error {
	abs, err := p.resolve(ctx, target)
	if err != nil {
		return err
	}
	var r struct {
		ErrorText string `json:"errorText"`
	}
	if err := p.conn.Call(ctx, "Page.navigate", map[string]string{"url": abs}, &r); err != nil {
		return p.cause(ctx, err)
	}
	if r.ErrorText != "" {
		return fmt.Errorf("loading %s: %s", abs, r.ErrorText)
	}
	return p.waitLoaded(ctx, abs)
}

// resolve makes target absolute against the page's URL.
func (p *page) resolve(ctx context.Context, target string) (string, error) {
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("%q is not a URL: %v", target, err)
	}
	if u.IsAbs() {
		return target, nil
	}
	var here string
	if err := p.eval(ctx, "location.href", &here); err != nil {
		return "", err
	}
	base, err := url.Parse(here)
	if err != nil || !base.IsAbs() || base.Scheme == "about" {
		return "", fmt.Errorf("%q is relative, and the page (%s) has no URL to start from", target, here)
	}
	return base.ResolveReference(u).String(), nil
}

// waitLoaded waits for the page's document to be complete (its load
// event has fired), up to the session's timeout.
func (p *page) waitLoaded(ctx context.Context, what string) error {
	deadline := time.Now().Add(p.timeout)
	for {
		var state string
		err := p.eval(ctx, "document.readyState", &state)
		if err != nil && !isContextGone(err) {
			return err
		}
		if state == "complete" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not finish loading within %v (document.readyState %q)", what, p.timeout, state)
		}
		if err := sleep(ctx, pollEvery); err != nil {
			return err
		}
	}
}

// run runs the JavaScript of an eval step as the DevTools console does
// (a top-level await works), waiting for the promise it returns. What it
// returns is dropped: the inspector keeps no handle on it.
func (p *page) run(ctx context.Context, js string) error {
	var r evaluated
	err := p.conn.Call(ctx, "Runtime.evaluate", map[string]any{"expression": js, "awaitPromise": true, "userGesture": true,
		"replMode": true, "silent": true, "objectGroup": evalGroup}, &r)
	p.release(evalGroup)
	if err != nil {
		return p.cause(ctx, err)
	}
	if r.Exception != nil {
		return r.Exception
	}
	return nil
}

// The object groups of what heapx asks of the page: released once used,
// so that no handle of the inspector keeps an object alive into a
// snapshot.
const (
	evalGroup        = "heapx-eval"
	listenersGroup   = "heapx-listeners"
	collectionsGroup = "heapx-collections"
	trackingGroup    = "heapx-tracking"
)

// release lets the page free the objects of an object group.
func (p *page) release(group string) {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	p.conn.Call(ctx, "Runtime.releaseObjectGroup", map[string]string{"objectGroup": group}, nil)
}

// clipText shortens s to n bytes for a message.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
