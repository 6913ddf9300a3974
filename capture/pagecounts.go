package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// PageCounts are the page's live DOM counts and JavaScript heap at one
// point of a scenario, after a garbage collection.
type PageCounts struct {
	// At says when: "baseline" (after the setup), "target" (after the
	// first action), "repetition N" (after the Nth back).
	At string
	// Documents, Nodes and Listeners are Blink's counts of live
	// documents, DOM nodes (detached ones too) and JavaScript event
	// listeners (Memory.getDOMCounters).
	Documents, Nodes, Listeners int
	// HeapUsed is the JavaScript heap's used size, in bytes.
	HeapUsed int64
}

// counts measures the page now.
func (p *page) counts(ctx context.Context, at string) (PageCounts, error) {
	var c struct {
		Documents        int `json:"documents"`
		Nodes            int `json:"nodes"`
		JSEventListeners int `json:"jsEventListeners"`
	}
	if err := p.conn.Call(ctx, "Memory.getDOMCounters", nil, &c); err != nil {
		return PageCounts{}, p.cause(ctx, err)
	}
	used, err := p.HeapUsed(ctx)
	if err != nil {
		return PageCounts{}, p.cause(ctx, err)
	}
	return PageCounts{At: at, Documents: c.Documents, Nodes: c.Nodes, Listeners: c.JSEventListeners, HeapUsed: used}, nil
}

// ListenerGrowth is a kind of event listener that there were more of
// after the repetitions than at the baseline, on one event target.
type ListenerGrowth struct {
	// Target is what the listeners listen on: "window", "document", or
	// an element as a selector says it ("button#open.primary").
	Target string
	// Type is the event: "resize", "click".
	Type string
	// Before and After are how many there were at the baseline and at
	// the final snapshot.
	Before, After int
	// Handler is how the last listener's function begins
	// ("function onResize(e) {"); Script, Line and Column where it is
	// (1-based; Script "" when unknown).
	Handler      string
	Script       string
	Line, Column int
}

// listenerKey groups listeners: the target and the event.
type listenerKey struct{ target, typ string }

// listenerSet is the listeners on the window and the document's nodes,
// by target and event, with the last one seen of each.
type listenerSet map[listenerKey]*ListenerGrowth

// eventListener is one listener as DOMDebugger.getEventListeners gives
// it.
type eventListener struct {
	Type          string       `json:"type"`
	ScriptID      string       `json:"scriptId"`
	LineNumber    int          `json:"lineNumber"`
	ColumnNumber  int          `json:"columnNumber"`
	Handler       remoteObject `json:"handler"`
	BackendNodeID int64        `json:"backendNodeId"`
}

// listeners lists the event listeners on the window and on the document
// and all its nodes, through open shadow roots (one call each:
// DOMDebugger.getEventListeners with depth -1 and pierce), as fuite counts
// them. Listeners of detached nodes are in no tree: the DOM counters
// count them.
func (p *page) listeners(ctx context.Context, names *scriptNames) (listenerSet, error) {
	defer p.release(listenersGroup)
	set := listenerSet{}
	described := map[int64]string{}
	for _, target := range []string{"window", "document"} {
		var r evaluated
		if err := p.conn.Call(ctx, "Runtime.evaluate", map[string]any{"expression": target, "objectGroup": listenersGroup, "silent": true}, &r); err != nil {
			return nil, p.cause(ctx, err)
		}
		if r.Result.ObjectID == "" {
			return nil, fmt.Errorf("the page has no %s", target)
		}
		params := map[string]any{"objectId": r.Result.ObjectID}
		if target == "document" {
			params["depth"], params["pierce"] = -1, true
		}
		var l struct {
			Listeners []eventListener `json:"listeners"`
		}
		if err := p.conn.Call(ctx, "DOMDebugger.getEventListeners", params, &l); err != nil {
			return nil, p.cause(ctx, err)
		}
		for _, e := range l.Listeners {
			on := target
			if target == "document" && e.BackendNodeID != 0 {
				d, ok := described[e.BackendNodeID]
				if !ok {
					d = p.describeNode(ctx, e.BackendNodeID)
					described[e.BackendNodeID] = d
				}
				on = d
			}
			k := listenerKey{on, e.Type}
			g := set[k]
			if g == nil {
				g = &ListenerGrowth{Target: on, Type: e.Type}
				set[k] = g
			}
			g.After++
			g.Handler = handlerText(e.Handler.Description)
			g.Script, g.Line, g.Column = names.url(e.ScriptID), e.LineNumber+1, e.ColumnNumber+1
		}
	}
	return set, nil
}

// describeNode names a node as a selector would: its tag, id and first
// classes ("button#open.btn.primary"); "document" for the document.
func (p *page) describeNode(ctx context.Context, backendID int64) string {
	var r struct {
		Node struct {
			NodeName   string   `json:"nodeName"`
			LocalName  string   `json:"localName"`
			Attributes []string `json:"attributes"`
		} `json:"node"`
	}
	if err := p.conn.Call(ctx, "DOM.describeNode", map[string]int64{"backendNodeId": backendID}, &r); err != nil {
		return "node " + strconv.FormatInt(backendID, 10)
	}
	n := r.Node
	if n.LocalName == "" {
		return strings.TrimPrefix(strings.ToLower(n.NodeName), "#")
	}
	s := n.LocalName
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		switch n.Attributes[i] {
		case "id":
			s += "#" + n.Attributes[i+1]
		}
	}
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		if n.Attributes[i] == "class" {
			for j, c := range strings.Fields(n.Attributes[i+1]) {
				if j == 2 {
					break
				}
				s += "." + c
			}
		}
	}
	return s
}

// handlerText is how a listener's function begins: its first line, up
// to its body's brace.
func handlerText(source string) string {
	line, _, _ := strings.Cut(source, "\n")
	if i := strings.Index(line, "{"); i >= 0 {
		line = line[:i+1]
	}
	return clipText(strings.TrimSpace(line), 80)
}

// grownListeners are the listeners of after there are more of than in
// before, most grown first.
func grownListeners(before, after listenerSet) []ListenerGrowth {
	var out []ListenerGrowth
	for k, a := range after {
		b := 0
		if x := before[k]; x != nil {
			b = x.After
		}
		if a.After > b {
			g := *a
			g.Before = b
			out = append(out, g)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		di, dj := out[i].After-out[i].Before, out[j].After-out[j].Before
		if di != dj {
			return di > dj
		}
		return out[i].Target+" "+out[i].Type < out[j].Target+" "+out[j].Type
	})
	return out
}

// scriptNames are the URLs of the page's scripts by id, from
// Debugger.scriptParsed, to say where a listener's function is.
type scriptNames struct {
	mu   sync.Mutex
	urls map[string]string
}

func (s *scriptNames) parsed(params json.RawMessage) {
	var p struct {
		ScriptID string `json:"scriptId"`
		URL      string `json:"url"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	s.mu.Lock()
	s.urls[p.ScriptID] = p.URL
	s.mu.Unlock()
}

func (s *scriptNames) url(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.urls[id]
}

// CollectionGrowth is a collection of the page (an Array, Map, Set or
// plain Object that existed at the baseline) that grew by a multiple of
// the repetitions, as fuite finds them.
type CollectionGrowth struct {
	// Type is "Array", "Map", "Set" or "Object".
	Type string
	// Before and After are its sizes (length, size, or own keys).
	Before, After int
	// Preview shows its first item: "[HTMLDivElement, ...]".
	Preview string
	// HeapID is its object id in the snapshots (0 when the inspector did
	// not give it): the final snapshot says what holds it.
	HeapID uint64
}

// maxCollections bounds the growing collections reported.
const maxCollections = 20

// collectionsJS records the size of every collection in the page into
// the WeakMap it is given: `this` is the array of all objects that
// Runtime.queryObjects found (fuite's method).
const collectionsJS = `function (sizes) {
	const {toString, hasOwnProperty} = Object.prototype;
	const plain = o => {
		if (toString.call(o) !== '[object Object]') return false;
		const c = o.constructor;
		if (c === undefined) return true;
		const p = c.prototype;
		return toString.call(p) === '[object Object]' && hasOwnProperty.call(p, 'isPrototypeOf');
	};
	for (const o of this) {
		try {
			if (o instanceof Map || o instanceof Set) sizes.set(o, o.size);
			else if (Array.isArray(o)) sizes.set(o, o.length);
			else if (plain(o)) sizes.set(o, Object.keys(o).length);
		} catch (e) {}
	}
}`

// grownJS finds, among all objects (this), the collections recorded in
// sizes that grew by a multiple of repeat, and returns them after a first
// element that describes them: [{type, before, after, preview}, ...],
// then the collections in the same order.
const grownJS = `function (sizes, repeat, most) {
	const kind = o => o instanceof Map ? 'Map' : o instanceof Set ? 'Set' : Array.isArray(o) ? 'Array' : 'Object';
	const size = o => o instanceof Map || o instanceof Set ? o.size : Array.isArray(o) ? o.length : Object.keys(o).length;
	const show = v => {
		if (Array.isArray(v)) return 'Array';
		if (typeof v === 'function') return v.name ? 'function ' + v.name : 'function';
		if (v && typeof v === 'object') {
			const n = v.constructor && v.constructor.name;
			if (n && n !== 'Object') return n;
			const ks = Object.keys(v);
			return '{' + ks.slice(0, 3).join(', ') + (ks.length > 3 ? ', ...' : '') + '}';
		}
		return typeof v === 'string' ? JSON.stringify(v.slice(0, 40)) : String(v);
	};
	const first = o => {
		if (o instanceof Map) { const [e] = o; return e ? show(e[0]) + ' => ' + show(e[1]) : ''; }
		if (o instanceof Set) { const [e] = o; return show(e); }
		if (Array.isArray(o)) return o.length ? show(o[0]) : '';
		const [e] = Object.entries(o); return e ? e[0] + ': ' + show(e[1]) : '';
	};
	const found = [];
	for (const o of this) {
		try {
			if (!sizes.has(o)) continue;
			const before = sizes.get(o), after = size(o), d = after - before;
			if (d > 0 && d % repeat === 0) found.push({o, d, before, after});
		} catch (e) {}
	}
	found.sort((a, b) => b.d - a.d);
	const out = [[]];
	for (const f of found.slice(0, most)) {
		let preview = '';
		try {
			const k = kind(f.o), e = first(f.o);
			preview = k === 'Array' ? '[' + e + ', ...]' : k === 'Object' ? '{' + e + ', ...}' : k + '(' + e + ', ...)';
		} catch (e) {}
		out[0].push({type: kind(f.o), before: f.before, after: f.after, preview});
		out.push(f.o);
	}
	return out;
}`

// collections is the tracking of the page's collections between the
// baseline and the end: a WeakMap of their sizes, in the page, held by
// the inspector (object group trackingGroup) and weak on its keys, so it
// keeps nothing alive.
type collections struct {
	sizes string // the WeakMap's object id
}

// trackCollections records the size of every collection of the page.
func (p *page) trackCollections(ctx context.Context) (*collections, error) {
	var m evaluated
	if err := p.conn.Call(ctx, "Runtime.evaluate", map[string]any{"expression": "new WeakMap()", "objectGroup": trackingGroup, "silent": true}, &m); err != nil {
		return nil, p.cause(ctx, err)
	}
	c := &collections{sizes: m.Result.ObjectID}
	if _, err := p.callOnAllObjects(ctx, collectionsJS, c.sizes); err != nil {
		p.release(trackingGroup)
		return nil, err
	}
	return c, nil
}

// grown returns the collections that grew by a multiple of repeat since
// trackCollections, with their ids in the heap snapshots, and stops the
// tracking.
func (c *collections) grown(ctx context.Context, p *page, repeat int) ([]CollectionGrowth, error) {
	defer p.release(trackingGroup)
	defer p.release(collectionsGroup)
	res, err := p.callOnAllObjects(ctx, grownJS, c.sizes, repeat, maxCollections)
	if err != nil {
		return nil, err
	}
	var desc evaluated
	if err := p.conn.Call(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": "function () { return this[0]; }",
		"objectId": res.ObjectID, "returnByValue": true, "silent": true}, &desc); err != nil {
		return nil, p.cause(ctx, err)
	}
	var out []CollectionGrowth
	if err := json.Unmarshal(desc.Result.Value, &out); err != nil {
		return nil, fmt.Errorf("the page described its collections as %s: %v", clipText(string(desc.Result.Value), 100), err)
	}
	var props struct {
		Result []struct {
			Name  string       `json:"name"`
			Value remoteObject `json:"value"`
		} `json:"result"`
	}
	if err := p.conn.Call(ctx, "Runtime.getProperties", map[string]any{"objectId": res.ObjectID, "ownProperties": true}, &props); err != nil {
		return nil, p.cause(ctx, err)
	}
	for _, pr := range props.Result {
		i, err := strconv.Atoi(pr.Name)
		if err != nil || i < 1 || i > len(out) || pr.Value.ObjectID == "" {
			continue
		}
		var id struct {
			HeapSnapshotObjectID string `json:"heapSnapshotObjectId"`
		}
		if p.conn.Call(ctx, "HeapProfiler.getHeapObjectId", map[string]string{"objectId": pr.Value.ObjectID}, &id) == nil {
			out[i-1].HeapID, _ = strconv.ParseUint(id.HeapSnapshotObjectID, 10, 64)
		}
	}
	return out, nil
}

// callOnAllObjects calls the function fn on the array of every object of
// the page that has Object.prototype on its prototype chain
// (Runtime.queryObjects), with args (object ids of the page, or values),
// and returns its result as a handle in collectionsGroup.
func (p *page) callOnAllObjects(ctx context.Context, fn string, args ...any) (remoteObject, error) {
	defer p.release(queryGroup)
	var proto evaluated
	if err := p.conn.Call(ctx, "Runtime.evaluate", map[string]any{"expression": "Object.prototype", "objectGroup": queryGroup, "silent": true}, &proto); err != nil {
		return remoteObject{}, p.cause(ctx, err)
	}
	var all struct {
		Objects remoteObject `json:"objects"`
	}
	if err := p.conn.Call(ctx, "Runtime.queryObjects", map[string]string{"prototypeObjectId": proto.Result.ObjectID, "objectGroup": queryGroup}, &all); err != nil {
		return remoteObject{}, p.cause(ctx, err)
	}
	callArgs := make([]map[string]any, len(args))
	for i, a := range args {
		if id, ok := a.(string); ok {
			callArgs[i] = map[string]any{"objectId": id}
		} else {
			callArgs[i] = map[string]any{"value": a}
		}
	}
	var r evaluated
	if err := p.conn.Call(ctx, "Runtime.callFunctionOn", map[string]any{"functionDeclaration": fn, "objectId": all.Objects.ObjectID,
		"arguments": callArgs, "objectGroup": collectionsGroup, "silent": true}, &r); err != nil {
		return remoteObject{}, p.cause(ctx, err)
	}
	if r.Exception != nil {
		return remoteObject{}, fmt.Errorf("counting the page's collections: %w", r.Exception)
	}
	return r.Result, nil
}

// queryGroup holds the array of all objects while it is used.
const queryGroup = "heapx-query"
