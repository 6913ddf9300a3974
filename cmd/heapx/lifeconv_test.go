package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertTrace converts the handler trace (lifetimes_test.go) to both
// exchange forms and checks known objects' lifetime fields as heapx
// object-lifetimes reports them: @11, the first call's table, made at 11,
// last used at 17, unreachable at 18; @2, the module's cache, alive at
// the end (null unreachable time); @3, the handler function, never used.
func TestConvertTrace(t *testing.T) {
	dir := t.TempDir()
	jl, db := filepath.Join(dir, "handler.jsonl"), filepath.Join(dir, "handler.db")
	if out := ok(t, "convert", handlerTrace, jl); !strings.Contains(out, "object lifetimes") || !strings.Contains(out, ": 18 objects") {
		t.Errorf("heapx convert: %s", out)
	}
	ok(t, "convert", handlerTrace, db)

	text, err := os.ReadFile(jl)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`["metadata","heapx_lifetime:version","1"]`,
		`["metadata","heapx_lifetime:end_time","51"]`,
		`["record","node",["id","type","name","self_size","heapx_lifetime:alloc_time","heapx_lifetime:last_use","heapx_lifetime:unreachable_time"]]`,
		`["node_type",2,"heapx_lifetime:function","closure",[]]`,
		`["string",1,"/app/handler.js:4:17"]`,
		"\n" + `["node",11,1,1,0,11,17,18]` + "\n",
		`["string",4,"/app/handler.js:1:15"]`,
		"\n" + `["node",2,1,4,0,2,43,null]` + "\n",
		`["string",5,"/app/handler.js:2:21"]`,
		"\n" + `["node",3,2,5,0,4,null,null]` + "\n",
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("%s: no %s in\n%s", jl, want, text)
		}
	}

	got := ok(t, "sql", db, `SELECT n.identifier, t.name, s.data, n.heapx_lifetime_alloc_time, n.heapx_lifetime_last_use, n.heapx_lifetime_unreachable_time
		FROM node n JOIN node_types t USING (nodetypeid) JOIN strings s ON s.stringid = n.name
		WHERE n.identifier IN (2, 3, 11) ORDER BY n.identifier`, "--csv")
	want := `identifier,name,data,heapx_lifetime_alloc_time,heapx_lifetime_last_use,heapx_lifetime_unreachable_time
2,heapx_lifetime:object,/app/handler.js:1:15,2,43,
3,heapx_lifetime:function,/app/handler.js:2:21,4,,
11,heapx_lifetime:object,/app/handler.js:4:17,11,17,18
`
	if got != want {
		t.Errorf("heapx sql %s:\n%s\nwant\n%s", db, got, want)
	}
	// Drag over the dead objects: the sum of (unreachable - last use)
	// that heapx stale-sites reports for the one-call sites, 1 tick each.
	if got := ok(t, "sql", db, `SELECT count(*), sum(heapx_lifetime_unreachable_time - heapx_lifetime_last_use) FROM node WHERE heapx_lifetime_unreachable_time IS NOT NULL`, "--csv"); !strings.HasSuffix(got, "\n12,12\n") {
		t.Errorf("heapx sql sum of drag: %s", got)
	}

	// The readers still read both files: the lifetime fields are
	// namespaced extras they skip.
	for _, f := range []string{jl, db} {
		if out := ok(t, "summary", f); !strings.Contains(out, "18 objects (0 B) are unreachable from the roots") {
			t.Errorf("heapx summary %s:\n%s", f, out)
		}
	}

	if r := heapx(t, "convert", handlerTrace, filepath.Join(dir, "h.heapsnapshot")); r.code == 0 || !strings.Contains(r.stderr, "converts to the exchange format only") {
		t.Errorf("heapx convert TRACE .heapsnapshot: exit %d, %s", r.code, r.stderr)
	}
}
