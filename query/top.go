package query

import (
	"fmt"

	"github.com/heapx/heapx/humanize"
)

func init() {
	Register(&Query{
		Name: "top", Group: GroupBasic, Usage: "FILE", MinInputs: 1, MaxInputs: 1,
		Title: "Show the objects with the largest retained sizes",
		Help: `Show the single objects that retain the most memory (the root
excluded), largest first: what would be freed if that object alone became
unreachable. Use an object's @id with 'heapx paths' to see what keeps it
alive.`,
		Args: []Arg{limitArg(20)},
		Run:  runTop,
	})
}

// TopJSON is the `heapx top --json` output.
type TopJSON struct {
	SchemaVersion int        `json:"schema_version"`
	File          string     `json:"file"`
	Policy        string     `json:"policy"`
	TotalSize     uint64     `json:"total_size"`
	Nodes         []NodeJSON `json:"nodes"`
}

func runTop(c *Context) (*Result, error) {
	sn := c.Snapshots[0]
	a := sn.Analysis
	n, err := limit(c, a.Graph.NumNodes())
	if err != nil {
		return nil, err
	}
	t := &TopJSON{SchemaVersion: 1, File: sn.Path, Policy: a.Policy.Name, TotalSize: a.TotalSize(), Nodes: []NodeJSON{}}
	for _, r := range a.Top(n) {
		t.Nodes = append(t.Nodes, NewNodeJSON(a.Graph, r))
	}
	tb := &Table{Columns: []Column{colObject, colClass, colDistance, colShallow, colRetained, colPercent}}
	for _, n := range t.Nodes {
		tb.Rows = append(tb.Rows, []any{ObjectName(n), Shorten(n.Constructor, MaxNameWidth), n.Distance, n.ShallowSize, n.RetainedSize,
			humanize.Share(n.RetainedSize, t.TotalSize)})
	}
	return &Result{JSON: t, Sections: []*Section{{Table: tb}},
		Notes: []string{fmt.Sprintf("total size %s (%s bytes)", humanize.Size(t.TotalSize), humanize.Thousands(t.TotalSize))}}, nil
}
