// Command serveload puts heapx serve under concurrent load: C clients,
// each asking N requests drawn from a mix of what the page asks (light:
// the session, the classes, an object, its references and retainers, a
// page of instances) and what costs the server (paths, dominator-tree
// children opened for the first time, registry queries with new
// arguments, SQL statements), and reports per kind of request the
// answers by status, the latency percentiles and, given the server's
// pid, its peak resident memory over the run (sampled every 50 ms from
// /proc, and VmHWM at the end).
//
// Usage: go run ./bench/serveload -url http://127.0.0.1:PORT [-c 200] [-n 5] [-pid PID] [-mix mixed|heavy] [-retry 3] [-seed 1]
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "", "the server's address (http://127.0.0.1:PORT)")
	clients := flag.Int("c", 200, "concurrent clients")
	each := flag.Int("n", 5, "requests per client")
	pid := flag.Int("pid", 0, "the server's process id, to sample its memory")
	mix := flag.String("mix", "mixed", "mixed (half light requests) or heavy (paths, dominators, queries and SQL only)")
	seed := flag.Int64("seed", 1, "random seed")
	retries := flag.Int("retry", 0, "ask a request answered 503 with Retry-After (of at most 30 s) again after it, up to this many times, as heapx serve's page does (3)")
	flag.Parse()
	if *base == "" {
		fmt.Fprintln(os.Stderr, "usage: serveload -url http://127.0.0.1:PORT [-c 200] [-n 5] [-pid PID] [-mix mixed|heavy]")
		os.Exit(2)
	}
	api := strings.TrimSuffix(*base, "/") + "/api/v1/"
	t, err := discover(api)
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
	var peak peakRSS
	stop := make(chan struct{})
	if *pid > 0 {
		go peak.sample(*pid, stop)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients, MaxConnsPerHost: 0}, Timeout: 10 * time.Minute}
	var mu sync.Mutex
	stats := map[string]*kindStats{}
	start := time.Now()
	var wg sync.WaitGroup
	for c := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(*seed + int64(c)))
			for range *each {
				r := t.pick(rng, *mix == "heavy")
				status, d := r.do(client, api, *retries)
				mu.Lock()
				st := stats[r.kind]
				if st == nil {
					st = &kindStats{status: map[int]int{}}
					stats[r.kind] = st
				}
				st.status[status]++
				st.lat = append(st.lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	close(stop)
	fmt.Printf("%d clients x %d requests (%s mix, %d retries after a 503) in %.1f s\n", *clients, *each, *mix, *retries, wall.Seconds())
	fmt.Printf("%-11s %6s  %-28s %9s %9s %9s\n", "kind", "asked", "answers", "p50", "p95", "max")
	kinds := make([]string, 0, len(stats))
	for k := range stats {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		st := stats[k]
		slices.Sort(st.lat)
		var ans []string
		codes := make([]int, 0, len(st.status))
		for c := range st.status {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		for _, c := range codes {
			name := fmt.Sprint(c)
			if c == 0 {
				name = "failed"
			}
			ans = append(ans, fmt.Sprintf("%s:%d", name, st.status[c]))
		}
		fmt.Printf("%-11s %6d  %-28s %8.0fms %8.0fms %8.0fms\n", k, len(st.lat), strings.Join(ans, " "),
			ms(st.lat[len(st.lat)/2]), ms(st.lat[len(st.lat)*95/100]), ms(st.lat[len(st.lat)-1]))
	}
	if *pid > 0 {
		fmt.Printf("server peak RSS during the run: %d MB (sampled), VmHWM %d MB\n", peak.max>>10, vm(*pid, "VmHWM")>>10)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type kindStats struct {
	status map[int]int
	lat    []time.Duration
}

// target is what the requests ask about: classes, objects, and the
// dominator tree's nodes.
type target struct {
	classes []int
	objects []string
}

// discover asks the server for classes and objects to ask about.
func discover(api string) (*target, error) {
	var classes struct {
		Classes []struct {
			Index int `json:"index"`
			Count int `json:"count"`
		} `json:"classes"`
	}
	if err := getJSON(api+"classes?limit=200", &classes); err != nil {
		return nil, err
	}
	t := &target{}
	for _, c := range classes.Classes {
		t.classes = append(t.classes, c.Index)
		var page struct {
			Objects []struct {
				ID json.RawMessage `json:"id"`
			} `json:"objects"`
		}
		off := c.Count / 2
		if err := getJSON(fmt.Sprintf("%sclasses/%d/instances?offset=%d&limit=20", api, c.Index, off), &page); err != nil {
			return nil, err
		}
		for _, o := range page.Objects {
			t.objects = append(t.objects, strings.Trim(string(o.ID), `"`))
		}
	}
	if len(t.objects) == 0 {
		return nil, fmt.Errorf("no objects found to ask about")
	}
	return t, nil
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s: %s", url, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// request is one request of a kind.
type request struct {
	kind, path string
	body       string // POST body (SQL)
}

// sqls are statements a user of the SQL console writes: counts, a
// grouping over every object, a join.
var sqls = []string{
	"SELECT count(*) FROM node",
	"SELECT type, count(*), sum(self_size) FROM nodes_named GROUP BY type ORDER BY 3 DESC",
	"SELECT name, count(*) AS n FROM nodes_named GROUP BY name ORDER BY n DESC LIMIT 20",
	"SELECT identifier, self_size FROM node ORDER BY self_size DESC LIMIT 50",
}

func (t *target) pick(rng *rand.Rand, heavy bool) request {
	obj := func() string { return t.objects[rng.Intn(len(t.objects))] }
	cls := func() int { return t.classes[rng.Intn(len(t.classes))] }
	x := rng.Intn(100)
	if heavy {
		x = 50 + x/2
	}
	switch {
	case x < 10:
		return request{kind: "session", path: "session"}
	case x < 20:
		return request{kind: "classes", path: []string{"classes", "classes?sort=count", "classes?filter=a", "classes?order=asc"}[rng.Intn(4)]}
	case x < 30:
		return request{kind: "instances", path: fmt.Sprintf("classes/%d/instances?offset=%d", cls(), rng.Intn(1000))}
	case x < 40:
		return request{kind: "object", path: "objects/" + obj()}
	case x < 50:
		return request{kind: "references", path: fmt.Sprintf("objects/%s/%s", obj(), []string{"references", "retainers"}[rng.Intn(2)])}
	case x < 70:
		return request{kind: "paths", path: fmt.Sprintf("objects/%s/paths?k=%d", obj(), 1+rng.Intn(5))}
	case x < 82:
		return request{kind: "dominators", path: fmt.Sprintf("objects/%s/%s", obj(), []string{"children", "children/classes"}[rng.Intn(2)])}
	case x < 92:
		q := []string{"queries/top?limit=%d", "queries/suspects?limit=%d", "queries/duplicates?limit=%d", "queries/shapes?limit=%d"}[rng.Intn(4)]
		return request{kind: "queries", path: fmt.Sprintf(q, 1+rng.Intn(50))}
	}
	return request{kind: "sql", path: "sql", body: sqls[rng.Intn(len(sqls))]}
}

// do asks r, again after a 503's Retry-After up to retries times, and
// returns the last status (0 when no answer came) and the time to the end
// of the last answer from the first ask.
func (r request) do(c *http.Client, api string, retries int) (int, time.Duration) {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		var resp *http.Response
		var err error
		if r.body != "" {
			b, _ := json.Marshal(map[string]any{"query": r.body, "limit": 100})
			resp, err = c.Post(api+r.path, "application/json", bytes.NewReader(b))
		} else {
			resp, err = c.Get(api + r.path)
		}
		if err != nil {
			return 0, time.Since(start)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		var wait int
		fmt.Sscan(resp.Header.Get("Retry-After"), &wait)
		if resp.StatusCode != http.StatusServiceUnavailable || attempt == retries || wait <= 0 || wait > 30 {
			return resp.StatusCode, time.Since(start)
		}
		time.Sleep(time.Duration(wait) * time.Second)
	}
}

// peakRSS samples a process's resident memory.
type peakRSS struct{ max int }

func (p *peakRSS) sample(pid int, stop chan struct{}) {
	for {
		if v := vm(pid, "VmRSS"); v > p.max {
			p.max = v
		}
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// vm reads a field of /proc/PID/status in kB.
func vm(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			var kb int
			fmt.Sscan(v, &kb)
			return kb
		}
	}
	return 0
}
