package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/heapx/heapx/formats/v8"
	"github.com/heapx/heapx/model"
)

// TimelineStats is what the target reported while it tracked allocations:
// V8 sends, about every 50 ms, the live count and size of the objects of
// each id interval (heapStatsUpdate, one interval per update) and the
// last object id it assigned (lastSeenObjectId). The .heaptimeline file
// keeps the intervals' bounds (its samples) and the objects still alive
// at the end; what lived in between is only in these updates.
type TimelineStats struct {
	Updates         int    // lastSeenObjectId events: the timeline's intervals
	LastSeenID      uint64 // the last object id assigned
	StartObjects    int64  // live objects when tracking started (interval 0)
	StartSize       int64
	Objects         int64 // live objects at the last update
	Size            int64
	PeakObjects     int64         // the most live objects at any update
	PeakSize        int64         // the live size at that update
	Duration        time.Duration // how long allocations were tracked
	Finished        bool          // the program finished before the time was up
	intervalObjects []int64       // per interval, its live count at the last update
	intervalSizes   []int64
}

// validInterval reports whether k can be an interval's index: V8 opens
// one interval per update, so an index past the updates seen is a
// target's lie, which must not make heapx allocate.
func (st *TimelineStats) validInterval(k int64) bool {
	return k >= 0 && k <= int64(st.Updates)+1
}

// record applies one heapStatsUpdate: triplets (interval index, live
// count, live size) for the intervals whose numbers changed.
func (st *TimelineStats) record(update []int64) {
	for i := 0; i+2 < len(update); i += 3 {
		k := int(update[i])
		if !st.validInterval(update[i]) {
			continue
		}
		for len(st.intervalObjects) <= k {
			st.intervalObjects = append(st.intervalObjects, 0)
			st.intervalSizes = append(st.intervalSizes, 0)
		}
		st.intervalObjects[k], st.intervalSizes[k] = update[i+1], update[i+2]
	}
	st.Objects, st.Size = 0, 0
	for k := range st.intervalObjects {
		st.Objects += st.intervalObjects[k]
		st.Size += st.intervalSizes[k]
	}
	if len(st.intervalObjects) > 0 {
		st.StartObjects, st.StartSize = st.intervalObjects[0], st.intervalSizes[0]
	}
	if st.Objects > st.PeakObjects {
		st.PeakObjects, st.PeakSize = st.Objects, st.Size
	}
}

// Timeline records an allocation timeline for d, as DevTools' "Allocation
// instrumentation on timeline" does: V8 tracks every allocation with its
// stack (startTrackingHeapObjects with trackAllocations) for d, then
// takes a snapshot that carries the allocation call tree and the
// timeline's samples (stopTrackingHeapObjects), which is written to path
// (.heaptimeline) as it streams in. V8's heap statistics updates go, as
// they come, to the side file v8.HeapStatsPath(path), renamed into place
// after the timeline: without the timeline, no side file.
//
// The program runs slower while tracked (every allocation records its
// stack, and V8 walks the heap for each update). Node's inspector keeps a
// tracked program alive after it finished (the updates' timer holds its
// event loop), so Timeline asks it every half second whether it is idle
// with nothing left to do (watchIdle), and ends early when it is. If the
// capture fails or ctx ends first, tracking is stopped before Timeline
// returns, unless the target is gone.
func (s *V8) Timeline(ctx context.Context, path string, d time.Duration, p Progress) (st TimelineStats, err error) {
	if p == nil {
		p = noProgress{}
	}
	_, err = writeFile(v8.HeapStatsPath(path), func(w io.Writer) error {
		st, err = s.timeline(ctx, path, d, p, w)
		return err
	})
	if err != nil {
		if _, serr := os.Stat(path); serr == nil && st.Updates > 0 {
			// The timeline was written, its side file was not.
			os.Remove(path)
		}
		return TimelineStats{}, err
	}
	return st, nil
}

// timeline is Timeline with its side file open as stats.
func (s *V8) timeline(ctx context.Context, path string, d time.Duration, p Progress, stats io.Writer) (_ TimelineStats, err error) {
	var mu sync.Mutex
	var st TimelineStats
	var update model.HeapStatsUpdate // what V8 sent since its last lastSeenObjectId
	var statsErr error
	closed := false
	if err := v8.WriteHeapStatsHeader(stats); err != nil {
		return TimelineStats{}, err
	}
	defer func() {
		mu.Lock()
		closed = true // the file is the caller's again
		mu.Unlock()
	}()
	defer s.conn.On("HeapProfiler.heapStatsUpdate", func(params json.RawMessage) {
		var u struct {
			StatsUpdate []int64 `json:"statsUpdate"`
		}
		if json.Unmarshal(params, &u) == nil {
			mu.Lock()
			st.record(u.StatsUpdate)
			for i := 0; i+2 < len(u.StatsUpdate) && len(update.Intervals) <= maxUpdateIntervals(st.Updates); i += 3 {
				if k := u.StatsUpdate[i]; st.validInterval(k) {
					update.Intervals = append(update.Intervals, model.IntervalStats{Index: uint32(k), Count: uint32(u.StatsUpdate[i+1]), Size: uint64(u.StatsUpdate[i+2])})
				}
			}
			mu.Unlock()
		}
	})()
	defer s.conn.On("HeapProfiler.lastSeenObjectId", func(params json.RawMessage) {
		var u struct {
			LastSeenObjectID uint64  `json:"lastSeenObjectId"`
			Timestamp        float64 `json:"timestamp"`
		}
		if json.Unmarshal(params, &u) == nil {
			mu.Lock()
			defer mu.Unlock()
			st.Updates++
			st.LastSeenID = u.LastSeenObjectID
			// V8 ends each update with this event; the statistics
			// before it (one or more events) are the update's.
			update.TimestampMillis, update.LastSeenID = u.Timestamp, u.LastSeenObjectID
			if !closed && statsErr == nil {
				statsErr = v8.WriteHeapStatsUpdate(stats, update)
			}
			update = model.HeapStatsUpdate{}
		}
	})()
	if err := s.conn.Call(ctx, "HeapProfiler.startTrackingHeapObjects", map[string]bool{"trackAllocations": true}, nil); err != nil {
		return TimelineStats{}, s.cause(ctx, err)
	}
	defer func() {
		if err != nil {
			s.StopProfiling()
		}
	}()
	if err := s.RunProgram(ctx); err != nil {
		return TimelineStats{}, err
	}
	stopIdle := s.watchIdle(ctx)
	start := time.Now()
	finished, err := s.wait(ctx, d, "tracking allocations", p)
	stopIdle()
	if err != nil {
		return TimelineStats{}, err
	}
	tracked := time.Since(start)
	if _, err := s.streamSnapshot(ctx, path, p, "HeapProfiler.stopTrackingHeapObjects"); err != nil {
		return TimelineStats{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	closed = true
	if statsErr != nil {
		return st, fmt.Errorf("writing %s: %w", v8.HeapStatsPath(path), statsErr)
	}
	st.Duration, st.Finished = tracked, finished
	return st, nil
}

// maxUpdateIntervals bounds the statistics one update collects: each
// interval open by then, a few times over (V8 sends each once).
func maxUpdateIntervals(updates int) int { return 4*(updates+2) + 1024 }

// idleCheck is true in a Node.js program that has finished: nothing keeps
// its event loop alive (no timer, request or open handle but the stdio
// streams, which Node lists though they hold nothing), and no JavaScript runs beneath the check (Node
// runs a command between two statements of a busy program too; the
// stack then has their frames beneath the check's two).
const idleCheck = `(() => {
  if (typeof process !== 'object' || typeof process.getActiveResourcesInfo !== 'function' || typeof process._getActiveHandles !== 'function') return false;
  const timers = process.getActiveResourcesInfo().filter((r) => r === 'Timeout' || r === 'Immediate').length;
  const stdio = (h) => [h.fd, h._handle && h._handle.fd].some((fd) => fd === 0 || fd === 1 || fd === 2);
  const handles = process._getActiveHandles().filter((h) => !stdio(h)).length;
  return timers + handles + process._getActiveRequests().length === 0 && String(new Error().stack).split('\n').length <= 3;
})()`

// idleEvery is how often watchIdle asks.
const idleEvery = 500 * time.Millisecond

// watchIdle asks the program, every idleEvery, whether it has finished
// (idleCheck), and says so on Finished once it answers yes twice in a
// row after a no: a program whose main script has not run yet looks
// finished too. Node's own notice (NodeRuntime.waitingForDisconnect) never comes
// while allocations are tracked: the inspector's update timer keeps the
// event loop alive. A Chrome page, with no process, never answers yes.
func (s *V8) watchIdle(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(idleEvery)
		defer tick.Stop()
		yes, busy := 0, false
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.ended:
				return
			case <-tick.C:
			}
			var r struct {
				Result struct {
					Value bool `json:"value"`
				} `json:"result"`
			}
			// Not ctx: the websocket closes when a write's context ends
			// in the middle of it.
			cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			err := s.conn.Call(cctx, "Runtime.evaluate", map[string]any{"expression": idleCheck, "silent": true, "returnByValue": true}, &r)
			ccancel()
			if err != nil || !r.Result.Value {
				busy = busy || err == nil
				yes = 0
				continue
			}
			if !busy {
				continue
			}
			if yes++; yes == 2 {
				s.endOnce.Do(func() { close(s.ended) })
				return
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// wait waits for d, showing the time passing as phase label. It returns
// early when the program finishes, saying so (its heap is still there to
// read, a profile to stop), and with the reason when ctx ends or the
// connection closes.
func (s *V8) wait(ctx context.Context, d time.Duration, label string, p Progress) (finished bool, err error) {
	p.Phase(fmt.Sprintf("%s for %v", label, d), d.Milliseconds())
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	end := time.NewTimer(d)
	defer end.Stop()
	for {
		select {
		case <-end.C:
			p.Set(d.Milliseconds())
			return false, nil
		case <-tick.C:
			p.Set(time.Since(start).Milliseconds())
		case <-ctx.Done():
			return false, context.Cause(ctx)
		case <-s.ended:
			return true, nil
		case <-s.conn.Done():
			return false, s.cause(ctx, s.Why())
		}
	}
}
