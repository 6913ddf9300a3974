package heapx_test

import (
	"testing"

	"github.com/heapx/heapx"
)

// TestReportInput checks that a dump's report input is its path, format
// and analysis.
func TestReportInput(t *testing.T) {
	d := open(t, leak1, heapx.Options{})
	in, err := d.ReportInput()
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Analysis()
	if err != nil {
		t.Fatal(err)
	}
	if in.Path != leak1 || in.Format != "v8" || in.A != a || in.A.TotalSize() == 0 {
		t.Errorf("input %q %q (analysis %p, the dump's %p)", in.Path, in.Format, in.A, a)
	}
}
