package admit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestGate: a class runs Running requests at once and queues Waiting
// more; the next is refused at once with a Retry-After of at least a
// second; a queued request runs when a slot is freed, is refused when it
// waits past MaxWait, and gives its place up when its client goes away.
func TestGate(t *testing.T) {
	g := NewGate("paths", Limit{Running: 2, Waiting: 3, MaxWait: time.Hour})
	var releases []func()
	for range 2 {
		rel, err := g.Enter(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, rel)
	}
	// Three wait; their client of the third goes away.
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		c := context.Background()
		if i == 2 {
			c = ctx
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, err := g.Enter(c)
			if err == nil {
				rel()
			}
			got <- err
		}()
	}
	for g.waiting.Load() != 3 {
		time.Sleep(time.Millisecond)
	}
	var busy *BusyError
	if _, err := g.Enter(context.Background()); !errors.As(err, &busy) || busy.RetryAfter < 1 || busy.Waited {
		t.Errorf("a sixth request: %v, want refused at once", err)
	}
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("the request whose client went away: %v", err)
	}
	releases[0]()
	releases[1]()
	wg.Wait()
	close(got)
	for err := range got {
		if err != nil {
			t.Errorf("a queued request: %v", err)
		}
	}
	if g.waiting.Load() != 0 || len(g.slots) != 0 {
		t.Errorf("%d waiting, %d running after every request ended", g.waiting.Load(), len(g.slots))
	}
	// A request that waits past MaxWait is refused, saying so.
	short := NewGate("sql", Limit{Running: 1, Waiting: 1, MaxWait: 20 * time.Millisecond})
	rel, _ := short.Enter(context.Background())
	if _, err := short.Enter(context.Background()); !errors.As(err, &busy) || !busy.Waited {
		t.Errorf("a request waiting past MaxWait: %v", err)
	}
	rel()
}
