package heapx_test

import (
	"testing"

	"github.com/heapx/heapx"
	"github.com/heapx/heapx/formats/heapprofile"
)

// TestOpenProfile checks that a profile opened through the facade is the
// file's, with a Resolver, and that a missing file is an error.
func TestOpenProfile(t *testing.T) {
	const path = "testdata/node-sites.heapprofile"
	want, err := heapprofile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, noMaps := range []bool{false, true} {
		var warned []string
		p, res, err := heapx.OpenProfile(path, heapx.Options{NoSourceMaps: noMaps, Warn: func(m string) { warned = append(warned, m) }})
		if err != nil {
			t.Fatal(err)
		}
		if res == nil || len(p.Samples) != len(want.Samples) || len(p.Samples) == 0 || len(p.Nodes) != len(want.Nodes) {
			t.Errorf("NoSourceMaps %v: %d samples and %d nodes (resolver %v), want %d and %d", noMaps, len(p.Samples), len(p.Nodes), res != nil, len(want.Samples), len(want.Nodes))
		}
		if len(warned) != 0 {
			t.Errorf("NoSourceMaps %v: warned %q of a profile whose scripts have no maps", noMaps, warned)
		}
	}
	if _, _, err := heapx.OpenProfile("testdata/none.heapprofile", heapx.Options{}); err == nil {
		t.Error("a missing profile opened")
	}
}
