package capture

import (
	"context"
	"os"
	"time"
)

// Series says when to take the snapshots of a series, the input of
// memlab's three-snapshot leak detection (`heapx report` with baselines).
// Each trigger takes one snapshot; the series ends after Count.
type Series struct {
	Count int           // snapshots to take
	Every time.Duration // one every Every, the first Every after the start
	// Grow takes one when the heap has grown by this fraction (0.2 for
	// 20%) since the last snapshot, or since the start for the first.
	Grow float64
	// Poll is how often Grow measures the heap; 0 means every second.
	Poll    time.Duration
	Signals <-chan os.Signal // one for each signal received
}

// Gauge measures a target's heap, for Series.Grow.
type Gauge interface {
	// HeapUsed returns the heap's used bytes, garbage included.
	HeapUsed(ctx context.Context) (int64, error)
	// CollectGarbage runs a full collection.
	CollectGarbage(ctx context.Context) error
}

// A heap measure over the Grow threshold is checked again after a full
// collection, as garbage also counts; when garbage alone crossed it, the
// next measure waits twice as long, up to maxPollFactor times Poll, so a
// program that makes much garbage is not collected every second.
const maxPollFactor = 30

// Run takes the series: take(ctx, i) for i = 1..Count, each when s says.
// It returns the first error of take, of measuring the heap, or the
// cause ctx was cancelled with (an interrupt, the target's exit).
func (s Series) Run(ctx context.Context, g Gauge, take func(ctx context.Context, i int) error) error {
	var every <-chan time.Time
	if s.Every > 0 {
		t := time.NewTicker(s.Every)
		defer t.Stop()
		every = t.C
	}
	var timer *time.Timer
	var polled <-chan time.Time
	var ref int64
	poll := s.Poll
	if poll <= 0 {
		poll = time.Second
	}
	wait := poll
	// measure is the heap's size after a full collection.
	measure := func() (int64, error) {
		if err := g.CollectGarbage(ctx); err != nil {
			return 0, err
		}
		return g.HeapUsed(ctx)
	}
	if s.Grow > 0 {
		var err error
		if ref, err = measure(); err != nil {
			return causeOr(ctx, err)
		}
		timer = time.NewTimer(wait)
		defer timer.Stop()
		polled = timer.C
	}
	grown := func(used int64) bool { return float64(used) >= float64(ref)*(1+s.Grow) }
	for i := 1; i <= s.Count; {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-every:
		case <-s.Signals:
		case <-polled:
			used, err := g.HeapUsed(ctx)
			if err == nil && grown(used) {
				used, err = measure()
				if err == nil && !grown(used) {
					wait = min(2*wait, maxPollFactor*poll)
				}
			}
			if err != nil {
				return causeOr(ctx, err)
			}
			if !grown(used) {
				timer.Reset(wait)
				continue
			}
			wait = poll
		}
		if err := take(ctx, i); err != nil {
			return err
		}
		i++
		if s.Grow > 0 {
			// A snapshot collects garbage first: what is used now is live.
			var err error
			if ref, err = g.HeapUsed(ctx); err != nil {
				return causeOr(ctx, err)
			}
			timer.Reset(wait)
		}
	}
	return nil
}

// causeOr returns the cause ctx was cancelled with, which explains err
// better (the target exited, the user interrupted), or else err.
func causeOr(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return err
}
