package capture

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/heapx/heapx/capture/cdp"
)

// SamplingStats describes a sampling heap profile heapx wrote.
type SamplingStats struct {
	Samples int   // samples in the profile
	Bytes   int64 // their sizes summed: the allocation they stand for
	// Collected says whether the profile keeps samples of objects the
	// garbage collector freed (V8 11 and later), so it shows churn; when
	// false it has only the objects alive when it stopped.
	Collected bool
	Finished  bool // the program finished before the time was up
}

// Sampling runs V8's sampling heap profiler for d (HeapProfiler.
// startSampling) and writes the profile it returns (stopSampling) to
// path, as JSON in the form `node --heap-prof` writes and DevTools loads
// (.heapprofile): {"head": call tree with selfSize per node, "samples":
// [{size, nodeId, ordinal}]}.
//
// It asks V8 to keep the samples of objects collected by major and minor
// GCs, so the profile shows what was allocated, not only what survived;
// a target whose protocol lacks those options (V8 before 11: Node.js 18
// and older) gets a profile of survivors, and Stats.Collected says so.
// The overhead is small (V8 samples one allocation per interval bytes on
// average). If the capture fails or ctx ends first, sampling is stopped
// before Sampling returns, unless the target is gone.
func (s *V8) Sampling(ctx context.Context, path string, d time.Duration, interval int, p Progress) (_ SamplingStats, err error) {
	if p == nil {
		p = noProgress{}
	}
	var st SamplingStats
	st.Collected, err = s.hasCollectedOption(ctx)
	if err != nil {
		return st, s.cause(ctx, err)
	}
	params := map[string]any{"samplingInterval": interval}
	if st.Collected {
		params["includeObjectsCollectedByMajorGC"] = true
		params["includeObjectsCollectedByMinorGC"] = true
	}
	err = s.conn.Call(ctx, "HeapProfiler.startSampling", params, nil)
	var ce *cdp.Error
	if st.Collected && errors.As(err, &ce) && ce.Code == cdp.CodeInvalidParams {
		// Listed but refused: profile the survivors rather than nothing.
		st.Collected = false
		delete(params, "includeObjectsCollectedByMajorGC")
		delete(params, "includeObjectsCollectedByMinorGC")
		err = s.conn.Call(ctx, "HeapProfiler.startSampling", params, nil)
	}
	if err != nil {
		return st, s.cause(ctx, err)
	}
	defer func() {
		if err != nil {
			s.StopProfiling()
		}
	}()
	if err := s.RunProgram(ctx); err != nil {
		return st, err
	}
	if st.Finished, err = s.wait(ctx, d, "sampling allocations", p); err != nil {
		return st, err
	}
	var r struct {
		Profile json.RawMessage `json:"profile"`
	}
	if err := s.conn.Call(ctx, "HeapProfiler.stopSampling", nil, &r); err != nil {
		return st, s.cause(ctx, err)
	}
	var prof struct {
		Head    json.RawMessage `json:"head"`
		Samples []struct {
			Size float64 `json:"size"`
		} `json:"samples"`
	}
	if err := json.Unmarshal(r.Profile, &prof); err != nil || prof.Head == nil {
		return st, fmt.Errorf("HeapProfiler.stopSampling: the target's answer (%d bytes) is not a sampling heap profile", len(r.Profile))
	}
	st.Samples = len(prof.Samples)
	for _, x := range prof.Samples {
		st.Bytes += int64(x.Size)
	}
	p.Phase("writing "+path, int64(len(r.Profile)))
	_, err = writeFile(path, func(w io.Writer) error {
		_, err := w.Write(r.Profile)
		return err
	})
	return st, err
}

// hasCollectedOption reports whether the target's startSampling takes
// includeObjectsCollectedByMajorGC, as its endpoint's protocol lists it.
// A target reached by ws:// URL alone may have no listing (a proxy): then
// the options are tried, and a refusal falls back.
func (s *V8) hasCollectedOption(ctx context.Context) (bool, error) {
	ok, err := cdp.HasParameter(ctx, s.hostPort, "HeapProfiler", "startSampling", "includeObjectsCollectedByMajorGC")
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return true, nil
	}
	return ok, nil
}
