package query

import "testing"

// TestArgParse checks each kind's text as its flag takes it.
func TestArgParse(t *testing.T) {
	for _, c := range []struct {
		kind ArgKind
		text string
		want any
	}{
		{IntArg, " 25 ", 25},
		{BoolArg, "true", true},
		{FloatArg, "0.05", 0.05},
		{SizeArg, "10MB", uint64(10_000_000)},
		{SizeArg, "1GiB", uint64(1 << 30)},
		{StringArg, " Foo ", " Foo "},
	} {
		got, err := Arg{Name: "x", Kind: c.kind}.Parse(c.text)
		if err != nil || got != c.want {
			t.Errorf("%v %q: %#v, %v; want %#v", c.kind, c.text, got, err, c.want)
		}
	}
	for _, c := range []struct {
		kind ArgKind
		text string
	}{{IntArg, "2.5"}, {BoolArg, "maybe"}, {FloatArg, "x"}, {SizeArg, "10 parsecs"}} {
		if got, err := (Arg{Name: "x", Kind: c.kind}).Parse(c.text); err == nil {
			t.Errorf("%v %q: %#v, want an error", c.kind, c.text, got)
		}
	}
}
