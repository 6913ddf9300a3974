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
	// The profile comes in one reply, of hundreds of MB after a long
	// run: it goes to the file as it arrives.
	p.Phase("writing "+path, -1)
	_, err = writeFile(path, func(w io.Writer) error {
		return s.cause(ctx, s.conn.CallStream(ctx, "HeapProfiler.stopSampling", nil, "profile", func(profile io.Reader) error {
			var err error
			st.Samples, st.Bytes, err = copyProfile(w, profile)
			return err
		}))
	})
	return st, err
}

// copyProfile copies a sampling heap profile to w, counting its samples
// and their bytes on the way: a reader of the copy checks it is one.
func copyProfile(w io.Writer, profile io.Reader) (samples int, bytes int64, err error) {
	pr, pw := io.Pipe()
	type counted struct {
		samples int
		bytes   int64
		err     error
	}
	done := make(chan counted, 1)
	go func() {
		var c counted
		c.samples, c.bytes, c.err = countSamples(pr)
		io.Copy(io.Discard, pr) // whatever follows a bad profile
		done <- c
	}()
	_, err = io.Copy(io.MultiWriter(w, pw), profile)
	pw.CloseWithError(err)
	c := <-done
	switch {
	case err != nil:
		return 0, 0, err
	case c.err != nil:
		return 0, 0, fmt.Errorf("HeapProfiler.stopSampling: the target's answer is not a sampling heap profile: %w", c.err)
	}
	return c.samples, c.bytes, nil
}

// countSamples reads a sampling heap profile, {"head": call tree,
// "samples": [{size, nodeId, ordinal}]}, token by token (never whole),
// and counts its samples and their bytes.
func countSamples(r io.Reader) (samples int, bytes int64, err error) {
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return 0, 0, err
	}
	head := false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0, err
		}
		switch key {
		case "samples":
			if err := expectDelim(dec, '['); err != nil {
				return 0, 0, err
			}
			for dec.More() {
				var s struct {
					Size float64 `json:"size"`
				}
				if err := dec.Decode(&s); err != nil {
					return 0, 0, err
				}
				samples++
				bytes += int64(s.Size)
			}
			if err := expectDelim(dec, ']'); err != nil {
				return 0, 0, err
			}
		default:
			head = head || key == "head"
			if err := skipValue(dec); err != nil {
				return 0, 0, err
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return 0, 0, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return 0, 0, errors.New("more after the profile's end")
	}
	if !head {
		return 0, 0, errors.New(`no "head" call tree`)
	}
	return samples, bytes, nil
}

// expectDelim reads the next token, which must be d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("%v where %v was expected", t, d)
	}
	return nil
}

// skipValue reads past the next value, token by token: a call tree of
// any size or depth costs no memory.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// hasCollectedOption reports whether the target's startSampling takes
// includeObjectsCollectedByMajorGC, as its endpoint's protocol lists it.
// A target reached by ws:// URL alone may have no listing (a proxy): then
// the options are tried, and a refusal falls back.
func (s *V8) hasCollectedOption(ctx context.Context) (bool, error) {
	lctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	ok, err := cdp.HasParameter(lctx, s.hostPort, "HeapProfiler", "startSampling", "includeObjectsCollectedByMajorGC")
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return true, nil
	}
	return ok, nil
}
