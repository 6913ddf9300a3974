package serve_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapx/heapx/serve"
)

// TestManyHeavyRequests sends 200 heavy requests at once (paths, the
// dominator tree, registry queries with new arguments, SQL) to a server
// that runs one of each class at a time and queues four: every request
// ends, answered (200) or refused (503 with a Retry-After and the JSON
// error), the Go heap stays within a bound while they run, and once they
// are over each class answers again (no slot is left taken).
func TestManyHeavyRequests(t *testing.T) {
	s := open(t, "node-basic.heapsnapshot.gz")
	limits := map[string]serve.Limit{}
	for _, c := range []string{serve.ClassPaths, serve.ClassDominators, serve.ClassQueries, serve.ClassSQL} {
		limits[c] = serve.Limit{Running: 1, Waiting: 4, MaxWait: time.Minute}
	}
	base := start(t, s, serve.Options{Limits: limits}) + "/api/v1/"
	var top struct {
		Nodes []struct {
			ID uint64 `json:"id"`
		} `json:"nodes"`
	}
	if err := getJSON(base+"queries/top?limit=50", &top); err != nil || len(top.Nodes) < 50 {
		t.Fatalf("top: %v", err)
	}
	heavy := func(i int) (string, string) {
		id := top.Nodes[i%len(top.Nodes)].ID
		switch i % 5 {
		case 0:
			return fmt.Sprintf("objects/%d/paths?k=%d", id, 1+i%5), ""
		case 1:
			return fmt.Sprintf("objects/%d/children", id), ""
		case 2:
			return fmt.Sprintf("objects/%d/children/classes", id), ""
		case 3:
			return fmt.Sprintf("queries/%s?limit=%d", []string{"suspects", "duplicates", "shapes"}[i%3], 1+i), ""
		}
		return "sql", fmt.Sprintf(`{"query": "SELECT count(*) FROM node WHERE self_size > %d"}`, i)
	}
	ask := func(path, body string) (*http.Response, []byte, error) {
		var resp *http.Response
		var err error
		if body != "" {
			resp, err = http.Post(base+path, "application/json", strings.NewReader(body))
		} else {
			resp, err = http.Get(base + path)
		}
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before, peak := ms.HeapInuse, ms.HeapInuse
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path, body := heavy(i)
			resp, b, err := ask(path, body)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				return
			}
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
			switch resp.StatusCode {
			case http.StatusOK:
			case http.StatusServiceUnavailable:
				var e struct {
					Error  string `json:"error"`
					Status int    `json:"status"`
				}
				if ra, _ := strconv.Atoi(resp.Header.Get("Retry-After")); ra < 1 || json.Unmarshal(b, &e) != nil || e.Status != 503 || !strings.Contains(e.Error, "busy") {
					t.Errorf("%s: 503 with Retry-After %q and %s", path, resp.Header.Get("Retry-After"), b)
				}
			default:
				t.Errorf("%s: %s: %s", path, resp.Status, b)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-sampled
	if codes[http.StatusServiceUnavailable] == 0 || codes[http.StatusOK] < 20 {
		t.Errorf("answers %v: want some refused and at least the first of each class answered", codes)
	}
	if grew := peak - before; grew > 256<<20 {
		t.Errorf("the heap grew by %d MB during the requests", grew>>20)
	}
	for i := range 5 {
		path, body := heavy(i)
		if resp, b, err := ask(path, body); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s after the burst: %v %s", path, err, b)
		}
	}
	t.Logf("answers %v; heap peak %d MB over %d MB", codes, (peak-before)>>20, before>>20)
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
