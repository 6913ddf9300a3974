// The heap statistics side file of an allocation timeline
// (FILE.heaptimeline.stats.jsonl), which heapx capture --timeline writes
// beside the timeline: V8's heapStatsUpdate stream, which the
// .heaptimeline does not keep.

package v8

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// HeapStatsFormat and HeapStatsVersion name the side file's format in its
// first line; a reader refuses a version it does not know.
const (
	HeapStatsFormat  = "heapx.heapstats"
	HeapStatsVersion = 1
)

// HeapStatsPath is the side file of the timeline at path: the timeline's
// name without ".gz", plus ".stats.jsonl" (app.heaptimeline.gz gives
// app.heaptimeline.stats.jsonl).
func HeapStatsPath(path string) string { return formats.SidePath(path, ".stats.jsonl") }

// heapStatsLine is one update: V8's timestamp in ms, the last object id
// assigned, and the changed intervals as V8 sends them, flat triplets of
// interval index, live count and live size.
type heapStatsLine struct {
	T      float64  `json:"t"`
	LastID uint64   `json:"last_id"`
	Stats  []uint64 `json:"stats"`
}

// WriteHeapStatsHeader writes the side file's first line.
func WriteHeapStatsHeader(w io.Writer) error {
	return formats.WriteSideHeader(w, HeapStatsFormat, HeapStatsVersion)
}

// WriteHeapStatsUpdate writes one update as one line.
func WriteHeapStatsUpdate(w io.Writer, u model.HeapStatsUpdate) error {
	l := heapStatsLine{T: u.TimestampMillis, LastID: u.LastSeenID, Stats: make([]uint64, 0, 3*len(u.Intervals))}
	for _, s := range u.Intervals {
		l.Stats = append(l.Stats, uint64(s.Index), uint64(s.Count), s.Size)
	}
	return formats.WriteJSONLine(w, l)
}

// maxHeapStatsLine bounds one line of the side file: an update lists at
// most every interval (one per 50 ms) once.
const maxHeapStatsLine = 64 << 20

// ReadHeapStats reads a side file (named file in errors): its header,
// then one update per line, in order. Timestamps must not go back and an
// interval index must name an interval that exists by then (one per
// update).
func ReadHeapStats(r io.Reader, file string) ([]model.HeapStatsUpdate, error) {
	var us []model.HeapStatsUpdate
	err := formats.ReadSideFile(r, file, HeapStatsFormat, HeapStatsVersion, maxHeapStatsLine, func(b []byte) error {
		var l heapStatsLine
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("want an update {\"t\":MS,\"last_id\":ID,\"stats\":[INDEX,COUNT,SIZE,...]}: %v", err)
		}
		if len(l.Stats)%3 != 0 {
			return fmt.Errorf("stats has %d numbers, not triplets (interval, count, size)", len(l.Stats))
		}
		if n := len(us); n > 0 && (l.T < us[n-1].TimestampMillis || l.LastID < us[n-1].LastSeenID) {
			return fmt.Errorf("update at %v ms, id %d, is before the one above it (%v ms, id %d)", l.T, l.LastID, us[n-1].TimestampMillis, us[n-1].LastSeenID)
		}
		u := model.HeapStatsUpdate{TimestampMillis: l.T, LastSeenID: l.LastID, Intervals: make([]model.IntervalStats, len(l.Stats)/3)}
		for i := range u.Intervals {
			k, c := l.Stats[3*i], l.Stats[3*i+1]
			if k > uint64(len(us)) {
				return fmt.Errorf("interval %d in update %d (there are %d intervals by then)", k, len(us), len(us)+1)
			}
			if c > 1<<32-1 {
				return fmt.Errorf("count %d of interval %d is too large", c, k)
			}
			u.Intervals[i] = model.IntervalStats{Index: uint32(k), Count: uint32(c), Size: l.Stats[3*i+2]}
		}
		us = append(us, u)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return us, nil
}

// heapStatsBeside reads the heap statistics side file of the timeline at
// path (HeapStatsPath), nil when there is none.
func heapStatsBeside(path string) *model.HeapStats {
	file := HeapStatsPath(path)
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	hs := &model.HeapStats{File: file}
	if err != nil {
		hs.Err = err
		return hs
	}
	defer f.Close()
	hs.Updates, hs.Err = ReadHeapStats(f, f.Name())
	return hs
}
