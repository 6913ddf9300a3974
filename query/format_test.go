package query

import (
	"encoding/json"
	"testing"
)

func TestParseID(t *testing.T) {
	for in, want := range map[string]uint64{"12345": 12345, "@12345": 12345, "0x1f": 31, "@0x1F": 31, "0XfF": 255, " 0xff1000a8": 4279238824} {
		if got, err := ParseID(in); err != nil || got != want {
			t.Errorf("ParseID(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "@", "0x", "1f", "-1", "0xg", "@@1"} {
		if _, err := ParseID(in); err == nil {
			t.Errorf("ParseID(%q) took it", in)
		}
	}
}

// Addresses are hex for people and numbers for programs.
func TestAddressValues(t *testing.T) {
	if s := FormatValue(ID, Address(0xff1000a8)); s != "@0xff1000a8" {
		t.Errorf("address as text: %q", s)
	}
	if s := FormatValue(ID, uint64(80593)); s != "@80593" {
		t.Errorf("V8 id as text: %q", s)
	}
	if s := FormatValue(ID, uint64(1<<63+1)); s != "@9223372036854775809" {
		t.Errorf("large id as text: %q", s)
	}
	b, err := json.Marshal(map[string]any{"id": Address(0xff1000a8)})
	if err != nil || string(b) != `{"id":4279238824}` {
		t.Errorf("address as JSON: %s, %v", b, err)
	}
}

// Means per dump and p-values (heapx fleet --compare) are float64: one
// decimal for counts, signs on differences, and small p-values in
// scientific notation.
func TestFloatValues(t *testing.T) {
	for _, c := range []struct {
		kind Kind
		v    float64
		want string
	}{
		{Count, 1250, "1,250"}, {Count, 612.5, "612.5"}, {Count, 13036.25, "13,036.3"},
		{Delta, -600, "-600"}, {Delta, 2.5, "+2.5"}, {Delta, 0.04, "0"}, {Delta, 0, "0"},
		{Bytes, 122160, "122 kB"}, {BytesDelta, -106960, "-107 kB"}, {BytesDelta, 0.4, "0 B"},
		{Probability, 0.4666, "0.467"}, {Probability, 0.001, "0.001"}, {Probability, 2.0 / 12870, "1.6e-04"}, {Probability, 1, "1.000"},
	} {
		if got := FormatValue(c.kind, c.v); got != c.want {
			t.Errorf("FormatValue(%v, %v) = %q, want %q", c.kind, c.v, got, c.want)
		}
	}
}
