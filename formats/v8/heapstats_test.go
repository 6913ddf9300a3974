package v8

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/heapx/heapx/formats"
	"github.com/heapx/heapx/model"
)

// heapStatsSample is a side file as heapx capture --timeline writes it
// (its first lines, from a capture of testdata/capture/timeline-phases.js,
// then a hand-made update with two intervals split over V8's events).
const heapStatsSample = `{"format":"heapx.heapstats","version":1}
{"t":1795578431718.349,"last_id":72067,"stats":[0,35735,2700824]}
{"t":1795578431767.448,"last_id":72067,"stats":[0,35731,2697480]}
{"t":1795578431820.847,"last_id":72067,"stats":[]}
{"t":1795578431871.5,"last_id":80101,"stats":[0,35700,2690000,3,4031,161240]}
`

func TestReadHeapStats(t *testing.T) {
	us, err := ReadHeapStats(strings.NewReader(heapStatsSample), "p.stats.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	want := []model.HeapStatsUpdate{
		{TimestampMillis: 1795578431718.349, LastSeenID: 72067, Intervals: []model.IntervalStats{{Index: 0, Count: 35735, Size: 2700824}}},
		{TimestampMillis: 1795578431767.448, LastSeenID: 72067, Intervals: []model.IntervalStats{{Index: 0, Count: 35731, Size: 2697480}}},
		{TimestampMillis: 1795578431820.847, LastSeenID: 72067, Intervals: []model.IntervalStats{}},
		{TimestampMillis: 1795578431871.5, LastSeenID: 80101, Intervals: []model.IntervalStats{{Index: 0, Count: 35700, Size: 2690000}, {Index: 3, Count: 4031, Size: 161240}}},
	}
	if !reflect.DeepEqual(us, want) {
		t.Errorf("got %+v\nwant %+v", us, want)
	}
	// What the writer writes reads back the same.
	var buf bytes.Buffer
	if err := WriteHeapStatsHeader(&buf); err != nil {
		t.Fatal(err)
	}
	for _, u := range want {
		if err := WriteHeapStatsUpdate(&buf, u); err != nil {
			t.Fatal(err)
		}
	}
	if buf.String() != heapStatsSample {
		t.Errorf("written:\n%s\nwant:\n%s", buf.String(), heapStatsSample)
	}
	if got := HeapStatsPath("dir/app.heaptimeline.gz"); got != "dir/app.heaptimeline.stats.jsonl" {
		t.Errorf("HeapStatsPath of a .gz: %s", got)
	}
}

func TestReadHeapStatsErrors(t *testing.T) {
	header := "{\"format\":\"heapx.heapstats\",\"version\":1}\n"
	for _, c := range []struct{ in, want string }{
		{"", "p.stats.jsonl: byte 0: empty: want a header line"},
		{"{\"samples\":[]}\n", "line 1: byte 0: want the header {\"format\":\"heapx.heapstats\",\"version\":1}"},
		{"{\"format\":\"heapx.heapstats\",\"version\":2}\n", "version 2 of heapx.heapstats; this heapx reads version 1"},
		{header + "{\"t\":1,\"last_id\":5,\"stats\":[0,1]}\n", "line 2: byte 41: stats has 2 numbers, not triplets"},
		{header + "{\"t\":1,\"last_id\":5,\"stats\":[1,1,8]}\n", "line 2: byte 41: interval 1 in update 0 (there are 1 intervals by then)"},
		{header + "{\"t\":2,\"last_id\":5,\"stats\":[]}\n{\"t\":1,\"last_id\":5,\"stats\":[]}\n", "line 3: byte 72: update at 1 ms, id 5, is before the one above it (2 ms, id 5)"},
		{header + "{\"t\":1,\"last_id\":5,\"stats\":[0,-1,8]}\n", "line 2: byte 41: want an update"},
		{header + "{\"t\":1,\"last_id\":5,\"stats\":[0,4294967296,8]}\n", "count 4294967296 of interval 0 is too large"},
	} {
		_, err := ReadHeapStats(strings.NewReader(c.in), "p.stats.jsonl")
		var fe *formats.FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "p.stats.jsonl") {
			t.Errorf("%q: error %v, want a FormatError with %q", c.in, err, c.want)
		}
	}
}

// FuzzReadHeapStats: any input reads as updates whose intervals exist by
// their update and whose times do not go back, or a FormatError; never a
// panic.
func FuzzReadHeapStats(f *testing.F) {
	f.Add([]byte(heapStatsSample))
	f.Add([]byte("{\"format\":\"heapx.heapstats\",\"version\":1}\n{\"t\":1,\"last_id\":5,\"stats\":[0,1,8]}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		us, err := ReadHeapStats(bytes.NewReader(b), "fuzz")
		if err != nil {
			var fe *formats.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("not a FormatError: %v", err)
			}
			return
		}
		for k, u := range us {
			for _, iv := range u.Intervals {
				if int(iv.Index) > k {
					t.Fatalf("update %d names interval %d", k, iv.Index)
				}
			}
			if k > 0 && u.TimestampMillis < us[k-1].TimestampMillis {
				t.Fatalf("update %d goes back in time", k)
			}
		}
	})
}
