package serve_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
)

// TestAPIAllocationStack: the inspector's object details carry the
// object's allocation stack as DevTools' Allocation stack pane shows it
// (but for V8's "(root)" frame), the Summary's classes their allocation
// site, and neither on a dump without stacks.
func TestAPIAllocationStack(t *testing.T) {
	url := start(t, open(t, "node-sites.heapsnapshot.gz"), serve.Options{})
	for _, want := range testfixtures.DevToolsAllocationStacks(t, "node-sites") {
		var o struct {
			session.ObjectJSON
			Stack []testfixtures.StackFrame `json:"allocation_stack"`
		}
		if st := apiGet(t, url, fmt.Sprintf("/api/v1/objects/@%d", want.ID), &o); st != 200 {
			t.Fatalf("@%d: status %d", want.ID, st)
		}
		if o.Object.ID != want.ID || !reflect.DeepEqual(o.Stack, want.Stack) {
			t.Errorf("@%d (%s): allocation stack\n%+v\nDevTools:\n%+v", want.ID, want.Class, o.Stack, want.Stack)
		}
	}
	// The Summary's rows: where most of each class was allocated.
	var page session.ClassPage
	if st := apiGet(t, url, "/api/v1/classes?filter=widget", &page); st != 200 || len(page.Classes) != 1 {
		t.Fatalf("classes?filter=widget: status %d, %+v", st, page)
	}
	if a := page.Classes[0].AllocationSite; a.Function != "(anonymous)" || a.Script != "/tmp/heapx-sites-app/sites.js" || a.Line != 1 || a.Count != 3000 || a.Percent != 100 {
		t.Errorf("Widget allocated in %+v, want the script's top level, all 3,000", a)
	}
	url = start(t, open(t, "node-leak-3.heapsnapshot.gz"), serve.Options{})
	var raw map[string]any
	if st := apiGet(t, url, "/api/v1/objects/@92189", &raw); st != 200 || raw["object"] == nil {
		t.Fatalf("@92189: status %d, %v", st, raw)
	}
	if _, has := raw["allocation_stack"]; has {
		t.Errorf("a dump without stacks has an allocation stack: %v", raw["allocation_stack"])
	}
	var classes struct {
		Classes []map[string]any `json:"classes"`
	}
	apiGet(t, url, "/api/v1/classes?limit=1000", &classes)
	for _, c := range classes.Classes {
		if _, has := c["allocation_site"]; has {
			t.Fatalf("a dump without stacks has a class allocation site: %v", c)
		}
	}
	if len(classes.Classes) == 0 {
		t.Errorf("no classes")
	}
}

// TestBrowserAllocationStack: the inspector page of an object of a dump
// with allocation stacks lists its stack, allocating function first, and
// the Summary says where a class was allocated.
func TestBrowserAllocationStack(t *testing.T) {
	b := startBrowser(t)
	url := start(t, open(t, "node-sites.heapsnapshot.gz"), serve.Options{})
	p := b.newPage()
	p.navigate(url + "/#/object/@49497")
	p.waitFor("the allocation stack", `document.querySelector('.view-object .allocation-stack li')`)
	want := "Allocation stack" + "makeRecord /tmp/heapx-sites-app/sites.js:4:20" + "(anonymous) /tmp/heapx-sites-app/sites.js:1:1"
	if got := p.text(".view-object .allocation-stack"); !strings.HasPrefix(got, want) {
		t.Errorf("the inspector's allocation stack is %q, want it to start %q", got, want)
	}
	p.navigate(url + "/#/summary?filter=widget")
	p.waitFor("the Summary's Widget row", `document.querySelector('tr.class-row[data-name="Widget"] .site')`)
	if got := p.text(`tr.class-row[data-name="Widget"] .site`); got != " (anonymous) /tmp/heapx-sites-app/sites.js:1:1 (100.0%)" {
		t.Errorf("the Summary's Widget row says it was allocated in %q", got)
	}
	p.noProblems()
}
