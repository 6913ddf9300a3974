package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/analysis"
	"github.com/heapx/heapx/model"
)

// pathsJSON is the `heapx paths --json` output (documented in README.md).
type pathsJSON struct {
	SchemaVersion int        `json:"schema_version"`
	File          string     `json:"file"`
	Target        nodeJSON   `json:"target"`
	Paths         []pathJSON `json:"paths"`
}

// pathJSON is one retainer path, from the root to the target.
type pathJSON struct {
	// Distance is the path's DevTools-style cost: its length from a user
	// root, or 100000000 plus its length when it starts at an internal
	// (system) root.
	Distance int64      `json:"distance"`
	System   bool       `json:"system"`
	Root     nodeJSON   `json:"root"`
	Steps    []stepJSON `json:"steps"`
}

// stepJSON is one edge of a path and the object it leads to.
type stepJSON struct {
	EdgeType string `json:"edge_type"`
	// EdgeName is the property name, variable name or element index.
	EdgeName string `json:"edge_name"`
	// Edge is the edge as DevTools writes it: ".x", "[3]", "->x", "{x}".
	Edge string   `json:"edge"`
	To   nodeJSON `json:"to"`
}

func newPathsCmd(stderr *os.File) *cobra.Command {
	var asJSON bool
	var limit int
	var id string
	c := &cobra.Command{
		Use:   "paths FILE --id ID",
		Short: "Show what keeps an object alive: its shortest retainer paths from the roots",
		Long: `Show the shortest retainer paths from the roots to the object with the
given id (the @id in 'heapx top' and in DevTools), shortest first, paths
from user roots (globals) before paths through internal roots. Weak edges
are never followed.`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return fmt.Errorf("-n must be 1 or more, not %d", limit)
			}
			want, err := strconv.ParseUint(strings.TrimPrefix(id, "@"), 10, 64)
			if err != nil {
				return fmt.Errorf("--id %q is not a node id (a number such as 12345 or @12345)", id)
			}
			d, a, err := loadAndAnalyze(args[0], stderr)
			if err != nil {
				return err
			}
			target := findNode(d.graph, want)
			if target == model.NoNode {
				return fmt.Errorf("%s: no node with id @%d", d.path, want)
			}
			p := buildPaths(d, a, target, limit)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			return writePaths(cmd.OutOrStdout(), p)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of text")
	c.Flags().IntVarP(&limit, "limit", "n", 3, "number of paths to print")
	c.Flags().StringVar(&id, "id", "", "id of the object whose retainers to show (required)")
	if err := c.MarkFlagRequired("id"); err != nil {
		panic(err) // the flag is defined just above
	}
	return c
}

// findNode returns the node with runtime id id, or model.NoNode. A linear
// scan is a few milliseconds even for 10^7 nodes, less than building a map.
func findNode(g *model.Graph, id uint64) model.NodeIndex {
	for i, x := range g.Nodes.ID {
		if x == id {
			return model.NodeIndex(i)
		}
	}
	return model.NoNode
}

func buildPaths(d *dump, a *analysis.Analysis, target model.NodeIndex, k int) *pathsJSON {
	g := d.graph
	nm := analysis.NewNamer(g, a.DOM)
	node := func(n model.NodeIndex) nodeJSON { return newNodeJSON(g, a.Row(nm, n)) }
	out := &pathsJSON{SchemaVersion: 1, File: d.path, Target: node(target), Paths: []pathJSON{}}
	ret := model.BuildRetainers(g)
	for _, p := range analysis.RetainerPaths(g, ret, a.Roots, target, analysis.PathOptions{K: k}) {
		pj := pathJSON{Distance: p.Cost, System: p.System, Root: node(g.Root), Steps: []stepJSON{}}
		for _, s := range p.Steps {
			pj.Steps = append(pj.Steps, stepJSON{
				EdgeType: g.EdgeType(s.Edge).Name, EdgeName: g.EdgeName(s.Edge),
				Edge: analysis.EdgeString(g, s.Edge), To: node(s.To),
			})
		}
		out.Paths = append(out.Paths, pj)
	}
	return out
}

func writePaths(w io.Writer, p *pathsJSON) error {
	t := p.Target
	fmt.Fprintf(w, "Retainers of %s (%s; shallow size %s, retained size %s, distance %s)\n",
		objectName(t), t.Constructor, humanSize(t.ShallowSize), humanSize(t.RetainedSize), distance(t.Distance))
	if len(p.Paths) == 0 {
		_, err := fmt.Fprintln(w, "\nNo retainer path: nothing reachable from the roots keeps this object alive (it is garbage or only weakly held).")
		return err
	}
	for i, path := range p.Paths {
		kind := "from a user root"
		if path.System {
			kind = "from internal roots"
		}
		fmt.Fprintf(w, "\nPath %d: %d edges, %s\n", i+1, len(path.Steps), kind)
		tb := newTable("Retainer edge", "Object", ">Distance", ">Shallow size", ">Retained size")
		r := path.Root
		if r.Name == "" {
			r.Name = "(root)" // V8's root is an unnamed synthetic node
		}
		tb.add("", objectName(r), distance(r.Distance), humanSize(r.ShallowSize), humanSize(r.RetainedSize))
		for _, s := range path.Steps {
			tb.add(shorten(s.Edge, maxNameWidth), objectName(s.To), distance(s.To.Distance),
				humanSize(s.To.ShallowSize), humanSize(s.To.RetainedSize))
		}
		if err := tb.write(w); err != nil {
			return err
		}
	}
	return nil
}
