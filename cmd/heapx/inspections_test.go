package main

import (
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

// TestInspections runs the inspection commands the way a user does, with
// each output format once, on the two fixtures whose contents are known
// (see query's inspections_test.go for the numbers).
func TestInspections(t *testing.T) {
	t.Parallel()
	page := "../../testdata/chromium-small-page.heapsnapshot.gz"
	leak := "../../testdata/node-leak-3.heapsnapshot.gz"

	// --json: the generic document, rows keyed by column key.
	var doc struct {
		Query    string `json:"query"`
		Sections []struct {
			Rows  []map[string]any `json:"rows"`
			Chart struct{ Label, Value string }
		} `json:"sections"`
		Notes []string `json:"notes"`
	}
	if err := json.Unmarshal([]byte(ok(t, "duplicates", "--json", "-n", "5", page)), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Query != "duplicates" || len(doc.Sections) != 1 || len(doc.Sections[0].Rows) != 5 {
		t.Fatalf("duplicates --json: %+v", doc)
	}
	for _, row := range doc.Sections[0].Rows {
		if !strings.HasPrefix(row["text"].(string), "SKU-") || row["count"] != 600.0 || row["size"] != 20.0 || row["wasted"] != 11980.0 {
			t.Errorf("duplicates row %v", row)
		}
	}
	if c := doc.Sections[0].Chart; c.Label != "text" || c.Value != "wasted" {
		t.Errorf("duplicates chart %+v", c)
	}
	if len(doc.Notes) != 1 || !strings.HasPrefix(doc.Notes[0], "1,045 texts held by 32,192 string objects") {
		t.Errorf("duplicates notes %q", doc.Notes)
	}

	// Text: the trees table, one path for the ten trees held alike, the
	// totals.
	det := ok(t, "detached", page)
	for _, want := range []string{`Detached <div class="detached-root-0">`, `Detached <div class="detached-root-9">`,
		"Trees 1-10: 10 trees like ", ".detachedTrees", "[0…9]", "The 10 trees hold 510 detached elements"} {
		if !strings.Contains(det, want) {
			t.Errorf("detached output lacks %q:\n%s", want, det)
		}
	}

	// A tree: one chain, indented by depth, ending in the 1500 items.
	mp := ok(t, "merged-paths", "--class", "LeakedItem", leak)
	lines := strings.Split(strings.TrimRight(mp, "\n"), "\n")
	leaf := lines[len(lines)-1] // header line, column titles, 8 tree nodes
	// The array's 1,500 slots are one row, named by the variable.
	if len(lines) != 10 || !strings.HasPrefix(leaf, "              elements of retained (Array) ") || !strings.Contains(leaf, " LeakedItem ") ||
		strings.Count(leaf, "1,500") != 2 { // objects and paths ending here
		t.Errorf("merged-paths output:\n%s", mp)
	}

	// --csv: raw numbers under the column keys.
	recs, err := csv.NewReader(strings.NewReader(ok(t, "dominators", "--by-class", "--csv", "--id", "80593", leak))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 2 || strings.Join(recs[0][:4], ",") != "constructor,count,shallow_size,retained_size" ||
		strings.Join(recs[1][:4], ",") != "LeakedItem,1500,84000,431280" {
		t.Errorf("dominators --csv: %q", recs)
	}

	// Mistakes exit 1 with a message, never a crash.
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"merged-paths", "--class", "NoSuchClass", leak}, `no class named "NoSuchClass"`},
		{[]string{"merged-paths", leak}, `"class" not set`},
		{[]string{"dominators", "--id", "999999999", leak}, "no node with id @999999999"},
		{[]string{"shapes", "-n", "-1", leak}, "-n must be 0 or more"},
	} {
		if r := heapx(t, c.args...); r.code != 1 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("heapx %v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.msg)
		}
	}

	list := ok(t, "list")
	for _, name := range []string{"duplicates", "detached", "closures", "collections", "shapes", "globals", "merged-paths", "dominators"} {
		found := false
		for _, l := range strings.Split(list, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "inspections" && f[1] == name {
				found = true
			}
		}
		if !found {
			t.Errorf("heapx list has no inspections row for %s:\n%s", name, list)
		}
	}
}
