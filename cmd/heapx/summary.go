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
	// Unreachable describes the objects no root reaches over non-weak
	// edges. DevTools hangs them under the root, so they are also counted
	// in Classes (keeping the numbers equal to DevTools'); they are listed
	// here so they are never silently mixed in.
	Unreachable unreachableJSON `json:"unreachable"`
}

// unreachableJSON totals the unreachable objects, by class (largest
// first; all of them with --unreachable, else the first 10).
type unreachableJSON struct {
	Count   int                    `json:"count"`
	Size    uint64                 `json:"shallow_size"`
	Classes []unreachableClassJSON `json:"classes"`
}

// unreachableClassJSON is one class of unreachable objects.
type unreachableClassJSON struct {
	Constructor string `json:"constructor"`
	Count       int    `json:"count"`
	Size        uint64 `json:"shallow_size"`
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
	var asJSON, unreachable bool
	var limit int
	c := &cobra.Command{
		Use:   "summary FILE",
		Short: "Show the classes that hold the memory, like DevTools' Summary view",
		Long: `Show DevTools' Summary view: one row per constructor (class) with its
object count, smallest distance from a root, total shallow size and
retained size, largest retained size first. Numbers match the Chrome
DevTools Memory panel. Objects unreachable from the roots are counted as
DevTools counts them and totalled below the table; --unreachable lists
them by class instead of the classes.`,
		Args: oneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return fmt.Errorf("-n must be 0 or more, not %d", limit)
			}
			d, a, err := loadAndAnalyze(args[0], stderr)
			if err != nil {
				return err
			}
			s := buildSummary(d, a, limit, unreachable)
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			if unreachable {
				return writeUnreachable(cmd.OutOrStdout(), s)
			}
			return writeSummary(cmd.OutOrStdout(), s)
		},
	}
	c.Flags().BoolVar(&asJSON, "json", false, "print a JSON object instead of a table")
	c.Flags().IntVarP(&limit, "limit", "n", 20, limitFlag)
	c.Flags().BoolVar(&unreachable, "unreachable", false, "list the unreachable objects by class (all classes in --json)")
	return c
}

func buildSummary(d *dump, a *analysis.Analysis, limit int, allUnreachable bool) *summaryJSON {
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
	u := a.Unreachable()
	s.Unreachable = unreachableJSON{Count: u.Count, Size: u.Size, Classes: []unreachableClassJSON{}}
	for i, c := range u.ByClass {
		if !allUnreachable && i == 10 {
			break
		}
		s.Unreachable.Classes = append(s.Unreachable.Classes, unreachableClassJSON{Constructor: c.Name, Count: c.Count, Size: c.Size})
	}
	return s
}

func writeUnreachable(w io.Writer, s *summaryJSON) error {
	t := newTable("Constructor", ">Count", ">Shallow size")
	for _, c := range s.Unreachable.Classes {
		t.add(shorten(c.Constructor, maxNameWidth), count(uint64(c.Count)), humanSize(c.Size))
	}
	if err := t.write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s objects (%s) unreachable from the roots\n", count(uint64(s.Unreachable.Count)), humanSize(s.Unreachable.Size))
	return err
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
	if _, err := fmt.Fprintf(w, "\n%d of %s classes; total size %s (%s bytes)\n",
		len(s.Classes), count(uint64(s.ClassCount)), humanSize(s.TotalSize), count(s.TotalSize)); err != nil {
		return err
	}
	if u := s.Unreachable; u.Count > 0 {
		_, err := fmt.Fprintf(w, "%s objects (%s) are unreachable from the roots; they are counted above, as DevTools counts them (see --unreachable)\n",
			count(uint64(u.Count)), humanSize(u.Size))
		return err
	}
	return nil
}
