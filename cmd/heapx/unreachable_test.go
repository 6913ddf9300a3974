package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// TestSummaryUnreachable checks that the Chromium fixture's 80 unreachable
// strings (DevTools' distance -5) are reported apart from the classes.
func TestSummaryUnreachable(t *testing.T) {
	t.Parallel()
	const file = "../../testdata/chromium-small-page.heapsnapshot.gz"
	var s query.SummaryJSON
	if err := json.Unmarshal([]byte(ok(t, "summary", "--json", file)), &s); err != nil {
		t.Fatal(err)
	}
	u := s.Unreachable
	if u.Count != 80 || len(u.Classes) != 1 || u.Classes[0].Constructor != "(string)" || u.Classes[0].Count != 80 {
		t.Errorf("unreachable %+v, want 80 (string) objects", u)
	}
	if out := ok(t, "summary", "-n", "3", file); !strings.Contains(out, "80 objects (0 B) are unreachable from the roots") {
		t.Errorf("summary does not total the unreachable objects:\n%s", out)
	}
	if out := ok(t, "summary", "--unreachable", file); !strings.Contains(out, "(string)        80") {
		t.Errorf("--unreachable does not list them by class:\n%s", out)
	}
	if err := json.Unmarshal([]byte(ok(t, "summary", "--json", "../../testdata/node-basic.heapsnapshot.gz")), &s); err != nil || s.Unreachable.Count != 0 {
		t.Errorf("node-basic: %v, unreachable %+v", err, s.Unreachable)
	}
}
