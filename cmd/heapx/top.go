package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// topJSON is the `heapx top --json` output (documented in README.md).
type topJSON struct {
	SchemaVersion int        `json:"schema_version"`
	File          string     `json:"file"`
	Policy        string     `json:"policy"`
	TotalSize     uint64     `json:"total_size"`
	Nodes         []nodeJSON `json:"nodes"`
}

func newTopCmd(stderr *os.File) *cobra.Command {
	var asJSON bool
	var limit int
	c := &cobra.Command{
		Use:   "top FILE",
		Short: "Show the objects with the largest retained sizes",
		Long: `Show the single objects that retain the most memory (the root
excluded), largest first: what would be freed if that object alone became
unreachable. Use an object's @id with 'heapx paths' to see what keeps it
alive.`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return fmt.Errorf("-n must be 0 or more, not %d", limit)
			}
			d, a, err := loadAndAnalyze(args[0], stderr)
			if err != nil {
				return err
			}
			n := limit
			if n == 0 {
				n = d.graph.NumNodes()
			}
			t := &topJSON{SchemaVersion: 1, File: d.path, Policy: a.Policy.Name, TotalSize: a.TotalSize(), Nodes: []nodeJSON{}}
			for _, r := range a.Top(n) {
				t.Nodes = append(t.Nodes, newNodeJSON(d.graph, r))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), t)
			}
			return writeTop(cmd.OutOrStdout(), t)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of a table")
	c.Flags().IntVarP(&limit, "limit", "n", 20, limitFlag)
	return c
}

func writeTop(w io.Writer, t *topJSON) error {
	tb := newTable("Object", "Constructor", ">Distance", ">Shallow size", ">Retained size", ">%")
	for _, n := range t.Nodes {
		tb.add(objectName(n), shorten(n.Constructor, maxNameWidth), distance(n.Distance),
			humanSize(n.ShallowSize), humanSize(n.RetainedSize), percent(n.RetainedSize, t.TotalSize))
	}
	if err := tb.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\ntotal size %s (%s bytes)\n", humanSize(t.TotalSize), count(t.TotalSize))
	return err
}
