package serve_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx/serve"
	"github.com/heapx/heapx/session"
	"github.com/heapx/heapx/sqlquery"
)

// benchServer is the handler over the snapshot $HEAPX_BENCH_SNAPSHOT
// (bench/gen-snapshots.sh makes the synthetic ones), read, analysed and
// prepared once for all the benchmarks, as heapx serve does before it
// prints its address.
var benchServer = sync.OnceValues(func() (http.Handler, error) {
	s, err := session.Open(os.Getenv("HEAPX_BENCH_SNAPSHOT"), nil, session.Options{SQLCache: sqlquery.Choice{None: true}})
	if err != nil {
		return nil, err
	}
	if err := s.Prepare(); err != nil {
		return nil, err
	}
	return serve.Handler(s, serve.Options{}), nil
})

// get answers GET path from h, failing b unless it is a 200 (or a 404
// for a path with an id no object has).
func get(b *testing.B, h http.Handler, path string) string {
	req := httptest.NewRequest("GET", path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 && !(rec.Code == 404 && strings.Contains(path, noSuchID)) {
		b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// noSuchID is an id no object of a V8 snapshot has (V8's are below 2^32):
// looking it up reads every id.
const noSuchID = "@99999999999"

// field returns the first number after "key": in a JSON text.
func field(b *testing.B, body, key string) string {
	i := strings.Index(body, `"`+key+`":`)
	if i < 0 {
		b.Fatalf("no %q in %.300s", key, body)
	}
	rest := body[i+len(key)+3:]
	j := strings.IndexAny(rest, ",}")
	return rest[:j]
}

// BenchmarkInteractions measures the server time of each request the page
// makes as a user clicks through a big dump: the answer built, encoded
// and written, after heapx serve's preparation. Run it on the 1 GB
// synthetic snapshot:
//
//	HEAPX_BENCH_SNAPSHOT=/tmp/heapx-bench/synth-1gb.heapsnapshot go test ./serve -run '^$' -bench Interactions -benchtime 10x
func BenchmarkInteractions(b *testing.B) {
	if os.Getenv("HEAPX_BENCH_SNAPSHOT") == "" {
		b.Skip("set HEAPX_BENCH_SNAPSHOT to a large snapshot (bench/gen-snapshots.sh)")
	}
	h, err := benchServer()
	if err != nil {
		b.Fatal(err)
	}
	// The objects a user would click: the class with the most instances
	// and its largest one, an object of the deliberate leak of
	// synthetic.js (its Request objects), the root's largest child, the
	// largest object (a global: few paths, so the search for five
	// stops at its bound).
	top := get(b, h, "/api/v1/classes?sort=count&limit=1")
	class := field(b, top, "index")
	inst := field(b, get(b, h, "/api/v1/classes/"+class+"/instances?limit=1"), "id")
	count := field(b, top, "count")
	deep := count[:max(1, len(count)-1)] // about a tenth of the way through the list
	leakClass := field(b, get(b, h, "/api/v1/classes?filter=Request&limit=1"), "index")
	leakObj := field(b, get(b, h, "/api/v1/classes/"+leakClass+"/instances?offset=1000&limit=1"), "id")
	child := field(b, get(b, h, "/api/v1/objects/root/children?limit=1"), "id")
	global := field(b, get(b, h, "/api/v1/classes/"+field(b, get(b, h, "/api/v1/classes?limit=1"), "index")+"/instances?limit=1"), "id")
	requests := []struct{ name, path string }{
		{"session", "/api/v1/session"},
		{"report", "/api/v1/report"},
		{"classes", "/api/v1/classes"},
		{"classes-filter", "/api/v1/classes?filter=item"},
		{"classes-by-count", "/api/v1/classes?sort=count"},
		{"instances", "/api/v1/classes/" + class + "/instances"},
		{"instances-deep-page", "/api/v1/classes/" + class + "/instances?offset=" + deep},
		{"object", "/api/v1/objects/" + inst},
		{"object-unknown-id", "/api/v1/objects/" + noSuchID},
		{"references", "/api/v1/objects/" + inst + "/references"},
		{"retainers", "/api/v1/objects/" + leakObj + "/retainers"},
		{"paths-k3", "/api/v1/objects/" + leakObj + "/paths?k=3"},
		{"paths-k5-largest", "/api/v1/objects/" + global + "/paths?k=5"},
		{"paths-ignore", "/api/v1/objects/" + leakObj + "/paths?k=3&ignore=" + field(b, get(b, h, "/api/v1/objects/"+leakObj), "dominator_id")},
		{"dominators-root", "/api/v1/objects/root/children"},
		{"dominators-root-by-class", "/api/v1/objects/root/children/classes"},
		{"dominators-child", "/api/v1/objects/" + child + "/children"},
		{"query-top", "/api/v1/queries/top?form=generic"},
	}
	for _, r := range requests {
		b.Run(r.name, func(b *testing.B) {
			get(b, h, r.path) // the first ask may fill a cache; the benchmark is the next ones
			b.ResetTimer()
			for b.Loop() {
				get(b, h, r.path)
			}
		})
	}
	// The first ask of what is computed on a click and then kept: a
	// level of the dominator tree, an object's sorted retainers (each
	// retainer's source found in the edge offsets).
	b.Run("first-dominators-child", func(b *testing.B) {
		kids := get(b, h, "/api/v1/objects/"+child+"/children?limit=1000")
		ids := strings.Split(kids, `"id":`)[1:]
		b.ResetTimer()
		i := 0
		for b.Loop() {
			id := ids[i%len(ids)]
			get(b, h, "/api/v1/objects/"+id[:strings.IndexAny(id, ",}")]+"/children")
			i++
		}
	})
	b.Run("first-retainers", func(b *testing.B) {
		objs := get(b, h, "/api/v1/classes/"+leakClass+"/instances?limit=1000")
		ids := strings.Split(objs, `"id":`)[1:]
		b.ResetTimer()
		i := 0
		for b.Loop() {
			id := ids[i%len(ids)]
			get(b, h, "/api/v1/objects/"+id[:strings.IndexAny(id, ",}")]+"/retainers")
			i++
		}
	})
}

// BenchmarkFlame measures the flame graph's server time on a big dump:
// the first picture (which builds the dominator tree's children index,
// logged), the root's picture once the index is kept, and a click on each
// box of that picture in turn (what is under it, 6 levels). Run it on the
// 1 GB synthetic snapshot:
//
//	HEAPX_BENCH_SNAPSHOT=/tmp/heapx-bench/synth-1gb.heapsnapshot go test ./serve -run '^$' -bench Flame -benchtime 20x
func BenchmarkFlame(b *testing.B) {
	if os.Getenv("HEAPX_BENCH_SNAPSHOT") == "" {
		b.Skip("set HEAPX_BENCH_SNAPSHOT to a large snapshot (bench/gen-snapshots.sh)")
	}
	h, err := benchServer()
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	first := get(b, h, "/api/v1/objects/root/flame")
	b.Logf("the first picture: %v (builds the children index), %d bytes of JSON", time.Since(start), len(first))
	var paths []string
	for _, p := range strings.Split(first, `"path":[`)[2:] { // the root's own box, [], is the first
		paths = append(paths, p[:strings.IndexByte(p, ']')])
	}
	b.Run("root", func(b *testing.B) {
		for b.Loop() {
			get(b, h, "/api/v1/objects/root/flame")
		}
	})
	b.Run("click", func(b *testing.B) {
		i := 0
		for b.Loop() {
			get(b, h, "/api/v1/objects/root/flame?path="+paths[i%len(paths)])
			i++
		}
	})
}
