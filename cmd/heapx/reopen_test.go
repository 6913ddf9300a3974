package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// views runs summary, top and paths (on the given ids) with --json on path
// and returns their outputs with the "file" field blanked, the one thing
// that must differ between a snapshot and its converted copies.
func views(t *testing.T, path string, ids []uint64) []string {
	t.Helper()
	blank := func(s string) string {
		return strings.Replace(s, `"file": "`+path+`"`, `"file": ""`, 1)
	}
	out := []string{
		blank(ok(t, "summary", "--json", "-n", "0", "--unreachable", path)),
		blank(ok(t, "top", "--json", "-n", "200", path)),
	}
	for _, id := range ids {
		out = append(out, blank(ok(t, "paths", "--json", "-n", "5", "--id", strconv.FormatUint(id, 10), path)))
	}
	return out
}

// TestAnalysedFileAnswersLikeSnapshot converts every fixture with
// --analyze to both exchange forms and checks that summary, top and paths
// print exactly what they print for the original snapshot, now from the
// stored results (issue #4: reopening an analysed dump needs no
// recomputation).
func TestAnalysedFileAnswersLikeSnapshot(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			var top query.TopJSON
			if err := json.Unmarshal([]byte(ok(t, "top", "--json", "-n", "3", f.path)), &top); err != nil {
				t.Fatal(err)
			}
			var ids []uint64
			for _, n := range top.Nodes {
				ids = append(ids, n.ID)
			}
			want := views(t, f.path, ids)
			for _, ext := range []string{".jsonl.gz", ".db"} {
				out, s := analysedCopy(t, f, ext)
				if !strings.Contains(s, "with analysis results") {
					t.Fatalf("convert printed %q", s)
				}
				got := views(t, out, ids)
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s: view %d differs from the snapshot's:\n%.600s\nwant\n%.600s", filepath.Base(out), i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestAnalysedFileResultsAreUsed changes one stored distance in an
// analysed .jsonl: top must show it (the results are read, not
// recomputed), and must not once the file says the results are for
// another policy (docs/format.md 4: a consumer must not use those). (A
// retained size cannot be changed alone: the reader checks that the
// sizes add up along the dominator tree.)
func TestAnalysedFileResultsAreUsed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	in := "../../testdata/node-basic.heapsnapshot.gz"
	flat := filepath.Join(dir, "a.jsonl")
	ok(t, "convert", "--analyze", in, flat)
	var top query.TopJSON
	if err := json.Unmarshal([]byte(ok(t, "top", "--json", "-n", "1", in)), &top); err != nil {
		t.Fatal(err)
	}
	target := top.Nodes[0]
	b, err := os.ReadFile(flat)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(b, []byte("\n"))
	col := -1
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte(`["record","node",`)) {
			var decl []any
			if err := json.Unmarshal(l, &decl); err != nil {
				t.Fatal(err)
			}
			for j, f := range decl[2].([]any) {
				if f == "heapx:distance" {
					col = j + 1 // after the record type
				}
			}
		}
		if col > 0 && bytes.HasPrefix(l, []byte(`["node",`+strconv.FormatUint(target.ID, 10)+`,`)) {
			var rec []json.RawMessage
			if err := json.Unmarshal(l, &rec); err != nil {
				t.Fatal(err)
			}
			if string(rec[col]) != strconv.Itoa(int(target.Distance)) {
				t.Fatalf("stored distance %s, top says %d", rec[col], target.Distance)
			}
			rec[col] = json.RawMessage(strconv.Itoa(int(target.Distance) + 1000))
			if lines[i], err = json.Marshal(rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if col < 0 {
		t.Fatal("no heapx:distance in the node declaration")
	}
	tampered := filepath.Join(dir, "tampered.jsonl")
	if err := os.WriteFile(tampered, bytes.Join(lines, []byte("\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	distance := func(path string) int32 {
		var top query.TopJSON
		if err := json.Unmarshal([]byte(ok(t, "top", "--json", "-n", "1", path)), &top); err != nil {
			t.Fatal(err)
		}
		return top.Nodes[0].Distance
	}
	if got := distance(tampered); got != target.Distance+1000 {
		t.Errorf("top shows distance %d, the file holds %d: the stored results were not used", got, target.Distance+1000)
	}
	other := filepath.Join(dir, "other-policy.jsonl")
	policy := []byte(`["metadata","heapx:analysis","devtools"]`)
	if !bytes.Contains(b, policy) {
		t.Fatal("no heapx:analysis metadata")
	}
	b = bytes.Join(lines, []byte("\n"))
	if err := os.WriteFile(other, bytes.Replace(b, policy, []byte(`["metadata","heapx:analysis","raw"]`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := distance(other); got != target.Distance {
		t.Errorf("top shows distance %d from results of another policy, want the recomputed %d", got, target.Distance)
	}
}
