package capture

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"
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

// record applies one heapStatsUpdate: triplets (interval index, live
// count, live size) for the intervals whose numbers changed.
func (st *TimelineStats) record(update []int64) {
	for i := 0; i+2 < len(update); i += 3 {
		k := int(update[i])
		if k < 0 {
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
// (.heaptimeline) as it streams in.
//
// The program runs slower while tracked (every allocation records its
// stack, and V8 walks the heap for each update). If the capture fails or
// ctx ends first, tracking is stopped before Timeline returns, unless the
// target is gone.
func (s *V8) Timeline(ctx context.Context, path string, d time.Duration, p Progress) (_ TimelineStats, err error) {
	if p == nil {
		p = noProgress{}
	}
	var mu sync.Mutex
	var st TimelineStats
	defer s.conn.On("HeapProfiler.heapStatsUpdate", func(params json.RawMessage) {
		var u struct {
			StatsUpdate []int64 `json:"statsUpdate"`
		}
		if json.Unmarshal(params, &u) == nil {
			mu.Lock()
			st.record(u.StatsUpdate)
			mu.Unlock()
		}
	})()
	defer s.conn.On("HeapProfiler.lastSeenObjectId", func(params json.RawMessage) {
		var u struct {
			LastSeenObjectID uint64 `json:"lastSeenObjectId"`
		}
		if json.Unmarshal(params, &u) == nil {
			mu.Lock()
			st.Updates++
			st.LastSeenID = u.LastSeenObjectID
			mu.Unlock()
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
	start := time.Now()
	finished, err := s.wait(ctx, d, "tracking allocations", p)
	if err != nil {
		return TimelineStats{}, err
	}
	tracked := time.Since(start)
	if _, err := s.streamSnapshot(ctx, path, p, "HeapProfiler.stopTrackingHeapObjects"); err != nil {
		return TimelineStats{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	st.Duration, st.Finished = tracked, finished
	return st, nil
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
