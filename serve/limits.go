package serve

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A request class is a kind of request that costs the server CPU seconds
// or hundreds of megabytes each (measured on a 1 GB snapshot, in
// docs/benchmarks.md): a few of one class run at once, a bounded number
// wait for their turn, and the rest are answered 503 with a Retry-After,
// so many clients at once cost the server time, not memory.
const (
	ClassPaths      = "paths"      // an object's retainer paths: a search with its own labels (14 MB for 14M objects)
	ClassDominators = "dominators" // an object's children in the dominator tree: the first ask scans the tree
	ClassQueries    = "queries"    // a registry query with new arguments, the comparison: seconds and GBs each
	ClassSQL        = "sql"        // an SQL statement: up to 30 s of SQLite; the first builds the SQL copy
)

// Limit is how many requests of a class run at once and how many may
// wait; MaxWait is how long one waits before it is answered 503.
type Limit struct {
	Running, Waiting int
	MaxWait          time.Duration
}

// DefaultLimits are heapx serve's: paths and dominator-tree requests one
// per core (their work is a CPU-bound walk), queries and SQL one at a
// time (each can take every core's memory bandwidth and hundreds of MB);
// waiting requests cost a goroutine each, and are enough for the bursts
// of several pages at once.
func DefaultLimits() map[string]Limit {
	cpu := runtime.GOMAXPROCS(0)
	return map[string]Limit{
		ClassPaths:      {Running: cpu, Waiting: 64, MaxWait: time.Minute},
		ClassDominators: {Running: cpu, Waiting: 64, MaxWait: time.Minute},
		ClassQueries:    {Running: 1, Waiting: 16, MaxWait: 2 * time.Minute},
		ClassSQL:        {Running: 1, Waiting: 16, MaxWait: 2 * time.Minute},
	}
}

// gate admits a class's requests: a semaphore of Running slots and a
// count of those waiting for one.
type gate struct {
	class   string
	limit   Limit
	slots   chan struct{}
	waiting atomic.Int32

	mu   sync.Mutex
	mean float64 // seconds a request of the class took, a moving average
}

func newGate(class string, l Limit) *gate {
	l.Running = max(l.Running, 1)
	if l.MaxWait <= 0 {
		l.MaxWait = time.Minute
	}
	return &gate{class: class, limit: l, slots: make(chan struct{}, l.Running)}
}

// errBusy is a request refused: its class has as many waiting as it may.
type errBusy struct {
	class      string
	retryAfter int // seconds
	waited     bool
}

func (e *errBusy) Error() string {
	if e.waited {
		return fmt.Sprintf("heapx serve is busy with %s requests and this one waited too long for its turn: ask again in %d s", e.class, e.retryAfter)
	}
	return fmt.Sprintf("heapx serve is busy with %s requests (as many as it runs and queues): ask again in %d s", e.class, e.retryAfter)
}

// enter waits for a slot and returns the function that gives it back;
// it fails with errBusy when the queue is full or the wait too long, and
// with ctx's error when the client goes away.
func (g *gate) enter(ctx context.Context) (func(), error) {
	select {
	case g.slots <- struct{}{}:
		return g.leave(time.Now()), nil
	default:
	}
	if int(g.waiting.Add(1)) > g.limit.Waiting {
		g.waiting.Add(-1)
		return nil, &errBusy{class: g.class, retryAfter: g.retryAfter()}
	}
	defer g.waiting.Add(-1)
	t := time.NewTimer(g.limit.MaxWait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.leave(time.Now()), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
		return nil, &errBusy{class: g.class, retryAfter: g.retryAfter(), waited: true}
	}
}

// leave returns the function that frees the slot taken at start and
// keeps the class's mean time.
func (g *gate) leave(start time.Time) func() {
	return func() {
		d := time.Since(start).Seconds()
		g.mu.Lock()
		if g.mean == 0 {
			g.mean = d
		} else {
			g.mean = 0.8*g.mean + 0.2*d
		}
		g.mu.Unlock()
		<-g.slots
	}
}

// retryAfter estimates when a slot will be free for a new request: the
// queue ahead of it at the class's mean time, run Running at a time.
func (g *gate) retryAfter() int {
	g.mu.Lock()
	mean := g.mean
	g.mu.Unlock()
	ahead := float64(int(g.waiting.Load()) + g.limit.Running)
	s := math.Ceil(mean * ahead / float64(g.limit.Running))
	return int(min(max(s, 1), 300))
}

// gated wraps an API function so that it runs when its class's gate lets
// it; a refusal is a 503 with Retry-After.
func (h *handler) gated(class string, fn func(r *http.Request) (any, error)) func(r *http.Request) (any, error) {
	g := h.gates[class]
	if g == nil {
		return fn
	}
	return func(r *http.Request) (any, error) {
		release, err := g.enter(r.Context())
		if err != nil {
			return nil, err
		}
		defer release()
		return fn(r)
	}
}

// writeBusy answers a refused request: 503, Retry-After, and the JSON
// error every API error is.
func (h *handler) writeBusy(w http.ResponseWriter, e *errBusy) {
	w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	h.fail(w, http.StatusServiceUnavailable, e.Error())
}
