package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/heapx/heapx/analysis"
)

// summaryJSON is the `heapx summary --json` output (documented in
// README.md).
type summaryJSON struct {
	SchemaVersion int    `json:"schema_version"`
	File          string `json:"file"`
	Policy        string `json:"policy"`
	// TotalSize is DevTools' total: the root's retained size plus
	// extra_native_bytes; percentages are of it.
	TotalSize  uint64      `json:"total_size"`
	ClassCount int         `json:"class_count"`
	Classes    []classJSON `json:"classes"`
}

// classJSON is one Summary row.
type classJSON struct {
	Constructor string `json:"constructor"`
	// Key is DevTools' class key: "," + name, or "script,line,column,name"
	// for object classes split by allocation site.
	Key          string        `json:"key"`
	Location     *locationJSON `json:"location,omitempty"`
	Count        int           `json:"count"`
	Distance     int32         `json:"distance"`
	ShallowSize  uint64        `json:"shallow_size"`
	RetainedSize uint64        `json:"retained_size"`
}

// locationJSON is an allocation site, zero-based as V8 writes it.
type locationJSON struct {
	ScriptID uint32 `json:"script_id"`
	Line     uint32 `json:"line"`
	Column   uint32 `json:"column"`
}

func newSummaryCmd(stderr *os.File) *cobra.Command {
	var asJSON bool
	var limit int
	c := &cobra.Command{
		Use:   "summary FILE",
		Short: "Show the classes that hold the memory, like DevTools' Summary view",
		Long: `Show DevTools' Summary view: one row per constructor (class) with its
object count, smallest distance from a root, total shallow size and
retained size, largest retained size first. Numbers match the Chrome
DevTools Memory panel.`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return fmt.Errorf("-n must be 0 or more, not %d", limit)
			}
			d, a, err := loadAndAnalyze(args[0], stderr)
			if err != nil {
				return err
			}
			s := buildSummary(d, a, limit)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			return writeSummary(cmd.OutOrStdout(), s)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of a table")
	c.Flags().IntVarP(&limit, "limit", "n", 20, limitFlag)
	return c
}

func buildSummary(d *dump, a *analysis.Analysis, limit int) *summaryJSON {
	rows := a.Summary()
	s := &summaryJSON{SchemaVersion: 1, File: d.path, Policy: a.Policy.Name, TotalSize: a.TotalSize(),
		ClassCount: len(rows), Classes: []classJSON{}}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	for _, r := range rows {
		c := classJSON{Constructor: r.Name, Key: r.Key, Count: r.Count, Distance: r.Distance,
			ShallowSize: r.Shallow, RetainedSize: r.Retained}
		if a.Classes.HasLoc[r.Class] {
			l := a.Classes.Loc[r.Class]
			c.Location = &locationJSON{l.ScriptID, l.Line, l.Column}
		}
		s.Classes = append(s.Classes, c)
	}
	return s
}

func writeSummary(w io.Writer, s *summaryJSON) error {
	// A name shared by several rows (one class per allocation site) gets
	// its site, one-based as editors count, so the rows can be told apart.
	seen := map[string]int{}
	for _, c := range s.Classes {
		seen[c.Constructor]++
	}
	t := newTable("Constructor", ">Count", ">Distance", ">Shallow size", ">%", ">Retained size", ">%")
	for _, c := range s.Classes {
		name := shorten(c.Constructor, maxNameWidth)
		if l := c.Location; l != nil && seen[c.Constructor] > 1 {
			name += fmt.Sprintf(" (script %d:%d:%d)", l.ScriptID, l.Line+1, l.Column+1)
		}
		t.add(name, count(uint64(c.Count)), distance(c.Distance),
			humanSize(c.ShallowSize), percent(c.ShallowSize, s.TotalSize),
			humanSize(c.RetainedSize), percent(c.RetainedSize, s.TotalSize))
	}
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d of %s classes; total size %s (%s bytes)\n",
		len(s.Classes), count(uint64(s.ClassCount)), humanSize(s.TotalSize), count(s.TotalSize))
	return err
}
