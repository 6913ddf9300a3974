package capture

import (
	"testing"
	"time"
)

// TestFileString checks the sentence about each kind of file captured.
func TestFileString(t *testing.T) {
	for _, c := range []struct {
		f    File
		want string
	}{
		{File{Path: "app-1.heapsnapshot", Size: 1536}, "app-1.heapsnapshot (1.5 kB)"},
		{File{Path: "app.heaptimeline", Size: 2 << 20, Timeline: &TimelineStats{Updates: 42, StartObjects: 1000, Objects: 25000, PeakObjects: 31000, Duration: 5300 * time.Millisecond}},
			"app.heaptimeline (2.1 MB): allocations tracked for 5.3 s in 42 intervals; live objects 1,000 at the start, 25,000 at the end (at most 31,000)"},
		{File{Path: "app.heapprofile", Size: 900, Sampling: &SamplingStats{Samples: 1234, Bytes: 40 << 20, Finished: true}},
			"app.heapprofile (900 B): 1,234 samples standing for 41.9 MB allocated (until the program ended)"},
	} {
		if got := c.f.String(); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}

// TestParseGrowth checks the percentages --grow takes.
func TestParseGrowth(t *testing.T) {
	for s, want := range map[string]float64{"20%": 0.2, " 50 ": 0.5, "2.5%": 0.025, "150%": 1.5} {
		if got, err := ParseGrowth(s); err != nil || got != want {
			t.Errorf("ParseGrowth(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0%", "-5%", "abc", "20%%"} {
		if got, err := ParseGrowth(s); err == nil {
			t.Errorf("ParseGrowth(%q) = %v, want an error", s, got)
		}
	}
}
