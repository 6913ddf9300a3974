package session_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heapx/heapx/render"
	"github.com/heapx/heapx/session"
)

// TestQueryAnswer: ParseForm takes the two forms serve and the MCP
// server answer queries in and refuses others as a bad request; the
// answer in each form is what heapx top --json prints, or the generic
// document of sections.
func TestQueryAnswer(t *testing.T) {
	if _, err := session.ParseForm("xml"); session.KindOf(err) != session.Invalid || !strings.Contains(err.Error(), `form must be "json"`) {
		t.Errorf("form xml: %v", err)
	}
	s := open(t, "node-leak-3.heapsnapshot.gz")
	args := map[string]string{"limit": "2"}
	f, err := session.ParseForm("generic")
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.QueryAnswer("top", args, f)
	if err != nil {
		t.Fatal(err)
	}
	doc, ok := v.(*render.Document)
	if !ok || doc.Query != "top" || len(doc.Sections) != 1 || len(doc.Sections[0].Rows) != 2 {
		t.Fatalf("top, generic: %#v", v)
	}
	if f, err = session.ParseForm("json"); err != nil {
		t.Fatal(err)
	}
	if v, err = s.QueryAnswer("top", args, f); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Nodes []struct {
			ID           uint64 `json:"id"`
			RetainedSize uint64 `json:"retained_size"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &top); err != nil || len(top.Nodes) != 2 || top.Nodes[0].ID != 6049 || top.Nodes[0].RetainedSize != 3079371 {
		t.Errorf("top, json: %s", b)
	}
	if _, err := s.QueryAnswer("no-such-query", nil, f); session.KindOf(err) != session.NotFound {
		t.Errorf("an unknown query: %v", err)
	}
}
