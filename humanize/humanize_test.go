package humanize

import "testing"

// Sizes read as DevTools' Memory panel writes them: decimal units, one
// decimal below 100 of a unit.
func TestSize(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 999: "999 B", 1000: "1.0 kB", 3599777: "3.6 MB",
		99_949_999: "99.9 MB", 123_456_789: "123 MB", 1_150_000_000: "1.1 GB", 5e15: "5000 TB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestThousandsAndPercent(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Percent(1, 3); got != "33.3%" {
		t.Errorf("Percent(1, 3) = %q", got)
	}
	if got, s := Percent(5, 0), Share(5, 0); got != "0.0%" || s != 0 {
		t.Errorf("of nothing: %q, %v", got, s)
	}
	if s := Share(1, 4); s != 25 {
		t.Errorf("Share(1, 4) = %v", s)
	}
}

// Sizes are read in the units Size writes, binary units and bare bytes.
func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"1500": 1500, "10MB": 10e6, "512kB": 512e3, "1.5 GB": 1.5e9,
		"64MiB": 64 << 20, "1k": 1000, " 2 b ": 2} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MB", "10XB", "-1kB", "ten"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) took it", in)
		}
	}
}
