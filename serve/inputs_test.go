package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/internal/partitiontest"
	"github.com/heapx/heapx/internal/testfixtures"
	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
)

// TestAPIEveryInputKind walks every view of the page through the API on
// each kind of input heapx reads: a V8 snapshot, a Firefox core dump, a
// Java HPROF dump, and the exchange format (heapx convert's .jsonl, plain
// and with the analysis, and analysed .db, and a Parquet partition as
// heapx export writes it) made from each of the three.
// Every request answers 200, and a converted dump answers every question
// as the dump it was made from does, number for number (the views read
// the same graph and analysis), only its path and format differ.
func TestAPIEveryInputKind(t *testing.T) {
	for _, src := range []struct{ name, words string }{
		{"node-leak-3.heapsnapshot.gz", "Constructor"},
		{"spidermonkey/ff-small-page.fxsnapshot", "Class"},
		{"hprof/java-ticketleak-3.hprof.gz", "Class"},
	} {
		t.Run(filepath.Base(src.name), func(t *testing.T) {
			want := walkViews(t, src.name, src.words)
			converted := map[string]string{"parquet": partitiontest.Write(t, filepath.Join(testfixtures.Dir(), src.name))}
			for _, conv := range []struct {
				ext     string
				analyse bool
			}{{".jsonl", false}, {".jsonl.gz", true}, {".db", true}} {
				converted[conv.ext] = convert(t, src.name, conv.ext, conv.analyse)
			}
			for kind, path := range converted {
				got := walkViews(t, path, src.words)
				for view, w := range want {
					if g := got[view]; !bytes.Equal(g, w) {
						t.Errorf("%s from %s: %s differs:\n%.2000s\nthe source's:\n%.2000s", kind, src.name, view, g, w)
					}
				}
			}
		})
	}
}

// convert writes the dump at rel (under testdata/) in the exchange format
// the extension ext names, with its analysis's results if analyse, as
// heapx convert [--analyze] does, and returns the new file's path.
func convert(t *testing.T, rel, ext string, analyse bool) string {
	t.Helper()
	a, err := input(t, rel).Analysis()
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(ext, ".gz")
	f, ok := formats.ByExtension("x" + name)
	if !ok {
		t.Fatalf("no format writes %s", name)
	}
	opt := formats.WriteOptions{Sources: []string{filepath.Join(testfixtures.Dir(), rel)}}
	if analyse {
		opt.Results = a.Results()
	}
	out := filepath.Join(t.TempDir(), "dump"+ext)
	if err := formats.Save(out, f, a.Graph, opt); err != nil {
		t.Fatal(err)
	}
	return out
}

// pathFields are the fields of answers that name the file or its format,
// the only ones a conversion changes.
var pathFields = regexp.MustCompile(`"(file|path|format|inputs|base|target|title)":("[^"]*"|\[[^\]]*\])`)

// walkViews serves the dump at path (under testdata/, or absolute) and
// asks what the page asks as a user goes through its views: the session,
// the overview (report), the Summary sorted by each column, the largest
// class's instances, its largest instance's details, fields, retainers,
// shortest paths and dominated objects (also by class), the dominator
// tree from the root, two registry queries and the SQL console. Each
// answer must be 200, label classes in the runtime's words, and is
// returned by view, its paths and formats blanked.
func walkViews(t *testing.T, path, words string) map[string][]byte {
	t.Helper()
	url := start(t, open(t, path), serve.Options{})
	out := map[string][]byte{}
	ask := func(view, p string, v any) {
		t.Helper()
		if st := apiGet(t, url, p, v); st != 200 {
			t.Fatalf("%s: GET %s answered %d", path, p, st)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[view] = pathFields.ReplaceAll(b, []byte(`"$1":"-"`))
	}
	var info session.InfoJSON
	ask("session", "/api/v1/session", &info)
	if info.Words.Class != words {
		t.Errorf("%s: classes are called %q, want %q", path, info.Words.Class, words)
	}
	delete(out, "session") // its queries list is the registry's; its inputs the file's
	var report map[string]any
	ask("report", "/api/v1/report", &report)
	var classes session.ClassPage
	for _, sort := range []string{"retained_size", "shallow_size", "count", "distance", "constructor"} {
		ask("classes by "+sort, "/api/v1/classes?limit=20&sort="+sort, &classes)
	}
	ask("classes", "/api/v1/classes?limit=5", &classes)
	if len(classes.Classes) == 0 || classes.TotalSize == 0 {
		t.Fatalf("%s: no classes: %+v", path, classes)
	}
	c := classes.Classes[0]
	var inst session.InstancePage
	ask("instances", fmt.Sprintf("/api/v1/classes/%d/instances?limit=20", c.Index), &inst)
	if len(inst.Objects) == 0 || inst.Total != c.Count {
		t.Fatalf("%s: %d instances of %s, its row says %d", path, inst.Total, c.Constructor, c.Count)
	}
	id := objectRef(inst.Objects[0].ID)
	var obj session.ObjectJSON
	ask("object", "/api/v1/objects/"+id, &obj)
	if obj.Object.RetainedSize != inst.Objects[0].RetainedSize || obj.Class == nil || obj.Class.Index != c.Index {
		t.Errorf("%s: object %s: %+v", path, id, obj)
	}
	var edges session.EdgePage
	ask("references", "/api/v1/objects/"+id+"/references", &edges)
	if edges.Total != obj.References {
		t.Errorf("%s: %d references, the object says %d", path, edges.Total, obj.References)
	}
	ask("retainers", "/api/v1/objects/"+id+"/retainers", &edges)
	if edges.Total != obj.Retainers || edges.Total == 0 {
		t.Errorf("%s: %d retainers, the object says %d", path, edges.Total, obj.Retainers)
	}
	var paths session.PathsJSON
	ask("paths", "/api/v1/objects/"+id+"/paths?k=3", &paths)
	if len(paths.Paths) == 0 {
		t.Errorf("%s: no path to %s", path, id)
	}
	var kids session.ChildPage
	ask("dominated", "/api/v1/objects/"+id+"/children", &kids)
	var kidClasses session.ChildClassPage
	ask("dominated by class", "/api/v1/objects/"+id+"/children/classes", &kidClasses)
	ask("dominator tree", "/api/v1/objects/root/children?limit=20", &kids)
	if kids.Total == 0 {
		t.Errorf("%s: the root dominates nothing", path)
	}
	ask("dominator tree by class", "/api/v1/objects/root/children/classes?limit=20", &kidClasses)
	var q map[string]any
	ask("top", "/api/v1/queries/top?form=generic", &q)
	ask("duplicates", "/api/v1/queries/duplicates", &q)
	res, err := http.Post(url+"/api/v1/sql", "application/json", strings.NewReader(`{"query": "SELECT count(*) AS n FROM node"}`))
	if err != nil {
		t.Fatal(err)
	}
	var sql struct {
		Rows []struct {
			N int `json:"n"`
		} `json:"rows"`
	}
	json.NewDecoder(res.Body).Decode(&sql)
	res.Body.Close()
	if res.StatusCode != 200 || len(sql.Rows) != 1 || sql.Rows[0].N != info.Inputs[0].Nodes {
		t.Errorf("%s: SQL count of nodes: %d %v, want %d", path, res.StatusCode, sql.Rows, info.Inputs[0].Nodes)
	}
	return out
}

// objectRef writes id as the API takes it.
func objectRef(id uint64) string { return fmt.Sprintf("@%d", id) }
