package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// leakShape is one leak of a series of testdata/gen/make-leak-shapes.js:
// the class heapx shows for the objects the leaking action leaks and how
// many, the V8 name of the reported ones (the Example column), and
// memlab's name for them in its golden clusters (testdata/golden/leaks).
type leakShape struct {
	class   string
	count   int
	example string
	memlab  string
}

// cliLeakShapes are the series of testdata/leaks (SHAPE-nodeV-{1,2,3}),
// with the Node versions that wrote them and their leaks.
var cliLeakShapes = []struct {
	shape string
	nodes []string
	leaks []leakShape
}{
	{"map-closures", allNodes, []leakShape{{"Function", 1000, "onMessage", "onMessage (closure)"}}},
	{"set", allNodes, []leakShape{{"Connection", 200, "Connection", "Connection (object)"}}},
	{"cache-object", allNodes, []leakShape{{"Session", 150, "Session", "Session (object)"}}},
	{"class-field", allNodes, []leakShape{{"LogEntry", 300, "LogEntry", "LogEntry (object)"}}},
	{"timers", allNodes, []leakShape{{"Timeout", 120, "Timeout", "Timeout (object)"}}},
	// Four leaks side by side. The listeners' leak is shown by the
	// listener arrays of its 7 events, new in the target, which hold the
	// closures; memlab drops the whole list for traces longer than 100
	// steps.
	{"several", []string{"node20"}, []leakShape{{"Bucketed", 160, "Bucketed", "Bucketed (object)"},
		{"Numbered", 150, "Numbered", "Numbered (object)"}, {"Listener", 50, "Array", "Listener (object)"},
		{"ListNode", 200, "ListNode", "ListNode (object)"}}},
}

var allNodes = []string{"node20", "node22", "node24"}

// leaksDoc is the table of `heapx leaks --json` (the generic document).
type leaksDoc struct {
	Sections []struct {
		Rows []struct {
			Classes string  `json:"classes"`
			Count   float64 `json:"count"`
			Example string  `json:"example"`
		} `json:"rows"`
	} `json:"sections"`
}

// classCount returns the count the Classes text gives class, or 0.
func classCount(classes, class string) int {
	m := regexp.MustCompile(`(?:^|, )` + regexp.QuoteMeta(class) + ` ([0-9,]+)(?:,|$)`).FindStringSubmatch(classes)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	return n
}

// TestLeakShapesCLI runs `heapx leaks` and `heapx report` on every leak
// series as a user does: the first row is a leak; each leak is in rows
// of its own, all its objects in no more rows than memlab's clusters
// that hold any of them (one where memlab drops them all for traces too
// long); no row is compiled code (with --internals either); and the
// report's first part is the leak detection, whose first row is the
// first leak.
func TestLeakShapesCLI(t *testing.T) {
	t.Parallel()
	for _, sh := range cliLeakShapes {
		for _, node := range sh.nodes {
			series := sh.shape + "-" + node
			t.Run(series, func(t *testing.T) {
				t.Parallel()
				var files []string
				for k := 1; k <= 3; k++ {
					files = append(files, filepath.Join("..", "..", "testdata", "leaks", fmt.Sprintf("%s-%d.heapsnapshot.gz", series, k)))
				}
				b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "golden", "leaks", series+".memlab-leaks.json"))
				if err != nil {
					t.Fatal(err)
				}
				var m struct {
					Clusters []struct {
						Classes map[string]int `json:"leaked_classes"`
					} `json:"clusters"`
					TooLong map[string]int `json:"too_long_classes"`
				}
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}

				var lr leaksDoc
				okJSON(t, &lr, append([]string{"leaks", "--json", "-n", "0"}, files...)...)
				rows := lr.Sections[0].Rows
				if len(rows) == 0 {
					t.Fatal("no leaks")
				}
				firstIsLeak := false
				leakOfRow := map[int]string{}
				for _, l := range sh.leaks {
					memlabRows := 0
					for _, c := range m.Clusters {
						if c.Classes[l.memlab] > 0 {
							memlabRows++
						}
					}
					if memlabRows == 0 && m.TooLong[l.memlab] > 0 {
						memlabRows = 1 // memlab drops it
					}
					total, n := 0, 0
					for i, r := range rows {
						c := classCount(r.Classes, l.class)
						if c == 0 {
							continue
						}
						total += c
						n++
						if other, ok := leakOfRow[i]; ok {
							t.Errorf("row %d holds the leaks of %s and %s: %+v", i+1, other, l.class, r)
						}
						leakOfRow[i] = l.class
						if i == 0 && strings.HasPrefix(r.Example, l.example+" @") {
							firstIsLeak = true
						}
					}
					if total != l.count || n > memlabRows {
						t.Errorf("%d %s in %d rows; want %d in at most memlab's %d clusters", total, l.class, n, l.count, memlabRows)
					}
				}
				if !firstIsLeak {
					t.Errorf("the first row is not a leak: %+v", rows[0])
				}
				var li leaksDoc
				okJSON(t, &li, append([]string{"leaks", "--json", "-n", "0", "--internals"}, files...)...)
				for _, r := range append(rows, li.Sections[0].Rows...) {
					if strings.Contains(r.Classes, "(compiled code)") {
						t.Errorf("a leak of compiled code: %+v", r)
					}
				}

				d := reportJSON(t, files[2], files[0], files[1])
				if len(d.Parts) == 0 || d.Parts[0].Key != "leaks" {
					t.Fatalf("the report does not start with the leaks")
				}
				if first := reportPart(t, d, "leaks")[0]; first["example"] != rows[0].Example || first["classes"] != rows[0].Classes {
					t.Errorf("the report's first leak is %v, heapx leaks' %+v", first, rows[0])
				}
			})
		}
	}
}
