package query

import (
	"fmt"

	"github.com/heapx/heapx/analysis/alloc"
	"github.com/heapx/heapx/humanize"
)

// FrameJSON is one frame of an allocation stack: the function and where
// it is defined, line and column one-based (0: unknown), as DevTools'
// Allocation stack pane shows it.
type FrameJSON struct {
	Function string `json:"function"`
	Script   string `json:"script"`
	Line     int32  `json:"line"`
	Column   int32  `json:"column"`
}

// NewFrameJSON converts an analysis frame.
func NewFrameJSON(f alloc.Frame) FrameJSON {
	return FrameJSON{Function: functionName(f), Script: f.URL, Line: f.Line, Column: f.Column}
}

// StackJSON converts an allocation stack, allocating function first; nil
// for none, so that an omitempty field stays out.
func StackJSON(stack []alloc.Frame) []FrameJSON {
	if len(stack) == 0 {
		return nil
	}
	out := make([]FrameJSON, len(stack))
	for i, f := range stack {
		out[i] = NewFrameJSON(f)
	}
	return out
}

// SiteJSON is where most of a group of objects (a class, a suspect's
// accumulation, a leak cluster) were allocated: the allocating function,
// Count of the group's objects allocated there and their Percent of the
// group.
type SiteJSON struct {
	FrameJSON
	Count   int     `json:"count"`
	Percent float64 `json:"percent"`
}

// NewSiteJSON converts a site; the zero SiteJSON for none.
func NewSiteJSON(s *alloc.SiteShare) SiteJSON {
	if s == nil || s.Count == 0 {
		return SiteJSON{}
	}
	return SiteJSON{FrameJSON: NewFrameJSON(s.Frame), Count: s.Count, Percent: humanize.Share(uint64(s.Count), uint64(s.Of))}
}

// siteJSONText is a site as a table cell: "makeRecord app.js:4:20
// (98.0%)"; "" for none.
func siteJSONText(s SiteJSON) string {
	if s.Count == 0 {
		return ""
	}
	t := s.Function
	f := alloc.Frame{URL: s.Script, Line: s.Line, Column: s.Column}
	if l := frameLocation(f); l != "" {
		t += " " + l
	}
	return t + fmt.Sprintf(" (%.1f%%)", s.Percent)
}

// stackTable is an allocation stack as a table, allocating function
// first.
func stackTable(stack []alloc.Frame) *Table {
	t := &Table{Columns: []Column{{Key: "function", Title: "Function", Kind: Text}, {Key: "location", Title: "Location", Kind: Text}}}
	for _, f := range stack {
		t.Rows = append(t.Rows, []any{functionName(f), frameLocation(f)})
	}
	return t
}

// colAllocatedIn is the column of a group's dominant allocation site.
var colAllocatedIn = Column{Key: "allocated_in", Title: "Allocated in", Kind: Text}
