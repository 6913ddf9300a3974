package query

import (
	"slices"
	"testing"
)

// Text columns empty in every row are not shown; numbers always are, and
// a table without rows keeps its columns.
func TestTableShown(t *testing.T) {
	tb := &Table{Columns: []Column{{Key: "name", Kind: Text}, {Key: "shape", Kind: Text}, {Key: "count", Kind: Count}, {Key: "via", Kind: Text}},
		Rows: [][]any{{"a", "", 0, ""}, {"b", "", 2, "x"}}}
	if got := tb.Shown(); !slices.Equal(got, []int{0, 2, 3}) {
		t.Errorf("shown %v", got)
	}
	tb.Rows = nil
	if got := tb.Shown(); len(got) != 4 {
		t.Errorf("shown without rows %v", got)
	}
}
