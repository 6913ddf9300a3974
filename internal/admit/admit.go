// Package admit bounds the heavy work a server does at once: requests are
// of classes (paths, dominator-tree expansions, registry queries, SQL,
// opening a dump), each class runs a few at a time and queues a bounded
// number, and the rest are refused with the seconds after which to ask
// again. heapx serve answers a refusal 503 with Retry-After, heapx mcp
// with a tool error saying when to call again: many clients at once cost
// the server time, not memory.
package admit

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Request classes: each costs a server CPU seconds or hundreds of
// megabytes (measured on a 1 GB snapshot, docs/benchmarks.md).
const (
	Paths      = "paths"      // an object's retainer paths: a search with its own labels (14 MB for 14M objects)
	Dominators = "dominators" // an object's children in the dominator tree: the first ask scans the tree
	Queries    = "queries"    // a registry query with new arguments, the comparison: seconds and hundreds of MB each
	SQL        = "sql"        // an SQL statement: up to 30 s of SQLite; the first builds the SQL copy
	Open       = "open"       // reading and analysing a dump (heapx mcp's open): about the dump's size in memory
)

// Limit is how many requests of a class run at once and how many may
// wait; MaxWait is how long one waits before it is refused.
type Limit struct {
	Running, Waiting int
	MaxWait          time.Duration
}

// Defaults are heapx's limits: paths and dominator-tree requests one per
// core (their work is a CPU-bound walk), queries, SQL and opening a dump
// one at a time (each can take hundreds of MB, an open the dump's size);
// waiting requests cost a goroutine each, and are enough for the bursts
// of several pages at once.
func Defaults() map[string]Limit {
	cpu := runtime.GOMAXPROCS(0)
	return map[string]Limit{
		Paths:      {Running: cpu, Waiting: 64, MaxWait: time.Minute},
		Dominators: {Running: cpu, Waiting: 64, MaxWait: time.Minute},
		Queries:    {Running: 1, Waiting: 16, MaxWait: 2 * time.Minute},
		SQL:        {Running: 1, Waiting: 16, MaxWait: 2 * time.Minute},
		Open:       {Running: 1, Waiting: 8, MaxWait: 10 * time.Minute},
	}
}

// Gates returns a gate per class of limits.
func Gates(limits map[string]Limit) map[string]*Gate {
	g := map[string]*Gate{}
	for class, l := range limits {
		g[class] = NewGate(class, l)
	}
	return g
}

// Gate admits a class's requests: a semaphore of Running slots and a
// count of those waiting for one.
type Gate struct {
	class   string
	limit   Limit
	slots   chan struct{}
	waiting atomic.Int32

	mu   sync.Mutex
	mean float64 // seconds a request of the class took, a moving average
}

// NewGate returns the gate of class with limit l.
func NewGate(class string, l Limit) *Gate {
	l.Running = max(l.Running, 1)
	if l.MaxWait <= 0 {
		l.MaxWait = time.Minute
	}
	return &Gate{class: class, limit: l, slots: make(chan struct{}, l.Running)}
}

// BusyError is a request refused: its class had as many waiting as it
// may, or it waited past the class's MaxWait.
type BusyError struct {
	Class string
	// RetryAfter is the seconds after which a slot should be free.
	RetryAfter int
	// Waited says the request waited its MaxWait.
	Waited bool
}

func (e *BusyError) Error() string {
	if e.Waited {
		return fmt.Sprintf("heapx is busy with %s requests and this one waited too long for its turn: ask again in %d s", e.Class, e.RetryAfter)
	}
	return fmt.Sprintf("heapx is busy with %s requests (as many as it runs and queues): ask again in %d s", e.Class, e.RetryAfter)
}

// Enter waits for a slot and returns the function that gives it back;
// it fails with a *BusyError when the queue is full or the wait too long,
// and with ctx's error when the client goes away.
func (g *Gate) Enter(ctx context.Context) (func(), error) {
	select {
	case g.slots <- struct{}{}:
		return g.leave(time.Now()), nil
	default:
	}
	if int(g.waiting.Add(1)) > g.limit.Waiting {
		g.waiting.Add(-1)
		return nil, &BusyError{Class: g.class, RetryAfter: g.retryAfter()}
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
		return nil, &BusyError{Class: g.class, RetryAfter: g.retryAfter(), Waited: true}
	}
}

// leave returns the function that frees the slot taken at start and
// keeps the class's mean time.
func (g *Gate) leave(start time.Time) func() {
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
func (g *Gate) retryAfter() int {
	g.mu.Lock()
	mean := g.mean
	g.mu.Unlock()
	ahead := float64(int(g.waiting.Load()) + g.limit.Running)
	s := math.Ceil(mean * ahead / float64(g.limit.Running))
	return int(min(max(s, 1), 300))
}
